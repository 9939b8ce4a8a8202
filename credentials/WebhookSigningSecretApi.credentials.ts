import type { ICredentialType, INodeProperties } from 'n8n-workflow';

/**
 * The secret a webhook sender signs its deliveries with. Two fields so a rotation needs no
 * downtime: put the new secret in Secret and keep the old one in Previous Secret until the sender
 * signs with the new one only; Verify Webhook Signature accepts either.
 */
export class WebhookSigningSecretApi implements ICredentialType {
	name = 'webhookSigningSecretApi';

	// n8n's strict lint wants credential display names to end in "API".
	displayName = 'Webhook Signing Secret API';

	icon = {
		light: 'file:webhookSigningSecret.svg',
		dark: 'file:webhookSigningSecret.dark.svg',
	} as const;

	documentationUrl =
		'https://github.com/n8n-nodes-idempotency/n8n-nodes-idempotency/blob/main/docs/signatures.md';

	properties: INodeProperties[] = [
		{
			displayName: 'Secret',
			name: 'secret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				"The endpoint's signing secret as the sender shows it: Stripe whsec_…, Standard Webhooks and Svix whsec_<base64>, GitHub's webhook secret, Shopify's app client secret, Slack's signing secret; for senders that sign nothing, the shared secret they repeat (Microsoft Graph's clientState, Okta's authentication secret)",
		},
		{
			displayName: 'Previous Secret',
			name: 'previousSecret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				'During a secret rotation, the old secret: deliveries signed with either secret are valid. Clear it once the sender uses the new one only.',
		},
		{
			displayName: 'Verify Token',
			name: 'verifyToken',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				"For senders that check the URL with a token you choose (Meta: WhatsApp, Messenger, Instagram's hub.verify_token): the same token as in the sender's webhook settings. The node answers the check itself; a wrong or missing token gets 403.",
		},
		{
			displayName: 'Shared Secret Header',
			name: 'headerName',
			type: 'string',
			default: '',
			placeholder: 'Authorization',
			description:
				"For senders that send a shared secret in a header you name (Okta Event Hooks' Authentication field): that header's name. Empty: the provider's usual header (Authorization). Secret then holds the header's whole value.",
		},
	];
}
