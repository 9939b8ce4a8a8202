import type { ProviderDefinition } from './providerTypes';

export const DEV_TOOLS = [] as const satisfies readonly ProviderDefinition[];
