// n8n's own records: how many executions it has, by workflow and status, and waiting until it
// finished every execution sent so far.

const FINISHED = ['success', 'error', 'crashed', 'canceled'];

/** Whether n8n saves successful executions (the checks can count them only then). */
export const savesSuccess = (config) =>
	(config.env.EXECUTIONS_DATA_SAVE_ON_SUCCESS ?? 'all') !== 'none';

export async function executionCounts(stack) {
	const { rows } = await stack.n8nDb.query(
		`SELECT "workflowId" AS workflow, status, count(*)::int AS n FROM execution_entity GROUP BY 1, 2`,
	);
	return rows;
}

/** Waits (bounded) until n8n finished and saved every execution sent so far: each load starts on an idle n8n. */
export async function waitForIdle(
	stack,
	{ config, variants, ledger },
	{ timeoutMs = 180_000 } = {},
) {
	const deadline = Date.now() + timeoutMs;
	let state = '';
	while (Date.now() < deadline) {
		const rows = await executionCounts(stack);
		const open = rows.filter((r) => !FINISHED.includes(r.status)).reduce((sum, r) => sum + r.n, 0);
		const lagging = savesSuccess(config)
			? config.variants.filter((v) => {
					const done = rows
						.filter((r) => r.workflow === variants[v].workflowId && FINISHED.includes(r.status))
						.reduce((s, r) => s + r.n, 0);
					return done < ledger.requests[v];
				})
			: [];
		if (open === 0 && lagging.length === 0) return;
		state = `${open} executions open, waiting for ${lagging.join(', ') || 'nothing'}`;
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
	ledger.fail(`n8n did not finish the executions sent so far within ${timeoutMs} ms (${state})`);
}
