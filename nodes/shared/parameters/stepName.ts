import { KeyError } from '../keys/KeyError';

/** The step's name as the node holds it: trimmed, not empty (it is the record's name in the key row). */
export function stepNameOf(value: unknown): string {
	const name = typeof value === 'string' ? value.trim() : '';
	if (name === '')
		throw new KeyError(
			'Step Name is empty',
			'Name the step, e.g. "create customer": the same name in its Skip If Done and its Record Step.',
		);
	return name;
}
