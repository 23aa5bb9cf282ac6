/**
 * The polling trigger's model: histories of events (late, out of order, bursts, expiry), API
 * faults, and what users and n8n do (restarts, crashes at n8n's save points, lost leases,
 * renames, a replaced node, deactivation, a copied workflow), run against the real node through
 * `pollingN8n.ts`, and the properties every history must keep (`describePollingModel`).
 */
import fc from 'fast-check';
import type { INode } from 'n8n-workflow';

import type { ApiSettings, Fault, HistorySpec } from './api';
import { EVENT_TYPES, ModelApi, seedHistory } from './api';
import {
	advance,
	advanceUntil,
	busyLoops,
	drive,
	logged,
	resetClock,
	useModelClock,
} from './clock';
import type { Emitted, PropertyName, Violation } from './ledger';
import { Ledger, failWith } from './ledger';
import type { Model, ModelRunOptions, ModelSuite } from './runner';
import { Step, checkHistory, checkProperty, describeModel, faultArb, pick } from './runner';
import type { StepWorld } from './steps';
import { seconds, sharedCommands, sharedStep } from './steps';
import type { PollingMode, TriggerParameters } from './pollingN8n';
import { PollingN8n, triggerNode } from './pollingN8n';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The history's start: a Monday morning, off the minute, so polls and `Date` seconds fall anywhere. */
const T0 = Date.parse('2026-03-02T08:00:00.000Z');

export const NAMES = ['Document Workflow Trigger', 'Documents arrived', 'Events'];
const MAIN = 'wf-main';

/**
 * "Start From: Now" may emit events listed up to this long before a trigger's activation when
 * n8n's first poll of it is a scheduled one (durable cursors) or runs with activation mode
 * `update` (a node added to an active workflow): one poll interval and a half
 * (docs/polling-trigger.md). Otherwise nothing listed before activation may come out.
 */
export const FRESH_START_SLACK_MS = 90_000;
/** How a polling history writes its steps: whole seconds down, Retry-After as an HTTP date. */
const STYLE = { downDigits: 0, retryAfterAsDate: true } as const;

export interface PollingSetup {
	mode: PollingMode;
	parameters: TriggerParameters;
	api: ApiSettings;
	/** Milliseconds after the minute at which the history starts. */
	startOffsetMs: number;
	durableOffsetMs: number;
	/** Events before activation: spread over the week, some just created and not listed yet, some about to expire. */
	history: HistorySpec;
	/** Faults of the API's first answers (the activation's reads). */
	activationFaults: Fault[];
}

/** One trigger: a workflow and a node id (a renamed node is the same trigger; a replaced one is another). */
interface Trigger {
	key: string;
	workflowId: string;
	nodeId: string;
	/** n8n's clock when the user's change that brought it in was made. */
	since: number;
	/** A copied workflow's trigger starts from the state it was copied with. */
	copied: boolean;
	/** Still in its workflow (not replaced). */
	current: boolean;
	/** Added to a workflow that was active (a replaced node): n8n first polls it with activation mode `update`. */
	addedToActive: boolean;
	/**
	 * Durable cursors: when (API clock) it was renamed while n8n had committed no cursor of it and
	 * an emit's commit was lost (its copy saved, its row empty). A KNOWN LIMIT (notes): the copy,
	 * under the old name, stands in as for a rename in the default mode, ahead of what was
	 * emitted; events listed before then may be missing.
	 */
	renamedUncommittedAt?: number;
}

export class PollingWorld implements StepWorld {
	readonly api: ModelApi;
	readonly n8n: PollingN8n;
	readonly ledger: Ledger;
	readonly triggers: Trigger[] = [];
	readonly steps: string[] = [];
	private nodes = 1;
	private copies = 0;

	constructor(readonly setup: PollingSetup) {
		resetClock(T0 + setup.startOffsetMs);
		this.api = new ModelApi(setup.api);
		this.n8n = new PollingN8n(this.api, setup.mode, { durableOffsetMs: setup.durableOffsetMs });
		this.ledger = new Ledger(this.api, Date.now());
	}

	get parameters(): TriggerParameters {
		return this.setup.parameters;
	}

	node(workflowId = MAIN): INode {
		return this.n8n.workflows.get(workflowId)!.node;
	}

	/** Creates the history, the workflow, and activates it. */
	async begin(): Promise<void> {
		seedHistory(this.api, this.setup.history);
		this.n8n.addWorkflow(MAIN, triggerNode('trigger-1', NAMES[0], this.parameters));
		this.api.fail(...this.setup.activationFaults);
		await this.activateTrigger(MAIN, 'trigger-1', false);
	}

	private async activateTrigger(workflowId: string, nodeId: string, copied: boolean) {
		this.triggers.push({
			key: `${workflowId}/${nodeId}`,
			workflowId,
			nodeId,
			since: Date.now(),
			copied,
			current: true,
			addedToActive: false,
		});
		this.step(`activate ${workflowId}`);
		await this.untilActive(workflowId, 'activate', async () => await this.n8n.activate(workflowId));
	}

	/** What a user does when an activation fails: tries again half a minute later (the API's faults run out). */
	private async untilActive(
		workflowId: string,
		mode: 'activate' | 'update',
		first: () => Promise<boolean>,
	) {
		let ok = await drive(first());
		for (let attempt = 0; !ok && attempt < 20; attempt++) {
			this.step(`activation failed; the user tries again in 30 s`);
			await advance(30_000);
			await this.ensureUp();
			ok = await drive(this.n8n.activate(workflowId, mode));
		}
	}

	/** A user's change needs n8n up: it waits for the supervisor's restart, or starts n8n. */
	async ensureUp(): Promise<void> {
		if (!this.n8n.isUp) await drive(this.n8n.start());
	}

	/**
	 * When n8n first activated a trigger, on the API's clock: `began` (its first successful
	 * activation began: nothing listed before it may come out under Start From Now) and `ended`
	 * (it was done: every event created since must come out). Undefined while never activated.
	 */
	activeSince(trigger: Trigger): { began: number; ended: number } | undefined {
		const first = this.n8n.activations.find(
			(a) =>
				a.ok &&
				a.workflowId === trigger.workflowId &&
				a.nodeId === trigger.nodeId &&
				a.beganAt >= trigger.since,
		);
		const skew = this.api.settings.skewMs;
		return first && { began: first.beganAt + skew, ended: first.endedAt + skew };
	}

	step(line: string): void {
		this.steps.push(`${this.ledger.time(Date.now())} ${line}`);
	}

	// ---- what happens in a history -------------------------------------------------------

	createEvents(specs: Array<{ type: number; lateMs: number }>): void {
		const overlap = this.parameters.overlapMinutes * MINUTE;
		const made = specs.map((spec) =>
			this.api.create(EVENT_TYPES[spec.type % EVENT_TYPES.length], Math.min(spec.lateMs, overlap)),
		);
		this.step(`created ${made.map((e) => this.ledger.describe(e.id)).join('; ')}`);
	}

	burst(count: number, lateShare: number): void {
		const overlap = this.parameters.overlapMinutes * MINUTE;
		const start = this.api.now() - 1000;
		for (let i = 0; i < count; i++)
			this.api.create(
				EVENT_TYPES[i % EVENT_TYPES.length],
				(i * 37) % 100 < lateShare * 100 ? (i * 7907) % overlap : 0,
				start + Math.floor((i * 1000) / count),
			);
		this.step(`burst of ${count} events`);
	}

	async wait(ms: number): Promise<void> {
		await advance(ms);
	}

	async restart(downMs: number): Promise<void> {
		this.n8n.stop();
		this.step(`n8n stopped for ${downMs / 1000} s`);
		await advance(downMs);
		await drive(this.n8n.start());
	}

	async rename(name: string): Promise<void> {
		await this.ensureUp();
		const node = { ...this.node(), name };
		this.step(`rename to "${name}"`);
		const trigger = this.triggers.find((t) => t.current && t.workflowId === MAIN);
		if (this.setup.mode === 'durable' && trigger && this.uncommitted(trigger))
			trigger.renamedUncommittedAt ??= this.api.now();
		await this.untilActive(MAIN, 'update', async () => await this.n8n.update(MAIN, node));
	}

	async replaceNode(): Promise<void> {
		await this.ensureUp();
		const old = this.node();
		const nodeId = `trigger-${++this.nodes}`;
		for (const trigger of this.triggers) if (trigger.workflowId === MAIN) trigger.current = false;
		this.triggers.push({
			key: `${MAIN}/${nodeId}`,
			workflowId: MAIN,
			nodeId,
			since: Date.now(),
			copied: false,
			current: true,
			addedToActive: true,
		});
		this.step(`trigger deleted and a new one added as "${old.name}" (${nodeId})`);
		await this.untilActive(
			MAIN,
			'update',
			async () => await this.n8n.update(MAIN, { ...old, id: nodeId }),
		);
	}

	async deactivate(downMs: number): Promise<void> {
		await this.ensureUp();
		this.n8n.deactivate(MAIN);
		this.step(`deactivated for ${downMs / 1000} s`);
		await advance(downMs);
		await this.ensureUp();
		this.step('activated again');
		await this.untilActive(MAIN, 'activate', async () => await this.n8n.activate(MAIN));
	}

	/** A copy of the workflow (an import, a duplicate) with the same node ids and the static data as saved: the most n8n's source allows. */
	async copyWorkflow(): Promise<void> {
		await this.ensureUp();
		const original = this.n8n.workflows.get(MAIN)!;
		const id = `wf-copy-${++this.copies}`;
		this.n8n.addWorkflow(id, { ...original.node }, original.staticData);
		await this.activateTrigger(id, original.node.id, true);
	}

	// ---- the end of a history, and the checks --------------------------------------------

	/** Everything settles: no faults, n8n up, time for every late event and every backlog. */
	async finish(): Promise<void> {
		this.step('the history ends: no more events; faults armed still happen');
		await this.ensureUp();
		const overlap = this.parameters.overlapMinutes * MINUTE;
		await advance(overlap + 2 * MINUTE);
		await advanceUntil(() => this.missing().length === 0, 30 * MINUTE, MINUTE);
		await advance(2 * MINUTE);
	}

	emitted(): Emitted[] {
		return this.n8n.executions.map((execution) => ({
			trigger: `${execution.workflowId}/${execution.nodeId}`,
			at: execution.at,
			items: execution.items,
		}));
	}

	private matches(type: string): boolean {
		const events = this.parameters.events;
		return events.length === 0 || events.includes(type);
	}

	private droppedIds(workflowId: string): Set<string> {
		return new Set(
			this.n8n.dropped
				.filter((drop) => drop.workflowId === workflowId)
				.flatMap((drop) => drop.items.map((item) => String(item.id))),
		);
	}

	/** A copy of the trigger saved (at emit) while its `poller_state` row holds no cursor of its own. */
	private uncommitted(trigger: Trigger): boolean {
		const row = this.n8n.pollerState.get(`${trigger.workflowId}|${trigger.nodeId}`);
		const own = (row as { eventCursor?: { nodeId?: string } } | undefined)?.eventCursor;
		const global = this.n8n.workflows.get(trigger.workflowId)?.staticData.global as
			| { documentWorkflowTriggerCursors?: Record<string, unknown> }
			| undefined;
		return (
			own?.nodeId !== trigger.nodeId && !!global?.documentWorkflowTriggerCursors?.[trigger.nodeId]
		);
	}

	/** Events a current trigger must have emitted by the end: created since its activation, of its types, still listed. */
	missing(): Violation[] {
		const violations: Violation[] = [];
		const counts = this.ledger.counts(this.emitted());
		const now = this.api.now();
		for (const trigger of this.triggers) {
			if (!trigger.current || !this.n8n.workflows.get(trigger.workflowId)?.active) continue;
			const dropped = this.droppedIds(trigger.workflowId);
			const got = counts.get(trigger.key) ?? new Map<string, number>();
			const since = this.activeSince(trigger);
			for (const event of this.api.events) {
				if (!this.matches(event.type) || !this.api.isListed(event, now)) continue;
				if (!since || event.createdOnMs < since.ended || got.has(event.id) || dropped.has(event.id))
					continue;
				if (event.commitAtMs < (trigger.renamedUncommittedAt ?? -Infinity)) continue;
				// Start From Now: one listed as the activation ended (the same instant) is before it.
				if (this.parameters.startFrom === 'now' && this.api.isListed(event, since.ended)) continue;
				violations.push({
					property: 'once',
					message: `${this.ledger.describe(event.id)} never came out (${trigger.key})`,
				});
			}
		}
		return violations;
	}

	/** What "Start From" promises of the events from before a trigger's activation. */
	startViolations(final: boolean): Violation[] {
		const violations: Violation[] = [];
		const counts = this.ledger.counts(this.emitted());
		for (const trigger of this.triggers) {
			const got = counts.get(trigger.key) ?? new Map<string, number>();
			const since = this.activeSince(trigger);
			if (!since) continue;
			if (this.parameters.startFrom === 'now') {
				if (trigger.copied) continue;
				// A trigger n8n first polls with activation mode `update` (durable cursors; a node added
				// to an active workflow) starts from the API's now less a look-back; without a `Date`
				// header the node has no clock of the API's but its own, off by the API's lead over it.
				const { dateHeader, skewMs } = this.api.settings;
				const slack =
					this.setup.mode === 'durable' || trigger.addedToActive
						? FRESH_START_SLACK_MS + (dateHeader ? 0 : Math.max(0, skewMs))
						: 0;
				for (const id of got.keys()) {
					const event = this.ledger.event(id);
					if (event && event.commitAtMs < since.began - slack)
						violations.push({
							property: 'start',
							message: `Start From Now: ${this.ledger.describe(id)} came out (${trigger.key}, activated ${this.ledger.time(since.began - this.api.settings.skewMs)}), though listed before its activation${slack ? ` less ${slack / 1000} s` : ''}`,
						});
				}
			} else if (final && trigger.current && !trigger.copied) {
				const dropped = this.droppedIds(trigger.workflowId);
				for (const event of this.api.events) {
					if (!this.matches(event.type) || got.has(event.id) || dropped.has(event.id)) continue;
					if (event.commitAtMs < (trigger.renamedUncommittedAt ?? -Infinity)) continue;
					// Listed at activation and still listed at the end (an event that expired meanwhile may have expired before a read reached it).
					const listedAtStart = this.api.isListed(event, since.began);
					if (listedAtStart && this.api.isListed(event, this.api.now()))
						violations.push({
							property: 'start',
							message: `Start From Oldest: ${this.ledger.describe(event.id)}, listed at activation (${this.ledger.time(since.began - this.api.settings.skewMs)}), never came out (${trigger.key})`,
						});
				}
			}
		}
		return violations;
	}

	/** The state the trigger keeps, bounded by the events of one overlap window plus one read, per trigger the workflow has had. */
	boundViolations(): Violation[] {
		const violations: Violation[] = [];
		for (const at of new Set(busyLoops))
			violations.push({
				property: 'bounded',
				message: `a busy loop at ${this.ledger.time(at)}: the node ran without waiting, the clock standing still (in n8n it would hold the event loop)`,
			});
		const overlap = this.parameters.overlapMinutes * MINUTE;
		const newest = this.api.events.reduce((max, e) => Math.max(max, e.createdOnMs), -Infinity);
		const windowEvents = this.api.events.filter(
			(e) => e.createdOnMs >= newest - overlap - 5 * MINUTE,
		).length;
		for (const record of this.n8n.workflows.values()) {
			const triggers = this.triggers.filter((t) => t.workflowId === record.id).length;
			const bound = (1 + triggers) * (4096 + 250 * (windowEvents + 100));
			const saved = this.n8n.savedBytes(record.id);
			const live = this.n8n.liveBytes(record.id);
			if (saved > bound || live > bound)
				violations.push({
					property: 'bounded',
					message: `${record.id} keeps ${saved} bytes saved, ${live} in memory: more than ${bound} (${windowEvents} events in the last overlap window and 5 minutes, ${triggers} trigger node(s))`,
				});
		}
		if (this.n8n.busy === 0) {
			const nodeTimers = jest.getTimerCount() - this.n8n.ownTimers;
			if (nodeTimers > 0)
				violations.push({
					property: 'bounded',
					message: `${nodeTimers} timer(s) left running by the node while no poll runs`,
				});
		}
		return violations;
	}

	violations(final: boolean): Violation[] {
		const emitted = this.emitted();
		return [
			...this.ledger.notListedCopies(emitted),
			...this.ledger.duplicates(emitted),
			...(final ? this.missing() : []),
			...this.startViolations(final),
			...this.ledger.ascendingWithin(emitted),
			...this.ledger.oldestFirst(emitted),
			...this.boundViolations(),
		];
	}

	check(property: PropertyName, final: boolean): void {
		failWith(
			this.violations(final).filter((v) => v.property === property),
			this.report(),
		);
	}

	report(): string {
		const polls = this.api.requests.length;
		return [
			`setup: ${describeSetup(this.setup)}`,
			`history (n8n clock, relative to its start):`,
			...this.steps.slice(-40).map((line) => `  ${line}`),
			`n8n:`,
			...this.n8n.log.slice(-40).map((entry) => `  ${this.ledger.time(entry.at)} ${entry.line}`),
			...(logged.length
				? [
						'warnings and errors the node logged:',
						...logged.slice(-8).map((line) => `  ${line.slice(0, 300)}`),
					]
				: []),
			`${polls} event-list request(s), ${this.n8n.executions.length} execution(s), ${this.n8n.dropped.length} dropped by n8n`,
		].join('\n');
	}

	dispose(): void {
		this.n8n.dispose();
	}

	counts(): Record<string, number> {
		return {
			requests: this.api.requests.length,
			executions: this.n8n.executions.length,
			items: this.n8n.executions.reduce((n, e) => n + e.items.length, 0),
		};
	}
}

export function describeSetup(setup: PollingSetup): string {
	const p = setup.parameters;
	const a = setup.api;
	return [
		`${setup.mode} mode`,
		`Start From ${p.startFrom}`,
		`events ${p.events.length ? p.events.join('+') : 'all'}`,
		`overlap ${p.overlapMinutes} min`,
		`API latency ${a.latencyMs} ms, ${a.dateHeader ? 'Date header' : 'no Date header'}, skew ${a.skewMs / 1000} s, page past the end ${a.beyondLastPage}`,
		`history ${setup.history.spread} over the week + ${setup.history.recent} in the last 3 min + ${setup.history.expiring} leaving the 7 days as activation reads`,
		setup.activationFaults.length
			? `activation faults ${setup.activationFaults.map((f) => f.kind).join(',')}`
			: '',
	]
		.filter(Boolean)
		.join(', ');
}

// ---- commands (and those both models share: `steps.ts`) --------------------------------

abstract class PollingStep extends Step<PollingWorld> {}

class CreateEvents extends PollingStep {
	constructor(readonly specs: Array<{ type: number; lateMs: number }>) {
		super();
	}
	toString() {
		return `create(${this.specs.map((s) => `${EVENT_TYPES[s.type % EVENT_TYPES.length]}${s.lateMs ? ` listed ${seconds(s.lateMs)} late` : ''}`).join(', ')})`;
	}
	async act(world: PollingWorld) {
		world.createEvents(this.specs);
	}
}

class Burst extends PollingStep {
	constructor(
		readonly count: number,
		readonly lateShare: number,
	) {
		super();
	}
	toString() {
		return `burst(${this.count}${this.lateShare ? `, ${Math.round(this.lateShare * 100)}% late` : ''})`;
	}
	async act(world: PollingWorld) {
		world.burst(this.count, this.lateShare);
	}
}

class ArmFault extends PollingStep {
	constructor(readonly fault: 'crashAfterSave' | 'crashBeforeCommit' | 'leaseLost') {
		super();
	}
	toString() {
		return {
			crashAfterSave: 'crashNextEmitAfterItsSave()',
			crashBeforeCommit: 'crashNextEmitBeforeItsCommit()',
			leaseLost: 'loseNextPollsLease()',
		}[this.fault];
	}
	check(model: Readonly<Model>) {
		return (
			(model.setup as PollingSetup).mode ===
			(this.fault === 'crashAfterSave' ? 'default' : 'durable')
		);
	}
	async act(world: PollingWorld) {
		world.n8n.faults[this.fault] = true;
		world.step(this.toString());
	}
}

// ---- arbitraries -----------------------------------------------------------------------

export function setupArb(
	options: { mode?: PollingMode; startFrom?: 'now' | 'oldest' } = {},
): fc.Arbitrary<PollingSetup> {
	const mode = options.mode ?? (process.env.MODEL_MODE as PollingMode | undefined);
	return fc.record({
		mode: mode ? fc.constant(mode) : fc.constantFrom<PollingMode>('default', 'durable'),
		parameters: fc.record({
			events: fc.oneof(
				fc.constant<string[]>([]),
				fc.constant<string[]>(['run.completed']),
				fc.constant<string[]>(['run.completed', 'run.failed']),
			),
			overlapMinutes: fc.constantFrom(1, 2, 5),
			startFrom: options.startFrom
				? fc.constant(options.startFrom)
				: fc.constantFrom<'now' | 'oldest'>('now', 'oldest'),
		}),
		api: fc.record({
			dateHeader: fc.boolean(),
			latencyMs: fc.constantFrom(0, 20, 150, 600),
			skewMs: fc.constantFrom(0, 0, -20_000, 45_000, 10 * MINUTE),
			beyondLastPage: fc.constantFrom<'empty' | '400'>('empty', '400'),
		}),
		startOffsetMs: fc.integer({ min: 0, max: MINUTE - 1 }),
		durableOffsetMs: fc.integer({ min: 0, max: 59 }).map((s) => s * 1000),
		history: fc.record({
			spread: fc.constantFrom(0, 30, 250),
			recent: fc.constantFrom(0, 0, 6),
			expiring: fc.constantFrom(0, 0, 40, 160),
		}),
		activationFaults: fc.oneof(fc.constant<Fault[]>([]), fc.array(faultArb, { maxLength: 2 })),
	});
}

/** The commands of a polling history, by name (`MODEL_WITHOUT` leaves some out). */
function commands(): Record<string, fc.Arbitrary<PollingStep>> {
	const late = fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 1000, max: 5 * MINUTE }));
	const spec = fc.record({ type: fc.integer({ min: 0, max: 2 }), lateMs: late });
	const shared = sharedCommands<PollingWorld>({
		style: STYLE,
		names: NAMES,
		waitMs: fc.oneof(
			fc.integer({ min: 1000, max: 70_000 }),
			fc.integer({ min: 60_000, max: 8 * MINUTE }),
		),
		restartDownMs: fc.oneof(
			fc.integer({ min: 0, max: 3 * MINUTE }),
			fc.constantFrom(2 * HOUR, 3 * DAY, 7 * DAY + HOUR),
		),
		deactivateMaxMs: 10 * MINUTE,
	});
	return {
		create: fc.array(spec, { minLength: 1, maxLength: 6 }).map((specs) => new CreateEvents(specs)),
		burst: fc
			.record({ count: fc.integer({ min: 101, max: 450 }), late: fc.constantFrom(0, 0, 0.1) })
			.map(({ count, late: share }) => new Burst(count, share)),
		...shared.around,
		crashAfterSave: fc.constant(new ArmFault('crashAfterSave')),
		crashBeforeCommit: fc.constant(new ArmFault('crashBeforeCommit')),
		leaseLost: fc.constant(new ArmFault('leaseLost')),
		...shared.users,
	};
}

/** Runs polling histories and asserts one property on each (`MODEL_MODE=default|durable` keeps one mode). */
export async function checkPollingProperty(
	property: PropertyName,
	setup: fc.Arbitrary<PollingSetup>,
	options: ModelRunOptions,
): Promise<number> {
	return await checkProperty(
		property,
		setup,
		pick(commands()),
		(initial) => new PollingWorld(initial),
		describeSetup,
		options,
	);
}

/** The steps one by one, to write out a history the model found (`checkPollingHistory`). */
export const pollingStep = {
	wait: (ms: number) => sharedStep.wait(ms),
	restart: (downMs: number) => sharedStep.restart(downMs, STYLE),
	rename: (name: string) => sharedStep.rename(name),
	copyWorkflow: () => sharedStep.copyWorkflow(),
	replaceNode: () => sharedStep.replaceNode(),
	burst: (count: number, lateShare = 0) => new Burst(count, lateShare),
	create: (...specs: Array<{ type: number; lateMs: number }>) => new CreateEvents(specs),
	crashNextEmitAfterItsSave: () => new ArmFault('crashAfterSave'),
	crashNextEmitBeforeItsCommit: () => new ArmFault('crashBeforeCommit'),
};

/** Asserts one property on one history written out. */
export async function checkPollingHistory(
	property: PropertyName,
	setup: PollingSetup,
	steps: Array<Step<PollingWorld>>,
): Promise<void> {
	await checkHistory(property, setup, steps, (initial) => new PollingWorld(initial), describeSetup);
}

/** The polling trigger's properties, as the jest tests are named. */
export const POLLING_PROPERTIES = {
	once: 'exactly once: every listed event of the chosen types comes out once, across restarts, renames, lost leases and crashes, except the executions n8n itself drops',
	start:
		'Start From: Now emits nothing listed before activation (90 s where n8n first polls it with activation mode update); Oldest emits the last 7 days',
	order: 'a backlog comes out oldest first',
	bounded:
		'static data stays bounded by the events of an overlap window, and no timer is left running between polls',
} satisfies Partial<Record<PropertyName, string>>;

/** Registers one jest test per property of the polling trigger. */
export function describePollingModel(suite: ModelSuite<keyof typeof POLLING_PROPERTIES>): void {
	describeModel(suite, POLLING_PROPERTIES, useModelClock, async (property, options) =>
		checkPollingProperty(property, setupArb(), options),
	);
}
