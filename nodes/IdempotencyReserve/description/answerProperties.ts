import type { INodeProperties } from 'n8n-workflow';

import { ANSWER_PROBLEMS_VERSION } from '../helpers/answerProblems';

/** Version 2.2's Answer Problems: Reserve answers a failure itself behind a Webhook (answerProblems.ts). */
export const answerProperties: INodeProperties[] = [
	{
		displayName: 'Answer Problems',
		name: 'answerProblems',
		type: 'boolean',
		default: true,
		description:
			"Whether Reserve answers a failure itself when a Webhook node (Respond: Using 'Respond to Webhook' Node) started the execution: a sender's mistake (an invalid ID or Idempotency-Key, a reused key…) is answered 4xx with an RFC 9457 problem naming it, and its item goes to no output; any other failure (the database down…) is answered 500 without internals, then the node fails so the sender retries. Off, or with On Error set to continue, failures go where they went in version 2.1. Outside a webhook (a queue) nothing is answered.",
		displayOptions: { show: { '@version': [{ _cnd: { gte: ANSWER_PROBLEMS_VERSION } }] } },
	},
];
