/**
 * What the page's "Check a signature" takes and gives (planner/signature/signature.ts computes it,
 * planner/signature/signatureHints.ts explains it, planner/page/signatureUi.ts shows it).
 */
import type {
	HmacSettings,
	InvalidReason,
	Provider,
} from '../../nodes/shared/webhook/signatureSchemes';

export interface SignatureInput {
	provider: Provider;
	/** The generic scheme's parameters (used when provider is `hmac`). */
	hmac: HmacSettings;
	secret: string;
	previousSecret: string;
	headersText: string;
	/** The exact bytes of the body. */
	body: Uint8Array;
	/** The URL the sender was given, for schemes that sign it (a `{url}` in the signed content). */
	url?: string;
	toleranceSeconds: number;
	nowSeconds: number;
}

export interface ComparedSignature {
	/** Which secret (`secret`, `previous secret`) or `received`. */
	label: string;
	value: string;
	matches: boolean;
}

export interface SignatureReport {
	/** `valid`, `invalid <reason>`, or `invalid (node error)`: what the node does with the item. */
	verdict: string;
	valid: boolean;
	reason?: InvalidReason;
	/** The node fails before it judges any item (On Error "continue" sends the item to invalid). */
	nodeError?: { message: string; hint: string };
	/** What the sender signed, when the headers say: the content built from the scheme's template. */
	signed?: { content: Uint8Array; signs: string; timestamp?: number };
	expected: ComparedSignature[];
	received: ComparedSignature[];
	/** For schemes with a timestamp: how far it is from now (positive: in the past). */
	age?: { seconds: number; toleranceSeconds: number };
	hint: string;
}

export const DEFAULT_HMAC: HmacSettings = {
	header: 'X-Signature',
	algorithm: 'sha256',
	encoding: 'hex',
	signaturePrefix: '',
	timestampHeader: '',
};
