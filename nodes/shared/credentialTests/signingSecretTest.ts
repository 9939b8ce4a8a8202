import type {
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	INodeCredentialTestResult,
} from 'n8n-workflow';

/**
 * A signing secret can only be proven right by a delivery the sender signed, so the test checks
 * what can go wrong when pasting one: an empty secret, or spaces and line breaks copied with it
 * (an HMAC over a secret with a trailing newline never matches). Messages never echo the secret.
 */
export async function webhookSigningSecretTest(
	this: ICredentialTestFunctions,
	credentials: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	const data = (credentials.data ?? {}) as { secret?: string; previousSecret?: string };
	for (const [field, value, required] of [
		['Secret', data.secret ?? '', true],
		['Previous Secret', data.previousSecret ?? '', false],
	] as const) {
		if (value === '' && required) return { status: 'Error', message: `${field} is empty` };
		if (value !== value.trim())
			return { status: 'Error', message: `${field} starts or ends with spaces or a line break` };
	}
	return {
		status: 'OK',
		message: 'Secret set. Send a signed test delivery to check it against the sender.',
	};
}
