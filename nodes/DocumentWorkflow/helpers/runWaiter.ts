/**
 * The one place that waits on runs: "Workflow → Submit Document" with "Wait for
 * Completion", and "Run → Wait for Completion".
 *
 * All runs of a node execution are waited on together, as one batch: `RunScheduler`
 * decides which run to check when (a few probes learn how long this batch's runs take,
 * then every other run is checked about once, when the batch is likely done), and
 * `CheckPacer` spaces the checks under the API's read rate limit; what each check's answer
 * means, and the item it gives, is `runCheck.ts`'s. At most `concurrency`
 * checks are in flight; `Retry-After` is obeyed by the transport (per rate limit, shared by
 * all checks); the execution's cancel signal ends the wait within a fraction of a second.
 *
 * Only `completed`, `failed` and `cancelled` are final; every other status, known or not,
 * keeps the run waiting, unless the caller asked to stop at `review` or `waiting`. A run
 * id that answers 404 is checked again at short intervals during a grace period (the run
 * may not exist yet); after it the document's status explains why the run never started.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';
import { CheckPacer } from './checkPacer';
import type { RunState } from './runCheck';
import { FINAL_STATUSES, checkOnce } from './runCheck';
import { RunScheduler } from './runScheduler';
import {
	CREDENTIAL_TYPE,
	ExecutionCancelledError,
	cancelSignalOf,
	limitScope,
	normalizeBaseUrl,
	rateLimitOpensAt,
} from '../../shared/transport';

/**
 * The wait looks again after at most this long while checks are due or in flight: short, so
 * a slot freed by a fast API (answers in a few ms) is filled again soon.
 */
const BUSY_SLICE_MS = 5;
/** The longest the wait sleeps at once: a cancelled execution is noticed within it. */
const IDLE_SLICE_MS = 100;

export interface WaitSettings {
	/** Longest time to wait for each run, from when the wait begins; 0 waits without limit. */
	maxWaitMs: number;
	/** Non-final statuses at which to stop early and return the run (`review`, `waiting`). */
	stopAt: string[];
	includeOutput: boolean;
	outputNodeId?: string;
	/** Binary property for a binary output. */
	binaryPropertyName: string;
	/** What a failed or cancelled run (or a document that never got a run) gives. */
	onFailed: 'error' | 'item';
	/** What a run that is still not final at the time limit gives. */
	onTimeLimit: 'error' | 'item';
	/** At most this many checks in flight at once. */
	concurrency: number;
	initialIntervalMs: number;
	maxIntervalMs: number;
	/** How long a run id may answer 404 before the document is asked why. */
	notFoundGraceMs: number;
}

// The defaults are declared once, on the option fields; re-exported here for the callers of the wait.
export { DEFAULT_WAIT_SETTINGS } from '../actions/waitOptions';

export interface WaitTarget {
	itemIndex: number;
	runId: string;
	/** Known from the trigger result; lets a run that never starts be explained. */
	documentId?: string;
	/** Fields to keep in the output item (e.g. the trigger result's `reference`). */
	base?: IDataObject;
	/** When the run was created or submitted (ms since epoch); the first check is one interval after it. */
	submittedAt?: number;
}

export type WaitOutcome =
	| { itemIndex: number; item: INodeExecutionData; error?: undefined }
	| { itemIndex: number; error: Error; item?: undefined };

/** How the wait ended, in every item it returns (`waitOutcome`). */
export type WaitOutcomeKind =
	| 'completed'
	| 'failed'
	| 'cancelled'
	| 'stoppedEarly'
	| 'timeLimit'
	| 'held'
	| 'notStarted';

/** The item for a trigger result that came back `held` (no run yet). */
export function heldItem(triggerResult: IDataObject, itemIndex: number): INodeExecutionData {
	return {
		json: {
			...triggerResult,
			waitOutcome: 'held' satisfies WaitOutcomeKind,
			finished: false,
			message:
				"The document was stored but is held: the workflow's webhook trigger has its automatic-run setting off, so no run was started. It waits until someone runs it in the service; no run id exists yet. Use Document → Get Runs with this document ID later to find its run.",
		},
		pairedItem: { item: itemIndex },
	};
}

/**
 * Waits for every target's run to be final (or to stop early, time out, or turn out never
 * to have started) and returns one outcome per target, in the order given.
 * With `failFast` the first item error ends the whole wait and is thrown.
 *
 * Which run is checked when is decided by `RunScheduler` (see there why); how fast checks
 * are sent, by `CheckPacer`; at most `concurrency` checks are in flight. When the wait ends
 * early (a failure with `failFast`, or a cancelled execution) the checks still in flight
 * are aborted and awaited, so nothing of the wait outlives it.
 */
export async function waitForRuns(
	ctx: IExecuteFunctions,
	targets: WaitTarget[],
	settings: WaitSettings,
	failFast: boolean,
): Promise<WaitOutcome[]> {
	const executionSignal = cancelSignalOf(ctx);
	const over = new AbortController();
	const signal = executionSignal ? AbortSignal.any([over.signal, executionSignal]) : over.signal;
	const begin = Date.now();
	const outcomes = new Map<number, WaitOutcome>();
	const states: RunState[] = targets.map((target) => ({
		target,
		runId: target.runId,
		submittedAt: target.submittedAt ?? begin,
		deadline: settings.maxWaitMs > 0 ? begin + settings.maxWaitMs : undefined,
		checks: 0,
		replacedRunIds: [],
	}));
	const scheduler = new RunScheduler(
		states.map((state, key) => ({ key, submittedAt: state.submittedAt })),
		{ firstCheckMs: settings.initialIntervalMs, longestIntervalMs: settings.maxIntervalMs },
	);
	states.forEach((state, key) => {
		if (state.deadline !== undefined) scheduler.notLaterThan(key, state.deadline);
	});
	// Runs waited on by id: when they started is not known. Each is checked once at once; its
	// `startedOn` (the API's clock) then places it among the others, the latest started counting
	// from the start of the wait, so the sweep can follow the order in which they started.
	const startedOn = new Map<number, number>();
	let latestStart = -Infinity;
	states.forEach((state, key) => {
		if (targets[key].submittedAt === undefined) scheduler.pin(key, begin);
	});
	const learnStart = (key: number) => {
		if (targets[key].submittedAt !== undefined || startedOn.has(key)) return;
		const started = Date.parse(String(states[key].lastRun?.startedOn ?? ''));
		if (!Number.isFinite(started)) return;
		startedOn.set(key, started);
		if (started > latestStart) {
			latestStart = started;
			for (const [other, at] of startedOn) scheduler.restart(other, begin - (latestStart - at));
		} else scheduler.restart(key, begin - (latestStart - started));
	};
	const pacer = new CheckPacer();
	const readLimit = await readLimitGate(ctx);
	let lastGate = readLimit();
	const concurrency = Math.max(1, Math.floor(settings.concurrency));
	const inFlight = new Set<Promise<void>>();
	let failure: Error | undefined;

	const cancelled = (itemIndex?: number) =>
		new NodeOperationError(ctx.getNode(), 'The execution was cancelled while waiting for runs', itemIndex === undefined ? {} : { itemIndex });

	const runCheck = async (key: number) => {
		const state = states[key];
		try {
			const result = await checkOnce(ctx, state, settings, signal);
			const now = Date.now();
			pacer.answered(now);
			if ('outcome' in result) {
				outcomes.set(key, result.outcome);
				scheduler.reportDone(key, now, state.lastRun !== undefined && FINAL_STATUSES.includes(String(state.lastRun.status)));
				if (result.outcome.error && failFast) failure ??= result.outcome.error;
				return;
			}
			learnStart(key);
			if (state.pinnedAt !== undefined) scheduler.pin(key, state.pinnedAt);
			else scheduler.reportPending(key, now);
			state.pinnedAt = undefined;
			if (state.deadline !== undefined) scheduler.notLaterThan(key, state.deadline);
		} catch (error) {
			if (failure) return;
			if (error instanceof ExecutionCancelledError || executionSignal?.aborted) {
				failure = cancelled(state.target.itemIndex);
				return;
			}
			outcomes.set(key, { itemIndex: state.target.itemIndex, error: error as Error });
			scheduler.reportDone(key, Date.now(), false);
			if (failFast) failure ??= error as Error;
		}
	};

	while (scheduler.pendingCount > 0 && !failure) {
		if (executionSignal?.aborted) {
			failure = cancelled();
			break;
		}
		const now = Date.now();
		const gate = readLimit();
		if (gate > lastGate) {
			// A 429 closed the read limit: send slower from now on.
			pacer.rateLimited(now);
			lastGate = gate;
		}
		const free = concurrency - inFlight.size;
		let heldBack: number | undefined;
		if (gate <= now && free > 0) {
			// Every free slot the pacer allows is filled in one look, not one check per look.
			const allowed = Math.min(free, pacer.allowance(now));
			for (const key of scheduler.takeDue(now, allowed)) {
				pacer.sent(now);
				const check: Promise<void> = runCheck(key).finally(() => inFlight.delete(check));
				inFlight.add(check);
			}
			if (allowed < free && (scheduler.nextDueAt() ?? Infinity) <= now) heldBack = now;
		}
		pacer.heldBack(heldBack);
		if (failure) break;
		// Short slices: a finished check frees its slot within them, and a cancelled execution
		// is noticed in time. Each slice is slept whole, so no timer outlives the wait.
		let slice = BUSY_SLICE_MS;
		if (inFlight.size < concurrency) {
			const until = Math.min(scheduler.nextDueAt() ?? Infinity, Math.max(pacer.nextSendAt(), gate));
			slice = Math.min(IDLE_SLICE_MS, Math.max(BUSY_SLICE_MS, until - now));
		}
		await sleep(slice);
	}
	if (failure || executionSignal?.aborted) {
		// Abort what is still in flight (its requests and waits end at once) and let it end, so
		// no check and no timer outlives the node's execution.
		over.abort();
		await Promise.allSettled([...inFlight]);
		throw failure ?? cancelled();
	}
	await Promise.allSettled([...inFlight]);
	return states.map((_state, key) => outcomes.get(key)!);
}

/** When the read rate limit opens again (ms since epoch), as the transport keeps it for this API and key. */
async function readLimitGate(ctx: IExecuteFunctions): Promise<() => number> {
	const credentials = await ctx.getCredentials(CREDENTIAL_TYPE);
	const scope = limitScope(normalizeBaseUrl(ctx.getNode(), credentials.baseUrl), credentials);
	return () => rateLimitOpensAt(scope, 'read');
}

