import type { SigningDescription } from '../schemeTypes';

/** Where a provider puts the event id. Presets fall back to the body hash when it is missing or empty. */
export type EventIdLocation =
	/** A field of the JSON body (`$json.body`), by path (digits index arrays): preferred, since the body is signed. */
	| { kind: 'body'; path: readonly string[] }
	/** The first of these headers that has a value, in this order (names as providers write them). */
	| { kind: 'headers'; names: readonly string[] }
	/** No event id in a delivery (a batch of events, or none at all): the key is the body hash. */
	| { kind: 'none' };

/** A sender whose deliveries cannot be proven genuine from the request alone, and why. */
export interface Unverifiable {
	unverifiable: string;
}

export interface ProviderDefinition {
	/** Stored in workflows (Key Source, Provider, Verify Signature): never rename one. */
	value: string;
	/** Its name everywhere: the options, both nodes' subtitles, the key planner, the docs. */
	label: string;
	/** Where the event id is: the Key Source preset of this provider reads it there. */
	eventId: EventIdLocation;
	/** How it signs (schemeTypes.ts), or why the request alone cannot prove it. */
	signing: SigningDescription | Unverifiable;
	/** The content types its deliveries use (docs/signatures.md; multipart is never verifiable). */
	contentTypes: readonly string[];
	/** How it retries and for how long (docs/signatures.md): the key's retention must outlast it. */
	retries: string;
	/** The provider's own page on signing, where the table entry was read from. */
	docs: string;
}
