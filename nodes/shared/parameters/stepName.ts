import { KeyError } from '../keys/KeyError';

/** The step's name as the node holds it: trimmed, not empty (it is the record's name in the key row). */
export function stepNameOf(value: unknown): string {
	const name = typeof value === 'string' ? value.trim() : '';
	if (name === '')
		throw new KeyError(
			'Step Name is empty',
			'Name the step, e.g. "create customer": the same name in its Skip If Done and its Record Step.',
		);
	// The name is a text parameter, which PostgreSQL refuses with a NUL: refused here, before any step runs.
	if (name.includes('\u0000'))
		throw new KeyError(
			'Step Name contains a NUL character',
			'Name the step with plain text, the same in its Skip If Done and its Record Step.',
		);
	return name;
}
