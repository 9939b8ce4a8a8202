import type { ProviderDefinition } from './providerTypes';

export const PLATFORMS = [] as const satisfies readonly ProviderDefinition[];
