// Inlines the PostgreSQL driver into dist/nodes/shared/transport/pg.js, the one module that
// loads it, so the published package needs no runtime dependencies. Every other file stays
// as tsc emitted it, so the pool cache is one module shared by the three nodes.
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';

const driver = 'dist/nodes/shared/transport/pg.js';

await build({
	entryPoints: [driver],
	outfile: driver,
	allowOverwrite: true,
	bundle: true,
	platform: 'node',
	format: 'cjs',
	target: 'node18',
	// pg-native is an optional alternative driver that pg only loads on request.
	external: ['pg-native'],
	logLevel: 'warning',
});

// tsc's source map described the file before bundling; it no longer matches.
await rm(`${driver}.map`, { force: true });
