import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { changeDeadLetters } from '../helpers/deadLetters';
import { keysProperty } from '../helpers/settings';

export const description: INodeProperties[] = [
	{
		...keysProperty,
		description:
			'The dead letters to delete, with their stored delivery (with prefix and namespace, as stored). Several: one per line, or an expression giving a list. Keys that are not dead letters are kept.',
	},
];

/**
 * Deletes the given keys where they are dead letters, and only there: the event is given up for
 * good (a resend of it by its sender would then be a new event).
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await changeDeadLetters(this, 'drop');
}
