import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { changeDeadLetters } from '../helpers/deadLetters';
import { keysProperty } from '../helpers/settings';

export const description: INodeProperties[] = [
	{
		...keysProperty,
		description:
			'The dead letters to run again (with prefix and namespace, as stored). Several: one per line, or an expression giving a list. Keys that are not dead letters are left as they are.',
	},
];

/**
 * Makes the given dead letters due again with a fresh count of attempts (sql/redrive.ts
 * retryDeadLettersSql): the Redrive Trigger's next check runs each from its stored delivery.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await changeDeadLetters(this, 'retry');
}
