/**
 * The node settings the key planner page asks for, with the node's own defaults and option lists
 * (Reserve's reserveSettings.ts, the key source table), so the page offers what the node offers.
 */
import {
	DEFAULT_FINGERPRINT_EXPRESSION,
	DEFAULT_LEASE_SECONDS,
	DEFAULT_MODE,
	defaultFingerprint,
	FINGERPRINT_OPTIONS,
	MODE_OPTIONS,
	type FingerprintSource,
	type ReserveMode,
} from '../nodes/shared/reserveRules/reserveSettings';
import {
	KEY_SOURCES,
	keySourceDefinition,
	type KeySource,
} from '../nodes/shared/keys/keySourceTable';

export { KEY_SOURCES };

export type Mode = ReserveMode;

/** The node settings the page asks for. Expressions are as the node holds them, with or without the leading "=". */
export interface PlannerSettings {
	keySource: KeySource;
	/** The Event ID (default source) or Custom Key (custom source) parameter. */
	eventIdPath: string;
	namespace: string;
	schema: string;
	table: string;
	retentionDays: number;
	mode: Mode;
	leaseSeconds: number;
	/** The Fingerprint parameter; its default depends on the mode (fingerprintDefault). */
	fingerprint: FingerprintSource;
	/** The Fingerprint Fields parameter (Expression fingerprints only). */
	fingerprintExpression: string;
}

export const DEFAULT_SETTINGS: PlannerSettings = {
	keySource: 'eventIdOrBodyHash',
	eventIdPath: '{{ $json.body.id }}',
	namespace: '',
	schema: 'public',
	table: 'processed_events',
	retentionDays: 30,
	mode: DEFAULT_MODE,
	leaseSeconds: DEFAULT_LEASE_SECONDS,
	fingerprint: defaultFingerprint(DEFAULT_MODE),
	fingerprintExpression: DEFAULT_FINGERPRINT_EXPRESSION.replace(/^=/, ''),
};

/** The Fingerprint options, values and labels as the node has them. */
export const FINGERPRINT_SOURCES = FINGERPRINT_OPTIONS;

/** The Fingerprint a new node has in this mode: raw body in lease mode, none in simple mode. */
export function fingerprintDefault(mode: Mode): FingerprintSource {
	return defaultFingerprint(mode);
}

/** The Fingerprint Fields default, without the leading "=" (as the page's fields hold expressions). */
export const FINGERPRINT_EXPRESSION_DEFAULT = DEFAULT_FINGERPRINT_EXPRESSION.replace(/^=/, '');

/** The node's Mode options, values and labels as the node has them. */
export const MODES: ReadonlyArray<{ value: Mode; name: string }> = MODE_OPTIONS;

/** Does this source read the Event ID or Custom Key parameter, and what is it called in the node? */
export function parameterOfSource(
	source: KeySource,
): { name: 'eventId' | 'customKey'; label: string } | undefined {
	const location = keySourceDefinition(source)?.location.kind;
	if (location === 'eventIdParameter') return { name: 'eventId', label: 'Event ID' };
	if (location === 'customKey') return { name: 'customKey', label: 'Custom Key' };
	return undefined;
}

/** A field as the node stores it: text with `{{ … }}` is an expression (stored with a leading "="), anything else fixed text. */
export function asNodeParameter(text: string): string {
	if (text.startsWith('=')) return text;
	return text.includes('{{') ? `=${text}` : text;
}
