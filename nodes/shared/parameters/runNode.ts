import type { INode } from 'n8n-workflow';

/** What the node functions of every kind (execute, trigger) have in common here. */
interface NodeContext {
	getNode(): INode;
}

/**
 * The node of this run, copied once. n8n's getNode() deep-copies the node, every parameter
 * included, on each call; a delivery's run asks for it a dozen times (a parameter's raw text, the
 * credential's id, the version). Keyed by the run's context, which n8n makes anew for every node
 * run, so an edited node is read afresh on the next run. Read-only: never change what it returns.
 */
const nodeByRun = new WeakMap<NodeContext, Readonly<INode>>();

export function nodeOfRun(context: NodeContext): Readonly<INode> {
	let node = nodeByRun.get(context);
	if (node === undefined) {
		node = context.getNode();
		nodeByRun.set(context, node);
	}
	return node;
}
