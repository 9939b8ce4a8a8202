/**
 * The "Explain a duplicate" part of the page: the key and its row in, the rule and what to do out
 * (duplicate.ts), judged for the Mode chosen in the planner above; plus the look-up SQL for the
 * planner's schema and table.
 */
import { tableRef } from '../../nodes/shared/store/identifiers';
import { element, listItem } from './dom';
import { explainDuplicate } from '../explain/duplicate';
import type { Mode } from '../settings';

/** The row of one key as JSON, without the owner token (what Complete Key and Release Key prove ownership with). */
export function lookUpSql(schema: string, table: string, key: string): string {
	const ref = tableRef(schema, table);
	return `SELECT to_jsonb(t) - 'owner_token' AS row FROM ${ref.qualified} t WHERE t.key = $1;\n-- $1 (text) = ${JSON.stringify(key)}`;
}

export function startDuplicateExplainer(): void {
	const fields = {
		form: element<HTMLFormElement>('dupForm'),
		key: element<HTMLInputElement>('dupKey'),
		useKey: element<HTMLButtonElement>('dupUseKey'),
		plannerKey: element<HTMLOutputElement>('key'),
		row: element<HTMLTextAreaElement>('dupRow'),
		sql: element<HTMLPreElement>('dupSql'),
		verdict: element<HTMLOutputElement>('dupVerdict'),
		explain: element<HTMLParagraphElement>('dupExplain'),
		next: element<HTMLParagraphElement>('dupNext'),
		keyNote: element<HTMLParagraphElement>('dupKeyNote'),
		warnings: element<HTMLUListElement>('dupWarnings'),
		mode: element<HTMLSelectElement>('mode'),
		schema: element<HTMLInputElement>('schema'),
		table: element<HTMLInputElement>('table'),
	};

	function update(): void {
		const mode = fields.mode.value as Mode;
		const result = explainDuplicate(fields.key.value, fields.row.value, mode, Date.now());
		fields.verdict.textContent = result.verdict;
		fields.explain.textContent = result.explain;
		fields.next.textContent = `Next: ${result.next}`;
		fields.keyNote.textContent = result.keyNote;
		fields.warnings.replaceChildren(...result.warnings.map(listItem));
		try {
			fields.sql.textContent = lookUpSql(
				fields.schema.value,
				fields.table.value,
				fields.key.value.trim(),
			);
		} catch (error) {
			fields.sql.textContent = `-- ${(error as Error).message}`;
		}
	}

	fields.form.addEventListener('submit', (event) => event.preventDefault());
	fields.useKey.addEventListener('click', () => {
		// Only a key: not "item error" or another of the planner's messages.
		if (fields.plannerKey.classList.contains('problem')) return;
		fields.key.value = fields.plannerKey.textContent ?? '';
		update();
		fields.key.focus();
	});
	for (const input of [fields.key, fields.row, fields.schema, fields.table])
		input.addEventListener('input', update);
	fields.mode.addEventListener('change', update);
	update();
}
