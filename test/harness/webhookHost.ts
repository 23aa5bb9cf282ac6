/**
 * The webhook trigger behind a real HTTP listener, run as n8n's webhook server runs it: each
 * request's JSON body parsed onto the request, n8n-core's own `WebhookContext` built with the
 * request and response, the node's `webhook()` called, and then what n8n's `executeWebhook`
 * does with the result: nothing more is sent when the node answered itself
 * (`noWebhookResponse`), n8n's default answer otherwise, and an execution started (recorded
 * here, with its items and time) when `workflowData` is returned.
 */
import { WebhookContext } from 'n8n-core';
import type {
	IDataObject,
	INode,
	INodeExecutionData,
	IWebhookData,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

import type { DocumentWorkflowCredentials } from './n8n';
import { WEBHOOK_TRIGGER_NODE_TYPE, additionalDataFor, nodeTypes } from './n8n';
import { journal, journalError, journalSecret, renderData } from './journal';

export const WEBHOOK_NODE_NAME = 'Document Workflow Webhook Trigger';

export interface StartedExecution {
	/** When the node handed its items to n8n (the execution starts then). */
	at: number;
	items: INodeExecutionData[];
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
	url = '';
	private server?: Server;
	private readonly inFlight = new Set<Promise<void>>();
	private readonly node: INode;
	private readonly workflow: Workflow;

	constructor(private readonly options: WebhookHostOptions) {
		journalSecret(options.credentials.apiKey, 'WebhookHost credentials');
		this.node = {
			id: options.nodeId ?? randomUUID(),
			name: WEBHOOK_NODE_NAME,
			type: WEBHOOK_TRIGGER_NODE_TYPE,
			typeVersion: options.typeVersion ?? 1,
			position: [0, 0],
			webhookId: randomUUID(),
			parameters: (options.parameters ?? {}) as INode['parameters'],
			credentials: { documentWorkflowApi: { id: '1', name: 'Document Workflow API' } },
		};
		this.workflow = new Workflow({
			id: options.workflowId ?? 'webhook-workflow',
			name: 'webhook test',
			nodes: [this.node],
			connections: {},
			active: true,
			nodeTypes,
		});
	}

	async start(): Promise<this> {
		this.server = createServer((req, res) => {
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
		const webhookData: IWebhookData = {
			httpMethod: 'POST',
			node: this.node.name,
			path: 'webhook',
			webhookDescription: {
				name: 'default',
				httpMethod: 'POST',
				path: 'webhook',
				responseMode: 'onReceived',
			},
			workflowId: this.workflow.id,
			workflowExecuteAdditionalData: additionalData,
			webhookId: this.node.webhookId,
		};
		const context = new WebhookContext(
			this.workflow,
			this.node,
			additionalData,
			this.options.mode ?? 'webhook',
			webhookData,
			[],
			null,
		);
		const nodeType = nodeTypes.getByNameAndVersion(
			WEBHOOK_TRIGGER_NODE_TYPE,
			this.node.typeVersion,
		);
		try {
			const result = await nodeType.webhook!.call(context);
			// What n8n's executeWebhook does with the result.
			if (result.noWebhookResponse !== true && !res.headersSent) {
				res.writeHead(200, { 'Content-Type': 'application/json' });
				res.end(JSON.stringify({ message: 'Webhook call received' }));
			}
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
		}
	}
}
