import type { INodeProperties } from 'n8n-workflow';

import { ANSWER_PROBLEMS_VERSION } from '../helpers/answerProblems';
import { ANSWER_REPEATS_VERSION } from '../helpers/answerRepeats';

/**
 * Version 2.2's Answer Problems: Reserve answers a failure itself behind a Webhook (answerProblems.ts);
 * 2.3 also an invalid signature, and Answer Repeats (answerRepeats.ts).
 */
export const answerProperties: INodeProperties[] = [
	{
		displayName: 'Answer Problems',
		name: 'answerProblems',
		type: 'boolean',
		default: true,
		description:
			"Whether Reserve answers a problem itself when a Webhook node (Respond: Using 'Respond to Webhook' Node) started the execution: a sender's mistake (an invalid ID or Idempotency-Key, a reused key…) 4xx with an RFC 9457 problem naming it, its item to no output; from version 2.3 also an invalid signature, 401, its item still to the invalid signature output; any other failure (the database down…) 500 without internals, then the node fails so the sender retries. Off, or with On Error set to continue, connect your own Respond to Webhook nodes. Outside a webhook (a queue) nothing is answered.",
		displayOptions: { show: { '@version': [{ _cnd: { gte: ANSWER_PROBLEMS_VERSION } }] } },
	},
	{
		displayName: 'Answer Repeats',
		name: 'answerRepeats',
		type: 'boolean',
		default: true,
		description:
			'Whether Reserve answers a repeat itself behind such a Webhook: a duplicate 200 {"status":"duplicate"} (or the answer the first execution stored, replayed), a delivery whose first attempt still runs 409 with Retry-After. The item still goes to its output, for a log or an alert; off, connect your own Respond to Webhook nodes there (n8n keeps only the first answer).',
		displayOptions: { show: { '@version': [{ _cnd: { gte: ANSWER_REPEATS_VERSION } }] } },
	},
];
