/**
 * Waiting on runs (`openWaitForRuns`): one watcher per API key in this n8n process sends the checks
 * of every execution's wait and the reads of the event list, and hands each answer to the policy
 * (`policy.ts`), which decides everything else. A check goes with its own execution's context; a
 * read made for several waits has a deadline of its own, and no wait ever waits for it.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';
import { readEventPage } from '../../shared/eventList';
import { LruMap } from '../../shared/lruMap';
import {
	CREDENTIAL_TYPE,
	KEYS_KEPT,
	PAUSE_SLICE_MS,
	cancelSignalOf,
	contextEndingWith,
	limitScope,
	normalizeBaseUrl,
} from '../../shared/transport';
import { checkRun, maxWaitOutcome } from './check';
import { firstListPage, nextListPage } from './listWindow';
import type { Answer, Run, Wait, WaitOutcome, WaitSettings, WaitTarget } from './policy';
import { BUSY_SLICE_MS, Policy, TURN_SHARE, maxWaitReached } from './policy';

/** An execution's wait: `over` ends its checks; `open` while runs may still join it. */
interface Execution {
	readonly ctx: IExecuteFunctions;
	readonly failFast: boolean;
	readonly over: AbortController;
	open: boolean;
	failure?: Error;
	settle(): void;
}

/**
 * A wait that runs join as their documents are uploaded (`add`) until `close`. `fail` ends it
 * with an error of the caller's (an upload's): its checks end, `outcomes` rejects with it.
 * `failed`: the wait ended with an error (without Continue On Fail, an item's).
 */
export interface OpenWait {
	add(targets: WaitTarget[]): void;
	close(): void;
	fail(error: Error): void;
	readonly failed: boolean;
	/** One outcome per target added, in order; settles once the wait has ended. */
	readonly outcomes: Promise<WaitOutcome[]>;
}

const loopFailed = (ctx: IExecuteFunctions, error: Error) =>
	new NodeOperationError(ctx.getNode(), `Waiting for runs stopped: ${error.message}`, {
		description:
			'An unexpected error ended the wait of every execution of this API key; the runs go on ' +
			'in the service. Run the execution again to read them; if it happens again, report it ' +
			'with this message.',
	});

const cancelled = (ctx: IExecuteFunctions) =>
	new NodeOperationError(ctx.getNode(), 'The execution was cancelled while waiting for runs');

export class Watcher {
	readonly policy = new Policy();
	running = false;
	private readonly executions = new Map<Wait, Execution>();
	private read?: { controller: AbortController; deadline: number };
	/** Each check in flight: what cuts it off, and whether it left before its run's Max Wait Time. */
	private readonly checks = new Map<Run, { cut: AbortController; beforeMaxWait: boolean }>();
	/** An error the policy threw while taking an answer: the next turn throws it. */
	private defect?: Error;

	open(ctx: IExecuteFunctions, settings: WaitSettings, failFast: boolean): OpenWait {
		const wait = this.policy.begin([], settings, Date.now());
		let settle!: () => void;
		const done = new Promise<void>((resolve) => (settle = resolve));
		const over = new AbortController();
		const execution: Execution = { ctx, failFast, over, open: true, settle };
		this.executions.set(wait, execution);
		const outcomes = done.then(() => {
			if (execution.failure) throw execution.failure;
			return wait.runs.map((run) => run.outcome!);
		});
		// Awaited once the uploads are done; a failure before is no unhandled rejection.
		outcomes.catch(() => {});
		if (!this.running) void this.loop();
		return {
			add: (targets) => {
				if (this.executions.has(wait)) this.policy.add(wait, targets, Date.now());
			},
			close: () => {
				execution.open = false;
			},
			fail: (error) => {
				execution.failure ??= error;
			},
			get failed() {
				return !!execution.failure;
			},
			outcomes,
		};
	}

	private async loop(): Promise<void> {
		this.running = true;
		this.defect = undefined;
		try {
			await this.turns();
		} catch (error) {
			// A defect here must not leave every wait of this API key waiting for ever: each ends.
			for (const [wait, execution] of this.executions) {
				execution.failure ??= loopFailed(execution.ctx, error as Error);
				execution.over.abort();
				this.policy.waits.delete(wait);
				execution.settle();
			}
			this.executions.clear();
		}
		// Nothing waits: a read still in flight is of no use (and is no failure of the list).
		this.read?.controller.abort();
		this.read = undefined;
		this.running = false;
	}

	/** Until no wait is left: ends the waits that are over, sends what the policy says, sleeps. */
	private async turns(): Promise<void> {
		for (;;) {
			if (this.defect) throw this.defect;
			const turnAt = Date.now();
			// Waits end here, after a sleep: when the last one ends the loop does, leaving no timer.
			for (const [wait, execution] of this.executions) this.endIfOver(wait, execution, turnAt);
			if (this.executions.size === 0) break;
			if (this.read && Date.now() >= this.read.deadline) this.read.controller.abort();
			const now = Date.now();
			const { checks, readListUntil, wakeAt } = this.policy.next(now);
			if (readListUntil !== undefined)
				void this.readList(now, readListUntil).catch((error: Error) => (this.defect ??= error));
			for (const run of checks) void this.check(run);
			const busy = this.read || [...this.executions.keys()].some((wait) => wait.inFlight > 0);
			// A turn over thousands of runs takes milliseconds: the loop keeps to its share of the CPU.
			const slice = Math.max(BUSY_SLICE_MS, (Date.now() - turnAt) * (1 / TURN_SHARE - 1));
			const idle = Math.min(PAUSE_SLICE_MS, Math.max(slice, wakeAt - Date.now()));
			await sleep(busy ? slice : idle);
		}
	}

	/** Ends the wait once its runs are done, or it failed, was cancelled or is past Max Wait Time. */
	private endIfOver(wait: Wait, execution: Execution, now: number): void {
		const { ctx } = execution;
		if (!execution.failure && cancelSignalOf(ctx)?.aborted) execution.failure = cancelled(ctx);
		for (const run of wait.runs) {
			const reached = maxWaitReached(run, now);
			// At its Max Wait Time a check sent before makes way for the last one; past it, that one
			// ends too.
			const check = this.checks.get(run);
			if (check && (reached === 'passed' || (reached === 'reached' && check.beforeMaxWait)))
				check.cut.abort();
			if (reached === 'passed' && !run.outcome)
				this.policy.maxWaitPassed(run, maxWaitOutcome(ctx, run), now);
		}
		// Without Continue On Fail any item's error fails the wait: decided here only, where the wait
		// ends, so that no error (a check's, Max Wait Time's) can end it as an item.
		if (execution.failFast)
			execution.failure ??= wait.runs.find((run) => run.outcome?.error)?.outcome?.error;
		if (execution.failure) execution.over.abort();
		// Its checks end at once when aborted; they are awaited, so nothing of the wait outlives it.
		const waiting = execution.open || wait.runs.some((run) => !run.outcome);
		if (wait.inFlight > 0 || (!execution.failure && waiting)) return;
		this.policy.waits.delete(wait);
		this.executions.delete(wait);
		execution.settle();
	}

	private async check(run: Run): Promise<void> {
		const execution = this.executions.get(run.wait)!;
		const { ctx, over } = execution;
		const cancel = cancelSignalOf(ctx);
		const cut = new AbortController();
		const signal = AbortSignal.any([over.signal, cut.signal, ...(cancel ? [cancel] : [])]);
		this.checks.set(run, { cut, beforeMaxWait: maxWaitReached(run, Date.now()) === 'no' });
		let answer: Answer | undefined;
		try {
			// A wait that ended (failed, cancelled) sends nothing more.
			if (!signal.aborted) answer = await checkRun(ctx, run, signal);
		} catch (error) {
			// Cut off (its wait ended, was cancelled, or its Max Wait Time came): no answer.
			const itemIndex = run.target.itemIndex;
			if (!signal.aborted && !execution.failure)
				answer = { kind: 'done', outcome: { itemIndex, error: error as Error } };
		} finally {
			this.checks.delete(run);
		}
		if (!answer) return this.policy.released(run);
		// A defect of the policy is no failure of the request: it ends the loop (`loop`).
		try {
			this.policy.answered(run, answer, Date.now());
		} catch (error) {
			this.defect ??= error as Error;
		}
	}

	/** One read of the list for every wait, with one of their contexts made to end with the read. */
	private async readList(now: number, deadline: number): Promise<void> {
		const [first] = this.executions.values();
		const read = (this.read = { controller: new AbortController(), deadline });
		const { signal } = read.controller;
		const ctx = contextEndingWith(first.ctx, signal);
		const { list } = this.policy;
		const onSent = (at: number) => this.policy.listSent(at);
		const limits = { retry: { deadline }, timeoutMs: deadline - now, signal, onSent };
		const { after } = list;
		const firstPage = firstListPage(list);
		let events: IDataObject[] | undefined;
		try {
			// Every page with events not seen counts (a skipped one hides its runs); the read's
			// deadline bounds the pages.
			const pages: IDataObject[] = [];
			for (let page: number | undefined = firstPage; page !== undefined; ) {
				const answer = await readEventPage(ctx, { after, page }, limits);
				pages.push(...answer.events);
				page = nextListPage(list, firstPage, page, answer, pages);
			}
			events = pages;
		} catch {
			// No `events:read` scope, a slow list: the waits go on with their own checks.
		}
		// A read abandoned (no wait left) tells nothing, and is no failure of the list.
		const current = this.read === read;
		if (current) this.read = undefined;
		this.policy.listRead(current ? events : undefined, Date.now(), current && !events);
	}
}

/** The watcher of each API key (`limitScope`); one that waits on nothing keeps what it learned. */
const watchers = new LruMap<string, Watcher>(KEYS_KEPT, (watcher) => watcher.running);

/** How many watchers are running now (one per API key waited on): none once nothing waits. */
export function activeWatcherCount(): number {
	return [...watchers.values()].filter((watcher) => watcher.running).length;
}

/**
 * A wait for runs (`OpenWait`), with the watcher every other wait of the API key shares. Once
 * closed it ends when every run added is final (or stops early, times out, or never starts);
 * with `failFast` the first item error ends it, once its checks in flight are aborted and
 * awaited. Other executions' waits go on.
 */
export async function openWaitForRuns(
	ctx: IExecuteFunctions,
	settings: WaitSettings,
	failFast: boolean,
): Promise<OpenWait> {
	const credentials = await ctx.getCredentials(CREDENTIAL_TYPE);
	const scope = limitScope(normalizeBaseUrl(ctx.getNode(), credentials.baseUrl), credentials);
	return watchers.getOrCreate(scope, () => new Watcher()).open(ctx, settings, failFast);
}
