/**
 * One watcher per API key in this n8n process, shared by every execution's wait: one loop
 * sends the checks of all of them, what one run taught (how long a workflow's runs take, and
 * whether events name their run) serves every other, and one read of the event list can
 * look at all of them at once. Each check runs with the context of the execution whose run
 * it is; nothing of the watcher is left running once nothing waits (see README.md).
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';
import type { RunState } from './runCheck';
import { FINAL_STATUSES, checkOnce } from './runCheck';
import { RunEventReader } from './runEvents';
import { ONE_LENGTH, PRECISION, RunScheduler, SINGLE_RUN_PRECISION } from './runScheduler';
import type { WaitOutcome, WaitSettings, WaitTarget } from './runWaiter';
import { ExecutionCancelledError, cancelSignalOf } from '../../shared/transport';

/** The loop looks again after at most this long while checks are due or in flight. */
const BUSY_SLICE_MS = 5;
/** The longest the loop sleeps at once: a cancelled execution is noticed within it. */
const IDLE_SLICE_MS = 100;
/** One read of the event list is worth it when it looks at this many runs (at one, where events name their run). */
const EVENT_READ_MIN_RUNS = 3;
/** Reads of the event list are at least this far apart. */
const EVENT_READ_GAP_MS = 250;
/** The share of a run's age between two reads of the event list that look at it (closer while its run length is unknown). */
const LOOK_SHARE_UNKNOWN = 0.07;
const LOOK_SHARE_KNOWN = 0.18;
/** Workflows per API key whose run lengths are remembered. */
const WORKFLOWS_KEPT = 200;
/** How long a run event that named no run counts as an ended run to find. */
const UNEXPLAINED_MS = 10_000;
/** API keys whose knowledge is kept in this process. */
const KEYS_KEPT = 100;

/** The key of an API workflow's run lengths: ids compared as the API compares them. */
function workflowKey(workflowId: string | undefined): string {
	return (workflowId ?? '').trim().toLowerCase();
}

/** What this process learned about an API key's runs; kept after the waits end, bounded. */
class Knowledge {
	readonly events = new RunEventReader();
	/** The shortest and longest run seen per API workflow, kept with the API's clock lead added (see `learn`). */
	private readonly lengths = new Map<string, { shortest: number; longest: number }>();
	/** Runs seen final in the last minutes: an event naming one shows that events name runs. */
	private readonly recentlyFinal = new Map<string, number>();
	/** When run events that named no run were read, not yet matched by a run seen final. */
	private unexplainedAt: number[] = [];
	/** The most the API's clock was seen ahead of ours: no timestamp it gives is later than its own now. */
	private apiAhead = -Infinity;

	/** Compares the run's timestamps with our clock when its answer came (`now`). */
	observe(run: IDataObject | undefined, now: number): void {
		for (const at of [run?.startedOn, run?.completedOn]) {
			const api = Date.parse(String(at));
			if (Number.isFinite(api)) this.apiAhead = Math.max(this.apiAhead, api - now);
		}
	}

	private get ahead(): number {
		return Number.isFinite(this.apiAhead) ? this.apiAhead : 0;
	}

	/**
	 * A run's length from when we submitted it (its queue time too: the age a wait counts) to
	 * its end by our clock; for a run waited on by id, from its `startedOn`. Kept with the API's
	 * clock lead added, taken off when read: the lead seen grows to the true one, so the
	 * lengths shrink to the true ones and are never counted short.
	 */
	learn(state: RunState, now: number): void {
		const run = state.lastRun ?? {};
		const [started, completed] = [Date.parse(String(run.startedOn)), Date.parse(String(run.completedOn))];
		// Kept with the API's clock lead added: `completedOn − submittedAt` carries it already.
		const kept = state.target.submittedAt === undefined ? completed - started + this.ahead : completed - state.submittedAt;
		const workflowId = workflowKey(String(run.workflowId ?? state.target.workflowId ?? ''));
		const seen = Number.isFinite(kept) && kept >= this.ahead ? kept : now - state.submittedAt + this.ahead;
		const known = this.lengths.get(workflowId) ?? { shortest: seen, longest: seen };
		this.lengths.delete(workflowId);
		this.lengths.set(workflowId, { shortest: Math.min(known.shortest, seen), longest: Math.max(known.longest, seen) });
		if (this.lengths.size > WORKFLOWS_KEPT) this.lengths.delete(this.lengths.keys().next().value!);
		const runId = state.runId.toLowerCase();
		this.unexplainedAt.shift();
		this.events.seenFinal(runId, now);
		this.recentlyFinal.set(runId, now);
		for (const [id, at] of this.recentlyFinal) if (at < now - 120_000 || this.recentlyFinal.size > 5_000) this.recentlyFinal.delete(id);
	}

	/** No run of this workflow is checked sooner: a little past its shortest run (its longest, where events name runs). */
	firstCheckAge(workflowId: string | undefined): number | undefined {
		const lengths = this.lengthsOf(workflowId);
		if (!lengths) return undefined;
		return (this.events.namesRuns === true ? lengths.longest : lengths.shortest) * 1.04 + 150;
	}

	/** When runs of this workflow all take about as long (within a fifth): the age at which they end. */
	expectedAge(workflowId: string | undefined): number | undefined {
		const lengths = this.lengthsOf(workflowId);
		return lengths && lengths.longest <= lengths.shortest * ONE_LENGTH ? this.firstCheckAge(workflowId) : undefined;
	}

	/**
	 * Where events name runs, how old a run never read yet gets before its own first read: where
	 * its workflow's runs end, while they take about as long; twice the longest where lengths
	 * vary, since a read before then would mostly find it running and the list tells of its end.
	 */
	firstReadAge(workflowId: string | undefined): number | undefined {
		const lengths = this.lengthsOf(workflowId);
		return lengths && (this.expectedAge(workflowId) ?? 2 * lengths.longest);
	}

	/** The shortest run of this workflow seen so far: no run of it needs a look before that age. */
	shortest(workflowId: string | undefined): number | undefined {
		return this.lengthsOf(workflowId)?.shortest;
	}

	private lengthsOf(workflowId: string | undefined): { shortest: number; longest: number } | undefined {
		const kept = this.lengths.get(workflowKey(workflowId));
		return kept && { shortest: Math.max(0, kept.shortest - this.ahead), longest: Math.max(0, kept.longest - this.ahead) };
	}

	/** Ended runs to find: each run event that named no run counts until a run is seen final, or for `UNEXPLAINED_MS`. */
	unexplained(now: number, unnamed: number, cap: number): number {
		this.unexplainedAt = this.unexplainedAt.filter((at) => at > now - UNEXPLAINED_MS);
		for (let i = 0; i < unnamed; i++) this.unexplainedAt.push(now);
		this.unexplainedAt.splice(0, Math.max(0, this.unexplainedAt.length - cap));
		return this.unexplainedAt.length;
	}

	endedRecently(runId: string): boolean {
		return this.recentlyFinal.has(runId);
	}
}

/** One execution's wait: its runs, its settings, its context and how it ends. */
class Wait {
	readonly outcomes = new Map<number, WaitOutcome>();
	readonly scheduler: RunScheduler;
	readonly executionSignal: AbortSignal | undefined;
	readonly over = new AbortController();
	readonly signal: AbortSignal;
	readonly done: Promise<void>;
	inFlight = 0;
	failure?: Error;
	/** Whether the length of its workflow's runs was known when the wait began. */
	readonly lengthKnown: boolean;
	/** Runs an event named as ended. */
	readonly named = new Set<number>();
	/** Share of a run's age between two reads of the event list that look at it. */
	readonly lookShare: number;
	private settled = false;
	private settle!: () => void;
	/** Runs waited on by id: when each started, by the API's clock (see `learnStart`). */
	private readonly startedOn = new Map<number, number>();
	private latestStart = -Infinity;

	constructor(
		readonly ctx: IExecuteFunctions,
		readonly states: RunState[],
		readonly settings: WaitSettings,
		readonly failFast: boolean,
		private readonly knowledge: Knowledge,
		private readonly begin: number,
	) {
		this.executionSignal = cancelSignalOf(ctx);
		this.signal = this.executionSignal ? AbortSignal.any([this.over.signal, this.executionSignal]) : this.over.signal;
		this.done = new Promise((resolve) => (this.settle = resolve));
		this.lengthKnown = states.every((state) => knowledge.shortest(state.target.workflowId) !== undefined);
		this.lookShare = this.lengthKnown ? LOOK_SHARE_KNOWN : LOOK_SHARE_UNKNOWN;
		this.scheduler = new RunScheduler(
			states.map((state, key) => ({
				key,
				submittedAt: state.submittedAt,
				firstCheckAge: knowledge.firstCheckAge(state.target.workflowId),
				expectedAge: knowledge.expectedAge(state.target.workflowId),
			})),
			{
				firstCheckMs: settings.initialIntervalMs,
				longestIntervalMs: settings.maxIntervalMs,
				precision: states.length === 1 ? SINGLE_RUN_PRECISION : PRECISION,
			},
		);
		states.forEach((state, key) => {
			if (state.deadline !== undefined) this.scheduler.notLaterThan(key, state.deadline);
			// Runs waited on by id: when they started is not known. The probes are read at once; their starts place the others.
			if (state.target.submittedAt === undefined && this.scheduler.isProbe(key)) this.scheduler.pin(key, begin);
		});
	}

	/** Ends the wait when its runs are all done, or it failed or was cancelled; true once ended. */
	endIfOver(): boolean {
		if (!this.failure && this.executionSignal?.aborted) this.failure = cancelledError(this.ctx);
		if (this.failure) this.over.abort();
		if (this.inFlight > 0 || (!this.failure && this.scheduler.pendingCount > 0)) return this.settled;
		if (!this.settled) this.settle();
		return (this.settled = true);
	}

	/**
	 * Whether an event read may stand in for this run's check: not in a batch, while it answers
	 * 404, nears its limit or is pinned, nor once an event named it (its end was told once; if
	 * its read did not show it yet, only its own reads will).
	 */
	lookable(key: number, now: number): boolean {
		const state = this.states[key];
		if (this.states.length > 1 || this.named.has(key) || this.scheduler.isPinned(key) || state.notFoundSince !== undefined) return false;
		return state.deadline === undefined || state.deadline > now + 1000;
	}

	/** A run never read yet whose first check a quiet event read stands in for (see README.md). */
	firstCheckDeferrable(key: number, now: number): boolean {
		const state = this.states[key];
		if (state.lastRun !== undefined) return false;
		const age = now - state.submittedAt;
		if (!this.lengthKnown && age < this.settings.notFoundGraceMs) return true;
		return this.knowledge.events.namesRuns === true && age < (this.knowledge.firstReadAge(state.target.workflowId) ?? 0);
	}

	/** A run whose first check waits for the next read of the event list. */
	awaitsFirstLook(key: number, now: number): boolean {
		return this.firstCheckDeferrable(key, now) && this.lookable(key, now);
	}

	async check(key: number): Promise<void> {
		const state = this.states[key];
		try {
			const result = await checkOnce(this.ctx, state, this.settings, this.signal);
			const now = Date.now();
			this.knowledge.observe(state.lastRun, now);
			if ('outcome' in result) {
				this.outcomes.set(key, result.outcome);
				const final = state.lastRun !== undefined && FINAL_STATUSES.includes(String(state.lastRun.status));
				if (final) this.knowledge.learn(state, now);
				this.scheduler.reportDone(key, now, final);
				if (result.outcome.error && this.failFast) this.failure ??= result.outcome.error;
				return;
			}
			this.learnStart(key);
			if (state.pinnedAt !== undefined) this.scheduler.pin(key, state.pinnedAt);
			else this.scheduler.reportPending(key, now);
			state.pinnedAt = undefined;
			if (state.deadline !== undefined) this.scheduler.notLaterThan(key, state.deadline);
		} catch (error) {
			if (this.failure) return;
			if (error instanceof ExecutionCancelledError || this.executionSignal?.aborted) {
				this.failure = cancelledError(this.ctx, state.target.itemIndex);
				return;
			}
			this.outcomes.set(key, { itemIndex: state.target.itemIndex, error: error as Error });
			this.scheduler.reportDone(key, Date.now(), false);
			if (this.failFast) this.failure ??= error as Error;
		} finally {
			this.inFlight--;
		}
	}

	/** A run waited on by id: its `startedOn` places it and the runs not read yet before it (see README.md). */
	private learnStart(key: number): void {
		if (this.states[key].target.submittedAt !== undefined || this.startedOn.has(key)) return;
		const started = Date.parse(String(this.states[key].lastRun?.startedOn ?? ''));
		if (!Number.isFinite(started)) return;
		this.startedOn.set(key, started);
		this.latestStart = Math.max(this.latestStart, started);
		// From the last item back, so each run not read yet meets the next known start on the way.
		let nextKnown = this.latestStart;
		for (let other = this.states.length - 1; other >= 0; other--) {
			nextKnown = this.startedOn.get(other) ?? nextKnown;
			if (this.states[other].target.submittedAt === undefined && this.scheduler.isWaiting(other)) this.scheduler.restart(other, this.begin - (this.latestStart - nextKnown));
		}
	}
}

function cancelledError(ctx: IExecuteFunctions, itemIndex?: number): NodeOperationError {
	return new NodeOperationError(ctx.getNode(), 'The execution was cancelled while waiting for runs', itemIndex === undefined ? {} : { itemIndex });
}

export class RunWatcher {
	private readonly waits = new Set<Wait>();
	private running = false;
	private eventReadInFlight = false;
	private lastEventReadAt = 0;
	/** Whether event reads look at the runs now: a run awaiting its first look is then held for the next read. */
	private eventsCover = false;

	constructor(
		private readonly scope: string,
		private readonly knowledge: Knowledge,
	) {}

	/** Waits for one execution's runs; one outcome per target, in the order given. */
	async wait(ctx: IExecuteFunctions, targets: WaitTarget[], settings: WaitSettings, failFast: boolean): Promise<WaitOutcome[]> {
		const begin = Date.now();
		const states: RunState[] = targets.map((target) => ({
			target,
			runId: target.runId,
			submittedAt: target.submittedAt ?? begin,
			deadline: settings.maxWaitMs > 0 ? begin + settings.maxWaitMs : undefined,
			checks: 0,
			replacedRunIds: [],
		}));
		const wait = new Wait(ctx, states, settings, failFast, this.knowledge, begin);
		this.waits.add(wait);
		if (!this.running) void this.loop();
		await wait.done;
		if (wait.failure) throw wait.failure;
		return states.map((_state, key) => wait.outcomes.get(key)!);
	}

	private async loop(): Promise<void> {
		this.running = true;
		for (;;) {
			// Waits end here, right after a sleep: when the last one ends the loop ends too, and no timer is left.
			for (const wait of this.waits) if (wait.endIfOver()) this.waits.delete(wait);
			if (this.waits.size === 0) break;
			const now = Date.now();
			this.lookAtEvents(now);
			this.sendChecks(now);
			await sleep(this.sliceMs(now));
		}
		this.running = false;
		if (watchers.get(this.scope) === this) watchers.delete(this.scope);
	}

	private get concurrency(): number {
		let most = 1;
		for (const wait of this.waits) most = Math.max(most, Math.floor(wait.settings.concurrency));
		return most;
	}

	private get inFlight(): number {
		let count = this.eventReadInFlight ? 1 : 0;
		for (const wait of this.waits) count += wait.inFlight;
		return count;
	}

	/** Sends the due checks, earliest first across every wait, within each wait's and the watcher's concurrency. */
	private sendChecks(now: number): void {
		for (let free = this.concurrency - this.inFlight; free > 0; free--) {
			let earliest: { wait: Wait; at: number } | undefined;
			for (const wait of this.waits) {
				if (wait.failure || wait.inFlight >= wait.settings.concurrency) continue;
				const at = wait.scheduler.nextDueAt(this.heldBy(wait, now));
				if (at !== undefined && at <= now && (!earliest || at < earliest.at)) earliest = { wait, at };
			}
			if (!earliest) return;
			const [key] = earliest.wait.scheduler.takeDue(now, 1, this.heldBy(earliest.wait, now));
			earliest.wait.inFlight++;
			void earliest.wait.check(key);
		}
	}

	/** The runs of a wait whose check waits for the next read of the event list (within `EVENT_READ_GAP_MS`). */
	private heldBy(wait: Wait, now: number): (key: number) => boolean {
		return (key) => this.eventsCover && wait.awaitsFirstLook(key, now);
	}

	/** Reads the event list when a look at the runs it would cover is due (README.md, "The event list as a hint"). */
	private lookAtEvents(now: number): void {
		const reader = this.knowledge.events;
		if (!reader.usable(now)) this.eventsCover = false;
		if (this.eventReadInFlight || !reader.usable(now) || this.inFlight >= this.concurrency) return;
		const looked: Array<{ wait: Wait; key: number; age: number }> = [];
		let nextReadAt = Infinity;
		for (const wait of this.waits) {
			if (wait.failure) continue;
			for (const key of wait.scheduler.idleKeys()) {
				if (!wait.lookable(key, now)) continue;
				const age = wait.scheduler.ageOf(key, now);
				looked.push({ wait, key, age });
				// Runs younger than the shortest of their workflow (or the first check interval) need no look yet.
				const earliestEnd = this.knowledge.shortest(wait.states[key].target.workflowId) ?? wait.settings.initialIntervalMs;
				// The gap is a share of the age the run had at the last read: a run that ended just after it is read that share late at most.
				const ageAtLastRead = Math.max(earliestEnd, age - (now - this.lastEventReadAt));
				const gap = Math.min(wait.settings.maxIntervalMs, Math.max(EVENT_READ_GAP_MS, wait.lookShare * ageAtLastRead));
				if (age >= earliestEnd) nextReadAt = Math.min(nextReadAt, this.lastEventReadAt + gap);
				const due = wait.awaitsFirstLook(key, now) ? wait.scheduler.dueAt(key) : undefined;
				if (due !== undefined) nextReadAt = Math.min(nextReadAt, Math.max(due, this.lastEventReadAt + EVENT_READ_GAP_MS));
			}
		}
		const enough = looked.length >= (reader.namesRuns === true ? 1 : EVENT_READ_MIN_RUNS);
		this.eventsCover = reader.anchored && enough;
		// The first read only finds where the list ends: made at once, so that by the first checks the list tells of the runs.
		if (!enough || (reader.anchored && now < nextReadAt)) return;
		looked.sort((a, b) => b.age - a.age);
		for (const { wait, key } of looked) {
			wait.scheduler.take([key], now);
			wait.inFlight++;
		}
		this.eventReadInFlight = true;
		this.lastEventReadAt = now;
		void this.readEvents(looked);
	}

	private async readEvents(looked: Array<{ wait: Wait; key: number }>): Promise<void> {
		const reader = this.knowledge.events;
		const { wait: first } = looked[0];
		const pending = new Set<string>();
		for (const wait of this.waits) wait.states.forEach((state, key) => !wait.outcomes.has(key) && pending.add(state.runId.toLowerCase()));
		// Unread (undefined), the list tells nothing: every run keeps its own schedule.
		const hint = await reader.read(first.ctx, first.signal, (runId) => pending.has(runId) || this.knowledge.endedRecently(runId));
		this.eventReadInFlight = false;
		const now = Date.now();
		const unexplained = hint && reader.namesRuns !== true ? this.knowledge.unexplained(now, hint.unnamed, pending.size) : 0;
		let guesses = unexplained;
		// A run named as ended that is being checked already, or was not looked at, is checked next.
		for (const wait of this.waits) {
			wait.states.forEach((state, key) => {
				if (!hint?.named.has(state.runId.toLowerCase())) return;
				wait.named.add(key);
				if (!looked.some((entry) => entry.wait === wait && entry.key === key)) wait.scheduler.checkBy(key, now);
			});
		}
		for (const { wait, key } of looked) {
			// A looked-at run was named by no earlier read (a named run is never looked at), so `named` holds this read's word.
			if (!wait.failure && (wait.named.has(key) || (hint && guesses-- > 0))) {
				void wait.check(key);
				continue;
			}
			const deferrable = wait.states[key].lastRun !== undefined || wait.firstCheckDeferrable(key, now);
			if (hint?.complete && unexplained === 0 && deferrable) wait.scheduler.reportPending(key, now, true);
			else wait.scheduler.release(key);
			wait.inFlight--;
		}
	}

	private sliceMs(now: number): number {
		// While anything is in flight, look again soon: a freed slot is filled, an ended wait returns.
		if (this.inFlight > 0) return BUSY_SLICE_MS;
		let next = Infinity;
		for (const wait of this.waits) next = Math.min(next, wait.scheduler.nextDueAt(this.heldBy(wait, now)) ?? Infinity);
		return Math.min(IDLE_SLICE_MS, Math.max(BUSY_SLICE_MS, next - now));
	}
}

/** The watcher of each API key waited on now; one leaves when nothing waits. */
const watchers = new Map<string, RunWatcher>();
/** What was learned per API key, kept for the next waits (bounded). */
const knowledgeByScope = new Map<string, Knowledge>();

/** The watcher for an API key (`limitScope`: base URL and a hash of key and workspace, never the key itself). */
export function watcherFor(scope: string): RunWatcher {
	let watcher = watchers.get(scope);
	if (!watcher) {
		let knowledge = knowledgeByScope.get(scope);
		if (!knowledge) {
			if (knowledgeByScope.size >= KEYS_KEPT) knowledgeByScope.delete(knowledgeByScope.keys().next().value!);
			knowledge = new Knowledge();
			knowledgeByScope.set(scope, knowledge);
		}
		watcher = new RunWatcher(scope, knowledge);
		watchers.set(scope, watcher);
	}
	return watcher;
}

/** How many watchers are running now (one per API key waited on): none once nothing waits. */
export function activeWatcherCount(): number {
	return watchers.size;
}
