/**
 * Reserve's outputs, named for what happened. Version 1 keeps `true`/`false`; version 2 sends a
 * duplicate whose first execution still runs to `in flight` (lease mode) and an unsigned delivery
 * to `invalid signature` (when it verifies), so a template needs no IF node to tell them apart.
 *
 * n8n runs this function's source text as the node's `outputs` expression, in the editor and the
 * engine, and the node routes by the same list, so what is drawn and what is routed cannot differ.
 * It must stay self-contained: no imports, no outer names.
 */
export function reserveOutputNames(
	parameters: { mode?: unknown; signature?: unknown },
	nodeVersion: number,
): string[] {
	if (nodeVersion < 2) return ['true', 'false'];
	const names = ['new', 'duplicate'];
	if (parameters.mode !== 'simple') names.push('in flight');
	if (typeof parameters.signature === 'string' && parameters.signature !== 'none')
		names.push('invalid signature');
	return names;
}

/** The same list as n8n's `outputs` expression: one main output per name. */
export const reserveOutputsExpression: `={{${string}}}` = `={{(${reserveOutputNames.toString()})($parameter, $nodeVersion).map((name) => ({ type: 'main', displayName: name }))}}`;

export interface ReserveOutputs {
	count: number;
	new: number;
	duplicate: number;
	/** Where an in-progress duplicate goes: its own output, or `duplicate` where there is none. */
	inFlight: number;
	/** Undefined when the node does not verify signatures. */
	invalidSignature?: number;
}

export function reserveOutputs(
	parameters: { mode?: unknown; signature?: unknown },
	nodeVersion: number,
): ReserveOutputs {
	const names = reserveOutputNames(parameters, nodeVersion);
	const at = (name: string) => (names.includes(name) ? names.indexOf(name) : undefined);
	return {
		count: names.length,
		new: 0,
		duplicate: 1,
		inFlight: at('in flight') ?? 1,
		invalidSignature: at('invalid signature'),
	};
}
