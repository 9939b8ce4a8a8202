/**
 * Key Source presets for messages taken from a broker by an n8n trigger. A broker is not a webhook
 * signer, so these live beside the provider table (webhook/providers/), not in it; both feed the
 * one Key Source table (keySourceTable.ts). Values are stored in saved workflows: never rename one.
 * Pure data: the key planner page bundles it.
 */

/** Where a message preset finds the message id. */
export type MessageIdLocation =
	/**
	 * An AMQP message as n8n's RabbitMQ Trigger emits it (`fields`, `properties`, `content`): the
	 * `message-id` property, else the SHA-256 of the content (amqpMessage.ts).
	 */
	{ kind: 'amqpMessage' };

export interface MessagePresetDefinition {
	value: string;
	label: string;
	eventId: MessageIdLocation;
	/** The option's description in the Key Source list. */
	description: string;
}

export const MESSAGE_PRESETS = [
	{
		value: 'rabbitmqMessage',
		label: 'RabbitMQ Message',
		eventId: { kind: 'amqpMessage' },
		description:
			'Key "evt:" + the message-id property of a RabbitMQ Trigger item, else "sha256:" + SHA-256 of its content. Set Namespace to the queue name.',
	},
] as const satisfies readonly MessagePresetDefinition[];

export type MessagePresetValue = (typeof MESSAGE_PRESETS)[number]['value'];
