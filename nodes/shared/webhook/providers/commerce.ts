import type { ProviderDefinition } from './providerTypes';

export const COMMERCE = [] as const satisfies readonly ProviderDefinition[];
