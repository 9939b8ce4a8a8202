// Runs workflow JSON through n8n-core's real WorkflowExecute, the engine n8n itself uses, with the
// package's node classes from dist/ (what n8n loads). Nothing here fakes a node context: only the
// server-side services (credential storage, URLs) are provided the way n8n's own test harness does.
const { createHash } = require('node:crypto');
const path = require('node:path');

const dist = path.join(__dirname, '..', '..', 'dist');
const PACKAGE = 'n8n-nodes-idempotency';

function loadNodeTypes() {
	const { IdempotencyReserve } = require(
		path.join(dist, 'nodes/IdempotencyReserve/IdempotencyReserve.node.js'),
	);
	const { IdempotencyRelease } = require(
		path.join(dist, 'nodes/IdempotencyRelease/IdempotencyRelease.node.js'),
	);
	const { IdempotencyComplete } = require(
		path.join(dist, 'nodes/IdempotencyComplete/IdempotencyComplete.node.js'),
	);
	const { IdempotencyExactlyOnce } = require(
		path.join(dist, 'nodes/IdempotencyExactlyOnce/IdempotencyExactlyOnce.node.js'),
	);
	const { IdempotencyPurge } = require(
		path.join(dist, 'nodes/IdempotencyPurge/IdempotencyPurge.node.js'),
	);
	const { IdempotencyKeys } = require(
		path.join(dist, 'nodes/IdempotencyKeys/IdempotencyKeys.node.js'),
	);
	const { IdempotencyStep } = require(
		path.join(dist, 'nodes/IdempotencyStep/IdempotencyStep.node.js'),
	);
	const { VerifyWebhookSignature } = require(
		path.join(dist, 'nodes/VerifyWebhookSignature/VerifyWebhookSignature.node.js'),
	);
	const { IdempotencyRedriveTrigger } = require(
		path.join(dist, 'nodes/IdempotencyRedriveTrigger/IdempotencyRedriveTrigger.node.js'),
	);
	const types = {
		[`${PACKAGE}.idempotencyReserve`]: new IdempotencyReserve(),
		[`${PACKAGE}.idempotencyRelease`]: new IdempotencyRelease(),
		[`${PACKAGE}.idempotencyComplete`]: new IdempotencyComplete(),
		[`${PACKAGE}.idempotencyExactlyOnce`]: new IdempotencyExactlyOnce(),
		[`${PACKAGE}.idempotencyPurge`]: new IdempotencyPurge(),
		[`${PACKAGE}.idempotencyKeys`]: new IdempotencyKeys(),
		[`${PACKAGE}.idempotencyStep`]: new IdempotencyStep(),
		[`${PACKAGE}.verifyWebhookSignature`]: new VerifyWebhookSignature(),
		// Started with items (runWorkflow's startNode), n8n's engine hands a trigger's items on as its
		// output, as in an execution the trigger started: its claim-making code is not run here.
		[`${PACKAGE}.idempotencyRedriveTrigger`]: new IdempotencyRedriveTrigger(),
	};
	return {
		types,
		getByName: (name) => types[name],
		getByNameAndVersion: (name) => types[name],
		getKnownTypes: () => ({}),
	};
}

const nodeTypes = loadNodeTypes();

/** Makes another node class runnable here (the benchmarks' pass-through node). */
function registerNodeType(typeName, node) {
	nodeTypes.types[typeName] = node;
}

/**
 * A one-input, one-output node type of a test, `test.<name>`, run by the real engine like any node:
 * a side effect or business step whose output the test decides.
 * @param {string} name
 * @param {(this: import('n8n-workflow').IExecuteFunctions) => Promise<import('n8n-workflow').INodeExecutionData[][]>} execute
 * @param {object[]} [properties] its parameters
 */
function registerTestNode(name, execute, properties = []) {
	registerNodeType(`test.${name}`, {
		description: {
			displayName: name,
			name,
			group: ['transform'],
			version: 1,
			defaults: {},
			inputs: ['main'],
			outputs: ['main'],
			properties,
		},
		execute,
	});
}

/**
 * The credentials helper of one n8n line: hands every node the credential data given to the run, by
 * credential type.
 * @param {typeof import('n8n-workflow').ICredentialsHelper} ICredentialsHelper
 */
function credentialsHelperClass(ICredentialsHelper) {
	return class TestCredentialsHelper extends ICredentialsHelper {
		constructor(credentialsByType) {
			super();
			this.credentialsByType = credentialsByType;
		}
		getParentTypes() {
			return [];
		}
		isCredentialUsableByNode() {
			return true;
		}
		async authenticate(_credentials, _typeName, requestOptions) {
			return requestOptions;
		}
		async preAuthentication() {
			return undefined;
		}
		async runPreAuthentication() {
			return undefined;
		}
		/** @returns {Promise<never>} */
		async getCredentials() {
			throw new Error('not used by these nodes');
		}
		async getDecrypted(_additionalData, _nodeCredentials, type) {
			const data = this.credentialsByType[type];
			if (data === undefined) throw new Error(`No test credential of type ${type}`);
			return data;
		}
		async updateCredentials() {}
		async updateCredentialsOauthTokenData() {}
		getCredentialsProperties() {
			return [];
		}
	};
}

let executionCounter = 0;

/**
 * What a node execution reads of n8n's per-run data; the rest (telemetry, sub-workflow runs) is not
 * used by these nodes.
 * @returns {import('n8n-workflow').IWorkflowExecuteAdditionalData}
 */
function additionalDataFor(CredentialsHelper, credentialsByType, hooks, executionId) {
	const base = 'http://127.0.0.1:5678/';
	return /** @type {any} */ ({
		credentialsHelper: new CredentialsHelper(credentialsByType),
		hooks,
		executionId,
		currentNodeExecutionIndex: 0,
		restApiUrl: `${base}rest`,
		instanceBaseUrl: base,
		formBaseUrl: `${base}form`,
		formWaitingBaseUrl: `${base}form-waiting`,
		formTestBaseUrl: `${base}form-test`,
		webhookBaseUrl: `${base}webhook`,
		webhookWaitingBaseUrl: `${base}webhook-waiting`,
		webhookTestBaseUrl: `${base}webhook-test`,
		mcpBaseUrl: `${base}mcp`,
		mcpTestBaseUrl: `${base}mcp-test`,
		variables: {},
		logAiEvent: () => undefined,
		executeWorkflow: async () => {
			throw new Error('sub-workflows are not used here');
		},
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
	});
}

/** The trigger runWorkflow puts before a workflow's start node; no workflow of the tests has a node of this name. */
const TRIGGER = 'Test Trigger';
const SIGNING_SECRET = 'webhookSigningSecretApi';

/**
 * The node with its Webhook Signing Secret's id standing for the data this run gives it: in these
 * tests two different secrets are two credentials, as in n8n, where they have two ids (the package
 * holds that credential for a few seconds by its id: heldSigningSecret.ts). A run with
 * `editedCredentials` keeps the ids as written, so one id can be given new data: a credential edited
 * between executions. The key store's credential keeps its id (the pool tests edit it under one id).
 */
function withCredentialIdsOf(node, credentialData) {
	if (node.credentials === undefined) return node;
	const credentials = Object.fromEntries(
		Object.entries(node.credentials).map(([type, reference]) => {
			const data = credentialData[type];
			if (type !== SIGNING_SECRET || reference?.id === undefined || data === undefined)
				return [type, reference];
			const digest = createHash('sha256').update(JSON.stringify(data)).digest('hex');
			return [type, { ...reference, id: `${reference.id}-${digest.slice(0, 12)}` }];
		}),
	);
	return { ...node, credentials };
}
registerTestNode('trigger', async function () {
	return [this.getInputData()];
});

/**
 * A runner on one n8n line's engine: `core` is that line's n8n-core, `workflow` its n8n-workflow.
 * The package's nodes are the same dist/ classes on every line (they import the repository's
 * n8n-workflow; in n8n, NODE_PATH hands them the server's own copy).
 * @param {{ core: any, workflow: any }} line
 */
function createRunner({ core, workflow: n8nWorkflow }) {
	const { ExecutionLifecycleHooks, WorkflowExecute } = core;
	const { Workflow, createRunExecutionData } = n8nWorkflow;
	const CredentialsHelper = credentialsHelperClass(n8nWorkflow.ICredentialsHelper);

	/**
	 * Runs `workflowJson` with `items` as the output of a trigger feeding its start node (the node
	 * no other node connects to), as a webhook execution would: the trigger node runs first and hands
	 * the items on, so the start node has a source (the node before it) as in n8n, where a webhook
	 * execution starts at the Webhook node. n8n's error output depends on that: it merges the input
	 * item's fields into an error item only when the node has a source. Returns n8n's IRun and helpers.
	 * `credentials` is the Idempotency Postgres credential's data; `credentialsByType` adds others
	 * ({ webhookSigningSecretApi: { secret } }). `startNode` names the start node where a workflow
	 * has several (a template's Webhook and its Redrive Trigger): the first one otherwise.
	 * @param {{ name: string, nodes: object[], connections: object, settings?: object }} workflowJson
	 * @param {object[]} items
	 * @param {{ credentials?: object, credentialsByType?: Record<string, object>,
	 *   nodeOverrides?: Record<string, { parameters?: object, [field: string]: unknown }>,
	 *   editedCredentials?: boolean, startNode?: string }} [options]
	 */
	async function runWorkflow(
		workflowJson,
		items,
		{
			credentials,
			credentialsByType = {},
			nodeOverrides = {},
			editedCredentials = false,
			startNode: startNodeName,
		} = {},
	) {
		const credentialData = { idempotencyPostgresApi: credentials, ...credentialsByType };
		const workflowNodes = workflowJson.nodes.map((node) => {
			const overridden = {
				...node,
				...(nodeOverrides[node.name] ?? {}),
				parameters: { ...node.parameters, ...(nodeOverrides[node.name]?.parameters ?? {}) },
			};
			return editedCredentials ? overridden : withCredentialIdsOf(overridden, credentialData);
		});
		const targets = new Set(
			Object.values(workflowJson.connections).flatMap((byType) =>
				(byType.main ?? []).flat().map((connection) => connection.node),
			),
		);
		const startNode = workflowNodes.find((node) =>
			startNodeName === undefined ? !targets.has(node.name) : node.name === startNodeName,
		);
		const trigger = {
			id: 'test-trigger',
			name: TRIGGER,
			type: 'test.trigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		};
		const nodes = [trigger, ...workflowNodes];
		const connections = {
			...workflowJson.connections,
			[TRIGGER]: { main: [[{ node: startNode.name, type: 'main', index: 0 }]] },
		};
		const workflow = new Workflow({
			id: 'test-workflow',
			name: workflowJson.name,
			nodes,
			connections,
			nodeTypes,
			active: false,
			settings: workflowJson.settings ?? { executionOrder: 'v1' },
		});
		const executionId = String(++executionCounter);
		// A workflow read from a file has no database fields (dates, active state): the hooks do not read them.
		const workflowData = /** @type {import('n8n-workflow').IWorkflowBase} */ (
			/** @type {unknown} */ ({ ...workflowJson, id: 'test-workflow', nodes, connections })
		);
		const hooks = new ExecutionLifecycleHooks('webhook', executionId, workflowData);
		// What a node sent to the webhook's caller (this.sendResponse), in order: n8n answers with the first.
		const webhookResponses = [];
		hooks.addHandler('sendResponse', (response) => {
			webhookResponses.push(response);
		});
		const runExecutionData = createRunExecutionData({
			executionData: {
				nodeExecutionStack: [
					{ node: workflow.getNode(TRIGGER), data: { main: [items] }, source: null },
				],
			},
		});
		const execute = new WorkflowExecute(
			additionalDataFor(CredentialsHelper, credentialData, hooks, executionId),
			'webhook',
			runExecutionData,
		);
		const run = await execute.processRunExecutionData(workflow);
		return { ...describeRun(run), webhookResponses };
	}
	return runWorkflow;
}

const runWorkflow = createRunner({ core: require('n8n-core'), workflow: require('n8n-workflow') });

/** Reads a run the way a person reads the execution view: outputs per node, and the error if any. */
function describeRun(run) {
	const { runData, error } = run.data.resultData;
	return {
		run,
		status: run.status,
		error,
		ran: (nodeName) => runData[nodeName] !== undefined,
		/**
		 * Items of one output of a node's first run; output 0 is `true` for Reserve. A node that did
		 * not run or threw has no outputs at all: asking for one throws, so `toHaveLength(0)` on an
		 * output can only pass where the node really produced that output, empty.
		 */
		output: (nodeName, outputIndex = 0) => {
			const task = runData[nodeName]?.[0];
			const outputs = task?.data?.main;
			if (outputs === undefined) {
				const why =
					task === undefined
						? 'did not run'
						: `produced no output (${task.error?.message ?? 'no data'})`;
				throw new Error(
					`${nodeName} ${why}: assert the error or the database instead of its output ${outputIndex}`,
				);
			}
			if (outputIndex >= outputs.length)
				throw new Error(`${nodeName} has ${outputs.length} outputs, not ${outputIndex + 1}`);
			return outputs[outputIndex] ?? [];
		},
		outputCount: (nodeName) => runData[nodeName]?.[0]?.data?.main?.length ?? 0,
		/** Items of one output over every run of a node (a node fed by two branches runs once for each). */
		allOutputs: (nodeName, outputIndex = 0) =>
			(runData[nodeName] ?? []).flatMap((task) => task.data?.main?.[outputIndex] ?? []),
		nodeError: (nodeName) => runData[nodeName]?.[0]?.error,
	};
}

module.exports = { createRunner, registerNodeType, registerTestNode, runWorkflow, PACKAGE };
