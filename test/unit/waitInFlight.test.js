// Wait While In Flight's schedule (nodes/IdempotencyReserve/helpers/waitInFlight.ts): how long it
// sleeps between asking again, that it never sleeps past a lease's end, and what it merges. The
// database side (a real takeover, a real completion) is test/integration/waitInFlight.test.js.
const { test, expect } = require('@jest/globals');
const {
	waitWhileInFlight,
	FIRST_POLL_MS,
	MAX_POLL_MS,
} = require('../../dist/nodes/IdempotencyReserve/helpers/waitInFlight');

/** @param {Array<[string, object]>} held @param {Array<[string, object]>} [reserved] */
const outcome = (held, reserved = []) => ({ held: new Map(held), reserved: new Map(reserved) });
const inProgress = (retryAfterSeconds) => ({ status: 'in_progress', retryAfterSeconds });

test('backs off from 200 ms doubling to 2 s, and stops when the wait is used up', async () => {
	const sleeps = [];
	let now = 0;
	const realNow = Date.now;
	Date.now = () => now;
	try {
		const { polls } = await waitWhileInFlight(
			outcome([['k', inProgress(300)]]),
			[{ key: 'k' }],
			6000,
			async () => outcome([['k', inProgress(300)]]),
			async (ms) => {
				sleeps.push(ms);
				now += ms;
			},
		);
		expect(FIRST_POLL_MS).toBe(200);
		expect(MAX_POLL_MS).toBe(2000);
		// 200 + 400 + 800 + 1600 + 2000 = 5000, then the last 1000 ms of the wait.
		expect(sleeps).toEqual([200, 400, 800, 1600, 2000, 1000]);
		expect(polls).toBe(6);
	} finally {
		Date.now = realNow;
	}
});

test('never sleeps past the soonest lease end, and a taken-over key moves to reserved', async () => {
	const sleeps = [];
	const taken = { attempt: 2, leaseUntilMs: 1 };
	const result = await waitWhileInFlight(
		outcome([['k', inProgress(1)]]),
		[{ key: 'k' }],
		60_000,
		async () => outcome([], [['k', taken]]),
		async (ms) => {
			sleeps.push(ms);
		},
	);
	expect(sleeps).toEqual([200]);
	expect(result.outcome.reserved.get('k')).toBe(taken);
	expect(result.outcome.held.has('k')).toBe(false);
});

test('asks only for keys in flight for the same request: completed keys and mismatches are answered at once', async () => {
	const asked = [];
	await waitWhileInFlight(
		outcome([
			['done', { status: 'completed' }],
			['other', { ...inProgress(60), storedFingerprint: 'aaa' }],
			['same', { ...inProgress(60), storedFingerprint: 'bbb' }],
		]),
		[{ key: 'done' }, { key: 'other', fingerprint: 'zzz' }, { key: 'same', fingerprint: 'bbb' }],
		10_000,
		async (targets) => {
			asked.push(targets.map((target) => target.key));
			return outcome([['same', { status: 'completed' }]]);
		},
		async () => undefined,
	);
	expect(asked).toEqual([['same']]);
});
