import type { ProviderDefinition } from './providerTypes';

export const MESSAGING = [] as const satisfies readonly ProviderDefinition[];
