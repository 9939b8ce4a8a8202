/**
 * The URL a sender was given, for schemes that sign it (Square, HubSpot v3, Twilio): the Webhook
 * node's `webhookUrl` (n8n builds it from WEBHOOK_URL, the public address a proxy forwards) with the
 * request's query rebuilt from `$json.query`. A URL the sender was given with a query in an unusual
 * order or encoding cannot be rebuilt: keep such URLs without a query. A query value that is not
 * text (`?role[admin]=true` arrives as an object) cannot be written back exactly: the request is
 * refused rather than checked without it, since the workflow would still read it from `$json.query`.
 * Pure: the planner bundles it.
 */
export const UNEXPRESSIBLE_QUERY = 'unexpressible-query';

export function requestUrl(json: {
	webhookUrl?: unknown;
	query?: unknown;
}): string | undefined | typeof UNEXPRESSIBLE_QUERY {
	if (typeof json.webhookUrl !== 'string' || json.webhookUrl === '') return undefined;
	const query = new URLSearchParams();
	if (json.query !== null && typeof json.query === 'object') {
		for (const [name, value] of Object.entries(json.query as Record<string, unknown>)) {
			for (const one of Array.isArray(value) ? (value as unknown[]) : [value]) {
				if (typeof one !== 'string') return UNEXPRESSIBLE_QUERY;
				query.append(name, one);
			}
		}
	}
	const text = query.toString();
	return text === '' ? json.webhookUrl : `${json.webhookUrl}?${text}`;
}
