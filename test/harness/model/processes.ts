/**
 * An n8n process, as far as the nodes can tell: its own copy of the package's modules. n8n loads
 * a node package once per process, so module-level state (the webhook trigger's readers, the
 * read pacer, rate-limit gates) is shared by every execution in the process and gone when it
 * stops. A process here is a fresh module registry (`jest.isolateModules`) for the package's own
 * files, with n8n's packages (`n8n-workflow`) shared as in one n8n: whatever module state an
 * implementation keeps, a restart forgets it, without the implementation having to offer a way.
 */
import type { INodeType, INodeTypes, IVersionedNodeType } from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

import {
	TRIGGER_NODE_TYPE,
	WEBHOOK_TRIGGER_NODE_TYPE,
	additionalDataFor,
	withPollTimes,
} from '../n8n';
import { baseUrlFor } from './wire';

export const API_KEY = 'dwk_model00000000000000000000000000';

export interface N8nProcess {
	id: number;
	alive: boolean;
	/** Resolves when the process stops: what it was doing ends there, unfinished. */
	stopped: Promise<void>;
	stop(): void;
	/** The credential's base URL: names the API and this process (`wire.ts`). */
	baseUrl: string;
	nodeTypes: INodeTypes;
	additionalData: () => ReturnType<typeof additionalDataFor>;
}

type TriggerModule =
	typeof import('../../../nodes/DocumentWorkflowTrigger/DocumentWorkflowTrigger.node');
type WebhookModule =
	typeof import('../../../nodes/DocumentWorkflowWebhookTrigger/DocumentWorkflowWebhookTrigger.node');

let n8nWorkflow: typeof import('n8n-workflow') | undefined;

/** The package's node types as a new process loads them. */
function loadNodeTypes(): Record<string, INodeType | IVersionedNodeType> {
	n8nWorkflow ??= jest.requireActual<typeof import('n8n-workflow')>('n8n-workflow');
	const shared = n8nWorkflow;
	let types: Record<string, INodeType | IVersionedNodeType> = {};
	jest.isolateModules(() => {
		jest.doMock('n8n-workflow', () => shared);
		const trigger =
			require('../../../nodes/DocumentWorkflowTrigger/DocumentWorkflowTrigger.node') as TriggerModule;
		const webhook =
			require('../../../nodes/DocumentWorkflowWebhookTrigger/DocumentWorkflowWebhookTrigger.node') as WebhookModule;
		types = {
			[TRIGGER_NODE_TYPE]: withPollTimes(new trigger.DocumentWorkflowTrigger()),
			[WEBHOOK_TRIGGER_NODE_TYPE]: new webhook.DocumentWorkflowWebhookTrigger(),
		};
	});
	return types;
}

/** Starts process `id` of an n8n that reaches the API at `host`. */
export function startProcess(id: number, host: string): N8nProcess {
	const types = loadNodeTypes();
	const nodeTypes: INodeTypes = {
		getByName: (name) => {
			const type = types[name];
			if (!type) throw new Error(`Unknown node type ${name}`);
			return type;
		},
		getByNameAndVersion: (name, version) =>
			NodeHelpers.getVersionedNodeType(nodeTypes.getByName(name), version),
		getKnownTypes: () => ({}),
	};
	const baseUrl = baseUrlFor(host, id);
	let stop = () => {};
	const stopped = new Promise<void>((resolve) => (stop = resolve));
	const process: N8nProcess = {
		id,
		alive: true,
		stopped,
		stop: () => {
			process.alive = false;
			stop();
		},
		baseUrl,
		nodeTypes,
		additionalData: () => additionalDataFor({ baseUrl, apiKey: API_KEY }),
	};
	return process;
}

/** `work`, or nothing once `process` has stopped (a stopped process finishes nothing). */
export async function untilStopped(process: N8nProcess, work: Promise<unknown>): Promise<void> {
	await Promise.race([work, process.stopped]);
}
