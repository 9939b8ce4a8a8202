/**
 * The built-in workflow's key store part (planner/builtIn/builtIn.ts): Reserve Key → New, Duplicate or In
 * Flight? → the business step → Complete Key (lease mode) and the answers, or Release Key and 500.
 * The statements are the package's own (planStatements, from nodes/shared/store/sql), their values
 * passed as the Postgres node's query parameters, never written into the query.
 */
import {
	BUILT_IN_CREDENTIALS,
	id,
	switchNode,
	KEY_OF_KEY_NODE,
	NODES,
	postgres,
	respond,
	textArray,
	TOKEN_OF_KEY_NODE,
	type WorkflowNode,
} from './builtInNodes';
import type { PlannerSettings } from '../settings';
import { planStatements } from '../setup/sqlPlan';

/** The SQL the workflow runs, taken from the planner's own statements (so from the package's). */
export interface BuiltInStatements {
	createTable: string;
	reserve: string;
	/** Lease mode only. */
	complete?: string;
	release: string;
}

/** The statements of planStatements the workflow runs, for these settings (no fingerprints). */
export function builtInStatements(settings: PlannerSettings): BuiltInStatements {
	const statements = planStatements({ ...settings, fingerprint: 'none' }, undefined, null);
	const find = (start: string): string | undefined =>
		statements.find((statement) => statement.title.startsWith(start))?.sql;
	const reserve = find('Reserve');
	const release = find('Release');
	const createTable = find('Create the table');
	if (reserve === undefined || release === undefined || createTable === undefined)
		throw new Error('builtInStatements: the planner has no Reserve, Release or Create statement');
	return { createTable, reserve, release, complete: find('Complete') };
}

/** The nodes from the reservation to the answers, in the workflow's order. */
export function storeNodes(settings: PlannerSettings, sql: BuiltInStatements): WorkflowNode[] {
	const lease = settings.mode === 'lease';
	const leaseSeconds = settings.leaseSeconds;
	return [
		postgres(
			id(8),
			NODES.reserve,
			sql.reserve,
			lease
				? `={{ [${textArray('$json.key')}, $json.ownerToken, ${leaseSeconds}] }}`
				: `={{ [${textArray('$json.key')}] }}`,
			[2200, 200],
			BUILT_IN_CREDENTIALS.postgres,
			// No row comes back for a key another execution reserved after this statement's snapshot:
			// an empty item still reaches the verdict, which counts it as in flight (duplicate in simple mode).
			{ alwaysOutputData: true },
		),
		verdictNode(lease),
		postgres(
			id(10),
			NODES.business,
			'INSERT INTO business_log (event_key, event_type) VALUES ($1, $2)',
			`={{ [${KEY_OF_KEY_NODE}, $('${NODES.webhook}').first().json.body?.type ?? null] }}`,
			[2660, 0],
			BUILT_IN_CREDENTIALS.business,
			{ onError: 'continueErrorOutput' },
		),
		...(lease && sql.complete !== undefined
			? [
					postgres(
						id(11),
						NODES.complete,
						sql.complete,
						`={{ [${textArray(KEY_OF_KEY_NODE)}, ${textArray(TOKEN_OF_KEY_NODE)}] }}`,
						[2900, -100],
						BUILT_IN_CREDENTIALS.postgres,
					),
				]
			: []),
		respond(id(12), NODES.processed, 200, '={{ { "status": "processed" } }}', [3140, -100]),
		postgres(
			id(13),
			NODES.release,
			sql.release,
			lease
				? `={{ [${textArray(KEY_OF_KEY_NODE)}, ${textArray(TOKEN_OF_KEY_NODE)}] }}`
				: `={{ [${textArray(KEY_OF_KEY_NODE)}] }}`,
			[2900, 120],
			BUILT_IN_CREDENTIALS.postgres,
		),
		respond(
			id(14),
			NODES.failed,
			500,
			`={{ { "status": "failed", "key": ${KEY_OF_KEY_NODE} } }}`,
			[3140, 120],
		),
		respond(
			id(15),
			NODES.duplicate,
			200,
			`={{ { "status": "duplicate", "key": ${KEY_OF_KEY_NODE} } }}`,
			[2660, 260],
		),
		...(lease ? [inFlightNode(leaseSeconds)] : []),
	];
}

/** The Switch that routes Reserve's row: new, duplicate and (lease mode) in flight. */
function verdictNode(lease: boolean): WorkflowNode {
	const rules: Array<[string, string]> = lease
		? [
				['new', `$json.state === 'reserved'`],
				[
					'duplicate',
					`$json.key !== undefined && $json.state !== 'reserved' && $json.state !== 'in_progress'`,
				],
				['in flight', `$json.key === undefined || $json.state === 'in_progress'`],
			]
		: [
				['new', `$json.key !== undefined && $json.first_seen_epoch === null`],
				['duplicate', `$json.key === undefined || $json.first_seen_epoch !== null`],
			];
	return switchNode(id(9), NODES.verdict, rules, [2420, 200]);
}

/** Lease mode's 409 with Retry-After: the lease's seconds left, or the whole lease without a row. */
function inFlightNode(leaseSeconds: number): WorkflowNode {
	return respond(
		id(16),
		NODES.inFlight,
		409,
		`={{ { "status": "in_progress", "key": ${KEY_OF_KEY_NODE}, "retryAfterSeconds": $json.int4 ?? ${Math.ceil(leaseSeconds)} } }}`,
		[2660, 460],
		[{ name: 'Retry-After', value: `={{ $json.int4 ?? ${Math.ceil(leaseSeconds)} }}` }],
	);
}
