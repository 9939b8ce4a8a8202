// The only module that loads the PostgreSQL driver. The build bundles `pg` into this file with
// esbuild, so the published package has no runtime dependencies.
import { Client, Pool } from 'pg';

export { Client, Pool };
export type { ClientConfig, PoolClient, PoolConfig, QueryResult } from 'pg';
