// Delivery sequences shared by the e2e suites and the demo.
import { sendEvent } from './http.mjs';
import { waitFor } from './log.mjs';

export const EVENT_A = { id: 'evt_A', type: 'payment_intent.succeeded' };
export const EVENT_B = { id: 'evt_B', type: 'payment_intent.succeeded' };

/**
 * The hand-built pattern's check, against the template: event A, A again re-signed with a later
 * timestamp (a provider retry: same body, different stripe-signature), then B. Every request
 * carries a genuine Stripe signature (the template verifies it). Each request waits for n8n to
 * record its execution.
 * @returns {Promise<Array<{ request: string, body: object, signature: string, status: number, answer: any,
 *   branch: string, businessRows: number, response: object, execution: object }>>}
 * @param {import('./runningStack.mjs').RunningStack} stack
 * @param {{ onStep?: (step: object) => void }} [options]
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

/**
 * `size` deliveries of one new event at the same moment, each genuinely signed with its own
 * timestamp as a sender's retries are; waits until n8n recorded every one of them. The answers come
 * back sorted: processed (200), in flight (409, lease mode), duplicate (200).
 * @param {import('./runningStack.mjs').RunningStack} stack
 * @param {object} event
 * @param {object} [options]
 * @param {string} [options.webhookUrl] another published workflow's webhook (default: the template's)
 * @param {string} [options.workflowId] that workflow's id
 * @param {number} [options.size]
 * @param {string} [options.label] prefixes the timing line on stderr
 */
export async function runBurst(
	stack,
	event,
	{
		webhookUrl = stack.webhookUrl,
		workflowId = stack.webhookWorkflowId,
		size = 64,
		label = 'e2e',
	} = {},
) {
	const started = Date.now();
	const responses = await Promise.all(
		Array.from({ length: size }, (_, i) =>
			sendEvent(webhookUrl, event, {
				signedAt: Math.floor(Date.now() / 1000) - (i % 60),
				timeoutMs: 180_000,
			}),
		),
	);
	const seconds = (Date.now() - started) / 1000;
	process.stderr.write(
		`[${label}] ${size} simultaneous deliveries answered in ${seconds.toFixed(1)} s\n`,
	);
	const ids = new Set(responses.map((r) => r.requestId));
	const executions = await waitFor(
		`n8n to record the ${size} executions`,
		async () => {
			const mine = (await stack.executions.list({ workflowId })).filter((e) =>
				ids.has(e.requestId),
			);
			return mine.length === size ? mine : undefined;
		},
		{ timeoutMs: 120_000, intervalMs: 500 },
	);
	const answered = (status, bodyStatus) =>
		responses.filter((r) => r.status === status && r.json?.status === bodyStatus);
	return {
		responses,
		executions,
		/** `<HTTP status> <body status>` per response, for assertion messages. */
		answers: responses.map((r) => `${r.status} ${r.json?.status}`),
		processed: answered(200, 'processed'),
		inFlight: answered(409, 'in_progress'),
		duplicates: answered(200, 'duplicate'),
	};
}

/**
 * Delivers `event` while the template's business step fails for its type (a CHECK constraint on
 * business_log refuses the insert), then lets the step succeed again. Returns that delivery.
 * @param {import('./runningStack.mjs').RunningStack} stack
 * @param {{ id: string, type: string }} event
 * @param {Parameters<import('./runningStack.mjs').RunningStack['deliver']>[1]} [options] e.g. `to`
 */
export async function deliverWithFailingBusinessStep(stack, event, options) {
	const constraint = `harness_fail_${event.type.replace(/\W/g, '_')}`;
	await stack.keysDb.query(
		`ALTER TABLE business_log ADD CONSTRAINT ${constraint} CHECK (event_type <> '${event.type.replace(/'/g, "''")}')`,
	);
	try {
		return await stack.deliver(event, options);
	} finally {
		await stack.keysDb.query(`ALTER TABLE business_log DROP CONSTRAINT IF EXISTS ${constraint}`);
	}
}
