/**
 * The "Explain a retry of a multi-step event" part of the page: step names and the key's row in,
 * what the next retry skips and runs out (steps.ts).
 */
import { element, listItem } from './dom';
import { explainRetry } from '../explain/steps';

export function startRetryExplainer(): void {
	const fields = {
		form: element<HTMLFormElement>('retryForm'),
		steps: element<HTMLTextAreaElement>('retrySteps'),
		row: element<HTMLTextAreaElement>('retryRow'),
		verdict: element<HTMLOutputElement>('retryVerdict'),
		plan: element<HTMLOListElement>('retryPlan'),
		warnings: element<HTMLUListElement>('retryWarnings'),
	};

	function update(): void {
		const result = explainRetry(fields.steps.value, fields.row.value, Date.now());
		fields.verdict.textContent = result.verdict;
		fields.plan.replaceChildren(
			...result.steps.map((step) => listItem(`${step.name}: ${step.onRetry} (${step.detail})`)),
		);
		fields.warnings.replaceChildren(...result.warnings.map(listItem));
	}

	fields.form.addEventListener('submit', (event) => event.preventDefault());
	for (const input of [fields.steps, fields.row]) input.addEventListener('input', update);
	update();
}
