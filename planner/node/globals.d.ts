// The Node.js globals that the bundled node code uses, as planner/node/ provides them in the page
// (scripts/build-planner.mjs injects them): the type check sees only what the page really has.
import type { BufferStatic, NodeBuffer } from './buffer';

declare global {
	type Buffer = NodeBuffer;
	const Buffer: BufferStatic;
}
