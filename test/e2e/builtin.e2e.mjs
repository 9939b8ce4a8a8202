// End-to-end: the key planner's "built-in nodes only" workflow, as `npm run planner -- --built-in
// --provider stripe` writes it, in a real n8n 2.41.1 with community packages turned off
// (N8N_COMMUNITY_PACKAGES_ENABLED=false) and this package not installed: the nearest thing here to
// n8n Cloud's node set. Imported and published as a user would, against a real PostgreSQL; the key
// table created once with the statement the workflow's note gives. One stack for the file.
// With N8N_LINE=1 it runs on n8n 1.123.81 (scripts/harness/install.mjs) the CLI's `--n8n 1` variant:
// 1.x has only Crypto v1, whose HMAC secret is a node parameter, read there from $env.
// The GitHub variant (`--provider github`, keyed on the signed body by its replay guard) is published
// beside it as an extra workflow on its own default path, signed with the same secret; so is the workflow of
// every other provider the built-in path can express (the provider table decides which), each sent
// a fresh genuine delivery twice and a forged one.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import {
	BUSINESS_STEP,
	E2E_STRIPE_SECRET,
	deliverWithFailingBusinessStep,
	runBurst,
	runSeedSequence,
	startStack,
	waitFor,
	withStackLogs,
} from '../../scripts/harness/index.mjs';
import { createRequire } from 'node:module';
import { sha256Hex } from '../support/webhookItems.js';

const require = createRequire(import.meta.url);
const { signAs } = require('../support/signAs.js');
const { signDelivery, signerFor } = require('../support/signDelivery.js');
const { SIGNED_EXAMPLES } = require('../support/handshakeExamples.js');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');
const { perAttemptPaths } = require('../../dist/nodes/shared/webhook/retryStableContent');
const { readVerifiedDelivery } = require('../../dist/nodes/shared/delivery/verifiedDelivery');
const {
	CLIENT_ERRORS,
	CLIENT_ERROR_DOCS,
	INVALID_SIGNATURE_DETAIL,
} = require('../../dist/nodes/shared/keys/clientErrors');

/** Every refused signature's answer: the package's invalid-signature kind, one detail for every cause. */
const INVALID_SIGNATURE_ANSWER = {
	type: `${CLIENT_ERROR_DOCS}#invalid-signature`,
	title: CLIENT_ERRORS['invalid-signature'].title,
	status: 401,
	detail: INVALID_SIGNATURE_DETAIL,
};

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Long enough for n8n to restart after kill -9 with lease left; short enough to wait out. */
const LEASE_SECONDS = 60;
const SLOW_EVENT = { id: 'evt_builtin_crash', type: 'slow.business.step' };
/** n8n's major version under test (the harness reads the same variable). */
const LINE = process.env.N8N_LINE === '1' ? '1' : '2';

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** @type {any} */
let workflow;

/** @type {any} the GitHub variant, as published (stack.extraWorkflows entry) */
let github;

/** Every provider the built-in path expresses besides Stripe and GitHub, which have tests of their own. */
const OTHER_PROVIDERS = require('../../dist/planner/builtIn.cjs')
	.BUILT_IN_SIGNATURES.filter((/** @type {any} */ s) => s.supported)
	.map((/** @type {any} */ s) => s.signature.provider)
	.filter((/** @type {string} */ value) => value !== 'stripe' && value !== 'github');
/** @type {any[]} their published workflows, in OTHER_PROVIDERS' order */
let otherWorkflows = [];

let plannerBuilt = false;

/** The workflow as a user gets it: the CLI's standard output. */
function workflowFromCli(/** @type {string[]} */ args = ['--provider', 'stripe']) {
	if (!plannerBuilt)
		execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-planner.mjs')], {
			stdio: 'ignore',
		});
	plannerBuilt = true;
	const out = execFileSync(
		process.execPath,
		[
			path.join(ROOT, 'scripts/planner.mjs'),
			'--built-in',
			...args,
			'--lease',
			String(LEASE_SECONDS),
			'--n8n',
			LINE,
		],
		{ encoding: 'utf8' },
	);
	return JSON.parse(out);
}

/** The CREATE TABLE statement the workflow's sticky note tells the user to run once. */
function createTableFromNote() {
	const note = workflow.nodes.find(
		(/** @type {any} */ node) => node.type === 'n8n-nodes-base.stickyNote',
	);
	const sql = /```sql\n([\s\S]*?)\n```/.exec(note.parameters.content)?.[1];
	assert.ok(sql, 'the sticky note carries the CREATE TABLE statement');
	return sql;
}

before(
	async () => {
		workflow = workflowFromCli();
		// No --path anywhere: each provider's default path and webhookId are its own (builtInInputs.ts),
		// so every workflow publishes beside the others as a user importing two files would have them.
		const githubWorkflow = workflowFromCli(['--provider', 'github']);
		const others = OTHER_PROVIDERS.map((value, index) => ({
			workflow: {
				...workflowFromCli(['--provider', value]),
				id: `BuiltInOther${String(index).padStart(4, '0')}`,
			},
		}));
		stack = await startStack({
			label: 'builtin',
			builtInWorkflow: workflow,
			extraWorkflows: [{ workflow: { ...githubWorkflow, id: 'BuiltInGitHub0001' } }, ...others],
			// The 1.x variant's Signature HMAC reads the secret from the environment (planner/builtIn/builtIn.ts, SECRET_ENV).
			...(LINE === '1' ? { env: { WEBHOOK_SIGNING_SECRET: E2E_STRIPE_SECRET } } : {}),
		});
		github = stack.extraWorkflows[0];
		otherWorkflows = stack.extraWorkflows.slice(1);
		const db = stack.keysDb;
		await db.query(createTableFromNote());
		// A killed n8n's sleeping insert must be cancelled, not committed after it (lease-crash.e2e.mjs).
		await db.query(
			`ALTER DATABASE "${stack.keysDatabase}" SET client_connection_check_interval = '200ms'`,
		);
		await db.query(`CREATE TABLE slow_business_step (event_type text PRIMARY KEY)`);
		await db.query(`CREATE FUNCTION sleep_when_slow() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF EXISTS (SELECT 1 FROM slow_business_step s WHERE s.event_type = NEW.event_type) THEN
					PERFORM pg_sleep(60);
				END IF;
				RETURN NEW;
			END $$`);
		await db.query(
			`CREATE TRIGGER sleep_when_slow BEFORE INSERT ON business_log FOR EACH ROW EXECUTE FUNCTION sleep_when_slow()`,
		);
	},
	{ timeout: 60 * 60_000 },
);

after(async () => await stack?.stop(), { timeout: 120_000 });

const withN8nLog = (/** @type {() => Promise<void>} */ fn) => withStackLogs(stack, fn);

async function keyRow(/** @type {string} */ key) {
	const { rows } = await stack.keysDb.query(
		`SELECT status, attempts, extract(epoch FROM lease_until - now())::float8 AS lease_left FROM processed_events WHERE key = $1`,
		[key],
	);
	return rows[0];
}

test('the workflow is n8n-nodes-base only, and n8n runs without this package', () => {
	assert.deepEqual(
		workflow.nodes.filter((/** @type {any} */ node) => !node.type.startsWith('n8n-nodes-base.')),
		[],
	);
	assert.equal(
		existsSync(
			path.join(stack.ctx.userFolder, '.n8n', 'nodes', 'node_modules', 'n8n-nodes-idempotency'),
		),
		false,
	);
	assert.equal(stack.ctx.extraEnv?.N8N_COMMUNITY_PACKAGES_ENABLED, 'false');
});

test(
	'seed sequence: A, A re-signed, B → 3 executions, 2 business rows, the repeat a duplicate',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const steps = await runSeedSequence(stack);
			assert.deepEqual(
				steps.map((step) => [step.status, step.answer]),
				[
					[200, { status: 'processed' }],
					[200, { status: 'duplicate', key: 'evt:evt_A' }],
					[200, { status: 'processed' }],
				],
			);
			assert.notEqual(steps[0].signature, steps[1].signature);
			const executions = await stack.executions.list({ workflowId: stack.webhookWorkflowId });
			assert.equal(executions.length, 3);
			for (const execution of executions) assert.equal(execution.status, 'success');
			assert.deepEqual(
				(await stack.businessRows()).map((row) => row.event_key),
				['evt:evt_A', 'evt:evt_B'],
			);
			assert.deepEqual(
				[(await keyRow('evt:evt_A'))?.status, (await keyRow('evt:evt_B'))?.status],
				['completed', 'completed'],
			);
		}),
);

test(
	'a body without an id, twice: the sha256: key of its bytes, the second a duplicate',
	{ timeout: 120_000 },
	() =>
		withN8nLog(async () => {
			const body = Buffer.from(JSON.stringify({ type: 'ping', note: 'no id here' }));
			const key = `sha256:${sha256Hex(body)}`;
			const first = await stack.deliver(body, { headers: { 'content-type': 'application/json' } });
			const second = await stack.deliver(body, { headers: { 'content-type': 'application/json' } });
			assert.deepEqual(
				[first.response.status, first.response.json],
				[200, { status: 'processed' }],
			);
			assert.deepEqual(
				[second.response.status, second.response.json],
				[200, { status: 'duplicate', key }],
			);
			assert.equal((await stack.businessRows(key)).length, 1);
		}),
);

test('64 simultaneous deliveries of one event → 1 business row', { timeout: 300_000 }, () =>
	withN8nLog(async () => {
		const event = { id: 'evt_builtin_burst', type: 'payment_intent.succeeded' };
		const burst = await runBurst(stack, event, { size: 64, label: 'builtin' });
		assert.equal(burst.processed.length, 1, burst.answers.join(', '));
		assert.equal(
			burst.processed.length + burst.inFlight.length + burst.duplicates.length,
			64,
			burst.answers.join(', '),
		);
		assert.equal((await stack.businessRows(`evt:${event.id}`)).length, 1);
		process.stderr.write(
			`[builtin] burst: ${burst.processed.length} processed, ${burst.inFlight.length} in flight (409), ${burst.duplicates.length} duplicate\n`,
		);
	}),
);

test('a forged signature and a stale timestamp → 401, nothing reserved', { timeout: 120_000 }, () =>
	withN8nLog(async () => {
		const forged = { id: 'evt_builtin_forged', type: 'payment_intent.succeeded' };
		const bytes = Buffer.from(JSON.stringify(forged));
		const forgedAnswer = await stack.deliver(bytes, {
			headers: {
				'content-type': 'application/json',
				'stripe-signature': stack.fakeStripeSignature(),
			},
		});
		const stale = { id: 'evt_builtin_stale', type: 'payment_intent.succeeded' };
		const staleAnswer = await stack.deliver(stale, {
			signedAt: Math.floor(Date.now() / 1000) - 600,
		});
		const wrongSecret = { id: 'evt_builtin_other_secret', type: 'payment_intent.succeeded' };
		const otherBytes = Buffer.from(JSON.stringify(wrongSecret));
		const otherAnswer = await stack.deliver(otherBytes, {
			headers: {
				'content-type': 'application/json',
				'stripe-signature': stack.stripeSignature(otherBytes, { secret: 'whsec_not_the_one' }),
			},
		});
		for (const answer of [forgedAnswer, staleAnswer, otherAnswer]) {
			assert.deepEqual(
				[answer.response.status, answer.response.json],
				[401, INVALID_SIGNATURE_ANSWER],
			);
			assert.match(answer.response.headers['content-type'] ?? '', /^application\/problem\+json/);
			assert.equal(answer.execution.nodesRun.includes('Reserve Key'), false);
		}
		for (const event of [forged, stale, wrongSecret]) {
			assert.deepEqual(await stack.keyRows(`evt:${event.id}`), []);
			assert.deepEqual(await stack.businessRows(`evt:${event.id}`), []);
		}
	}),
);

/** A multipart/form-data body: text fields, and the file parts as n8n's Webhook node reads them. */
function multipart(
	/** @type {Record<string, string>} */ fields,
	/** @type {Array<{ name: string, fileName: string, bytes: Buffer }>} */ files,
) {
	const boundary = `e2e${randomUUID().replaceAll('-', '')}`;
	const parts = [
		...Object.entries(fields).map(
			([name, value]) =>
				`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
		),
		...files.map(({ name, fileName, bytes }) =>
			Buffer.concat([
				Buffer.from(
					`--${boundary}\r\ncontent-disposition: form-data; name="${name}"; filename="${fileName}"\r\ncontent-type: application/json\r\n\r\n`,
				),
				bytes,
				Buffer.from('\r\n'),
			]),
		),
		`--${boundary}--\r\n`,
	];
	return {
		body: Buffer.concat(parts.map((part) => (Buffer.isBuffer(part) ? part : Buffer.from(part)))),
		contentType: `multipart/form-data; boundary=${boundary}`,
	};
}

/** GitHub's headers for these bytes: X-Hub-Signature-256 with the stack's secret, a delivery id. */
function githubHeaders(/** @type {Buffer} */ bytes, delivery = randomUUID()) {
	return {
		'x-github-event': 'push',
		'x-github-delivery': delivery,
		'x-hub-signature-256': `sha256=${createHmac('sha256', E2E_STRIPE_SECRET).update(bytes).digest('hex')}`,
	};
}

test(
	'multipart forgery: a captured signed body as file part "data" plus forged fields → 401, nothing reserved',
	{ timeout: 120_000 },
	() =>
		withN8nLog(async () => {
			// Stripe: the signature of a captured delivery, its bytes as the file, a forged id in the fields.
			const captured = Buffer.from(
				JSON.stringify({ id: 'evt_mp_captured', type: 'charge.succeeded' }),
			);
			const forgedStripe = multipart({ id: 'evt_mp_forged', type: 'charge.refunded' }, [
				{ name: 'data', fileName: 'body.json', bytes: captured },
			]);
			const stripeAnswer = await stack.deliver(forgedStripe.body, {
				contentType: forgedStripe.contentType,
				headers: { 'stripe-signature': stack.stripeSignature(captured) },
			});
			// GitHub: its HMAC is of the binary "data", which is the file part here.
			const ghCaptured = Buffer.from(JSON.stringify({ zen: 'captured', hook_id: 1 }));
			const forgedGitHub = multipart({ zen: 'forged', hook_id: '2' }, [
				{ name: 'data', fileName: 'payload.json', bytes: ghCaptured },
			]);
			const githubAnswer = await stack.deliver(forgedGitHub.body, {
				to: github,
				sign: false,
				contentType: forgedGitHub.contentType,
				headers: githubHeaders(ghCaptured),
			});
			// Fields only, no file: refused the same way, not a 500 from a missing binary.
			const fieldsOnly = multipart({ id: 'evt_mp_fields_only' }, []);
			const fieldsAnswer = await stack.deliver(fieldsOnly.body, {
				contentType: fieldsOnly.contentType,
				headers: { 'stripe-signature': stack.stripeSignature(fieldsOnly.body) },
			});
			for (const answer of [stripeAnswer, githubAnswer, fieldsAnswer]) {
				assert.deepEqual(
					[answer.response.status, answer.response.json],
					[401, INVALID_SIGNATURE_ANSWER],
				);
				assert.match(answer.response.headers['content-type'] ?? '', /^application\/problem\+json/);
				assert.equal(answer.execution.nodesRun.includes('Reserve Key'), false);
				assert.equal(answer.execution.nodesRun.includes('Raw Body as Text'), false);
			}
			for (const id of ['evt_mp_captured', 'evt_mp_forged', 'evt_mp_fields_only']) {
				assert.deepEqual(await stack.keyRows(`evt:${id}`), []);
				assert.deepEqual(await stack.businessRows(`evt:${id}`), []);
			}
			assert.deepEqual(await stack.keyRows(`sha256:${sha256Hex(ghCaptured)}`), []);
		}),
);

/** The package's answer for a delivery read under a media type its sender does not use. */
const UNSUPPORTED_MEDIA_TYPE = {
	type: `${CLIENT_ERROR_DOCS}#unsupported-media-type`,
	title: CLIENT_ERRORS['unsupported-media-type'].title,
	status: 415,
};

/** One of the other providers' published workflows, by provider value. */
function otherWorkflow(/** @type {string} */ value) {
	const at = OTHER_PROVIDERS.indexOf(value);
	assert.ok(at >= 0, `${value} has a built-in workflow`);
	return otherWorkflows[at];
}

test(
	'Stripe: one signed event replayed as text/plain, without Content-Type and as a form → 415 problem+json, nothing reserved, one business row',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const event = { id: 'evt_builtin_content_type', type: 'payment_intent.succeeded' };
			const bytes = Buffer.from(JSON.stringify(event));
			const signature = stack.stripeSignature(bytes);
			const businessBefore = (await stack.businessRows()).length;
			const keysBefore = (await stack.keyRows()).length;
			const send = (/** @type {string} */ contentType) =>
				stack.deliver(bytes, { contentType, headers: { 'stripe-signature': signature } });
			const json = await send('application/json');
			assert.deepEqual([json.response.status, json.response.json], [200, { status: 'processed' }]);
			for (const contentType of ['text/plain', '', 'application/x-www-form-urlencoded']) {
				const replay = await send(contentType);
				assert.equal(replay.response.status, 415, `${contentType}: ${replay.response.text}`);
				assert.match(replay.response.headers['content-type'] ?? '', /^application\/problem\+json/);
				assert.deepEqual(
					{ ...replay.response.json, detail: undefined },
					{ ...UNSUPPORTED_MEDIA_TYPE, detail: undefined },
				);
				assert.ok(replay.execution.nodesRun.includes('Sent as Signed?'));
				assert.equal(replay.execution.nodesRun.includes('Reserve Key'), false);
			}
			// A charset other than UTF-8 is refused too (n8n decodes the body in the declared charset, so
			// latin1 would read other text from the same bytes); UTF-8 in any spelling is the JSON above.
			const latin1 = await send('application/json; charset=latin1');
			assert.equal(latin1.response.status, 415, latin1.response.text);
			assert.equal(latin1.execution.nodesRun.includes('Reserve Key'), false);
			const utf8 = await send('Application/JSON; charset="UTF-8"');
			assert.deepEqual(
				[utf8.response.status, utf8.response.json],
				[200, { status: 'duplicate', key: `evt:${event.id}` }],
			);
			assert.equal((await stack.businessRows(`evt:${event.id}`)).length, 1);
			assert.equal((await stack.businessRows()).length, businessBefore + 1);
			assert.equal((await stack.keyRows()).length, keysBefore + 1);
		}),
);

test(
	'Slack posts forms too: a signed form is processed once under slack:<event_id>; JSON bytes claimed as a form → 415',
	{ timeout: 120_000 },
	() =>
		withN8nLog(async () => {
			const slack = PROVIDERS.find((/** @type {any} */ p) => p.value === 'slack');
			const to = otherWorkflow('slack');
			const asForm = { ...slack, contentTypes: ['application/x-www-form-urlencoded'] };
			const eventId = `Ev${randomUUID().replaceAll('-', '')}`;
			const form = signAs(asForm, {
				body: { command: '/deploy', text: 'a b' },
				secret: E2E_STRIPE_SECRET,
				eventId,
			});
			assert.equal(form.headers['content-type'], 'application/x-www-form-urlencoded');
			const send = async (/** @type {{ body: Buffer, headers: Record<string, string> }} */ d) =>
				await stack.deliver(d.body, { to, sign: false, contentType: '', headers: d.headers });
			const first = await send(form);
			const again = await send(form);
			assert.deepEqual(
				[first.response.status, first.response.json],
				[200, { status: 'processed' }],
			);
			assert.deepEqual(
				[again.response.status, again.response.json],
				[200, { status: 'duplicate', key: `slack:${eventId}` }],
			);
			assert.equal((await stack.businessRows(`slack:${eventId}`)).length, 1);
			const json = signAs(slack, { body: { type: 'event_callback' }, secret: E2E_STRIPE_SECRET });
			const claimedForm = await send({
				body: json.body,
				headers: { ...json.headers, 'content-type': 'application/x-www-form-urlencoded' },
			});
			assert.equal(claimedForm.response.status, 415, claimedForm.response.text);
			assert.equal(claimedForm.execution.nodesRun.includes('Reserve Key'), false);
		}),
);

test(
	"Linear: its own retry (same Linear-Delivery, fresh webhookTimestamp, signed anew) and a replay under a fresh Linear-Delivery → duplicate, the package's signed: key, one business row",
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const linear = /** @type {any} */ (
				PROVIDERS.find((/** @type {any} */ p) => p.value === 'linear')
			);
			const to = otherWorkflow('linear');
			const delivery = randomUUID();
			const body = {
				action: 'create',
				type: 'Issue',
				data: { id: randomUUID(), title: 'e2e: built-in Linear retry' },
			};
			const now = Math.floor(Date.now() / 1000);
			const attempt = (/** @type {number} */ nowSeconds) =>
				signAs(linear, { body, secret: E2E_STRIPE_SECRET, eventId: delivery, nowSeconds });
			const firstAttempt = attempt(now - 20);
			const retryAttempt = attempt(now);
			assert.notEqual(firstAttempt.body.toString(), retryAttempt.body.toString());
			assert.notEqual(
				firstAttempt.headers['linear-signature'],
				retryAttempt.headers['linear-signature'],
			);
			// The key the package gives the same delivery (verifiedDelivery.ts): a user moving keeps it.
			const rules = {
				contentTypes: linear.contentTypes,
				description: linear.signing,
				renewed: perAttemptPaths(linear.signing, linear.retry?.renewedBodyFields),
			};
			const verified = /** @type {any} */ (
				readVerifiedDelivery('linear', linear.label, rules, {
					bytes: firstAttempt.body,
					headers: firstAttempt.headers,
					n8nBody: JSON.parse(firstAttempt.body.toString()),
				})
			);
			const packageDigest = verified.digest;
			assert.match(packageDigest, /^signed:[0-9a-f]{64}$/);
			const businessBefore = (await stack.businessRows()).length;
			const send = async (/** @type {{ body: Buffer, headers: Record<string, string> }} */ d) =>
				await stack.deliver(d.body, { to, sign: false, contentType: '', headers: d.headers });
			const first = await send(firstAttempt);
			assert.deepEqual(
				[first.response.status, first.response.json],
				[200, { status: 'processed' }],
			);
			const retry = await send(retryAttempt);
			assert.deepEqual(
				[retry.response.status, retry.response.json],
				[200, { status: 'duplicate', key: packageDigest }],
			);
			const replay = await send({
				body: retryAttempt.body,
				headers: { ...retryAttempt.headers, 'linear-delivery': randomUUID() },
			});
			assert.deepEqual(
				[replay.response.status, replay.response.json],
				[200, { status: 'duplicate', key: packageDigest }],
			);
			assert.equal((await stack.businessRows(packageDigest)).length, 1);
			assert.equal((await stack.businessRows()).length, businessBefore + 1);
			assert.deepEqual(await stack.keyRows(`linear:${delivery}`), []);
		}),
);

test(
	'Square signs the URL: a delivery to the URL with a query, signed over it, is processed; a query value that is not text → 401',
	{ timeout: 120_000 },
	() =>
		withN8nLog(async () => {
			const square = PROVIDERS.find((/** @type {any} */ p) => p.value === 'square');
			const to = otherWorkflow('square');
			const withQuery = `${to.webhookUrl}?shop=a+b&tilde=%7E&e=%C3%A9`;
			const genuine = signAs(square, {
				body: { type: 'payment.updated' },
				secret: E2E_STRIPE_SECRET,
				url: withQuery,
			});
			const send = async (
				/** @type {string} */ url,
				/** @type {{ body: Buffer, headers: Record<string, string> }} */ d,
			) =>
				await stack.deliver(d.body, {
					to: { ...to, webhookUrl: url },
					sign: false,
					contentType: '',
					headers: d.headers,
				});
			const first = await send(withQuery, genuine);
			assert.deepEqual(
				[first.response.status, first.response.json],
				[200, { status: 'processed' }],
			);
			// Signed without the query, sent with one: the signed URL is not the one called.
			const withoutQuery = signAs(square, {
				body: { type: 'payment.updated' },
				secret: E2E_STRIPE_SECRET,
				url: to.webhookUrl,
			});
			const moved = await send(`${to.webhookUrl}?x=1`, withoutQuery);
			assert.equal(moved.response.status, 401, moved.response.text);
			const nested = `${to.webhookUrl}?role[admin]=true`;
			const odd = signAs(square, {
				body: { type: 'payment.updated' },
				secret: E2E_STRIPE_SECRET,
				url: nested,
			});
			const refused = await send(nested, odd);
			assert.equal(refused.response.status, 401, refused.response.text);
			assert.equal(refused.execution.nodesRun.includes('Reserve Key'), false);
		}),
);

test(
	'GitHub: a captured delivery resent under a fresh X-GitHub-Delivery is a duplicate (keyed on the signed body)',
	{ timeout: 120_000 },
	() =>
		withN8nLog(async () => {
			const bytes = Buffer.from(JSON.stringify({ ref: 'refs/heads/main', after: randomUUID() }));
			const key = `sha256:${sha256Hex(bytes)}`;
			const headers = githubHeaders(bytes);
			const first = await stack.deliver(bytes, { to: github, sign: false, headers });
			const replayed = await stack.deliver(bytes, {
				to: github,
				sign: false,
				headers: { ...headers, 'x-github-delivery': randomUUID() },
			});
			assert.deepEqual(
				[first.response.status, first.response.json],
				[200, { status: 'processed' }],
			);
			assert.deepEqual(
				[replayed.response.status, replayed.response.json],
				[200, { status: 'duplicate', key }],
			);
			assert.equal((await stack.businessRows(key)).length, 1);
			assert.equal((await keyRow(key))?.status, 'completed');
		}),
);

test(
	'a signed delivery whose id cannot be a key → 400 problem+json with the reason, nothing reserved',
	{ timeout: 120_000 },
	() =>
		withN8nLog(async () => {
			const cases = [
				[{ nested: 'evt_object' }, 'The event id is an object, not a text or number'],
				[['evt_array'], 'The event id is an array, not a text or number'],
				['evt_nul\u0000', 'The key contains a NUL character, which PostgreSQL text cannot store'],
				['e'.repeat(1000), 'The key is 1004 bytes long; at most 1000 are allowed'],
			];
			for (const [id, detail] of cases) {
				const answer = await stack.deliver({ id, type: 'payment_intent.succeeded' });
				assert.equal(answer.response.status, 400, answer.response.text);
				assert.match(answer.response.headers['content-type'] ?? '', /^application\/problem\+json/);
				assert.deepEqual(answer.response.json, {
					type: 'https://github.com/n8n-nodes-idempotency/n8n-nodes-idempotency/blob/main/docs/errors.md#invalid-key',
					title: 'The event id cannot be an idempotency key',
					status: 400,
					detail,
				});
				assert.equal(answer.execution.nodesRun.includes('Reserve Key'), false);
				assert.equal(answer.execution.status, 'success');
			}
			const { rows } = await stack.keysDb.query(
				`SELECT count(*)::int AS n FROM processed_events WHERE key LIKE 'evt:evt\\_nul%' OR key LIKE 'evt:eeee%'`,
			);
			assert.equal(rows[0].n, 0);
		}),
);

test(
	'a failing business step → Release Key, 500, and the retry is processed',
	{ timeout: 120_000 },
	() =>
		withN8nLog(async () => {
			const event = { id: 'evt_builtin_fails', type: 'refused.by.business' };
			const key = `evt:${event.id}`;
			const failed = await deliverWithFailingBusinessStep(stack, event);
			assert.deepEqual(
				[failed.response.status, failed.response.json],
				[500, { status: 'failed', key }],
			);
			assert.ok(failed.execution.nodesRun.includes('Release Key'));
			assert.equal(await keyRow(key), undefined, 'the key was released');
			const retried = await stack.deliver(event);
			assert.deepEqual(
				[retried.response.status, retried.response.json],
				[200, { status: 'processed' }],
			);
			assert.equal((await stack.businessRows(key)).length, 1);
		}),
);

/** Is an INSERT into business_log running (the slow business step)? */
const businessInsertRunning = async () => (await stack.businessInsertsRunning()) > 0;

test(
	'kill -9 during the business step: 409 while the lease runs, then processed once after it',
	{ timeout: 600_000 },
	() =>
		withN8nLog(async () => {
			const key = `evt:${SLOW_EVENT.id}`;
			await stack.keysDb.query(`INSERT INTO slow_business_step VALUES ($1)`, [SLOW_EVENT.type]);
			const first = stack.send(SLOW_EVENT, { timeoutMs: 300_000 }).catch((error) => ({ error }));
			await waitFor('the slow business step to be running', businessInsertRunning, {
				timeoutMs: 60_000,
				intervalMs: 100,
			});
			assert.equal((await keyRow(key)).status, 'in_progress');

			await stack.crashAndRestartN8n();
			/** @type {{ error?: Error, status?: number }} */
			const lost = await first;
			assert.ok(lost.error || (lost.status ?? 0) >= 500, 'the killed execution never answered 2xx');
			await waitFor(
				"PostgreSQL to cancel the dead execution's insert",
				async () => !(await businessInsertRunning()),
				{
					timeoutMs: 30_000,
					intervalMs: 200,
				},
			);
			assert.equal((await stack.businessRows(key)).length, 0);
			await stack.keysDb.query(`DELETE FROM slow_business_step`);

			const leaseLeft = (await keyRow(key)).lease_left;
			let retryAfter = 0;
			if (leaseLeft > 3) {
				const early = await stack.deliver(SLOW_EVENT);
				assert.equal(early.response.status, 409, early.response.text);
				assert.equal(early.branch, 'in flight');
				retryAfter = Number(early.response.headers['retry-after']);
				assert.ok(retryAfter >= 1 && retryAfter <= LEASE_SECONDS, `Retry-After ${retryAfter}`);
			}
			await new Promise((resolve) =>
				setTimeout(resolve, (Math.max(retryAfter, leaseLeft) + 1) * 1000),
			);
			const retried = await stack.deliver(SLOW_EVENT);
			assert.deepEqual(
				[retried.response.status, retried.response.json],
				[200, { status: 'processed' }],
			);
			assert.ok(retried.execution.nodesRun.includes(BUSINESS_STEP));
			const row = await keyRow(key);
			assert.deepEqual([row.status, row.attempts], ['completed', 2]);

			const late = await stack.deliver(SLOW_EVENT);
			assert.deepEqual([late.response.status, late.response.json?.status], [200, 'duplicate']);
			assert.equal((await stack.businessRows(key)).length, 1);
			process.stderr.write(
				`[builtin] kill -9: lease ${LEASE_SECONDS} s, ${leaseLeft.toFixed(0)} s left after the restart, then processed once (attempt 2)\n`,
			);
		}),
);

test(
	'every other provider the built-in path expresses: a genuine delivery processed once, a forged one 401',
	{ timeout: 300_000 },
	() =>
		withN8nLog(async () => {
			assert.ok(OTHER_PROVIDERS.length > 0);
			const outcomes = [];
			for (const [index, value] of OTHER_PROVIDERS.entries()) {
				const provider = PROVIDERS.find((/** @type {any} */ p) => p.value === value);
				const to = otherWorkflows[index];
				const sign = (/** @type {string} */ secret) =>
					signAs(provider, {
						body: { type: 'builtin.e2e', provider: value },
						secret,
						url: to.webhookUrl,
					});
				const genuine = sign(E2E_STRIPE_SECRET);
				const send = async (/** @type {{ body: Buffer, headers: Record<string, string> }} */ d) =>
					(await stack.deliver(d.body, { to, sign: false, headers: d.headers })).response;
				const first = await send(genuine);
				const again = await send(genuine);
				const forged = await send(sign('not-the-secret'));
				outcomes.push([
					value,
					first.status,
					first.json?.status,
					again.json?.status,
					forged.status,
					forged.json?.type === INVALID_SIGNATURE_ANSWER.type,
				]);
			}
			process.stderr.write(`[builtin] other providers: ${JSON.stringify(outcomes)}\n`);
			assert.deepEqual(
				outcomes,
				OTHER_PROVIDERS.map((value) => [value, 200, 'processed', 'duplicate', 401, true]),
			);
		}),
);

test(
	"each sender's signed handshake the built-in path answers (the table decides which): byte for byte, nothing reserved; forged 401",
	{ timeout: 300_000 },
	() =>
		withN8nLog(async () => {
			const { builtInHandshake } = require('../../dist/planner/builtIn.cjs');
			const published = [
				['github', github],
				...OTHER_PROVIDERS.map((value, index) => [value, otherWorkflows[index]]),
			];
			const answered = published.filter(
				([value]) =>
					builtInHandshake(PROVIDERS.find((/** @type {any} */ p) => p.value === value))?.answered,
			);
			assert.ok(answered.length > 0);
			const keysBefore = (await stack.keyRows()).length;
			const businessBefore = (await stack.businessRows()).length;
			for (const [value, to] of answered) {
				const provider = PROVIDERS.find((/** @type {any} */ p) => p.value === value);
				const example = SIGNED_EXAMPLES[value];
				const send = async (/** @type {string} */ secret) => {
					const headers = signDelivery(provider, signerFor(provider.signing, secret), {
						bytes: Buffer.from(example.body),
						headers: { ...example.headers, 'content-type': 'application/json' },
						nowSeconds: Math.floor(Date.now() / 1000),
					});
					return await stack.deliver(example.body, { to, sign: false, headers });
				};
				const genuine = await send(E2E_STRIPE_SECRET);
				const expected = example.expected(E2E_STRIPE_SECRET);
				assert.deepEqual(
					[
						genuine.response.status,
						genuine.response.headers['content-type'],
						genuine.response.text,
					],
					[expected.statusCode, expected.headers['content-type'], expected.body],
					value,
				);
				assert.ok(!genuine.execution.nodesRun.includes(BUSINESS_STEP), value);
				const forged = await send('not-the-secret');
				assert.deepEqual(
					[forged.response.status, forged.response.json],
					[401, INVALID_SIGNATURE_ANSWER],
				);
			}
			assert.equal((await stack.keyRows()).length, keysBefore, 'nothing reserved');
			assert.equal((await stack.businessRows()).length, businessBefore, 'no business row');
			process.stderr.write(
				`[builtin] handshakes answered: ${answered.map(([value]) => value).join(', ')}\n`,
			);
		}),
);
