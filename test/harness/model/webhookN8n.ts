/**
 * n8n running the webhook trigger, modelled on n8n 2.41.1 (paths under `node_modules/n8n/dist/`
 * unless said otherwise): what it saves, when, and what it forgets.
 *
 * - A production request (`webhooks/live-webhooks.js` `executeWebhook`, 90–153): the workflow and
 *   its static data are loaded from the database for this request; n8n-core's `WebhookContext`
 *   runs the node's `webhook()`, which may keep the request open while it reads ("held"). When
 *   `webhook()` returns, `executeWebhook` (`webhooks/webhook-helpers.js`) answers through the
 *   response callback of live-webhooks (141–148), which first saves the whole static data if the
 *   node changed it (`saveStaticData`; `workflow-static-data.service.js` 31–44) and only then
 *   resolves the answer. Without `workflowData` that is all (596–628: `webhookResponse` as the
 *   body, the description's `responseCode`). With `workflowData` and `responseMode: onReceived`,
 *   2.41.1 first starts the execution (`WorkflowRunner.run`, 679, awaited), then calls the callback
 *   (`shouldDeferOnReceivedResponse`, 683–695): execution, save, answer. (n8n 1.x calls the callback
 *   first, 1.123.81 371–375, and starts the execution while the save runs.) A node that answers
 *   itself (`noWebhookResponse`, the 400 of a malformed body) is answered at once, and n8n saves
 *   through the same callback (590–594) while it starts the execution. Two requests in flight
 *   each loaded their own copy: the later save wins.
 * - Activation and every start of n8n (`active-workflow-manager.js` `addWebhooks`, 129–175): the
 *   workflow loaded, the webhook stored (deliveries reach the node from then on), the node's
 *   `checkExists` (then `create` if it says no) through n8n-core's `HookContext`, then the static
 *   data that activation loaded saved if changed.
 * - A stop or a crash (SIGTERM, SIGKILL): requests still held are lost with their unsaved static
 *   data, and get no answer (the service may deliver them again); n8n does not wait for them.
 *   While n8n is down, deliveries get no answer.
 * - A delivery to a URL n8n does not know (a workflow that is not active) is answered 404 by
 *   n8n, without the node.
 */
import { HookContext, WebhookContext } from 'n8n-core';
import type {
	IDataObject,
	INode,
	INodeExecutionData,
	IWebhookData,
	IWebhookDescription,
	WorkflowActivateMode,
} from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';

import { WEBHOOK_TRIGGER_NODE_TYPE } from '../n8n';
import type { ModelApi } from './api';
import type { N8nProcess } from './processes';
import { startProcess, untilStopped } from './processes';
import { serve, unserve } from './wire';

export interface WebhookWorkflow {
	id: string;
	node: INode;
	active: boolean;
	/** The workflow's static data as the database holds it. */
	staticData: IDataObject;
}

/** One delivery as n8n saw it (n8n's clock). */
export interface DeliveryRecord {
	n: number;
	workflowId: string;
	nodeId: string;
	/** The ids the body named. */
	ids: string[];
	/** What the service meant by it (genuine, forged, ping), for the report. */
	kind: string;
	arrivedAt: number;
	/** The node's answer: status and when (undefined: no answer, n8n was down or the node never answered). */
	status?: number;
	answeredAt?: number;
	/** When `webhook()` returned (undefined: it never did, the process stopped first). */
	endedAt?: number;
	/** The process that received it. */
	process: number;
}

export interface WebhookExecution {
	workflowId: string;
	nodeId: string;
	at: number;
	delivery: number;
	items: IDataObject[];
}

export interface WebhookDropped {
	workflowId: string;
	at: number;
	step: string;
	items: IDataObject[];
}

/** When n8n was doing something for a trigger that may read the API: a held delivery, an activation. */
export interface BusySpan {
	workflowId: string;
	kind: 'delivery' | 'activation';
	from: number;
	to?: number;
}

const deepCopy = <T>(value: T): T => JSON.parse(JSON.stringify(value ?? {})) as T;

/** The part of an HTTP response the node uses: it writes its answer itself. */
class ModelResponse {
	headersSent = false;
	status?: number;
	body = '';
	constructor(private readonly onAnswer: (status: number) => void) {}
	writeHead(status: number): this {
		this.status = status;
		this.headersSent = true;
		return this;
	}
	setHeader(): this {
		return this;
	}
	end(text?: string): this {
		this.body = text ?? '';
		this.onAnswer(this.status ?? 200);
		return this;
	}
}

export class WebhookN8n {
	readonly host: string;
	readonly workflows = new Map<string, WebhookWorkflow>();
	readonly deliveries: DeliveryRecord[] = [];
	readonly executions: WebhookExecution[] = [];
	readonly dropped: WebhookDropped[] = [];
	readonly busy: BusySpan[] = [];
	readonly activations: Array<{
		workflowId: string;
		nodeId: string;
		beganAt: number;
		endedAt: number;
		ok: boolean;
	}> = [];
	readonly log: Array<{ at: number; line: string }> = [];
	readonly errors: string[] = [];
	/**
	 * Armed: n8n crashes between the two writes of the next delivery that returns items. Where the
	 * node answered itself, n8n saves the static data first: its items are lost (`dropped`). Where
	 * n8n answers, 2.41.1 starts the execution first: the static data is never saved, the delivery
	 * never answered, and its items may come out again (`repeatable`).
	 */
	crashMidEmit = false;
	/** Executions whose static data n8n never saved (a crash after the execution started): their items may come out again. */
	readonly repeatable: WebhookDropped[] = [];
	process: N8nProcess;
	private processes = 0;
	private readonly alive = new Set<number>();
	private readonly open = new Set<Promise<unknown>>();
	private readonly timers = new Set<ReturnType<typeof setTimeout>>();

	constructor(readonly api: ModelApi) {
		this.host = serve(api, (id) => this.alive.has(id));
		this.process = this.newProcess();
	}

	get isUp(): boolean {
		return this.process.alive;
	}

	/** Requests whose `webhook()` has not returned (held), in the running process. */
	get held(): number {
		return this.deliveries.filter(
			(d) => d.process === this.process.id && d.endedAt === undefined && this.process.alive,
		).length;
	}

	/**
	 * Requests whose handling has not settled, in any process: a crashed process's run on in this
	 * one JS process, timers and all, until their next request is refused (a real crash ends them).
	 */
	get unsettled(): number {
		return this.open.size;
	}

	/** Timers n8n itself set (a supervisor's restart): the rest are the node's. */
	get ownTimers(): number {
		return this.timers.size;
	}

	dispose(): void {
		this.stopProcess();
		unserve(this.host);
	}

	private note(line: string): void {
		this.log.push({ at: Date.now(), line });
	}

	private newProcess(): N8nProcess {
		const process = startProcess(++this.processes, this.host);
		this.alive.add(process.id);
		return process;
	}

	private stopProcess(): void {
		this.process.stop();
		this.alive.delete(this.process.id);
		for (const timer of this.timers) clearTimeout(timer);
		this.timers.clear();
		const now = Date.now();
		for (const span of this.busy) if (span.to === undefined) span.to = now;
	}

	private workflowOf(record: WebhookWorkflow): Workflow {
		return new Workflow({
			id: record.id,
			name: 'model',
			nodes: [deepCopy(record.node)],
			connections: {},
			active: true,
			nodeTypes: this.process.nodeTypes,
			staticData: deepCopy(record.staticData),
		});
	}

	private saveStaticData(record: WebhookWorkflow, workflow: Workflow): boolean {
		const data = workflow.staticData as IDataObject & { __dataChanged?: boolean };
		if (data.__dataChanged !== true) return false;
		record.staticData = deepCopy(data);
		data.__dataChanged = false;
		return true;
	}

	/** The node's webhook as its description declares it (n8n evaluates the answer from it). */
	private webhookDescription(process: N8nProcess): IWebhookDescription {
		const type = process.nodeTypes.getByNameAndVersion(WEBHOOK_TRIGGER_NODE_TYPE, 2);
		return type.description.webhooks![0];
	}

	private webhookData(workflow: Workflow, node: INode, additionalData: unknown): IWebhookData {
		return {
			httpMethod: 'POST',
			node: node.name,
			path: 'webhook',
			webhookDescription: this.webhookDescription(this.process),
			workflowId: workflow.id,
			workflowExecuteAdditionalData:
				additionalData as IWebhookData['workflowExecuteAdditionalData'],
			webhookId: node.webhookId,
		};
	}

	addWorkflow(id: string, node: INode, staticData: IDataObject = {}): WebhookWorkflow {
		const record: WebhookWorkflow = { id, node, active: false, staticData: deepCopy(staticData) };
		this.workflows.set(id, record);
		return record;
	}

	/** `addWebhooks` for the workflow: `checkExists` (then `create`), then the static data saved. */
	private async addWebhooks(
		record: WebhookWorkflow,
		activation: WorkflowActivateMode,
	): Promise<void> {
		const process = this.process;
		const span: BusySpan = { workflowId: record.id, kind: 'activation', from: Date.now() };
		this.busy.push(span);
		try {
			const workflow = this.workflowOf(record);
			const node = workflow.getNode(record.node.name)!;
			const additionalData = process.additionalData();
			const context = new HookContext(
				workflow,
				node,
				additionalData,
				'trigger',
				activation,
				this.webhookData(workflow, node, additionalData),
			);
			const nodeType = process.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
			const methods = nodeType.webhookMethods!.default!;
			if (!(await methods.checkExists.call(context))) await methods.create.call(context);
			if (!process.alive) return;
			this.saveStaticData(record, workflow);
			this.note(`activated ${record.id} (${activation})`);
			this.activations.push({
				workflowId: record.id,
				nodeId: node.id,
				beganAt: span.from,
				endedAt: Date.now(),
				ok: true,
			});
		} catch (error) {
			if (!process.alive) return;
			this.note(`activation (${activation}) failed: ${(error as Error).message}`);
			this.activations.push({
				workflowId: record.id,
				nodeId: record.node.id,
				beganAt: span.from,
				endedAt: Date.now(),
				ok: false,
			});
			throw error;
		} finally {
			span.to ??= Date.now();
		}
	}

	/** The user activates (publishes) the workflow; false when the activation failed (the user tries again). */
	async activate(
		workflowId: string,
		activation: WorkflowActivateMode = 'activate',
	): Promise<boolean> {
		const record = this.workflows.get(workflowId)!;
		record.active = true;
		let ok = false;
		await untilStopped(
			this.process,
			this.addWebhooks(record, activation).then(
				() => (ok = true),
				() => (record.active = false),
			),
		);
		return ok;
	}

	deactivate(workflowId: string): void {
		this.workflows.get(workflowId)!.active = false;
		this.note(`deactivated ${workflowId}`);
	}

	/** The user changes the trigger (a rename, a new node) and publishes: n8n activates the workflow again (`update`). */
	async update(workflowId: string, node: INode): Promise<boolean> {
		const record = this.workflows.get(workflowId)!;
		record.node = node;
		return await this.activate(workflowId, 'update');
	}

	/** The process stops (SIGTERM or SIGKILL: n8n does not wait for held requests). */
	stop(): void {
		this.note('process stopped');
		this.stopProcess();
	}

	/** A new process starts: every active workflow's webhooks are added again (`init`). */
	async start(): Promise<void> {
		if (this.process.alive) return;
		const process = (this.process = this.newProcess());
		this.note(`process ${process.id} started`);
		await untilStopped(
			process,
			Promise.all(
				[...this.workflows.values()]
					.filter((record) => record.active)
					.map(async (record) => await this.addWebhooks(record, 'init').catch(() => {})),
			),
		);
	}

	/** The process dies now and its supervisor starts it again after `downMs`. */
	crash(downMs = 5000): void {
		this.note('process crashed');
		this.stopProcess();
		const timer = setTimeout(() => {
			this.timers.delete(timer);
			void this.start();
		}, downMs);
		this.timers.add(timer);
	}

	/**
	 * The service delivers `body` to the workflow's URL. Resolves once the request has its answer
	 * (or none); `webhook()` may go on holding it. The record says what happened to it.
	 */
	async deliver(
		workflowId: string,
		body: unknown,
		ids: string[],
		kind: string,
	): Promise<DeliveryRecord> {
		const record = this.workflows.get(workflowId)!;
		const process = this.process;
		const delivery: DeliveryRecord = {
			n: this.deliveries.length + 1,
			workflowId,
			nodeId: record.node.id,
			ids,
			kind,
			arrivedAt: Date.now(),
			process: process.id,
		};
		this.deliveries.push(delivery);
		if (!process.alive) {
			delivery.endedAt = Date.now();
			return delivery; // n8n is down: the connection is refused, no answer
		}
		if (!record.active) {
			delivery.status = 404;
			delivery.answeredAt = delivery.endedAt = Date.now();
			return delivery;
		}
		let answered: () => void = () => {};
		const answer = new Promise<void>((resolve) => (answered = resolve));
		const response = new ModelResponse((status) => {
			delivery.status = status;
			delivery.answeredAt = Date.now();
			answered();
		});
		const handling = this.handle(record, delivery, body, response, process).finally(() =>
			answered(),
		);
		this.open.add(handling);
		void handling.finally(() => this.open.delete(handling));
		await untilStopped(process, answer);
		return delivery;
	}

	/** `LiveWebhooks.executeWebhook` for one request. */
	private async handle(
		record: WebhookWorkflow,
		delivery: DeliveryRecord,
		body: unknown,
		response: ModelResponse,
		process: N8nProcess,
	): Promise<void> {
		const span: BusySpan = { workflowId: record.id, kind: 'delivery', from: Date.now() };
		this.busy.push(span);
		const workflow = this.workflowOf(record);
		const node = workflow.getNode(record.node.name)!;
		const additionalData = process.additionalData();
		additionalData.httpRequest = {
			body,
			headers: { 'content-type': 'application/json' },
			params: {},
			query: {},
		} as never;
		additionalData.httpResponse = response as never;
		const context = new WebhookContext(
			workflow,
			node,
			additionalData,
			'webhook',
			this.webhookData(workflow, node, additionalData),
			[],
			null,
		);
		const nodeType = process.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
		try {
			const result = await nodeType.webhook!.call(context);
			if (!process.alive) return;
			delivery.endedAt = Date.now();
			span.to = Date.now();
			const items = (result.workflowData?.[0] ?? []).map((item: INodeExecutionData) => item.json);
			if (response.headersSent || result.noWebhookResponse === true) {
				// The node answered itself: n8n's callback saves, then the execution starts.
				this.saveStaticData(record, workflow);
				if (result.workflowData === undefined) return;
				if (this.crashMidEmit) {
					this.crashBetween(record, delivery, items, 'dropped');
					return;
				}
				this.execute(record, node.id, delivery, items);
				return;
			}
			// n8n answers: 2.41.1 starts the execution first (onReceived), then saves, then answers.
			if (result.workflowData !== undefined) {
				this.execute(record, node.id, delivery, items);
				if (this.crashMidEmit) {
					this.crashBetween(record, delivery, items, 'repeatable');
					return;
				}
			}
			this.saveStaticData(record, workflow);
			const code = Number(this.webhookDescription(process).responseCode ?? 200) || 200;
			response.writeHead(code).end(JSON.stringify(result.webhookResponse ?? {}));
		} catch (error) {
			if (!process.alive) return;
			delivery.endedAt = Date.now();
			span.to = Date.now();
			this.errors.push((error as Error).message);
			if (!response.headersSent) response.writeHead(500).end();
		}
	}

	private execute(
		record: WebhookWorkflow,
		nodeId: string,
		delivery: DeliveryRecord,
		items: IDataObject[],
	): void {
		this.executions.push({
			workflowId: record.id,
			nodeId,
			at: Date.now(),
			delivery: delivery.n,
			items,
		});
		this.note(`execution of delivery ${delivery.n}: ${items.length} item(s)`);
	}

	/** The armed crash between a delivery's two writes (`crashMidEmit`). */
	private crashBetween(
		record: WebhookWorkflow,
		delivery: DeliveryRecord,
		items: IDataObject[],
		what: 'dropped' | 'repeatable',
	): void {
		this.crashMidEmit = false;
		const entry = { workflowId: record.id, at: Date.now(), items };
		if (what === 'dropped') {
			this.dropped.push({
				...entry,
				step: 'webhook, the node answered itself: crash between the static-data save and the execution',
			});
			this.note(`crash after the save of delivery ${delivery.n}: ${items.length} item(s) dropped`);
		} else {
			this.repeatable.push({
				...entry,
				step: 'webhook, n8n answers: crash after the execution started, before the static-data save and the answer',
			});
			this.note(
				`crash after the execution of delivery ${delivery.n}, before its save: ${items.length} item(s) may come out again`,
			);
		}
		this.crash();
	}

	/** Static data saved for the workflow (node and global), in bytes. */
	savedBytes(workflowId: string): number {
		return JSON.stringify(this.workflows.get(workflowId)?.staticData ?? {}).length;
	}
}

/** The webhook trigger as the user configures it. */
export function webhookNode(id: string, name: string, events: string[], webhookId: string): INode {
	return {
		id,
		name,
		type: WEBHOOK_TRIGGER_NODE_TYPE,
		typeVersion: 2,
		position: [0, 0],
		webhookId,
		parameters: { events } as INode['parameters'],
		credentials: { documentWorkflowApi: { id: '1', name: 'Document Workflow API' } },
	};
}
