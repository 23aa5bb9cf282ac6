/**
 * The webhook trigger behind a real HTTP listener, run as n8n's webhook server runs it
 * (2.41.1 `webhooks/live-webhooks.js` and `webhook-helpers.js`): for each request a new
 * `Workflow` with a copy of the static data as last saved, n8n-core's own `WebhookContext`
 * built with the request and response, the node's `webhook()` called; then the static data
 * saved if the node changed it (`__dataChanged`, the whole of it: the later save wins), and only
 * then the answer, unless the node answered itself (`noWebhookResponse`): n8n's
 * `responseCallback` saves before it resolves the answer; the answer's status and body as n8n
 * evaluates them from the node's webhook description (`responseCode`, `responseData`, the
 * `webhookResponse`); then an execution started (recorded here, with its items and time) when
 * `workflowData` is returned. A request still in `webhook()` when n8n stops gets no answer. Activation runs `checkExists` (then `create`) and saves as n8n's
 * `addWebhooks` does; a restart forgets the process's memory and keeps what was saved.
 */
import { HookContext, WebhookContext } from 'n8n-core';
import type {
	IDataObject,
	INode,
	INodeExecutionData,
	INodeType,
	IWebhookData,
	IWebhookDescription,
	IWebhookResponseData,
	WorkflowActivateMode,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

import { WebhookReaders } from '../../nodes/DocumentWorkflowWebhookTrigger/reader';
import type { DocumentWorkflowCredentials } from './n8n';
import { WEBHOOK_TRIGGER_NODE_TYPE, additionalDataFor, nodeTypes } from './n8n';
import { journal, journalError, journalSecret, renderData } from './journal';

export const WEBHOOK_NODE_NAME = 'Document Workflow Webhook Trigger';

export interface StartedExecution {
	/** When the node handed its items to n8n (the execution starts then). */
	at: number;
	items: INodeExecutionData[];
}

/** The workflow's static data as the database holds it: what each request loads a copy of. */
export class StaticDataStore {
	data: IDataObject = {};
	/** How many times it was saved (a request or an activation that changed it). */
	saves = 0;

	save(staticData: IDataObject): void {
		this.data = JSON.parse(JSON.stringify(staticData)) as IDataObject;
		this.saves++;
	}
}

export interface WebhookHostOptions {
	credentials: DocumentWorkflowCredentials;
	parameters?: IDataObject;
	/** 'webhook' (production URL, default) or 'manual' (test URL). */
	mode?: WorkflowExecuteMode;
	workflowId?: string;
	nodeId?: string;
	/** The node's typeVersion in the workflow (default 1, as workflows saved before version 2 have it). */
	typeVersion?: number;
	/** The node's name (n8n keeps its static data under it). */
	nodeName?: string;
	/** The workflow's saved static data; default a new, empty one. */
	store?: StaticDataStore;
	/**
	 * Another n8n process: the node type as that process loaded it (its own module state), and
	 * what forgets that state; default this process's.
	 */
	process?: { nodeType: INodeType; forgetAll: () => void };
	/** The webhook's id (its URL); default a new one. */
	webhookId?: string;
}

export interface PostResult {
	status: number;
	body: string;
	/** Milliseconds from sending the request to the complete answer. */
	ms: number;
}

/** One active workflow whose trigger is the webhook trigger, listening on 127.0.0.1. */
export class WebhookHost {
	readonly executions: StartedExecution[] = [];
	readonly errors: Error[] = [];
	readonly store: StaticDataStore;
	url = '';
	/** Requests whose `webhook()` has not returned yet, now and at most so far (n8n holds each open meanwhile). */
	open = 0;
	maxOpen = 0;
	restarts = 0;
	private server?: Server;
	private readonly inFlight = new Set<Promise<void>>();
	/** Requests not answered yet: a stop closes their connections. */
	private readonly unanswered = new Set<ServerResponse>();
	private node: INode;

	constructor(private readonly options: WebhookHostOptions) {
		journalSecret(options.credentials.apiKey, 'WebhookHost credentials');
		this.store = options.store ?? new StaticDataStore();
		this.node = {
			id: options.nodeId ?? randomUUID(),
			name: options.nodeName ?? WEBHOOK_NODE_NAME,
			type: WEBHOOK_TRIGGER_NODE_TYPE,
			typeVersion: options.typeVersion ?? 1,
			position: [0, 0],
			webhookId: options.webhookId ?? randomUUID(),
			parameters: (options.parameters ?? {}) as INode['parameters'],
			credentials: { documentWorkflowApi: { id: '1', name: 'Document Workflow API' } },
		};
	}

	private nodeType(): INodeType {
		return (
			this.options.process?.nodeType ??
			nodeTypes.getByNameAndVersion(WEBHOOK_TRIGGER_NODE_TYPE, this.node.typeVersion)
		);
	}

	get nodeId(): string {
		return this.node.id;
	}

	get nodeName(): string {
		return this.node.name;
	}

	/** The workflow as n8n builds it for one request or activation: static data as last saved. */
	private loadWorkflow(): Workflow {
		return new Workflow({
			id: this.options.workflowId ?? 'webhook-workflow',
			name: 'webhook test',
			nodes: [this.node],
			connections: {},
			active: true,
			nodeTypes,
			staticData: JSON.parse(JSON.stringify(this.store.data)) as IDataObject,
		});
	}

	/** n8n's saveStaticData: only when the node changed it. */
	private saveIfChanged(workflow: Workflow): void {
		if ((workflow.staticData as { __dataChanged?: boolean }).__dataChanged === true)
			this.store.save(workflow.staticData);
	}

	/** The node's webhook as its description declares it: n8n evaluates the answer from it. */
	private webhookDescription(): IWebhookDescription {
		return this.nodeType().description.webhooks![0];
	}

	private webhookData(
		workflow: Workflow,
		additionalData: IWebhookData['workflowExecuteAdditionalData'],
	): IWebhookData {
		return {
			httpMethod: 'POST',
			node: this.node.name,
			path: 'webhook',
			webhookDescription: this.webhookDescription(),
			workflowId: workflow.id,
			workflowExecuteAdditionalData: additionalData,
			webhookId: this.node.webhookId,
		};
	}

	/** n8n's answer when the node did not answer itself (`executeWebhook`, `evaluateResponseOptions`). */
	private answer(workflow: Workflow, result: IWebhookResponseData, res: ServerResponse): void {
		const description = this.webhookDescription();
		const mode = this.options.mode ?? 'webhook';
		const code = workflow.expression.getSimpleParameterValue(
			this.node,
			description.responseCode,
			mode,
			{},
			undefined,
			200,
		);
		const responseData = workflow.expression.getComplexParameterValue(
			this.node,
			description.responseData,
			mode,
			{},
			undefined,
			'firstEntryJson',
		);
		let body: unknown;
		if (result.workflowData === undefined)
			body = result.webhookResponse ?? { message: 'Webhook call received' };
		else if (responseData === 'noData') body = undefined;
		else body = responseData || (result.webhookResponse ?? { message: 'Workflow was started' });
		if (!Number.isInteger(code))
			throw new TypeError(`Invalid status code: ${JSON.stringify(code)}`);
		res.writeHead(code as number, { 'Content-Type': 'application/json' });
		res.end(body === undefined ? '' : JSON.stringify(body));
	}

	/**
	 * Activation (and every start of n8n for an active workflow), in n8n's order (2.41.1
	 * `addWebhooks`): the workflow loaded with its static data as saved, the webhook registered
	 * (deliveries reach the node from then on: `registered` runs there), `checkExists`, then
	 * `create` if it says no, then that static data saved if changed (the later save wins).
	 */
	async activate(
		activation: WorkflowActivateMode = 'activate',
		registered?: () => Promise<void>,
	): Promise<void> {
		const workflow = this.loadWorkflow();
		await registered?.();
		const additionalData = additionalDataFor(this.options.credentials);
		const context = new HookContext(
			workflow,
			this.node,
			additionalData,
			this.options.mode === 'manual' ? 'manual' : 'trigger',
			activation,
			this.webhookData(workflow, additionalData),
		);
		const methods = this.nodeType().webhookMethods!.default!;
		if (!(await methods.checkExists.call(context))) await methods.create.call(context);
		this.saveIfChanged(workflow);
	}

	/**
	 * n8n stops and starts again: what the process was still doing is lost (nothing it had not
	 * saved or started yet happens), its memory is forgotten, and the active workflow is
	 * activated again (activation mode `init`). The URL stays the same.
	 */
	async restart(): Promise<void> {
		this.restarts++;
		for (const res of this.unanswered) res.destroy();
		(this.options.process?.forgetAll ?? (() => WebhookReaders.reset()))();
		await this.activate('init');
	}

	/** The user renames the trigger: n8n keeps its static data under the old name. */
	rename(name: string): void {
		this.node = { ...this.node, name };
	}

	async start(): Promise<this> {
		this.server = createServer((req, res) => {
			this.unanswered.add(res);
			res.on('close', () => this.unanswered.delete(res));
			const handling = this.handle(req, res);
			this.inFlight.add(handling);
			void handling.finally(() => this.inFlight.delete(handling));
		});
		await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
		this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhook/${this.node.webhookId}/webhook`;
		return this;
	}

	async stop(): Promise<void> {
		await this.settled();
		await new Promise((resolve) => this.server?.close(resolve));
	}

	/** Resolves once every request received so far has been handled to the end (its execution started or not). */
	async settled(): Promise<void> {
		while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
	}

	/** Every item of every execution started, in order. */
	emitted(): IDataObject[] {
		return this.executions.flatMap((execution) => execution.items.map((item) => item.json));
	}

	/** POSTs a body (JSON unless a string is given) and returns the answer. */
	async post(body: unknown, contentType = 'application/json'): Promise<PostResult> {
		const started = Date.now();
		const response = await fetch(this.url, {
			method: 'POST',
			headers: { 'Content-Type': contentType },
			body: typeof body === 'string' ? body : JSON.stringify(body),
		});
		const text = await response.text();
		return { status: response.status, body: text, ms: Date.now() - started };
	}

	private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const chunks: Buffer[] = [];
		for await (const chunk of req) chunks.push(chunk as Buffer);
		const raw = Buffer.concat(chunks).toString('utf8');
		let body: unknown = {};
		if (raw.trim() !== '' && String(req.headers['content-type'] ?? '').includes('json')) {
			try {
				body = JSON.parse(raw);
			} catch {
				res.writeHead(400, { 'Content-Type': 'application/json' });
				res.end(JSON.stringify({ message: 'Failed to parse request body' }));
				return;
			}
		}
		const request = Object.assign(req, { body, rawBody: Buffer.from(raw), params: {}, query: {} });
		const additionalData = additionalDataFor(this.options.credentials);
		additionalData.httpRequest = request as never;
		additionalData.httpResponse = res as never;
		const workflow = this.loadWorkflow();
		const context = new WebhookContext(
			workflow,
			this.node,
			additionalData,
			this.options.mode ?? 'webhook',
			this.webhookData(workflow, additionalData),
			[],
			null,
		);
		const restarts = this.restarts;
		const nodeType = this.nodeType();
		this.maxOpen = Math.max(this.maxOpen, ++this.open);
		try {
			const result = await nodeType.webhook!.call(context);
			// The process that received the request has stopped since: nothing more happens, and the
			// request is never answered (its connection closes with the process).
			if (this.restarts !== restarts) return;
			// What n8n's executeWebhook does with the result: the static data saved, then the answer,
			// then the execution started.
			this.saveIfChanged(workflow);
			if (result.noWebhookResponse !== true && !res.headersSent) this.answer(workflow, result, res);
			if (result.workflowData !== undefined) {
				const items = result.workflowData[0] ?? [];
				this.executions.push({ at: Date.now(), items });
				journal('output', 'webhook trigger items', renderData(items));
			}
		} catch (error) {
			this.errors.push(error as Error);
			journalError(error, 'webhook trigger error');
			if (!res.headersSent) {
				res.writeHead(500, { 'Content-Type': 'application/json' });
				res.end(JSON.stringify({ message: (error as Error).message }));
			}
		} finally {
			this.open--;
		}
	}
}
