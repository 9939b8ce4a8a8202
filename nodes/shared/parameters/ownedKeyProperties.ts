import type { INodeProperties } from 'n8n-workflow';

/**
 * The Key and Reservation parameters of Complete Key, Release Key and Idempotency Step. Both default to empty, which
 * means "what this execution reserved": right for one event per execution (a webhook), and free of
 * per-item expressions. A batch sets Key per item.
 */
export function ownedKeyProperties({
	action,
}: {
	action: 'complete' | 'release' | 'step';
}): INodeProperties[] {
	const reservation = {
		complete:
			"Empty: this execution's lease. Only the execution that holds a key can complete it; set this (idempotency.token of the Reserve output) only to complete from another execution, such as a sub-workflow.",
		release:
			"Empty: this execution's lease, so a late failure cannot free a key a retry took over (and any holder when this execution reserved nothing, as in a cleanup workflow). Or idempotency.token of the Reserve output.",
		step: "Empty: this execution's lease. Only the execution that holds a key runs and records its steps; or idempotency.token of the Reserve output.",
	}[action];
	return [
		{
			displayName: 'Key',
			name: 'key',
			type: 'string',
			default: '',
			placeholder: 'Empty: the key this execution reserved',
			description:
				"Empty: the one key this execution reserved in this table. For a batch (several keys per execution), map each item's key from the Idempotency Reserve output (idempotency.key).",
		},
		{
			displayName: 'Reservation',
			name: 'reservation',
			type: 'string',
			default: '',
			placeholder: "Empty: this execution's reservation",
			description: reservation,
		},
	];
}
