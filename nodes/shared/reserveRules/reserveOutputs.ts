/**
 * Reserve's outputs, named for what happened. Version 1 keeps `true`/`false`; version 2 sends a
 * duplicate whose first execution still runs to `in flight` (lease mode), a key reused with another
 * payload to `reused key` (when On Mismatch asks for it) and an unsigned delivery to `invalid
 * signature` (when it verifies), so a template needs no IF node to tell them apart.
 *
 * n8n runs this function's source text as the node's `outputs` expression, in the editor and the
 * engine, and the node routes by the same list, so what is drawn and what is routed cannot differ.
 * It must stay self-contained: no imports, no outer names. So it keeps its own copy of the
 * fingerprint's default by mode (reserveSettings.ts, defaultFingerprint); test/unit/reserveSettings.test.js
 * holds the two equal.
 */
export function reserveOutputNames(
	parameters: ReserveOutputParameters,
	nodeVersion: number,
): string[] {
	if (nodeVersion < 2) return ['true', 'false'];
	const names = ['new', 'duplicate'];
	if (parameters.mode !== 'simple') names.push('in flight');
	// Fingerprint's default differs by mode (fingerprintProperties.ts): none in simple mode.
	const defaultFingerprint = parameters.mode === 'simple' ? 'none' : 'rawBody';
	const fingerprint =
		parameters.fingerprint === undefined ? defaultFingerprint : parameters.fingerprint;
	if (parameters.onMismatch === 'output' && fingerprint !== 'none') names.push('reused key');
	if (typeof parameters.signature === 'string' && parameters.signature !== 'none')
		names.push('invalid signature');
	return names;
}

/** The parameters the outputs depend on, as n8n's `$parameter` or the node's own reads give them. */
export interface ReserveOutputParameters {
	mode?: unknown;
	signature?: unknown;
	fingerprint?: unknown;
	onMismatch?: unknown;
}

/** The same list as n8n's `outputs` expression: one main output per name. */
export const reserveOutputsExpression: `={{${string}}}` = `={{(${reserveOutputNames.toString()})($parameter, $nodeVersion).map((name) => ({ type: 'main', displayName: name }))}}`;

export interface ReserveOutputs {
	count: number;
	new: number;
	duplicate: number;
	/** Where an in-progress duplicate goes: its own output, or `duplicate` where there is none. */
	inFlight: number;
	/** Undefined when a mismatch is flagged on `duplicate` (or fails the item). */
	reusedKey?: number;
	/** Undefined when the node does not verify signatures. */
	invalidSignature?: number;
}

export function reserveOutputs(
	parameters: ReserveOutputParameters,
	nodeVersion: number,
): ReserveOutputs {
	const names = reserveOutputNames(parameters, nodeVersion);
	const at = (name: string) => (names.includes(name) ? names.indexOf(name) : undefined);
	return {
		count: names.length,
		new: 0,
		duplicate: 1,
		inFlight: at('in flight') ?? 1,
		reusedKey: at('reused key'),
		invalidSignature: at('invalid signature'),
	};
}
