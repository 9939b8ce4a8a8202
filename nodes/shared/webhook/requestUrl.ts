/**
 * The URL a sender was given, for schemes that sign it (Square, HubSpot v3, Twilio): the Webhook
 * node's `webhookUrl` (n8n builds it from WEBHOOK_URL, the public address a proxy forwards) with the
 * request's query rebuilt from `$json.query`. A URL the sender was given with a query in an unusual
 * order or encoding cannot be rebuilt: keep such URLs without a query. Pure: the planner bundles it.
 */
export function requestUrl(json: { webhookUrl?: unknown; query?: unknown }): string | undefined {
	if (typeof json.webhookUrl !== 'string' || json.webhookUrl === '') return undefined;
	const query = new URLSearchParams();
	if (json.query !== null && typeof json.query === 'object') {
		for (const [name, value] of Object.entries(json.query as Record<string, unknown>)) {
			for (const one of Array.isArray(value) ? value : [value])
				if (typeof one === 'string') query.append(name, one);
		}
	}
	const text = query.toString();
	return text === '' ? json.webhookUrl : `${json.webhookUrl}?${text}`;
}
