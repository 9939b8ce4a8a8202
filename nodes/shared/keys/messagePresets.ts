/**
 * Key Source presets for messages taken from a broker or a mailbox by an n8n trigger. Neither is a
 * webhook signer, so these live beside the provider table (webhook/providers/), not in it; both feed the
 * one Key Source table (keySourceTable.ts). Values are stored in saved workflows: never rename one.
 * Pure data: the key planner page bundles it.
 */

import type { EmailTrigger } from './emailMessage';

/** Where a message preset finds the message id. */
export type MessageIdLocation =
	/**
	 * An AMQP message as n8n's RabbitMQ Trigger emits it (`fields`, `properties`, `content`): the
	 * `message-id` property, else the SHA-256 of the content (amqpMessage.ts).
	 */
	| { kind: 'amqpMessage' }
	/**
	 * An email as n8n's Email Trigger (IMAP) or Gmail Trigger emits it: its Message-ID header, else
	 * the SHA-256 of what identifies the message (emailMessage.ts).
	 */
	| { kind: 'emailMessage'; trigger: EmailTrigger };

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
	{
		value: 'imapEmail',
		label: 'Email Trigger (IMAP) Message',
		eventId: { kind: 'emailMessage', trigger: 'imap' },
		description:
			'Key "email:" + the Message-ID header of an Email Trigger (IMAP) item (Simple or Resolved format), else "sha256:" + SHA-256 of its UID and the email as read. Set Namespace to the mailbox.',
	},
	{
		value: 'gmailMessage',
		label: 'Gmail Trigger Message',
		eventId: { kind: 'emailMessage', trigger: 'gmail' },
		description:
			'Key "email:" + the Message-ID header of a Gmail Trigger item (Simplify off), else "sha256:" + SHA-256 of its Gmail message ID. Set Namespace to the mailbox.',
	},
] as const satisfies readonly MessagePresetDefinition[];

export type MessagePresetValue = (typeof MESSAGE_PRESETS)[number]['value'];
