// Loaded into the n8n server with NODE_OPTIONS=--import=<this file> by the fault suite's clock test:
// shifts the process's idea of the time (Date, Date.now) by N8N_TEST_CLOCK_SHIFT_MS milliseconds,
// as a host whose clock is minutes off would. Timers and durations are left alone: only the wall
// clock is wrong on such a host. Dates built from a given time stay as given.
const shiftMs = Number(process.env.N8N_TEST_CLOCK_SHIFT_MS ?? 0);

if (Number.isFinite(shiftMs) && shiftMs !== 0) {
	const RealDate = globalThis.Date;
	/** @param {any[]} args */
	function ShiftedDate(...args) {
		// Called without new, Date() returns the current time as text.
		if (!new.target) return new RealDate(RealDate.now() + shiftMs).toString();
		return args.length === 0
			? new RealDate(RealDate.now() + shiftMs)
			: new RealDate(.../** @type {[number]} */ (args));
	}
	ShiftedDate.prototype = RealDate.prototype;
	ShiftedDate.now = () => RealDate.now() + shiftMs;
	ShiftedDate.parse = RealDate.parse;
	ShiftedDate.UTC = RealDate.UTC;
	Object.defineProperty(ShiftedDate, 'name', { value: 'Date' });
	globalThis.Date = /** @type {DateConstructor} */ (/** @type {unknown} */ (ShiftedDate));
}
