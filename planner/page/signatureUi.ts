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
} from '../signature/signature';

/** Text shown of a signed payload; the verdict always covers all of it. */
const SHOWN_CHARACTERS = 200_000;

export function startSignatureCheck(): void {
	const fields = {
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

	// The node's order (the provider table's, Stripe first and Generic HMAC last) and values.
	for (const { value, label } of PROVIDER_OPTIONS)
		fields.provider.add(new Option(label, value, false, value === DEFAULT_PROVIDER));
	fields.hmacHeader.value = DEFAULT_HMAC.header;

	let fileBytes: Uint8Array | undefined;

	function showFields(provider: Provider): void {
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

	function update(): void {
		const provider = fields.provider.value as Provider;
		showFields(provider);
		const body = fileBytes ?? new TextEncoder().encode(fields.body.value);
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

		if (report.signed === undefined) {
			fields.signed.textContent = '';
			fields.signedInfo.textContent = report.nodeError
				? 'Nothing: the node stops before it reads the headers.'
				: 'Not known: the headers do not say what the sender signed (see the verdict).';
		} else {
			const facts = bodyFacts(body);
			const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(body);
			const shown =
				report.signed.signs === '{body}'
					? text
					: new TextDecoder('utf-8', { ignoreBOM: true }).decode(report.signed.content);
			fields.signed.textContent =
				shown.length > SHOWN_CHARACTERS ? shown.slice(0, SHOWN_CHARACTERS) : shown;
			const parts: string[] = [
				report.signed.signs === '{body}'
					? 'The body alone'
					: `${report.signed.signs} with the body`,
			];
			const notes = [
				facts.bom ? 'starts with a byte order mark (EF BB BF, invisible below)' : '',
				facts.crlf > 0 ? `has ${facts.crlf} CRLF line break${facts.crlf === 1 ? '' : 's'}` : '',
				facts.utf8 ? '' : 'is not UTF-8 (bytes shown as �; the check uses them as they are)',
				facts.bytes === 0 ? 'is empty' : '',
			].filter((note) => note !== '');
			let info = `${parts[0]}: ${facts.bytes} byte${facts.bytes === 1 ? '' : 's'}${notes.length ? `, which ${notes.join(', ')}` : ''}.`;
			if (report.signed.timestamp !== undefined) {
				const at = new Date(report.signed.timestamp * 1000).toISOString().replace('.000Z', 'Z');
				const age = report.age;
				info += ` Timestamp ${report.signed.timestamp} = ${at}`;
				if (age !== undefined)
					info += `, ${duration(age.seconds)} ${age.seconds < 0 ? 'in the future' : 'ago'} (tolerance ${age.toleranceSeconds} s${Math.abs(age.seconds) > age.toleranceSeconds ? ': too old for the node' : ''})`;
				info += '.';
			}
			if (shown.length > SHOWN_CHARACTERS)
				info += ` The first ${SHOWN_CHARACTERS.toLocaleString('en')} characters are shown.`;
			fields.signedInfo.textContent = info;
		}
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
		fields.result.setAttribute('aria-busy', 'false');
	}

	let timer: number | undefined;
	function scheduleUpdate(): void {
		fields.result.setAttribute('aria-busy', 'true');
		if (timer !== undefined) window.clearTimeout(timer);
		timer = window.setTimeout(update, 120);
	}

	fields.form.addEventListener('submit', (event) => event.preventDefault());
	fields.body.addEventListener('input', () => {
		if (fileBytes !== undefined) {
			fileBytes = undefined;
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
			fileBytes = new Uint8Array(buffer);
			fields.body.value = new TextDecoder('utf-8', { ignoreBOM: true }).decode(fileBytes);
			fields.bodyFileStatus.textContent = `Checking the ${fileBytes.length} exact bytes of ${file.name} (the text above is only a preview; typing in it switches back to the text).`;
			if (timer !== undefined) window.clearTimeout(timer);
			update();
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
	update();
}
