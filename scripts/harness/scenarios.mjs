// Delivery sequences shared by the e2e suite and the demo.
export const EVENT_A = { id: 'evt_A', type: 'payment_intent.succeeded' };
export const EVENT_B = { id: 'evt_B', type: 'payment_intent.succeeded' };

/**
 * The hand-built pattern's check, against the template: event A, A again re-signed with a later
 * timestamp (a provider retry: same body, different stripe-signature), then B. Every request
 * carries a genuine Stripe signature (the template verifies it). Each request waits for n8n to
 * record its execution.
 * @returns {Promise<Array<{ request: string, body: object, signature: string, status: number, answer: any,
 *   branch: string, businessRows: number, response: object, execution: object }>>}
 */
export async function runSeedSequence(stack, { onStep } = {}) {
	const now = Math.floor(Date.now() / 1000);
	const steps = [
		{ request: 'POST event A', body: EVENT_A, signedAt: now - 2 },
		{ request: 'POST event A again (new stripe-signature)', body: EVENT_A, signedAt: now },
		{ request: 'POST event B', body: EVENT_B, signedAt: now },
	];
	const results = [];
	for (const step of steps) {
		const { response, execution, branch } = await stack.deliver(step.body, {
			signedAt: step.signedAt,
		});
		const businessRows = (await stack.businessRows()).length;
		const result = {
			...step,
			signature: response.signature,
			status: response.status,
			answer: response.json,
			branch,
			businessRows,
			response,
			execution,
		};
		results.push(result);
		onStep?.(result);
	}
	return results;
}

/** Prints rows as a plain text table. */
export function formatTable(columns, rows) {
	const widths = columns.map((column) =>
		Math.max(column.length, ...rows.map((row) => String(row[column] ?? '').length)),
	);
	const line = (cells) =>
		cells
			.map((cell, i) => String(cell ?? '').padEnd(widths[i]))
			.join('  ')
			.trimEnd();
	return [
		line(columns),
		line(widths.map((w) => '-'.repeat(w))),
		...rows.map((row) => line(columns.map((c) => row[c]))),
	].join('\n');
}
