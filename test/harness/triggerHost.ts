/**
 * Helpers for the trigger tests: an n8n stand-in that keeps the trigger's static data the way
 * n8n 2.41.1 does, in either polling mode, plus sandbox shortcuts.
 *
 * Default mode (n8n 1.x, and 2.x without durable cursors): the workflow's static data lives in
 * memory between polls; n8n saves all of it (every node's data and `global`) when a poll emits,
 * at emit, before the execution exists (`workflows/triggers/trigger-execution-context.factory.js`
 * `__emit`, 216–244: `void saveStaticData(workflow)`), and after activation
 * (`active-workflow-manager.js` `add`, 433); a poll that returns null or throws saves nothing; a
 * restart reloads the last saved copy.
 *
 * Durable poll cursors (`mode: 'durable'`): every scheduled poll loads the workflow's static data
 * afresh from the database and runs with activation mode `update` and a 36 s budget
 * (`scheduling/poll-trigger-node/poll-trigger-task-handler.js` 68–83, factory 196–198, 288). The
 * node's own static data is a snapshot of its `poller_state` row, kept by node id and seeded once
 * from `node:<name>` (`poll-cursor.service.js` `resolveCursor` 63–76). On emit, n8n saves the
 * workflow's static data at once (factory 222), then commits the snapshot together with the
 * execution in one transaction under the poll's fence (`workflow-execution.service.js`
 * `runPolledWorkflow` 118–209): `failNextCommit` makes that fence refuse the next commit (a lost
 * lease, or a crash before it), which leaves neither the execution nor the cursor while the
 * global static data is already saved. A null poll commits the cursor alone, fenced too.
 */
import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';
import { isDeepStrictEqual } from 'node:util';
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { COPIES_KEY } from '../../nodes/shared/eventCursor';
import type { EventInput, RequestLogEntry, Sandbox } from '../../sandbox/src';
import { seededRandom } from '../../sandbox/src/ids';
import { pollTrigger } from './n8n';

export const NODE_NAME = 'Document Workflow Trigger';
export const STATIC_KEY = `node:${NODE_NAME}`;
export const MINUTE = 60_000;
export const DAY = 24 * 60 * MINUTE;

export interface EmittedEvent {
	id: string;
	type: string;
	createdOn: string;
	environment: string;
	data: Record<string, unknown>;
}

export function deepCopy<T>(value: T): T {
	return JSON.parse(JSON.stringify(value)) as T;
}

export interface HostPollOptions {
	mode?: 'trigger' | 'manual';
	/** n8n 2.x's budget; undefined behaves like n8n 1.x. */
	pollBudgetMs?: number;
	activation?: 'init' | 'activate' | 'update' | 'leadershipChange' | 'manual';
}

export interface HostPollResult {
	items: INodeExecutionData[] | null;
	error?: Error & { description?: string | null; httpCode?: string | null };
	/** Durable mode: the fence refused the commit, so n8n started no execution for `items`. */
	refused?: boolean;
}

export type PollingMode = 'default' | 'durable';

/** Durable poll cursors' poll budget: `min(45 s poll timeout, 60 s lease)` less 20 % (factory 196–198). */
export const DURABLE_POLL_BUDGET_MS = 36_000;

/** One active workflow with the trigger, as n8n keeps it. */
export class TriggerHost {
	/** The workflow's static data in memory (what the next poll sees). */
	live: IDataObject = {};
	/** The workflow's static data as last saved to the database. */
	saved: IDataObject = {};
	/** Every item a poll handed to n8n (each started an execution). */
	readonly delivered: EmittedEvent[] = [];
	polls = 0;
	failedPolls = 0;
	restarts = 0;
	/** The trigger node's name: n8n keeps its static data under `node:<name>` (the node's id stays the same across a rename). */
	nodeName = NODE_NAME;
	/** The trigger node's id: the same across renames, a new one for a new node. */
	nodeId = 'trigger-node-id';

	/** Durable mode: the `poller_state` rows of this workflow, by node id. */
	pollerState: Record<string, IDataObject> = {};
	/** Durable mode: the fence refuses the next commit (the poll lost its lease, or n8n crashed before the commit). */
	failNextCommit = false;

	constructor(
		readonly sb: Sandbox,
		readonly parameters: IDataObject = {},
		readonly mode: PollingMode = 'default',
	) {}

	get credentials() {
		return { baseUrl: this.sb.baseUrl, apiKey: this.sb.apiKey };
	}

	/** The node's part of the live static data (durable mode: its `poller_state` row). */
	nodeState(): IDataObject | undefined {
		if (this.mode === 'durable') return this.pollerState[this.nodeId];
		return this.live[`node:${this.nodeName}`] as IDataObject | undefined;
	}

	/**
	 * Number of ids the cursor remembers, and the size as JSON of all the trigger keeps in static
	 * data: the node's state and the copies by node id in the workflow's static data.
	 */
	memory(): { ids: number; bytes: number } {
		const node = deepCopy(this.nodeState() ?? {}) as {
			eventCursor?: { listed?: Record<string, number> };
		};
		// Durable mode: the node's row, and the workflow's static data as saved (each poll loads it).
		const workflowData = this.mode === 'durable' ? this.saved : this.live;
		const copies = deepCopy((workflowData.global as IDataObject | undefined)?.[COPIES_KEY] ?? {});
		return {
			ids: Object.keys(node.eventCursor?.listed ?? {}).length,
			bytes: JSON.stringify(node).length + JSON.stringify(copies).length,
		};
	}

	/**
	 * Activation: one poll, after which n8n saves the static data whatever the poll returned. With
	 * durable cursors that poll has no fence and commits only when it emits (`testingTrigger`: a
	 * null activation poll commits nothing, so what it wrote is dropped).
	 */
	async activate(options: HostPollOptions = {}): Promise<HostPollResult> {
		if (this.mode === 'durable') {
			const result = await this.durablePoll({ activation: 'activate', ...options }, false);
			if (!result.error) this.saved = deepCopy(this.live);
			return result;
		}
		const result = await this.poll({ activation: 'activate', ...options });
		if (!result.error) this.saved = deepCopy(this.live);
		return result;
	}

	/** One scheduled poll. Items are delivered and the static data saved; errors are recorded as n8n does. */
	async poll(options: HostPollOptions = {}): Promise<HostPollResult> {
		if (this.mode === 'durable')
			return await this.durablePoll(
				{ activation: 'update', pollBudgetMs: DURABLE_POLL_BUDGET_MS, ...options },
				true,
			);
		this.polls++;
		try {
			const { items } = await pollTrigger({
				parameters: this.parameters,
				credentials: this.credentials,
				staticData: this.live,
				mode: options.mode ?? 'trigger',
				activation: options.activation ?? 'init',
				pollBudgetMs: options.pollBudgetMs,
				nodeName: this.nodeName,
				nodeId: this.nodeId,
			});
			if (items && items.length > 0 && (options.mode ?? 'trigger') === 'trigger') {
				for (const item of items)
					this.delivered.push(deepCopy(item.json) as unknown as EmittedEvent);
				this.saved = deepCopy(this.live);
			}
			return { items };
		} catch (error) {
			this.failedPolls++;
			return { items: null, error: error as HostPollResult['error'] };
		}
	}

	/**
	 * A poll with durable cursors: the workflow loaded afresh, the node's static data a snapshot of
	 * its `poller_state` row (seeded from `node:<name>` the first time); on items, the workflow's
	 * static data saved, then the snapshot committed with the execution unless the fence refuses
	 * it (`fenced`: a scheduled poll; the activation poll has none); a null scheduled poll commits
	 * the snapshot alone, fenced; a null activation poll commits nothing.
	 */
	private async durablePoll(options: HostPollOptions, fenced: boolean): Promise<HostPollResult> {
		this.polls++;
		const staticData = deepCopy(this.saved);
		this.pollerState[this.nodeId] ??= deepCopy(
			(this.saved[`node:${this.nodeName}`] as IDataObject | undefined) ?? {},
		);
		const seed = this.pollerState[this.nodeId];
		const snapshot = deepCopy(seed);
		const manual = (options.mode ?? 'trigger') === 'manual';
		const refuse = () => {
			if (!fenced || !this.failNextCommit) return false;
			this.failNextCommit = false;
			return true;
		};
		try {
			const { items } = await pollTrigger({
				parameters: this.parameters,
				credentials: this.credentials,
				staticData,
				mode: options.mode ?? 'trigger',
				activation: options.activation,
				pollBudgetMs: options.pollBudgetMs,
				nodeName: this.nodeName,
				nodeId: this.nodeId,
				nodeStaticData: snapshot,
			});
			this.live = staticData;
			if (manual) return { items };
			const changed = !isDeepStrictEqual(snapshot, seed);
			if (items && items.length > 0) {
				this.saved = deepCopy(staticData);
				if (changed && refuse()) return { items, refused: true };
				if (changed) this.pollerState[this.nodeId] = deepCopy(snapshot);
				for (const item of items)
					this.delivered.push(deepCopy(item.json) as unknown as EmittedEvent);
			} else if (fenced && changed) {
				if (refuse()) return { items, refused: true };
				this.pollerState[this.nodeId] = deepCopy(snapshot);
			}
			return { items };
		} catch (error) {
			this.failedPolls++;
			return { items: null, error: error as HostPollResult['error'] };
		}
	}

	/**
	 * The user renames the trigger of the active workflow and saves (publishes) it. n8n
	 * re-activates the workflow from what the database holds: in the default polling mode
	 * static data stays keyed by the old name (nothing renames the key); with durable cursors
	 * the node's cursor is kept by node id (`poller_state`), so it follows the node. A host in
	 * durable mode models that itself; `mode` 'durable' on a default-mode host moves the
	 * static data under the new name instead (for tests written before the host had modes).
	 */
	rename(newName: string, mode: 'default' | 'durable' = 'default'): void {
		const oldKey = `node:${this.nodeName}`;
		const newKey = `node:${newName}`;
		this.live = deepCopy(this.saved);
		if (mode === 'durable' && this.mode === 'default') {
			this.live[newKey] = this.live[oldKey];
			delete this.live[oldKey];
			this.saved = deepCopy(this.live);
		}
		this.nodeName = newName;
	}

	/**
	 * The user deletes the trigger and adds a new one (a new node id) with the same name, or
	 * another name, and publishes: n8n keeps the static data under the names as it was and
	 * re-activates the workflow from what the database holds.
	 */
	replaceNode(nodeId: string, name = this.nodeName): void {
		this.live = deepCopy(this.saved);
		this.nodeId = nodeId;
		this.nodeName = name;
	}

	/** n8n restarts: the in-memory static data is gone; the last saved copy is loaded. */
	restart(): void {
		this.restarts++;
		this.live = deepCopy(this.saved);
	}
}

/** Ids delivered more than once, and ids expected but never delivered. */
export function compareDelivered(
	delivered: EmittedEvent[],
	expected: Array<{ id: string }>,
): { duplicates: string[]; lost: string[]; unexpected: string[] } {
	const counts = new Map<string, number>();
	for (const event of delivered) counts.set(event.id, (counts.get(event.id) ?? 0) + 1);
	const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
	const expectedIds = new Set(expected.map((event) => event.id));
	const lost = [...expectedIds].filter((id) => !counts.has(id));
	const unexpected = [...counts.keys()].filter((id) => !expectedIds.has(id));
	return { duplicates, lost, unexpected };
}

/** Requests to /events since `afterSeq`. */
export async function eventRequests(sb: Sandbox, afterSeq = 0): Promise<RequestLogEntry[]> {
	return await sb.control.getRequests({ origin: 'api', pathPrefix: '/events', afterSeq });
}

export async function lastSeq(sb: Sandbox): Promise<number> {
	const all = await sb.control.getRequests({});
	return all.length ? all[all.length - 1].seq : 0;
}

export function queryOf(entry: RequestLogEntry): URLSearchParams {
	return new URL(entry.path, 'http://sandbox.local').searchParams;
}

/** `count` events spread evenly over [fromMs, toMs], in bulk. */
export function spreadEvents(
	count: number,
	fromMs: number,
	toMs: number,
	make: (index: number) => Partial<EventInput> = () => ({}),
): EventInput[] {
	const events: EventInput[] = [];
	for (let index = 0; index < count; index++) {
		const at = count === 1 ? toMs : fromMs + Math.floor(((toMs - fromMs) * index) / (count - 1));
		events.push({
			type: 'run.completed',
			createdOn: new Date(at).toISOString(),
			data: { n: index },
			...make(index),
		});
	}
	return events;
}

/** A burst: `count` events created evenly within `spanMs` from `fromMs`; `lateShare` of them committed up to `maxLateMs` late. */
export function burstEvents(
	count: number,
	fromMs: number,
	spanMs: number,
	options: { seed?: number; lateShare?: number; maxLateMs?: number } = {},
): EventInput[] {
	const rand = seeded(options.seed ?? 1);
	const lateShare = options.lateShare ?? 0;
	const maxLateMs = options.maxLateMs ?? 0;
	const events: EventInput[] = [];
	for (let n = 0; n < count; n++) {
		const createdOn = new Date(fromMs + Math.floor((n * spanMs) / count)).toISOString();
		events.push({
			type: 'run.completed',
			createdOn,
			commitDelayMs: rand() < lateShare ? Math.floor(rand() * maxLateMs) : 0,
			data: { n },
		});
	}
	return events;
}

/** Captures the warnings n8n's logger receives (what `this.logger.warn` writes). */
export function captureWarnings(): { messages: string[]; restore: () => void } {
	const logger = Container.get(Logger);
	const messages: string[] = [];
	const spy = jest.spyOn(logger, 'warn').mockImplementation((message: string) => {
		messages.push(message);
	});
	return { messages, restore: () => spy.mockRestore() };
}

/** The sandbox's seeded PRNG (mulberry32), so a failing simulation can be replayed. */
export const seeded = seededRandom;
