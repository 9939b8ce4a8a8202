import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

/**
 * Drop Answered Events, on Release Key, Purge Keys and the Keys node's Purge: whether they may
 * delete an answered event (sql/answeredEvents.ts). Off by default: the sender was answered 2xx and
 * will not resend it, so deleting its key loses the event; the nodes keep it and say so.
 */
export function dropAnsweredEventsProperty(keptSays: string): INodeProperties {
	return {
		displayName: 'Drop Answered Events',
		name: 'dropAnsweredEvents',
		type: 'boolean',
		default: false,
		description: `Whether to also delete keys in progress that hold a stored delivery (Reserve's Answer First): events the sender was answered for and will never resend, which the Redrive Trigger runs again. Deleting one loses the event. Off, they are kept and ${keptSays}.`,
	};
}

/** The setting, read like the nodes' other settings (once per execution, from the first item). */
export function dropAnsweredEventsOf(context: IExecuteFunctions): boolean {
	return context.getNodeParameter('dropAnsweredEvents', 0, false) === true;
}
