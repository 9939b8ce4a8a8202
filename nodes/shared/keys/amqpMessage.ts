import { canonicalJson } from './fingerprint';
import { idValue } from './idText';
import { KeyError } from './KeyError';

/**
 * What the RabbitMQ Message preset reads from an item of n8n's RabbitMQ Trigger. Without "Only
 * Content", the trigger emits amqplib's message as the item: `fields` (deliveryTag, redelivered,
 * exchange, routingKey), `properties` (messageId, correlationId, headers, …) and `content`, the body
 * as text, or parsed when "JSON Parse Body" is on, or absent when "Content Is Binary" is on (the
 * bytes are then the binary property `data`). n8n-nodes-base's RabbitMQ/GenericFunctions parseMessage.
 * Pure: the key planner page could bundle it.
 */

export interface AmqpKeyInput {
	/** The message-id property as text, undefined when the publisher left it out or empty. */
	messageId: string | undefined;
	/** The content as the item holds it: text, a parsed JSON value, or undefined (binary content). */
	content: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
	value !== null && typeof value === 'object' && !Array.isArray(value);

const ONLY_CONTENT_HINT =
	'Connect Reserve to a RabbitMQ Trigger with "Only Content" off: with it on, the message-id is gone from the item. Or use a Custom key.';

/** Reads the message id and content of a RabbitMQ Trigger item, or says why the item is not one. */
export function readAmqpMessage(json: unknown): AmqpKeyInput {
	if (!isObject(json) || !isObject(json.fields) || !isObject(json.properties)) {
		throw new KeyError(
			'The item is not a RabbitMQ message: it has no "fields" and "properties" objects',
			ONLY_CONTENT_HINT,
		);
	}
	const raw = json.properties.messageId;
	// amqplib gives a message without the property `undefined`; a number would be a publisher's bug.
	if (raw !== undefined && raw !== null && typeof raw !== 'string') {
		throw new KeyError(
			`The message-id property is ${typeof raw}, not text`,
			'AMQP message-id is a short string: publish with messageId set to text, or use a Custom key.',
			'invalid-key',
		);
	}
	const messageId = idValue(raw, 'message-id');
	return {
		messageId: messageId === undefined ? undefined : String(messageId),
		content: json.content,
	};
}

/** An integer JSON.parse could not hold exactly: two different texts may have given it. */
function hasInexactInteger(value: unknown): boolean {
	if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value);
	if (Array.isArray(value)) return value.some(hasInexactInteger);
	if (isObject(value)) return Object.values(value).some(hasInexactInteger);
	return false;
}

/**
 * The text whose SHA-256 is a message's body-hash key. A JSON object or array is hashed as its
 * canonical JSON (keys sorted, no spaces), whether the trigger parsed it ("JSON Parse Body") or left
 * it as text, so turning that option on or off does not make redeliveries look new. Text that is not
 * a JSON object or array is hashed as it is. Exactly one case cannot be both: an integer beyond 2^53,
 * which JSON.parse rounds, so two messages could share a key. As text it is hashed exactly as sent;
 * once parsed it is refused, never guessed.
 */
export function messageContentText(content: unknown): string {
	if (typeof content === 'string') {
		let parsed: unknown;
		try {
			parsed = JSON.parse(content);
		} catch {
			return content;
		}
		if (parsed === null || typeof parsed !== 'object' || hasInexactInteger(parsed)) return content;
		return canonicalJson(parsed);
	}
	if (content === undefined) {
		throw new KeyError(
			'The message has no content to hash and no message-id',
			'Turn off "Content Is Binary" in the RabbitMQ Trigger, or keep the binary property the trigger writes ("data") as Raw Body Property.',
		);
	}
	if (hasInexactInteger(content)) {
		throw new KeyError(
			'The message has no message-id and its parsed content holds an integer beyond 2^53, which JSON Parse Body has rounded: its body hash could match another message',
			'Turn off "JSON Parse Body" in the RabbitMQ Trigger so the content is hashed exactly as sent, or publish with a message-id.',
		);
	}
	return canonicalJson(content);
}
