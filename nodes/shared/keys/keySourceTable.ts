/**
 * Every Key Source of Idempotency Reserve, defined once: the option's value and label, its
 * subtitle, and where the event id is read. The node's options, its subtitle and the key lookup
 * are all made from this table, so they cannot drift apart.
 * The presets are made from the provider table (nodes/shared/webhook/providers/), one per
 * provider, followed by the message presets (messagePresets.ts), one per broker item shape.
 * Values are stored in saved workflows: never rename one.
 */

import {
	PROVIDERS,
	type EventIdLocation,
	type ProviderDefinition,
	type ProviderValue,
} from '../webhook/providers';
import { eventIdPrefix, UNSCOPED_PROVIDER } from './prefixes';
import {
	MESSAGE_PRESETS,
	type MessageIdLocation,
	type MessagePresetDefinition,
	type MessagePresetValue,
} from './messagePresets';

/** The sources that are not a provider's preset. */
type GeneralSource = 'eventIdOrBodyHash' | 'bodyHash' | 'custom' | 'idempotencyKeyHeader';

/** A general source, a provider's preset (the provider's value) or a message preset. */
export type KeySource = GeneralSource | ProviderValue | MessagePresetValue;

/** Where a source finds the event id. Presets fall back to the body hash when it is missing or empty. */
export type IdLocation =
	/** The Event ID parameter (default `{{ $json.body.id }}`), else the body hash. */
	| { kind: 'eventIdParameter' }
	/** The Custom Key parameter, used as the whole key. */
	| { kind: 'customKey' }
	/** No id: always the body hash. */
	| { kind: 'none' }
	/** A provider's preset: a field of the JSON body, or headers (see webhook/providers/). */
	| EventIdLocation
	/** A message preset: the broker's message id, else the content hash (messagePresets.ts). */
	| MessageIdLocation
	/** A client's Idempotency-Key request header (idempotencyKeyHeader.ts); no fallback: missing is an error. */
	| { kind: 'idempotencyKeyHeader' };

export interface KeySourceDefinition<Value extends string = KeySource> {
	value: Value;
	/** The option's label in the Key Source list. */
	name: string;
	/** What the node's subtitle shows for this source. */
	subtitle: string;
	location: IdLocation;
	/** The option's description; for presets it is written from `location`, see presetDescription. */
	description: string;
	/** A provider's preset: its value, which prefixes its event ids (prefixes.ts); none for Stripe's and the others. */
	scope?: string;
}

const FALLBACK = 'else SHA-256 of the raw body';

/** Stripe's events keep `evt:`; every other provider's preset keys its events under its own value. */
function presetScope(value: string): string | undefined {
	return value === UNSCOPED_PROVIDER ? undefined : value;
}

function presetDescription(location: EventIdLocation, scope: string | undefined): string {
	const prefix = `"${eventIdPrefix(scope)}"`;
	if (location.kind === 'body')
		return `Key ${prefix} + body.${location.path.join('.')}, ${FALLBACK}`;
	if (location.kind === 'none')
		return 'Key "sha256:" + SHA-256 of the raw body: this sender puts no event id in its deliveries';
	const [first, ...others] = location.names;
	const alternatives = others.map((name) => `, else the ${name} header`).join('');
	return `Key ${prefix} + the ${first} header${alternatives}, ${FALLBACK}`;
}

/** A provider's preset: its label as name and subtitle, its event id location, its key space. */
function preset<P extends ProviderDefinition>({
	value,
	label,
	eventId,
}: P): KeySourceDefinition<P['value']> {
	const scope = presetScope(value);
	return {
		value,
		name: label,
		subtitle: label,
		location: eventId,
		description: presetDescription(eventId, scope),
		...(scope === undefined ? {} : { scope }),
	};
}

/** A message preset: as a provider's, with the description its table gives. */
function messagePreset<M extends MessagePresetDefinition>({
	value,
	label,
	eventId,
	description,
}: M): KeySourceDefinition<M['value']> {
	return { value, name: label, subtitle: label, location: eventId, description };
}

const EVENT_ID_OR_BODY_HASH: KeySourceDefinition<'eventIdOrBodyHash'> = {
	value: 'eventIdOrBodyHash',
	name: 'Event ID, Else Body Hash',
	subtitle: 'Event ID or body hash',
	location: { kind: 'eventIdParameter' },
	description: 'Key "evt:" + the Event ID; when it is empty, "sha256:" + SHA-256 of the raw body',
};

/** Listed after the presets, in this order. */
const AFTER_PRESETS: ReadonlyArray<KeySourceDefinition<GeneralSource>> = [
	{
		value: 'bodyHash',
		name: 'Body Hash Only',
		subtitle: 'Body hash',
		location: { kind: 'none' },
		description: 'Key "sha256:" + SHA-256 of the raw request body',
	},
	{
		value: 'idempotencyKeyHeader',
		name: 'Idempotency-Key Header (API Clients)',
		subtitle: 'Idempotency-Key header',
		location: { kind: 'idempotencyKeyHeader' },
		description:
			'Key "idk:" + the client\'s Idempotency-Key header (IETF draft: "…" or the bare token). A request without it is an item error. Scope it per client with Namespace.',
	},
	{
		value: 'custom',
		name: 'Custom',
		subtitle: 'Custom key',
		location: { kind: 'customKey' },
		description: 'Key is the Custom Key expression, used as it is (no prefix)',
	},
];

/**
 * Every source: Event ID or body hash first, then one preset per provider of the table, then the
 * message presets, then the others.
 */
export function keySourcesFrom<P extends ProviderDefinition, M extends MessagePresetDefinition>(
	providers: readonly P[],
	messages: readonly M[] = [],
): Array<KeySourceDefinition<GeneralSource | P['value'] | M['value']>> {
	return [
		EVENT_ID_OR_BODY_HASH,
		...providers.map(preset),
		...messages.map(messagePreset),
		...AFTER_PRESETS,
	];
}

export const KEY_SOURCES: readonly KeySourceDefinition[] = keySourcesFrom(
	PROVIDERS,
	MESSAGE_PRESETS,
);

const BY_VALUE = new Map(KEY_SOURCES.map((definition) => [definition.value, definition]));

export function keySourceDefinition(value: string): KeySourceDefinition | undefined {
	return BY_VALUE.get(value as KeySource);
}
