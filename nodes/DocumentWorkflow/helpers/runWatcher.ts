/**
 * Waiting on runs (`waitForRuns`): one watcher per API key in this n8n process, shared by every
 * execution's wait. One loop sends the checks of all of them, what one run taught serves every
 * other, and one read of the event list looks at all of them. Each check runs with its own
 * execution's context; nothing is left running once nothing waits. Why it is shaped so: README.md.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';
import type { RunState, WaitOutcome, WaitSettings, WaitTarget } from './runCheck';
import { FINAL_STATUSES, checkOnce } from './runCheck';
import { RunEventReader } from './runEvents';
import { ONE_LENGTH, PRECISION, RunScheduler, SINGLE_RUN_PRECISION } from './runScheduler';
import {
	CREDENTIAL_TYPE,
	ExecutionCancelledError,
	cancelSignalOf,
	limitScope,
	normalizeBaseUrl,
} from '../../shared/transport';

/** What each value sets: README.md, "The values, and why". */
const BUSY_SLICE_MS = 5;
const IDLE_SLICE_MS = 100;
const EVENT_READ_MIN_RUNS = 3;
const EVENT_READ_GAP_MS = 250;
const LOOK_SHARE_UNKNOWN = 0.07;
const LOOK_SHARE_KNOWN = 0.18;
const RUNS_FOR_ONE_LENGTH = 2;
const PAST_LONGEST = 2;
const WORKFLOWS_KEPT = 200;
const KEYS_KEPT = 100;

/** The key of an API workflow's run lengths: ids compared as the API compares them. */
const workflowKey = (workflowId: string | undefined): string =>
	(workflowId ?? '').trim().toLowerCase();

/** What this process learned about an API key's runs; kept after the waits end, bounded. */
class Knowledge {
	readonly events = new RunEventReader();
	/** The shortest and longest run seen per API workflow, and how many were seen, kept on the API's clock (README.md). */
	private readonly lengths = new Map<string, { shortest: number; longest: number; runs: number }>();
	/** The most the API's clock was seen ahead of ours: no timestamp it gives is later than its own now. */
	private apiAhead = -Infinity;

	observe(run: IDataObject | undefined, now: number): void {
		for (const at of [run?.startedOn, run?.completedOn]) {
			const api = Date.parse(String(at));
			if (Number.isFinite(api)) this.apiAhead = Math.max(this.apiAhead, api - now);
		}
	}

	private get ahead(): number {
		return Number.isFinite(this.apiAhead) ? this.apiAhead : 0;
	}

	/** A run's length from its submission (its `startedOn`, waited on by id) to its end (README.md, "What one run taught"). */
	learn(state: RunState, now: number): void {
		const run = state.lastRun ?? {};
		const [started, completed] = [
			Date.parse(String(run.startedOn)),
			Date.parse(String(run.completedOn)),
		];
		// Kept on the API's clock: `completedOn − submittedAt` carries its lead already.
		const kept =
			state.target.submittedAt === undefined
				? completed - started + this.ahead
				: completed - state.submittedAt;
		const workflowId = workflowKey(String(run.workflowId ?? state.target.workflowId ?? ''));
		const seen =
			Number.isFinite(kept) && kept >= this.ahead ? kept : now - state.submittedAt + this.ahead;
		const known = this.lengths.get(workflowId) ?? { shortest: seen, longest: seen, runs: 0 };
		this.lengths.delete(workflowId);
		this.lengths.set(workflowId, {
			shortest: Math.min(known.shortest, seen),
			longest: Math.max(known.longest, seen),
			runs: known.runs + 1,
		});
		if (this.lengths.size > WORKFLOWS_KEPT) this.lengths.delete(this.lengths.keys().next().value!);
		this.events.seenFinal(state.runId, now);
	}

	/** What this workflow's runs seen final tell, undefined before one (README.md, "What one run taught", "The event list as a hint"). */
	lengthsOf(
		workflowId: string | undefined,
		graceMs: number,
	):
		| {
				shortest: number;
				longest: number;
				firstCheckAge: number;
				expectedAge?: number;
				firstReadAge: number;
		  }
		| undefined {
		const kept = this.lengths.get(workflowKey(workflowId));
		if (!kept) return undefined;
		const [shortest, longest] = [
			Math.max(0, kept.shortest - this.ahead),
			Math.max(0, kept.longest - this.ahead),
		];
		const firstCheckAge = (this.events.namesRuns === true ? longest : shortest) * 1.04 + 150;
		const expectedAge =
			kept.runs >= RUNS_FOR_ONE_LENGTH && longest <= shortest * ONE_LENGTH
				? firstCheckAge
				: undefined;
		// Where lengths vary, not before the grace period either: its read of the run is due anyway, and one read serves both.
		return {
			shortest,
			longest,
			firstCheckAge,
			expectedAge,
			firstReadAge: expectedAge ?? Math.max(PAST_LONGEST * longest, graceMs),
		};
	}
}

/** One execution's wait: its runs, its settings, its context and how it ends. */
class Wait {
	readonly outcomes = new Map<number, WaitOutcome>();
	readonly scheduler: RunScheduler;
	readonly executionSignal: AbortSignal | undefined;
	readonly over = new AbortController();
	readonly signal: AbortSignal;
	inFlight = 0;
	failure?: Error;
	/** Whether the length of its workflow's runs was known when the wait began. */
	readonly lengthKnown: boolean;
	/** Runs an event named as ended. */
	readonly named = new Set<number>();
	private settle!: () => void;
	readonly done = new Promise<void>((resolve) => (this.settle = resolve));
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
		this.signal = this.executionSignal
			? AbortSignal.any([this.over.signal, this.executionSignal])
			: this.over.signal;
		const lengths = states.map((state) =>
			knowledge.lengthsOf(state.target.workflowId, settings.notFoundGraceMs),
		);
		this.lengthKnown = lengths.every((known) => known !== undefined);
		const runs = states.map(({ submittedAt, deadline }, key) => ({
			key,
			submittedAt,
			firstCheckAge: lengths[key]?.firstCheckAge,
			expectedAge: lengths[key]?.expectedAge,
			limitAt: deadline,
		}));
		this.scheduler = new RunScheduler(runs, {
			firstCheckMs: settings.initialIntervalMs,
			longestIntervalMs: settings.maxIntervalMs,
			precision: states.length === 1 ? SINGLE_RUN_PRECISION : PRECISION,
		});
		// Runs waited on by id: when they started is not known. The probes are read at once; their starts place the others.
		for (const [key, state] of states.entries())
			if (state.target.submittedAt === undefined && this.scheduler.stateOf(key)?.role === 'probe')
				this.scheduler.pin(key, begin);
	}

	/** Ends the wait when its runs are all done, or it failed or was cancelled; true once ended. */
	endIfOver(): boolean {
		if (!this.failure && this.executionSignal?.aborted) this.failure = cancelledError(this.ctx);
		if (this.failure) this.over.abort();
		if (this.inFlight > 0 || (!this.failure && this.scheduler.pendingCount > 0)) return false;
		this.settle();
		return true;
	}

	/** Whether an event read may stand in for this run's check: not in a batch, while 404, near its limit, pinned, or once named. */
	lookable(key: number, now: number): boolean {
		const state = this.states[key];
		if (
			this.states.length > 1 ||
			this.named.has(key) ||
			this.scheduler.stateOf(key)?.pinnedAt !== undefined ||
			state.notFoundSince !== undefined
		)
			return false;
		return state.deadline === undefined || state.deadline > now + 1000;
	}

	/** The share of a run's age between reads of the list that look at it (README.md, "The event list as a hint"). */
	lookShareAt(age: number, lengths: { longest: number } | undefined): number {
		return this.lengthKnown || (lengths !== undefined && age > PAST_LONGEST * lengths.longest)
			? LOOK_SHARE_KNOWN
			: LOOK_SHARE_UNKNOWN;
	}

	/** A run never read yet whose first check a quiet event read stands in for (see README.md). */
	firstCheckDeferrable(key: number, now: number): boolean {
		const state = this.states[key];
		if (state.lastRun !== undefined) return false;
		const age = now - state.submittedAt;
		if (!this.lengthKnown && age < this.settings.notFoundGraceMs) return true;
		if (this.knowledge.events.namesRuns !== true) return false;
		return (
			age <
			(this.knowledge.lengthsOf(state.target.workflowId, this.settings.notFoundGraceMs)
				?.firstReadAge ?? this.settings.notFoundGraceMs)
		);
	}

	async check(key: number): Promise<void> {
		const state = this.states[key];
		try {
			const outcome = await checkOnce(this.ctx, state, this.settings, this.signal);
			const now = Date.now();
			this.knowledge.observe(state.lastRun, now);
			if (outcome) {
				this.outcomes.set(key, outcome);
				const final =
					state.lastRun !== undefined && FINAL_STATUSES.includes(String(state.lastRun.status));
				if (final) this.knowledge.learn(state, now);
				this.scheduler.reportDone(key, now, final);
				if (outcome.error && this.failFast) this.failure ??= outcome.error;
				return;
			}
			this.learnStart(key);
			if (state.pinnedAt !== undefined) this.scheduler.pin(key, state.pinnedAt);
			else this.scheduler.reportPending(key, now);
			state.pinnedAt = undefined;
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
		// From the last item back: each run not read yet counts as started with the next known start.
		let nextKnown = this.latestStart;
		for (let other = this.states.length - 1; other >= 0; other--) {
			nextKnown = this.startedOn.get(other) ?? nextKnown;
			const role = this.scheduler.stateOf(other)?.role;
			if (
				this.states[other].target.submittedAt === undefined &&
				role !== undefined &&
				role !== 'swept'
			)
				this.scheduler.restart(other, this.begin - (this.latestStart - nextKnown));
		}
	}
}

const cancelledError = (ctx: IExecuteFunctions, itemIndex?: number): NodeOperationError =>
	new NodeOperationError(
		ctx.getNode(),
		'The execution was cancelled while waiting for runs',
		itemIndex === undefined ? {} : { itemIndex },
	);

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

	async wait(
		ctx: IExecuteFunctions,
		targets: WaitTarget[],
		settings: WaitSettings,
		failFast: boolean,
	): Promise<WaitOutcome[]> {
		const begin = Date.now();
		const deadline = settings.maxWaitMs > 0 ? begin + settings.maxWaitMs : undefined;
		const states: RunState[] = targets.map((target) => ({
			target,
			runId: target.runId,
			submittedAt: target.submittedAt ?? begin,
			deadline,
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
		return Math.max(1, ...[...this.waits].map((wait) => Math.floor(wait.settings.concurrency)));
	}

	private get inFlight(): number {
		return [...this.waits].reduce(
			(count, wait) => count + wait.inFlight,
			this.eventReadInFlight ? 1 : 0,
		);
	}

	/** Sends the due checks, earliest first across every wait, within each wait's concurrency and the watcher's. */
	private sendChecks(now: number): void {
		for (let free = this.concurrency - this.inFlight; free > 0; free--) {
			let earliest: { wait: Wait; key: number; at: number } | undefined;
			for (const wait of this.waits) {
				if (wait.failure || wait.inFlight >= wait.settings.concurrency) continue;
				const due = wait.scheduler.nextDue(this.heldBy(wait, now));
				if (due && due.at <= now && (!earliest || due.at < earliest.at))
					earliest = { wait, ...due };
			}
			if (!earliest) return;
			earliest.wait.scheduler.take(earliest.key, now);
			earliest.wait.inFlight++;
			void earliest.wait.check(earliest.key);
		}
	}

	/** The runs of a wait whose check waits for the next read of the event list. */
	private heldBy(wait: Wait, now: number): (key: number) => boolean {
		return (key) =>
			this.eventsCover && wait.firstCheckDeferrable(key, now) && wait.lookable(key, now);
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
			for (let key = 0; key < wait.states.length; key++) {
				const run = wait.scheduler.stateOf(key);
				if (!run || run.checking || !wait.lookable(key, now)) continue;
				const age = now - run.submittedAt;
				looked.push({ wait, key, age });
				// Runs younger than the shortest of their workflow need no look yet; the gap is a share of the age at the last read.
				const lengths = this.knowledge.lengthsOf(
					wait.states[key].target.workflowId,
					wait.settings.notFoundGraceMs,
				);
				const earliestEnd = lengths?.shortest ?? wait.settings.initialIntervalMs;
				const ageAtLastRead = Math.max(earliestEnd, age - (now - this.lastEventReadAt));
				const gap = Math.min(
					wait.settings.maxIntervalMs,
					Math.max(EVENT_READ_GAP_MS, wait.lookShareAt(ageAtLastRead, lengths) * ageAtLastRead),
				);
				if (age >= earliestEnd) nextReadAt = Math.min(nextReadAt, this.lastEventReadAt + gap);
				const due = wait.firstCheckDeferrable(key, now) ? wait.scheduler.dueAt(key) : undefined;
				if (due !== undefined)
					nextReadAt = Math.min(
						nextReadAt,
						Math.max(due, this.lastEventReadAt + EVENT_READ_GAP_MS),
					);
			}
		}
		const enough = looked.length >= (reader.namesRuns === true ? 1 : EVENT_READ_MIN_RUNS);
		this.eventsCover = reader.anchored && enough;
		// The first read only finds where the list ends: made at once, so the list tells of the runs by their first checks.
		if (!enough || (reader.anchored && now < nextReadAt)) return;
		looked.sort((a, b) => b.age - a.age);
		for (const { wait, key } of looked) {
			wait.scheduler.take(key, now);
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
		for (const wait of this.waits)
			wait.states.forEach(
				(state, key) => !wait.outcomes.has(key) && pending.add(state.runId.toLowerCase()),
			);
		// Unread (undefined), the list tells nothing: every run keeps its own schedule.
		const hint = await reader.read(first.ctx, first.signal, pending);
		this.eventReadInFlight = false;
		const now = Date.now();
		let guesses = hint?.unexplained ?? 0;
		// A run named as ended that is being checked already, or was not looked at, is checked next.
		for (const wait of this.waits) {
			wait.states.forEach((state, key) => {
				if (!hint?.named.has(state.runId.toLowerCase())) return;
				wait.named.add(key);
				if (!looked.some((entry) => entry.wait === wait && entry.key === key))
					wait.scheduler.checkBy(key, now);
			});
		}
		for (const { wait, key } of looked) {
			// A looked-at run was named by no earlier read (a named run is never looked at), so `named` holds this read's word.
			if (!wait.failure && (wait.named.has(key) || (hint && guesses-- > 0))) {
				void wait.check(key);
				continue;
			}
			const deferrable =
				wait.states[key].lastRun !== undefined || wait.firstCheckDeferrable(key, now);
			if (hint?.complete && hint.unexplained === 0 && deferrable)
				wait.scheduler.reportPending(key, now, true);
			else wait.scheduler.release(key);
			wait.inFlight--;
		}
	}

	private sliceMs(now: number): number {
		if (this.inFlight > 0) return BUSY_SLICE_MS;
		let next = Infinity;
		for (const wait of this.waits)
			next = Math.min(next, wait.scheduler.nextDue(this.heldBy(wait, now))?.at ?? Infinity);
		return Math.min(IDLE_SLICE_MS, Math.max(BUSY_SLICE_MS, next - now));
	}
}

/** The watcher of each API key waited on now (one leaves when nothing waits), and what was learned per key (bounded). */
const watchers = new Map<string, RunWatcher>();
const knowledgeByScope = new Map<string, Knowledge>();

/** The watcher for an API key (`limitScope`: base URL and a hash of key and workspace, never the key itself). */
export function watcherFor(scope: string): RunWatcher {
	let watcher = watchers.get(scope);
	if (watcher) return watcher;
	if (!knowledgeByScope.has(scope) && knowledgeByScope.size >= KEYS_KEPT)
		knowledgeByScope.delete(knowledgeByScope.keys().next().value!);
	const knowledge = knowledgeByScope.get(scope) ?? new Knowledge();
	knowledgeByScope.set(scope, knowledge);
	watchers.set(scope, (watcher = new RunWatcher(scope, knowledge)));
	return watcher;
}

/** How many watchers are running now (one per API key waited on): none once nothing waits. */
export function activeWatcherCount(): number {
	return watchers.size;
}

/**
 * Waits for every target's run to be final (or to stop early, time out, or never start); one
 * outcome per target, in order. With `failFast` the first item error ends this wait and is
 * thrown once its checks in flight are aborted and awaited. Other executions' waits go on.
 */
export async function waitForRuns(
	ctx: IExecuteFunctions,
	targets: WaitTarget[],
	settings: WaitSettings,
	failFast: boolean,
): Promise<WaitOutcome[]> {
	const credentials = await ctx.getCredentials(CREDENTIAL_TYPE);
	const scope = limitScope(normalizeBaseUrl(ctx.getNode(), credentials.baseUrl), credentials);
	return await watcherFor(scope).wait(ctx, targets, settings, failFast);
}
