/**
 * Runs this package's nodes through n8n's own execution engine (n8n-core), the way
 * n8n runs them: `WorkflowExecute` for the action node, `PollContext` for the trigger,
 * `RoutingNode` for the credential test (as n8n's credential tester does). Requests go
 * over real HTTP through n8n's request helpers; credentials are applied by the
 * credential type's own `authenticate`; binary data goes through n8n's
 * BinaryDataService in memory ('default') or on disk ('filesystem').
 *
 * What stands in for the n8n server here is only what n8n-core expects its host to
 * provide: the loaded node types, a credentials store, and `additionalData`.
 *
 * The harness folder, used by every test file: this module (the nodes in n8n-core);
 * `sandbox.ts` (`useSandbox()`, one sandbox per test file reset before each test, and the
 * fixtures); `triggerHost.ts` (an n8n stand-in that keeps the trigger's static data across
 * polls and restarts); `journal.ts` with `key-scan.setup.ts`/`key-scan.teardown.ts` (the API key
 * scan of everything the nodes produce); `env.ts` with `temp-folders.setup.ts`/
 * `temp-folders.teardown.ts` (n8n's user folder per test file, removed after the run);
 * `webhookHost.ts` (the webhook trigger behind a real HTTP listener, as n8n's webhook server runs it);
 * `model/` (the model of the API and of n8n's save points that both triggers are checked against
 * by property, with fast-check: see its README).
 */
import { Container } from '@n8n/di';
import {
	BinaryDataConfig,
	BinaryDataService,
	ExecuteContext,
	ExecutionLifecycleHooks,
	PollContext,
	RoutingNode,
	WorkflowExecute,
} from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	ICredentialType,
	ICredentialsDecrypted,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	INode,
	INodeCredentialTestResult,
	INodeExecutionData,
	INodeType,
	INodeTypeData,
	INodeTypes,
	IRun,
	IVersionedNodeType,
	IWorkflowExecuteAdditionalData,
	WorkflowActivateMode,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { createRunExecutionData, ICredentialsHelper, NodeHelpers, Workflow } from 'n8n-workflow';
import { randomUUID } from 'node:crypto';

import { DocumentWorkflowApi } from '../../credentials/DocumentWorkflowApi.credentials';
import { DocumentWorkflow } from '../../nodes/DocumentWorkflow/DocumentWorkflow.node';
import { DocumentWorkflowTrigger } from '../../nodes/DocumentWorkflowTrigger/DocumentWorkflowTrigger.node';
import { DocumentWorkflowWebhookTrigger } from '../../nodes/DocumentWorkflowWebhookTrigger/DocumentWorkflowWebhookTrigger.node';
import {
	captureN8nLogger,
	journal,
	journalError,
	journalSecret,
	renderData,
	scanThisFile,
} from './journal';

// Key scan (see journal.ts): n8n's logger writes into the journal, and each test file ends
// with a scan of everything its nodes produced.
captureN8nLogger();
if (typeof afterAll === 'function') afterAll(() => scanThisFile());

export const PACKAGE = 'n8n-nodes-document-workflow';
export const ACTION_NODE_TYPE = `${PACKAGE}.documentWorkflow`;
export const TRIGGER_NODE_TYPE = `${PACKAGE}.documentWorkflowTrigger`;
export const WEBHOOK_TRIGGER_NODE_TYPE = `${PACKAGE}.documentWorkflowWebhookTrigger`;
const INPUT_NODE_TYPE = 'test.items';

/** A file for an input item; stored through n8n's binary helpers when the input node runs. */
export interface InputFile {
	data: Buffer;
	fileName?: string;
	mimeType?: string;
}

export interface InputItem {
	json?: IDataObject;
	binary?: Record<string, InputFile>;
}

/**
 * The first node of every test workflow: emits the given items, storing their files with
 * `helpers.prepareBinaryData`, so the node under test receives binaries exactly as it would
 * from any n8n node (in memory or as filesystem references, per binary mode).
 */
const pendingInputs = new Map<string, InputItem[]>();

class TestItemsNode implements INodeType {
	description = {
		displayName: 'Test Items',
		name: INPUT_NODE_TYPE,
		group: ['input'],
		version: 1,
		description: 'Emits the items a test gives it',
		defaults: { name: 'Items' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [{ displayName: 'Key', name: 'key', type: 'string', default: '' }],
	} as unknown as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const key = this.getNodeParameter('key', 0) as string;
		const items = pendingInputs.get(key) ?? [{ json: {} }];
		const output: INodeExecutionData[] = [];
		for (const item of items) {
			const out: INodeExecutionData = { json: item.json ?? {}, pairedItem: { item: 0 } };
			if (item.binary) {
				out.binary = {};
				for (const [name, file] of Object.entries(item.binary)) {
					out.binary[name] = await this.helpers.prepareBinaryData(
						file.data,
						file.fileName,
						file.mimeType,
					);
				}
			}
			output.push(out);
		}
		return [output];
	}
}

/** What n8n's node loader adds to every polling node (n8n-core's `commonPollingParameters`, not exported): Poll Times. */
export function withPollTimes<T extends INodeType>(nodeType: T): T {
	nodeType.description.properties.unshift({
		displayName: 'Poll Times',
		name: 'pollTimes',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true, multipleValueButtonText: 'Add Poll Time' },
		default: { item: [{ mode: 'everyMinute' }] },
		placeholder: 'Add Poll Time',
		options: NodeHelpers.cronNodeOptions,
	});
	return nodeType;
}

class NodeTypesRegistry implements INodeTypes {
	private readonly types: INodeTypeData = {
		[ACTION_NODE_TYPE]: { type: new DocumentWorkflow(), sourcePath: '' },
		// n8n offers every usableAsTool node as `<type>Tool` too; an AI agent runs that one.
		[`${ACTION_NODE_TYPE}Tool`]: { type: new DocumentWorkflow(), sourcePath: '' },
		[TRIGGER_NODE_TYPE]: { type: withPollTimes(new DocumentWorkflowTrigger()), sourcePath: '' },
		[WEBHOOK_TRIGGER_NODE_TYPE]: { type: new DocumentWorkflowWebhookTrigger(), sourcePath: '' },
		[INPUT_NODE_TYPE]: { type: new TestItemsNode(), sourcePath: '' },
	};

	getByName(nodeType: string): INodeType | IVersionedNodeType {
		const entry = this.types[nodeType];
		if (!entry) throw new Error(`Unknown node type ${nodeType}`);
		return entry.type;
	}

	getByNameAndVersion(nodeType: string, version?: number): INodeType {
		return NodeHelpers.getVersionedNodeType(this.getByName(nodeType), version);
	}

	getKnownTypes() {
		return {};
	}
}

export const nodeTypes = new NodeTypesRegistry();
const credentialTypes: Record<string, ICredentialType> = {
	documentWorkflowApi: new DocumentWorkflowApi(),
};

/** The part of n8n's credentials helper that n8n-core calls during execution. */
class TestCredentialsHelper extends ICredentialsHelper {
	constructor(
		private readonly credentials: Record<string, ICredentialDataDecryptedObject>,
		private readonly read: CredentialRead = {},
	) {
		super();
	}

	getParentTypes(): string[] {
		return [];
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		const type = credentialTypes[typeName];
		if (typeof type?.authenticate === 'function')
			return await type.authenticate(credentials, requestOptions);
		return requestOptions;
	}

	async preAuthentication() {
		return undefined;
	}

	async runPreAuthentication() {
		return undefined;
	}

	getCredentialsProperties() {
		return [];
	}

	async getDecrypted(
		_additionalData: unknown,
		_nodeCredentials: unknown,
		type: string,
	): Promise<ICredentialDataDecryptedObject> {
		const found = this.credentials[type];
		if (!found) throw new Error(`No credentials of type ${type} in this test`);
		const { ms = 0, onRead } = this.read;
		if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
		onRead?.(Date.now());
		return found;
	}

	async getCredentials(): Promise<never> {
		throw new Error('not used by these nodes');
	}

	async updateCredentials() {}

	async updateCredentialsOauthTokenData() {}

	getOAuth2Options() {
		return undefined;
	}

	isCredentialUsableByNode() {
		return true;
	}
}

export interface DocumentWorkflowCredentials {
	[key: string]: string | undefined;
	baseUrl: string;
	apiKey: string;
	workspaceId?: string;
}

/**
 * How n8n's server reads the credential for every request, after the node let the request go: in
 * a busy n8n that takes tens of ms (`ms`). `onRead` is told when each read ends, as the request
 * leaves.
 */
export interface CredentialRead {
	ms?: number;
	onRead?: (at: number) => void;
}

export function additionalDataFor(
	credentials: DocumentWorkflowCredentials,
	hooks?: ExecutionLifecycleHooks,
	executionId?: string,
	credentialRead?: CredentialRead,
): IWorkflowExecuteAdditionalData {
	const data: Partial<IWorkflowExecuteAdditionalData> = {
		credentialsHelper: new TestCredentialsHelper(
			{ documentWorkflowApi: credentials as ICredentialDataDecryptedObject },
			credentialRead,
		),
		hooks,
		executionId,
		currentNodeExecutionIndex: 0,
		restApiUrl: 'http://127.0.0.1:5678/rest',
		instanceBaseUrl: 'http://127.0.0.1:5678/',
		formBaseUrl: 'http://127.0.0.1:5678/form',
		formWaitingBaseUrl: 'http://127.0.0.1:5678/form-waiting',
		formTestBaseUrl: 'http://127.0.0.1:5678/form-test',
		webhookBaseUrl: 'http://127.0.0.1:5678/webhook',
		webhookWaitingBaseUrl: 'http://127.0.0.1:5678/webhook-waiting',
		webhookTestBaseUrl: 'http://127.0.0.1:5678/webhook-test',
		mcpBaseUrl: 'http://127.0.0.1:5678/mcp',
		mcpTestBaseUrl: 'http://127.0.0.1:5678/mcp-test',
		variables: {},
		executeWorkflow: async () => {
			throw new Error('sub-workflows are not used by these nodes');
		},
		getRunExecutionData: async () => undefined,
		logAiEvent: () => {},
		startRunnerTask: async () => {
			throw new Error('task runners are not used by these nodes');
		},
	} as Partial<IWorkflowExecuteAdditionalData>;
	return data as IWorkflowExecuteAdditionalData;
}

export type BinaryMode = 'default' | 'filesystem';

let currentBinaryMode: BinaryMode | undefined;

/** Switches n8n's binary data service between in-memory and filesystem storage. */
export async function useBinaryMode(mode: BinaryMode): Promise<void> {
	if (currentBinaryMode === mode) return;
	const config = Container.get(BinaryDataConfig);
	config.mode = mode;
	const service = Container.get(BinaryDataService);
	await service.init();
	currentBinaryMode = mode;
}

export interface RunNodeOptions {
	parameters: IDataObject;
	credentials: DocumentWorkflowCredentials;
	items?: InputItem[];
	/** Node settings as n8n stores them on the node. */
	continueOnFail?: boolean;
	retryOnFail?: boolean;
	maxTries?: number;
	waitBetweenTries?: number;
	mode?: WorkflowExecuteMode;
	executionId?: string;
	nodeName?: string;
	nodeId?: string;
	/** Cancels the execution like the editor's stop button, after this many ms. */
	cancelAfterMs?: number;
	/** Runs the node as n8n runs it for an AI agent: as its `…Tool` node type. */
	asTool?: boolean;
	credentialRead?: CredentialRead;
}

export interface NodeRunResult {
	/** The node's output items (first output). */
	items: INodeExecutionData[];
	/** The error the node ended with, if it failed. */
	error?: Error & { description?: string | null; httpCode?: string | null; context?: IDataObject };
	run: IRun;
	executionId: string;
}

/** Runs `Items → Document Workflow` through WorkflowExecute and returns what the node produced. */
export async function runActionNode(options: RunNodeOptions): Promise<NodeRunResult> {
	journalSecret(options.credentials.apiKey, 'runActionNode credentials');
	const result = await runActionNodeUnjournaled(options);
	journal('output', 'runActionNode output items', renderData(result.items));
	if (result.run) journal('output', 'runActionNode run data', renderData(result.run.data));
	journalError(result.error, 'runActionNode error');
	return result;
}

async function runActionNodeUnjournaled(options: RunNodeOptions): Promise<NodeRunResult> {
	const key = randomUUID();
	pendingInputs.set(key, options.items ?? [{ json: {} }]);
	const nodeName = options.nodeName ?? 'Document Workflow';
	const executionId = options.executionId ?? String(Math.floor(Math.random() * 1e9));

	const inputNode: INode = {
		id: randomUUID(),
		name: 'Items',
		type: INPUT_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: { key },
	};
	const node: INode = {
		id: options.nodeId ?? randomUUID(),
		name: nodeName,
		type: options.asTool ? `${ACTION_NODE_TYPE}Tool` : ACTION_NODE_TYPE,
		typeVersion: 1,
		position: [200, 0],
		parameters: options.parameters as INode['parameters'],
		credentials: { documentWorkflowApi: { id: '1', name: 'Document Workflow API' } },
		continueOnFail: options.continueOnFail,
		onError: options.continueOnFail ? 'continueRegularOutput' : undefined,
		retryOnFail: options.retryOnFail,
		maxTries: options.maxTries,
		waitBetweenTries: options.waitBetweenTries,
	};
	const workflow = new Workflow({
		id: 'test-workflow',
		name: 'test',
		nodes: [inputNode, node],
		connections: { Items: { main: [[{ node: nodeName, type: 'main', index: 0 }]] } },
		active: false,
		nodeTypes,
		settings: { executionOrder: 'v1' },
	});

	const mode = options.mode ?? 'manual';
	const hooks = new ExecutionLifecycleHooks(mode, executionId, {
		id: 'test-workflow',
		name: 'test',
		active: false,
		isArchived: false,
		nodes: Object.values(workflow.nodes),
		connections: {},
		createdAt: new Date(),
		updatedAt: new Date(),
		activeVersionId: null,
	} as never);
	let resolveFinished: (run: IRun) => void = () => {};
	const finished = { promise: new Promise<IRun>((resolve) => (resolveFinished = resolve)) };
	hooks.addHandler('workflowExecuteAfter', (run) => resolveFinished(run));

	const additionalData = additionalDataFor(
		options.credentials,
		hooks,
		executionId,
		options.credentialRead,
	);
	const runExecutionData = createRunExecutionData({
		executionData: {
			nodeExecutionStack: [{ node: inputNode, data: { main: [[{ json: {} }]] }, source: null }],
		},
	});
	const execute = new WorkflowExecute(additionalData, mode, runExecutionData);
	let running: ReturnType<WorkflowExecute['processRunExecutionData']>;
	try {
		running = execute.processRunExecutionData(workflow);
	} catch (error) {
		// n8n refuses to start a workflow with parameter issues (e.g. an empty required field).
		pendingInputs.delete(key);
		return {
			items: [],
			error: error as NodeRunResult['error'],
			run: undefined as unknown as IRun,
			executionId,
		};
	}
	let timer: NodeJS.Timeout | undefined;
	if (options.cancelAfterMs !== undefined)
		timer = setTimeout(() => running.cancel(), options.cancelAfterMs);
	try {
		await running;
	} catch {
		// cancellation rejects here; the run data below still says what happened
	}
	if (timer) clearTimeout(timer);
	const run =
		options.cancelAfterMs !== undefined
			? await Promise.race([
					finished.promise,
					running.then(
						() => finished.promise,
						() => finished.promise,
					),
				])
			: await finished.promise;
	pendingInputs.delete(key);

	const taskData = run.data.resultData.runData[nodeName]?.[0];
	const items = taskData?.data?.main?.[0] ?? [];
	const error = (taskData?.error ?? run.data.resultData.error) as NodeRunResult['error'];
	return { items, error, run, executionId };
}

export interface PollOptions {
	parameters: IDataObject;
	credentials: DocumentWorkflowCredentials;
	/** The workflow's static data as n8n last saved it; the poll mutates it in place. */
	staticData: IDataObject;
	mode?: 'trigger' | 'manual';
	activation?: WorkflowActivateMode;
	/** n8n 2.x's poll budget; omit to behave like n8n 1.x, which has none. */
	pollBudgetMs?: number;
	nodeName?: string;
	/** The trigger node's id (n8n keeps it across renames; a new node gets a new one). */
	nodeId?: string;
	/**
	 * Durable poll cursors: the node's static data is this object (a snapshot of its
	 * `poller_state` row), not the workflow's `node:<name>` (n8n 2.41.1
	 * `trigger-execution-context.factory.js` `resolveNodeStaticData`, 262–268).
	 */
	nodeStaticData?: IDataObject;
}

export interface PollResult {
	/** The items the poll emitted, or null when it emitted nothing. */
	items: INodeExecutionData[] | null;
	/** The node's static data after the poll (what n8n would save if items were emitted). */
	staticData: IDataObject;
}

/** Runs one poll of the trigger through n8n-core's PollContext. */
export async function pollTrigger(options: PollOptions): Promise<PollResult> {
	journalSecret(options.credentials.apiKey, 'pollTrigger credentials');
	try {
		const result = await pollTriggerUnjournaled(options);
		journal('output', 'pollTrigger items', renderData(result.items));
		journal('staticData', 'pollTrigger static data', renderData(result.staticData));
		return result;
	} catch (error) {
		journalError(error, 'pollTrigger error');
		journal('staticData', 'pollTrigger static data', renderData(options.staticData));
		throw error;
	}
}

async function pollTriggerUnjournaled(options: PollOptions): Promise<PollResult> {
	const nodeName = options.nodeName ?? 'Document Workflow Trigger';
	const node: INode = {
		id: options.nodeId ?? 'trigger-node-id',
		name: nodeName,
		type: TRIGGER_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: {
			pollTimes: { item: [{ mode: 'everyMinute' }] },
			...options.parameters,
		} as INode['parameters'],
		credentials: { documentWorkflowApi: { id: '1', name: 'Document Workflow API' } },
	};
	const workflow = new Workflow({
		id: 'trigger-workflow',
		name: 'trigger test',
		nodes: [node],
		connections: {},
		active: true,
		nodeTypes,
		staticData: options.staticData,
	});
	const additionalData = additionalDataFor(options.credentials);
	const mode = options.mode ?? 'trigger';
	const budget = options.pollBudgetMs;
	const context = new PollContext(
		workflow,
		node,
		additionalData,
		mode,
		options.activation ?? 'activate',
		undefined,
		undefined,
		undefined,
		undefined,
		options.nodeStaticData === undefined ? undefined : () => options.nodeStaticData!,
		budget === undefined ? undefined : () => budget,
	);
	if (budget === undefined) {
		// n8n 1.x has no poll budget: hide the member so the node's presence check is exercised.
		Object.defineProperty(context, 'getPollBudgetMs', { value: undefined });
	}
	const nodeType = nodeTypes.getByNameAndVersion(TRIGGER_NODE_TYPE, 1);
	const result = await nodeType.poll!.call(context);
	const items = result ? result[0] : null;
	return { items, staticData: workflow.staticData as IDataObject };
}

/**
 * An n8n-core PollContext of the trigger node with the credential, for tests of the shared read
 * code below the nodes: its requests go through n8n's own request helpers and `authenticate`.
 */
export function triggerContext(credentials: DocumentWorkflowCredentials): PollContext {
	journalSecret(credentials.apiKey, 'triggerContext credentials');
	const node: INode = {
		id: 'read-test-node',
		name: 'Document Workflow Trigger',
		type: TRIGGER_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: { pollTimes: { item: [{ mode: 'everyMinute' }] } } as INode['parameters'],
		credentials: { documentWorkflowApi: { id: '1', name: 'Document Workflow API' } },
	};
	const workflow = new Workflow({
		id: 'read-test-workflow',
		name: 'read test',
		nodes: [node],
		connections: {},
		active: true,
		nodeTypes,
	});
	return new PollContext(workflow, node, additionalDataFor(credentials), 'trigger', 'activate');
}

/**
 * Runs the credential's test request the way n8n's credential tester does: a RoutingNode
 * request with the credential applied, then the credential's response-code rules.
 */
export async function testCredential(
	credentials: DocumentWorkflowCredentials,
): Promise<INodeCredentialTestResult> {
	journalSecret(credentials.apiKey, 'testCredential credentials');
	const result = await testCredentialUnjournaled(credentials);
	journal('credentialTest', 'testCredential result', renderData(result));
	return result;
}

async function testCredentialUnjournaled(
	credentials: DocumentWorkflowCredentials,
): Promise<INodeCredentialTestResult> {
	const credentialType = credentialTypes.documentWorkflowApi;
	const testRequest = credentialType.test!;
	const baseType = nodeTypes.getByNameAndVersion(INPUT_NODE_TYPE, 1);
	const probeType: INodeType = {
		description: {
			...baseType.description,
			credentials: [{ name: 'documentWorkflowApi', required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					routing: { request: testRequest.request },
					default: '',
				},
			],
		},
	};
	const node: INode = {
		id: 'temp',
		name: 'Temp-Node',
		type: INPUT_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
		credentials: { documentWorkflowApi: { id: '1', name: 'Document Workflow API' } },
	};
	// Like n8n's tester: the workflow resolves the node's type to the probe that carries the test request.
	const probeTypes: INodeTypes = {
		getByName: () => probeType,
		getByNameAndVersion: () => probeType,
		getKnownTypes: () => ({}),
	};
	const workflow = new Workflow({
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: probeTypes,
	});
	const additionalData = additionalDataFor(credentials);
	const context = new ExecuteContext(
		workflow,
		node,
		additionalData,
		'internal',
		createRunExecutionData({ resultData: { runData: {} } }),
		0,
		[],
		{ main: [[{ json: {} }]] },
		{ node, data: {}, source: null },
		[],
	);
	const decrypted: ICredentialsDecrypted = {
		id: '1',
		name: 'Document Workflow API',
		type: 'documentWorkflowApi',
		data: credentials as ICredentialDataDecryptedObject,
	};
	const routingNode = new RoutingNode(context, probeType, decrypted);
	try {
		await routingNode.runNode();
	} catch (error) {
		const cause = (
			error as { cause?: { response?: { status: number; statusText?: string }; code?: string } }
		).cause;
		if (cause?.response) {
			for (const rule of testRequest.rules ?? []) {
				if (rule.type === 'responseCode' && rule.properties.value === cause.response.status) {
					return { status: 'Error', message: rule.properties.message };
				}
			}
			return {
				status: 'Error',
				message: cause.response.statusText || `Received HTTP status code: ${cause.response.status}`,
			};
		}
		if (cause?.code) return { status: 'Error', message: cause.code };
		return { status: 'Error', message: String((error as Error).message) };
	}
	return { status: 'OK', message: 'Connection successful!' };
}
