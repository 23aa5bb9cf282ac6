/**
 * n8n running the polling trigger, modelled on n8n 2.41.1's own code: what it saves, when, and
 * what it forgets. Each poll runs the node's `poll()` through n8n-core's real `PollContext`,
 * built with the hooks n8n passes it (`__emit`, `__commitCursor`, `__runPoll`,
 * `resolveNodeStaticData`, `getPollBudgetMs`), as `getExecutePollFunctions` builds them
 * (n8n `workflows/triggers/trigger-execution-context.factory.js`, 194–270). Paths below are
 * under `node_modules/n8n/dist/` or `node_modules/n8n-core/dist/` of n8n 2.41.1.
 *
 * Default mode (n8n 1.x, and 2.x without durable cursors):
 * - Activation (`active-workflow-manager.js` `add`, 338–434): a `Workflow` built from the
 *   database's static data; one `PollContext` for the activation, kept for every later poll of
 *   it (n8n-core `active-workflow-triggers.js` `activatePollTrigger`, 165–206: the scheduled
 *   polls reuse the activation's `pollFunctions`, so they report its activation mode); the
 *   activation poll runs as `executePollTrigger(true)` (n8n-core `poll-trigger-executor.js`
 *   27–100: items are emitted; a null poll commits nothing; an error fails the activation),
 *   then `add` saves the static data (433). A failed activation is retried after 1 s, 2 s, 4 s,
 *   ... (`addQueuedWorkflowActivation`, 540–592).
 * - Scheduled polls: a cron per Poll Times entry fires `void executePollTrigger()` whether or
 *   not the previous poll has ended (n8n-core `scheduled-task-manager.js` 43–100): polls of one
 *   trigger can overlap. Every poll sees the same in-memory static data. On items, `__emit`
 *   (factory 216–244) saves the whole static data (`void saveStaticData(workflow)`, 222) before
 *   the execution is created; a null poll saves nothing (`__commitCursor` takes no staged cursor
 *   in this mode, 248–261); a poll that throws saves nothing (`__emitError`).
 * - A restart, a re-activation (`update`: a rename, a replaced node) or a deactivation drops the
 *   in-memory workflow; what the database holds is loaded again. A poll still running for a
 *   superseded activation is discarded (`poll-trigger-executor.js` 60–64, 87–91).
 *
 * Durable poll cursors (n8n 2.41 with `N8N_POLLER_DURABLE_CURSORS_ENABLED` and friends):
 * - The node's static data is a snapshot of its `poller_state` row, keyed by workflow id and node
 *   id (so it follows renames), created on first use from the node's static data under its name
 *   (`poll-cursor.service.js` `resolveCursor` 63–76; `@n8n/db` `poller-state.repository.js`
 *   `getOrCreateCursor` 34–54). `global` static data is the workflow's own.
 * - Activation polls only when the node's job is new (`active-workflow-triggers.js` 175–194:
 *   first activation, after a deactivation, a new node id; not at a restart or a rename). That
 *   poll has no fence and the default 5-minute budget; it commits its cursor with the execution
 *   when it emits and drops what it wrote when it returns null (`testingTrigger`: no
 *   `commitStagedCursor`); `add` then saves the workflow's static data.
 * - Scheduled polls (`scheduling/poll-trigger-node/poll-trigger-task-handler.js` 54–185): the
 *   workflow loaded afresh from the database, activation mode `update`, a 36 s budget, a fence
 *   (the task's lease), a 45 s timeout after which the poll is abandoned. On items `__emit` saves
 *   the workflow's static data at once (factory 222), then `runPolledWorkflow` commits the cursor
 *   and creates the execution in one transaction under the fence (`workflow-execution.service.js`
 *   118–209, `poll-cursor.service.js` `commitWithExecution` 77–97): a lost lease, or a crash
 *   before that transaction, leaves neither, while the global static data is already saved. A
 *   null poll commits the cursor alone, fenced (`commitCursorOnly`, 98–104). An unchanged cursor
 *   commits nothing (factory `takeStagedCursor`, 207–215).
 *
 * Not modelled: n8n's engine v2 path (`runPolledWorkflowV2` runs the execution, then commits the
 * cursor alone), queue mode, multi-main.
 */
import { isDeepStrictEqual } from 'node:util';
import { PollContext } from 'n8n-core';
import type { IDataObject, INode, INodeExecutionData, WorkflowActivateMode } from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';

import { TRIGGER_NODE_TYPE } from '../n8n';
import type { ModelApi } from './api';
import type { N8nProcess } from './processes';
import { startProcess, untilStopped } from './processes';
import { serve, unserve } from './wire';

export type PollingMode = 'default' | 'durable';

/** The trigger's parameters as a user sets them. */
export interface TriggerParameters {
	events: string[];
	overlapMinutes: number;
	startFrom: 'now' | 'oldest';
}

export const POLL_INTERVAL_MS = 60_000;
/** Durable polls: `min(pollTimeoutSeconds 45, leaseDurationSeconds 60)` less 20 % (factory 196–198). */
export const DURABLE_BUDGET_MS = 36_000;
/** Durable polls are abandoned after `pollTimeoutSeconds` (task handler 52, 88–114). */
export const DURABLE_POLL_TIMEOUT_MS = 45_000;
/** n8n's first retry of a failed activation (`WORKFLOW_REACTIVATE_INITIAL_TIMEOUT`). */
const REACTIVATE_FIRST_MS = 1000;

export interface Execution {
	workflowId: string;
	nodeId: string;
	/** n8n's clock when the execution was created. */
	at: number;
	/** Which poll started it. */
	by: 'activation' | 'poll';
	items: IDataObject[];
}

/** Items of an execution n8n itself lost: the step, and what it would have emitted. */
export interface Dropped {
	workflowId: string;
	at: number;
	step: string;
	items: IDataObject[];
}

/** One activation of a workflow's trigger by n8n, as it went (n8n's clock). */
export interface ActivationRecord {
	workflowId: string;
	nodeId: string;
	mode: WorkflowActivateMode;
	beganAt: number;
	endedAt: number;
	ok: boolean;
}

export interface PollingWorkflow {
	id: string;
	node: INode;
	active: boolean;
	/** The workflow's static data as the database holds it. */
	staticData: IDataObject;
}

/** Armed faults of n8n itself, each taken by the next step it applies to. */
export interface N8nFaults {
	/** Default mode: the next emitting poll saves the static data, then the process crashes before the execution exists. */
	crashAfterSave?: boolean;
	/** Durable: the next emitting poll saves the global static data, then the process crashes before the commit. */
	crashBeforeCommit?: boolean;
	/** Durable: the next scheduled poll's lease is lost before it commits. */
	leaseLost?: boolean;
}

interface Staged {
	migrated: boolean;
	snapshot?: IDataObject;
	seed?: IDataObject;
}

/** One activation's in-memory workflow (default mode). */
interface Activation {
	workflow: Workflow;
	pollFunctions: PollContext;
	node: INode;
	token: number;
}

const deepCopy = <T>(value: T): T => JSON.parse(JSON.stringify(value ?? {})) as T;

export class PollingN8n {
	readonly host: string;
	readonly workflows = new Map<string, PollingWorkflow>();
	/** `poller_state` rows: `${workflowId}|${nodeId}` → cursor. */
	readonly pollerState = new Map<string, IDataObject>();
	/** Durable: the scheduled jobs (`${workflowId}|${nodeId}` → the job's generation), kept in the database. */
	private readonly jobs = new Map<string, number>();
	readonly executions: Execution[] = [];
	readonly dropped: Dropped[] = [];
	readonly activations: ActivationRecord[] = [];
	readonly faults: N8nFaults = {};
	/** Every n8n-side step (n8n's clock), for a failing history's report. */
	readonly log: Array<{ at: number; line: string }> = [];
	failedPolls = 0;
	process: N8nProcess;
	private processes = 0;
	private readonly alive = new Set<number>();
	private readonly memory = new Map<string, Activation>();
	/** Durable: the jobs this process runs (key → generation). */
	private readonly chains = new Map<string, number>();
	private readonly timers = new Set<ReturnType<typeof setTimeout>>();
	private readonly running = new Set<Promise<unknown>>();
	private token = 0;
	/** Which kind of poll is handing its items to `__emit` (set just before it calls it). */
	private emitting: Execution['by'] = 'poll';
	/** Extra seconds after the minute at which durable jobs fire (n8n seeds them per node). */
	private readonly durableOffsetMs: number;

	constructor(
		readonly api: ModelApi,
		readonly mode: PollingMode,
		options: { durableOffsetMs?: number } = {},
	) {
		this.durableOffsetMs = options.durableOffsetMs ?? 0;
		this.host = serve(api, (id) => this.alive.has(id));
		this.process = this.newProcess();
	}

	/** Polls and activations still running. */
	get busy(): number {
		return this.running.size;
	}

	/** Timers n8n itself has set (poll schedules, activation retries): the rest are the node's. */
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
		this.retries.clear();
		this.alive.delete(this.process.id);
		for (const timer of this.timers) clearTimeout(timer);
		this.timers.clear();
		this.memory.clear();
		this.chains.clear();
	}

	private later(ms: number, run: () => void): ReturnType<typeof setTimeout> {
		const timer = setTimeout(() => {
			this.timers.delete(timer);
			run();
		}, ms);
		this.timers.add(timer);
		return timer;
	}

	private track<T>(promise: Promise<T>): Promise<T> {
		this.running.add(promise);
		void promise.then(
			() => this.running.delete(promise),
			() => this.running.delete(promise),
		);
		return promise;
	}

	// ---- the database ----------------------------------------------------------------------

	/** n8n's `saveStaticData`: the whole static data, only when it changed (`workflow-static-data.service.js` 31–44). */
	private saveStaticData(workflowId: string, workflow: Workflow): void {
		const data = workflow.staticData as IDataObject & { __dataChanged?: boolean };
		if (data.__dataChanged !== true) return;
		const record = this.workflows.get(workflowId);
		if (record) record.staticData = deepCopy(data);
		data.__dataChanged = false;
	}

	private workflowOf(record: PollingWorkflow, process: N8nProcess): Workflow {
		return new Workflow({
			id: record.id,
			name: 'model',
			nodes: [deepCopy(record.node)],
			connections: {},
			active: true,
			nodeTypes: process.nodeTypes,
			staticData: deepCopy(record.staticData),
		});
	}

	private rowKey(workflowId: string, nodeId: string): string {
		return `${workflowId}|${nodeId}`;
	}

	// ---- PollContext as n8n builds it ------------------------------------------------------

	private pollFunctions(
		record: PollingWorkflow,
		workflow: Workflow,
		node: INode,
		activation: WorkflowActivateMode,
		process: N8nProcess,
		options: { fence?: { lost: () => boolean }; prefetched?: IDataObject } = {},
	): PollContext {
		const durable = this.mode === 'durable';
		// The factory keeps the staged cursor in an AsyncLocalStorage per poll; here a context is
		// made per poll wherever a cursor is staged (durable), so one variable per context does.
		let staged: Staged | undefined;
		const takeStagedCursor = (): IDataObject | null => {
			if (!staged?.migrated || isDeepStrictEqual(staged.snapshot, staged.seed)) return null;
			const cursor = deepCopy(staged.snapshot!);
			staged.seed = cursor;
			return cursor;
		};
		const __runPoll = async <T>(poll: () => Promise<T>): Promise<T> => {
			const key = this.rowKey(record.id, node.id);
			if (!durable) {
				staged = { migrated: false };
				return await poll();
			}
			let cursor = options.prefetched;
			if (cursor === undefined) {
				if (!this.pollerState.has(key))
					this.pollerState.set(key, deepCopy(workflow.getStaticData('node', node)));
				cursor = this.pollerState.get(key)!;
			}
			staged = { migrated: true, snapshot: deepCopy(cursor), seed: deepCopy(cursor) };
			return await poll();
		};
		const resolveNodeStaticData = () => {
			if (staged === undefined)
				throw new Error(
					'Poll node read its static data outside of a poll; __runPoll was not entered',
				);
			return staged.migrated ? staged.snapshot! : workflow.getStaticData('node', node);
		};
		const __emit = (data: INodeExecutionData[][]) => {
			const items = (data[0] ?? []).map((item) => item.json);
			const cursor = takeStagedCursor();
			this.saveStaticData(record.id, workflow);
			const by = this.emitting;
			if (!durable && this.faults.crashAfterSave) {
				this.faults.crashAfterSave = false;
				this.dropped.push({
					workflowId: record.id,
					at: Date.now(),
					step: 'default mode: crash between the static-data save at emit and the execution',
					items,
				});
				this.note(`crash after the save at emit: ${items.length} item(s) dropped`);
				this.crash();
				return;
			}
			if (durable && cursor !== null && this.faults.crashBeforeCommit) {
				this.faults.crashBeforeCommit = false;
				this.note('crash after the global save at emit, before the commit');
				this.crash();
				return;
			}
			if (cursor !== null && options.fence?.lost()) {
				this.note(`lease lost: ${items.length} item(s) and the cursor not committed`);
				return;
			}
			if (cursor !== null) this.pollerState.set(this.rowKey(record.id, node.id), cursor);
			this.executions.push({ workflowId: record.id, nodeId: node.id, at: Date.now(), by, items });
			this.note(`execution (${by}) ${record.id}: ${items.length} item(s)`);
		};
		const __commitCursor = async () => {
			const cursor = takeStagedCursor();
			if (cursor === null) return;
			if (options.fence?.lost()) {
				this.note('lease lost: cursor-only commit skipped');
				return;
			}
			this.pollerState.set(this.rowKey(record.id, node.id), cursor);
		};
		const __emitError = (error: Error) => {
			this.failedPolls++;
			this.note(`poll failed: ${error.message}`);
		};
		return new PollContext(
			workflow,
			node,
			process.additionalData(),
			'trigger',
			activation,
			__emit,
			__emitError,
			__commitCursor,
			__runPoll,
			resolveNodeStaticData,
			options.fence ? () => DURABLE_BUDGET_MS : undefined,
		);
	}

	private async runPoll(context: PollContext, workflow: Workflow, node: INode) {
		const nodeType = workflow.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
		return (await context.__runPoll!(async () => await nodeType.poll!.call(context as never))) as
			| INodeExecutionData[][]
			| null;
	}

	// ---- activation ------------------------------------------------------------------------

	/** The user creates the workflow with the trigger (not active yet). */
	addWorkflow(id: string, node: INode, staticData: IDataObject = {}): PollingWorkflow {
		const record: PollingWorkflow = { id, node, active: false, staticData: deepCopy(staticData) };
		this.workflows.set(id, record);
		return record;
	}

	/**
	 * The user activates (publishes) the workflow, or publishes it again after a failed activation
	 * (`mode` `update`). False when the activation failed: the user sees the error, and n8n does not
	 * retry it (it queues retries only for activations at its start).
	 */
	async activate(workflowId: string, mode: WorkflowActivateMode = 'activate'): Promise<boolean> {
		const record = this.workflows.get(workflowId)!;
		record.active = true;
		this.cancelRetry(workflowId);
		let ok = false;
		const process = this.process;
		await untilStopped(
			process,
			this.track(this.add(record, mode, process).then((done) => (ok = done))),
		);
		return ok;
	}

	/** The user deactivates the workflow. */
	deactivate(workflowId: string): void {
		const record = this.workflows.get(workflowId)!;
		record.active = false;
		this.cancelRetry(workflowId);
		this.memory.delete(workflowId);
		for (const key of [...this.jobs.keys()])
			if (key.startsWith(`${workflowId}|`)) this.jobs.delete(key);
		this.note(`deactivated ${workflowId}`);
	}

	/** The user changes the trigger (a rename, a replaced node) of the active workflow and publishes it; false when its activation failed. */
	async update(workflowId: string, node: INode): Promise<boolean> {
		const record = this.workflows.get(workflowId)!;
		const oldNodeId = record.node.id;
		record.node = node;
		if (!record.active) return true;
		this.memory.delete(workflowId);
		if (oldNodeId !== node.id) this.jobs.delete(this.rowKey(workflowId, oldNodeId));
		return await this.activate(workflowId, 'update');
	}

	private readonly retries = new Map<string, ReturnType<typeof setTimeout>>();

	private cancelRetry(workflowId: string): void {
		const timer = this.retries.get(workflowId);
		if (timer === undefined) return;
		clearTimeout(timer);
		this.timers.delete(timer);
		this.retries.delete(workflowId);
	}

	/** An activation at n8n's start, and n8n's retries of it when it fails (`addQueuedWorkflowActivation`: 1 s, then twice as long each time). */
	private async activateWithRetry(
		record: PollingWorkflow,
		activation: WorkflowActivateMode,
		process: N8nProcess,
		retryInMs = REACTIVATE_FIRST_MS,
	): Promise<void> {
		if (await this.add(record, activation, process)) return;
		if (!process.alive) return;
		const timer = this.later(retryInMs, () => {
			this.retries.delete(record.id);
			if (!record.active || !process.alive) return;
			void this.track(this.activateWithRetry(record, activation, process, retryInMs * 2));
		});
		this.retries.set(record.id, timer);
	}

	/** `ActiveWorkflowManager.add` for one workflow with the trigger, as far as this trigger is concerned; false when it failed. */
	private async add(
		record: PollingWorkflow,
		activation: WorkflowActivateMode,
		process: N8nProcess,
	): Promise<boolean> {
		const workflow = this.workflowOf(record, process);
		const node = workflow.getNode(record.node.name)!;
		const token = ++this.token;
		const began = Date.now();
		const done = (ok: boolean) =>
			this.activations.push({
				workflowId: record.id,
				nodeId: node.id,
				mode: activation,
				beganAt: began,
				endedAt: Date.now(),
				ok,
			});
		// n8n stopped during it, after its poll's save landed (default mode: the cursor; durable: the
		// copy at emit): the trigger began here all the same, the next process goes on from it.
		const saved = record.staticData;
		const stopped = () => {
			if (record.staticData !== saved) done(true);
			return true;
		};
		try {
			if (this.mode === 'default') {
				const pollFunctions = this.pollFunctions(record, workflow, node, activation, process);
				this.memory.set(record.id, { workflow, pollFunctions, node, token });
				await this.executePoll(record.id, token, true);
				if (!process.alive) return stopped();
				if (this.memory.get(record.id)?.token !== token) return true;
				this.schedule(record.id, token);
			} else {
				const key = this.rowKey(record.id, node.id);
				const inserted = !this.jobs.has(key);
				if (inserted) this.jobs.set(key, ++this.token);
				if (inserted) {
					const pollFunctions = this.pollFunctions(record, workflow, node, activation, process);
					try {
						const response = await this.runPoll(pollFunctions, workflow, node);
						if (!process.alive) return true;
						this.emitting = 'activation';
						if (response !== null) pollFunctions.__emit(response);
					} catch (error) {
						this.jobs.delete(key);
						throw error;
					}
				}
				if (!process.alive) return stopped();
				this.scheduleDurable(record.id, node.id);
			}
			this.saveStaticData(record.id, workflow);
			this.note(`activated ${record.id} (${activation})`);
			done(true);
			return true;
		} catch (error) {
			if (!process.alive) return true;
			done(false);
			if (this.memory.get(record.id)?.token === token) this.memory.delete(record.id);
			this.note(`activation (${activation}) failed: ${(error as Error).message}; retried`);
			return false;
		}
	}

	// ---- default mode: polls of the in-memory workflow ------------------------------------

	private nextMinute(offsetMs = 0): number {
		const now = Date.now();
		let at = Math.floor(now / POLL_INTERVAL_MS) * POLL_INTERVAL_MS + offsetMs;
		while (at <= now) at += POLL_INTERVAL_MS;
		return at - now;
	}

	private schedule(workflowId: string, token: number): void {
		this.later(this.nextMinute(), () => {
			if (this.memory.get(workflowId)?.token !== token) return;
			void this.track(this.executePoll(workflowId, token, false));
			this.schedule(workflowId, token);
		});
	}

	/** n8n-core's `PollTriggerExecutor.create(...)(testingTrigger)` (`poll-trigger-executor.js` 27–100). */
	private async executePoll(workflowId: string, token: number, testing: boolean): Promise<void> {
		const active = this.memory.get(workflowId);
		if (!active || active.token !== token) return;
		const { workflow, pollFunctions, node } = active;
		const process = this.process;
		const isCurrent = () => process.alive && this.memory.get(workflowId)?.token === token;
		try {
			const response = await this.runPoll(pollFunctions, workflow, node);
			if (!testing && !isCurrent()) return;
			if (!process.alive) return;
			this.emitting = testing ? 'activation' : 'poll';
			if (response !== null) pollFunctions.__emit(response);
			else if (!testing) await pollFunctions.__commitCursor!();
		} catch (error) {
			if (testing) throw error;
			if (!isCurrent()) return;
			pollFunctions.__emitError(error as never);
		}
	}

	// ---- durable mode: scheduled tasks -----------------------------------------------------

	/** The job's occurrences in this process: one a minute, while the job is the one it was scheduled for. */
	private scheduleDurable(workflowId: string, nodeId: string, generation?: number): void {
		const key = this.rowKey(workflowId, nodeId);
		const job = generation ?? this.jobs.get(key);
		const process = this.process;
		if (generation === undefined) {
			if (this.chains.get(key) === job) return; // this process runs the job already
			this.chains.set(key, job!);
		}
		this.later(this.nextMinute(this.durableOffsetMs), () => {
			if (this.jobs.get(key) !== job || !process.alive) return;
			void this.track(this.executeTask(workflowId, nodeId, process));
			this.scheduleDurable(workflowId, nodeId, job);
		});
	}

	/** `PollTriggerTaskHandler.execute` (`poll-trigger-task-handler.js` 54–185). */
	private async executeTask(workflowId: string, nodeId: string, process: N8nProcess) {
		const record = this.workflows.get(workflowId);
		if (!record?.active || record.node.id !== nodeId) return;
		const prefetched = this.pollerState.get(this.rowKey(workflowId, nodeId));
		const workflow = this.workflowOf(record, process);
		const node = workflow.getNode(record.node.name)!;
		let leaseLost = false;
		if (this.faults.leaseLost) {
			this.faults.leaseLost = false;
			leaseLost = true;
		}
		const pollFunctions = this.pollFunctions(record, workflow, node, 'update', process, {
			fence: { lost: () => leaseLost },
			prefetched: prefetched === undefined ? undefined : deepCopy(prefetched),
		});
		let timer: ReturnType<typeof setTimeout> | undefined;
		const timedOut = new Promise<'timeout'>((resolve) => {
			timer = setTimeout(() => resolve('timeout'), DURABLE_POLL_TIMEOUT_MS);
			this.timers.add(timer);
		});
		const release = () => {
			clearTimeout(timer);
			this.timers.delete(timer!);
		};
		try {
			const outcome = await Promise.race([this.runPoll(pollFunctions, workflow, node), timedOut]);
			release();
			if (!process.alive) return;
			if (outcome === 'timeout') {
				this.note('durable poll abandoned after its timeout');
				return;
			}
			if (!record.active) return;
			this.emitting = 'poll';
			if (outcome !== null) pollFunctions.__emit(outcome);
			else await pollFunctions.__commitCursor!();
		} catch (error) {
			release();
			if (!process.alive) return;
			pollFunctions.__emitError(error as never);
		}
	}

	// ---- n8n stops and starts --------------------------------------------------------------

	/** The process dies now (SIGKILL, power loss) and is started again after `downMs` by its supervisor. */
	crash(downMs = 5000): void {
		this.note('process crashed');
		this.stopProcess();
		this.later(downMs, () => void this.track(this.start()));
	}

	/** The process stops (what it holds in memory and what it was doing is lost). */
	stop(): void {
		this.note('process stopped');
		this.stopProcess();
	}

	/** A new process starts and activates every active workflow (`init`). */
	async start(): Promise<void> {
		if (this.process.alive) return;
		const process = (this.process = this.newProcess());
		this.note(`process ${process.id} started`);
		// Tracked, as `activate` is: a crash ends the step at once, but the activations it cut off
		// run on in this one JS process until their requests are refused, timers and all (a real
		// crash ends them); while they do, no poll counts as "not running".
		await untilStopped(
			process,
			this.track(
				Promise.all(
					[...this.workflows.values()]
						.filter((record) => record.active)
						.map(async (record) => await this.activateWithRetry(record, 'init', process)),
				),
			),
		);
	}

	get isUp(): boolean {
		return this.process.alive;
	}

	/** What the trigger keeps: the workflow's static data (node and global) and its `poller_state` rows, as saved. */
	savedBytes(workflowId: string): number {
		const record = this.workflows.get(workflowId);
		let bytes = JSON.stringify(record?.staticData ?? {}).length;
		for (const [key, cursor] of this.pollerState)
			if (key.startsWith(`${workflowId}|`)) bytes += JSON.stringify(cursor).length;
		return bytes;
	}

	/** The in-memory static data of the default mode's activation (what the next poll sees). */
	liveBytes(workflowId: string): number {
		const active = this.memory.get(workflowId);
		return active ? JSON.stringify(active.workflow.staticData).length : 0;
	}
}

/** The trigger node as the user configures it. */
export function triggerNode(
	id: string,
	name: string,
	parameters: TriggerParameters,
	pollTimes: IDataObject = { item: [{ mode: 'everyMinute' }] },
): INode {
	return {
		id,
		name,
		type: TRIGGER_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: {
			pollTimes,
			events: parameters.events,
			options: { overlapMinutes: parameters.overlapMinutes, startFrom: parameters.startFrom },
		} as INode['parameters'],
		credentials: { documentWorkflowApi: { id: '1', name: 'Document Workflow API' } },
	};
}
