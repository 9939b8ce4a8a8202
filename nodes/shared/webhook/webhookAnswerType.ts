/**
 * The HTTP answer a node sends to the caller of the webhook that started the execution. The shape
 * lives here, beside the handshakes that answer with it, so webhook/ needs nothing from answers/
 * (answers/webhookAnswer.ts builds it from a stored response and imports it from here).
 */
export interface WebhookAnswer {
	statusCode: number;
	/** Lower-case names; with a content-type, unless the body is empty (a 204). */
	headers: Record<string, string>;
	/** Sent as these UTF-8 bytes, the same text Store Response stores. */
	body: string;
}
