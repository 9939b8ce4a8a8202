// Twilio signs one string: the URL (query included) followed by the form's fields sorted by name,
// each name then value, with nothing between them. Fields moved from the form to the end of the
// URL's query are the same string, so the same signature: twilio's own validateRequest (the pinned
// `twilio` devDependency, the oracle here) accepts the moved request. Reserve's replay guard keys on
// that string too, so the moved request is a duplicate, never a second run of the business step
// with `AccountSid` missing from the form. Through n8n-core's WorkflowExecute and a real PostgreSQL.
const { test, expect } = require('@jest/globals');
const twilio = require('twilio');
const { useTestDatabase } = require('../support/database');
const { registerTestNode, runWorkflow } = require('../support/engine');
const { reserveNode, RESERVE } = require('../support/signatureNodes');
const { FORM_MEDIA_TYPE, webhookItem } = require('../support/webhookItems');

const db = useTestDatabase();

registerTestNode('afterTwilio', async function () {
	return [this.getInputData()];
});

const AUTH_TOKEN = '12345';
const WEBHOOK_URL = 'http://127.0.0.1:5678/webhook/idempotent-webhook';
const FIELDS = {
	AccountSid: 'AC9a9f9392lad99kla0sklakjs90j092j3',
	ApiVersion: '2010-04-01',
	Body: 'hello',
	From: '+15550001111',
	MessageSid: 'SM0123456789abcdef0123456789abcdef',
};

/** The item n8n's Webhook node makes of a Twilio form POST to `?query`, signed for `signedUrl`. */
function twilioItem(query, fields, signature, idempotencyToken) {
	const item = webhookItem({
		rawBody: new URLSearchParams(fields).toString(),
		mediaType: FORM_MEDIA_TYPE,
		headers: {
			'x-twilio-signature': signature,
			'i-twilio-idempotency-token': idempotencyToken,
		},
	});
	item.json.webhookUrl = WEBHOOK_URL;
	item.json.query = query;
	return item;
}

function workflow(node, outputCount) {
	const after = Array.from({ length: outputCount }, (_, index) => ({
		id: `after-${index}`,
		name: `After ${index}`,
		type: 'test.afterTwilio',
		typeVersion: 1,
		position: [300, index * 100],
		parameters: {},
	}));
	return {
		name: 'Twilio signed string',
		nodes: [node, ...after],
		connections: {
			[node.name]: { main: after.map(({ name }) => [{ node: name, type: 'main', index: 0 }]) },
		},
		settings: { executionOrder: 'v1' },
	};
}

async function reserve(item) {
	// Simple mode: a repeat is `duplicate` at once, whether or not the first one finished.
	const { node, outputs } = reserveNode('twilio', { mode: 'simple', keySource: 'twilio' });
	const run = await runWorkflow(workflow(node, outputs.count), [item], {
		credentials: db.credential(),
		credentialsByType: { webhookSigningSecretApi: { secret: AUTH_TOKEN } },
	});
	const routed = [];
	for (let output = 0; output < outputs.count; output++)
		if (run.output(RESERVE, output).length > 0) routed.push(output);
	return { routed, outputs, run };
}

test("fields moved from the form into the query: the same signed string (twilio's validateRequest), a duplicate", async () => {
	await db.query('DROP TABLE IF EXISTS processed_events');
	const url = `${WEBHOOK_URL}?src=sms`;
	const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, FIELDS);
	expect(twilio.validateRequest(AUTH_TOKEN, signature, url, FIELDS)).toBe(true);

	// The first fields in Twilio's sorted order, appended to the query's last value.
	const { AccountSid, ApiVersion, ...rest } = FIELDS;
	const moved = `sms${'AccountSid'}${AccountSid}${'ApiVersion'}${ApiVersion}`;
	const movedUrl = `${WEBHOOK_URL}?src=${moved}`;
	expect(twilio.validateRequest(AUTH_TOKEN, signature, movedUrl, rest)).toBe(true);

	const first = await reserve(twilioItem({ src: 'sms' }, FIELDS, signature, 'token-1'));
	expect(first.routed).toEqual([first.outputs.new]);
	const replay = await reserve(twilioItem({ src: moved }, rest, signature, 'token-2'));
	expect(replay.routed).toEqual([replay.outputs.duplicate]);
	const { rows } = await db.query('SELECT key FROM processed_events');
	expect(rows).toHaveLength(1);
	expect(rows[0].key).toMatch(/^signed:[0-9a-f]{64}$/);
});

test('another signed string (a field changed, as twilio signs it anew) is a new key', async () => {
	await db.query('DROP TABLE IF EXISTS processed_events');
	const url = `${WEBHOOK_URL}?src=sms`;
	const other = { ...FIELDS, MessageSid: 'SM0123456789abcdef0123456789abcdee' };
	const sign = (fields) => twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, fields);
	expect((await reserve(twilioItem({ src: 'sms' }, FIELDS, sign(FIELDS), 't1'))).routed).toEqual([
		0,
	]);
	expect((await reserve(twilioItem({ src: 'sms' }, other, sign(other), 't2'))).routed).toEqual([0]);
	const { rows } = await db.query('SELECT key FROM processed_events');
	expect(rows).toHaveLength(2);
});
