import type { IExecuteFunctions } from 'n8n-workflow';

import { KeyError } from '../../shared/keys/KeyError';

export interface ItemStatement {
	text: string;
	values: unknown[];
}

/**
 * Transaction control in the user's SQL would end this step's transaction early and commit the
 * effect apart from the completion, which is the very thing the step exists to prevent.
 */
const TRANSACTION_CONTROL =
	/(?:^|;)\s*(BEGIN|COMMIT|ROLLBACK|END|ABORT|START\s+TRANSACTION|PREPARE\s+TRANSACTION)\b/i;

/** Splits on commas outside `{{ … }}`, so an expression may hold commas of its own. */
export function splitParameterList(text: string): string[] {
	const entries: string[] = [];
	let depth = 0;
	let start = 0;
	for (let index = 0; index < text.length; index++) {
		if (text.startsWith('{{', index)) {
			depth++;
			index++;
		} else if (depth > 0 && text.startsWith('}}', index)) {
			depth--;
			index++;
		} else if (depth === 0 && text[index] === ',') {
			entries.push(text.slice(start, index).trim());
			start = index + 1;
		}
	}
	entries.push(text.slice(start).trim());
	return entries;
}

function readValues(context: IExecuteFunctions, itemIndex: number): unknown[] {
	const raw = context.getNode().parameters.queryParameters;
	if (raw === undefined || raw === null || raw === '' || raw === '=') return [];
	if (typeof raw !== 'string') return Array.isArray(raw) ? raw : [raw];
	const isExpression = raw.startsWith('=');
	const entries = splitParameterList(isExpression ? raw.slice(1) : raw);
	if (!isExpression) return entries;
	if (entries.length === 1) {
		// One expression: its array is the list ({{ [$json.a, $json.b] }}), anything else one value.
		const value = context.getNodeParameter('queryParameters', itemIndex, '') as unknown;
		return Array.isArray(value) ? value : [value];
	}
	// Each entry on its own, as n8n's Postgres node does: `{{ 5 }}` stays a number, a text with a comma one value.
	return entries.map((entry) =>
		entry.includes('{{') ? context.evaluateExpression(entry, itemIndex) : entry,
	);
}

/** Reads each item's query and parameter values; a bad item throws (KeyError with a hint). */
export function statementReader(context: IExecuteFunctions): (itemIndex: number) => ItemStatement {
	return (itemIndex) => {
		const text = context.getNodeParameter('query', itemIndex, '') as string;
		if (typeof text !== 'string' || text.trim() === '') {
			throw new KeyError(
				'The query is empty',
				'Write the business statement in Query, e.g. INSERT INTO business_log (event_key) VALUES ($1).',
			);
		}
		const control = TRANSACTION_CONTROL.exec(text);
		if (control !== null) {
			throw new KeyError(
				`The query contains ${control[1].toUpperCase()}: this step runs it inside its own transaction`,
				'Remove BEGIN, COMMIT and ROLLBACK. The step commits your statements together with the completion of the key, or rolls both back.',
			);
		}
		return { text, values: readValues(context, itemIndex) };
	};
}
