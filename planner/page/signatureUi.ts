/**
 * The "Check a signature" part of the page: reads its fields, asks signature.ts (the node's own
 * verification code), writes the verdict, the signed payload, the signatures and the hint. The
 * secrets are read from their fields when a result is computed and kept nowhere else: no storage,
 * no address, no request (the page's Content-Security-Policy refuses any).
 */
import {
	SIGNATURE_SCHEMES,
	type HmacAlgorithm,
	type Provider,
	type SignatureEncoding,
} from '../../nodes/shared/webhook/signatureSchemes';
import { DEFAULT_PROVIDER } from '../../nodes/shared/webhook/providers/defaultProvider';
import { element } from './dom';
import {
	bodyFacts,
	checkSignature,
	DEFAULT_HMAC,
	duration,
	PROVIDER_OPTIONS,
	type ComparedSignature,
	type SignatureReport,
} from '../signature/signature';

/** Text shown of a signed payload; the verdict always covers all of it. */
const SHOWN_CHARACTERS = 200_000;

type SignatureFields = ReturnType<typeof signatureFields>;

/** What changes while the page is open: a loaded file's exact bytes, and the pending update. */
interface CheckState {
	fileBytes?: Uint8Array;
	timer?: number;
}

export function startSignatureCheck(): void {
	const fields = signatureFields();
	// The node's order (the provider table's, Stripe first and Generic HMAC last) and values.
	for (const { value, label } of PROVIDER_OPTIONS)
		fields.provider.add(new Option(label, value, false, value === DEFAULT_PROVIDER));
	fields.hmacHeader.value = DEFAULT_HMAC.header;
	const state: CheckState = {};
	listenForChanges(fields, state);
	update(fields, state);
}

function signatureFields() {
	return {
		form: element<HTMLFormElement>('sigForm'),
		provider: element<HTMLSelectElement>('sigProvider'),
		secret: element<HTMLInputElement>('sigSecret'),
		previousSecret: element<HTMLInputElement>('sigPreviousSecret'),
		toleranceField: element<HTMLDivElement>('sigToleranceField'),
		tolerance: element<HTMLInputElement>('sigTolerance'),
		hmacFields: element<HTMLDivElement>('sigHmacFields'),
		hmacHeader: element<HTMLInputElement>('sigHmacHeader'),
		hmacPrefix: element<HTMLInputElement>('sigHmacPrefix'),
		hmacAlgorithm: element<HTMLSelectElement>('sigHmacAlgorithm'),
		hmacEncoding: element<HTMLSelectElement>('sigHmacEncoding'),
		hmacTimestampHeader: element<HTMLInputElement>('sigHmacTimestampHeader'),
		headers: element<HTMLTextAreaElement>('sigHeaders'),
		body: element<HTMLTextAreaElement>('sigBody'),
		bodyFile: element<HTMLInputElement>('sigBodyFile'),
		bodyFileStatus: element<HTMLParagraphElement>('sigBodyFileStatus'),
		result: element<HTMLDivElement>('sigResult'),
		verdict: element<HTMLOutputElement>('sigVerdict'),
		hint: element<HTMLParagraphElement>('sigHint'),
		signedInfo: element<HTMLParagraphElement>('sigSignedInfo'),
		signed: element<HTMLPreElement>('sigSigned'),
		expected: element<HTMLDivElement>('sigExpected'),
	};
}

/** Generic HMAC's fields for Generic HMAC only; the tolerance only where a timestamp is signed. */
function showFields(fields: SignatureFields, provider: Provider): void {
	fields.hmacFields.hidden = provider !== 'hmac';
	const timestamped =
		provider === 'hmac'
			? fields.hmacTimestampHeader.value.trim() !== ''
			: SIGNATURE_SCHEMES[provider].hasTimestamp;
	fields.toleranceField.hidden = !timestamped;
}

function signatureList(title: string, list: readonly ComparedSignature[]): HTMLElement {
	const group = document.createElement('div');
	group.className = 'signatures';
	const heading = document.createElement('p');
	heading.className = 'label';
	heading.textContent = title;
	group.append(heading);
	for (const signature of list) {
		const line = document.createElement('p');
		line.className = signature.matches ? 'match' : 'nomatch';
		const code = document.createElement('code');
		code.textContent = signature.value;
		line.append(`${signature.label}: `, code, signature.matches ? ' ✓ matches' : ' ✗ no match');
		group.append(line);
	}
	return group;
}

/** Reads the fields, checks the delivery as the node would, and writes what was found. */
function update(fields: SignatureFields, state: CheckState): void {
	const provider = fields.provider.value as Provider;
	showFields(fields, provider);
	const body = state.fileBytes ?? new TextEncoder().encode(fields.body.value);
	const tolerance = fields.tolerance.valueAsNumber;
	const report = checkSignature({
		provider,
		hmac: {
			header: fields.hmacHeader.value,
			algorithm: fields.hmacAlgorithm.value as HmacAlgorithm,
			encoding: fields.hmacEncoding.value as SignatureEncoding,
			signaturePrefix: fields.hmacPrefix.value,
			timestampHeader: fields.hmacTimestampHeader.value,
		},
		secret: fields.secret.value,
		previousSecret: fields.previousSecret.value,
		headersText: fields.headers.value,
		body,
		toleranceSeconds: Number.isFinite(tolerance) ? tolerance : 300,
		nowSeconds: Math.floor(Date.now() / 1000),
	});
	fields.verdict.textContent = report.verdict;
	fields.verdict.classList.toggle('problem', !report.valid);
	fields.verdict.classList.toggle('ok', report.valid);
	fields.hint.textContent = report.hint;
	showSigned(fields, report, body);
	showSignatures(fields, report, provider);
	fields.result.setAttribute('aria-busy', 'false');
}

/** The signed payload as text, and a line on its bytes and its timestamp. */
function showSigned(fields: SignatureFields, report: SignatureReport, body: Uint8Array): void {
	if (report.signed === undefined) {
		fields.signed.textContent = '';
		fields.signedInfo.textContent = report.nodeError
			? 'Nothing: the node stops before it reads the headers.'
			: 'Not known: the headers do not say what the sender signed (see the verdict).';
		return;
	}
	const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(body);
	const shown =
		report.signed.signs === '{body}'
			? text
			: new TextDecoder('utf-8', { ignoreBOM: true }).decode(report.signed.content);
	fields.signed.textContent =
		shown.length > SHOWN_CHARACTERS ? shown.slice(0, SHOWN_CHARACTERS) : shown;
	let info = bodyInfo(report.signed.signs, body) + timestampInfo(report);
	if (shown.length > SHOWN_CHARACTERS)
		info += ` The first ${SHOWN_CHARACTERS.toLocaleString('en')} characters are shown.`;
	fields.signedInfo.textContent = info;
}

/** What was signed and what about its bytes could surprise (a BOM, CRLFs, not UTF-8, empty). */
function bodyInfo(signs: string, body: Uint8Array): string {
	const facts = bodyFacts(body);
	const what = signs === '{body}' ? 'The body alone' : `${signs} with the body`;
	const notes = [
		facts.bom ? 'starts with a byte order mark (EF BB BF, invisible below)' : '',
		facts.crlf > 0 ? `has ${facts.crlf} CRLF line break${facts.crlf === 1 ? '' : 's'}` : '',
		facts.utf8 ? '' : 'is not UTF-8 (bytes shown as �; the check uses them as they are)',
		facts.bytes === 0 ? 'is empty' : '',
	].filter((note) => note !== '');
	return `${what}: ${facts.bytes} byte${facts.bytes === 1 ? '' : 's'}${notes.length ? `, which ${notes.join(', ')}` : ''}.`;
}

/** The signed timestamp as a date, and its age against the tolerance; empty without one. */
function timestampInfo(report: SignatureReport): string {
	const timestamp = report.signed?.timestamp;
	if (timestamp === undefined) return '';
	const at = new Date(timestamp * 1000).toISOString().replace('.000Z', 'Z');
	const age = report.age;
	let info = ` Timestamp ${timestamp} = ${at}`;
	if (age !== undefined)
		info += `, ${duration(age.seconds)} ${age.seconds < 0 ? 'in the future' : 'ago'} (tolerance ${age.toleranceSeconds} s${Math.abs(age.seconds) > age.toleranceSeconds ? ': too old for the node' : ''})`;
	return info + '.';
}

/** The expected and the received signatures side by side, each marked as matching or not. */
function showSignatures(
	fields: SignatureFields,
	report: SignatureReport,
	provider: Provider,
): void {
	fields.expected.replaceChildren();
	if (report.expected.length > 0)
		fields.expected.append(
			signatureList(
				`Expected (${provider === 'hmac' ? fields.hmacEncoding.value : 'as the header writes it'})`,
				report.expected,
			),
		);
	if (report.received.length > 0)
		fields.expected.append(signatureList('Received', report.received));
	if (report.expected.length === 0 && report.received.length === 0) {
		const none = document.createElement('p');
		none.className = 'help';
		none.textContent = 'None to compare (see the verdict).';
		fields.expected.append(none);
	}
}

/** Typing updates after a short pause; a loaded file is checked at once, as its exact bytes. */
function listenForChanges(fields: SignatureFields, state: CheckState): void {
	const scheduleUpdate = (): void => {
		fields.result.setAttribute('aria-busy', 'true');
		if (state.timer !== undefined) window.clearTimeout(state.timer);
		state.timer = window.setTimeout(() => update(fields, state), 120);
	};
	fields.form.addEventListener('submit', (event) => event.preventDefault());
	fields.body.addEventListener('input', () => {
		if (state.fileBytes !== undefined) {
			state.fileBytes = undefined;
			fields.bodyFile.value = '';
			fields.bodyFileStatus.textContent = 'No file loaded: the text above is checked.';
		}
		scheduleUpdate();
	});
	fields.bodyFile.addEventListener('change', () => {
		const file = fields.bodyFile.files?.[0];
		if (file === undefined) return;
		fields.result.setAttribute('aria-busy', 'true');
		void file.arrayBuffer().then((buffer) => {
			const bytes = new Uint8Array(buffer);
			state.fileBytes = bytes;
			fields.body.value = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
			fields.bodyFileStatus.textContent = `Checking the ${bytes.length} exact bytes of ${file.name} (the text above is only a preview; typing in it switches back to the text).`;
			if (state.timer !== undefined) window.clearTimeout(state.timer);
			update(fields, state);
		});
	});
	for (const input of [
		fields.secret,
		fields.previousSecret,
		fields.tolerance,
		fields.hmacHeader,
		fields.hmacPrefix,
		fields.hmacTimestampHeader,
		fields.headers,
	])
		input.addEventListener('input', scheduleUpdate);
	for (const select of [fields.provider, fields.hmacAlgorithm, fields.hmacEncoding])
		select.addEventListener('change', scheduleUpdate);
}
