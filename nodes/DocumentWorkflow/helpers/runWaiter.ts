/**
 * The one place that waits on runs: "Workflow → Submit Document" with "Wait for
 * Completion", and "Run → Wait for Completion".
 *
 * All runs of a node execution are waited on together, as one batch: `RunScheduler`
 * decides which run to check when (a few probes learn how long this batch's runs take,
 * then every other run is checked about once, when the batch is likely done), and
 * `CheckPacer` spaces the checks under the API's read rate limit. At most `concurrency`
 * checks are in flight; `Retry-After` is obeyed by the transport (per rate limit, shared by
 * all checks); the execution's cancel signal ends the wait within a fraction of a second.
 *
 * Only `completed`, `failed` and `cancelled` are final; every other status, known or not,
 * keeps the run waiting, unless the caller asked to stop at `review` or `waiting`. A run
 * id that answers 404 is checked again at short intervals during a grace period (the run
 * may not exist yet); after it the document's status explains why the run never started.
 */
import type { IBinaryKeyData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';
import { CheckPacer } from './checkPacer';
import { fetchRunOutputIfAvailable } from './runOutput';
import { RunScheduler } from './runScheduler';
import {
	CREDENTIAL_TYPE,
	ExecutionCancelledError,
	apiRequest,
	cancelSignalOf,
	limitScope,
	normalizeBaseUrl,
	rateLimitOpensAt,
} from '../../shared/transport';

export const FINAL_STATUSES = ['completed', 'failed', 'cancelled'];

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

interface RunState {
	target: WaitTarget;
	runId: string;
	/** Local time the run's age counts from. */
	submittedAt: number;
	/** A next check this module decides itself (a 404 within the grace period, a replaced run id), not the scheduler. */
	pinnedAt?: number;
	deadline?: number;
	notFoundSince?: number;
	lastRun?: IDataObject;
	checks: number;
	replacedRunIds: string[];
}

function describeDuration(ms: number): string {
	if (ms % 60_000 === 0) return `${ms / 60_000} min`;
	return `${Math.round(ms / 100) / 10} s`;
}

function runErrorText(run: IDataObject): string {
	const error = run.error as IDataObject | undefined;
	if (!error || typeof error !== 'object') return '';
	const parts = [error.code, error.message].filter((part) => typeof part === 'string' && part !== '');
	return parts.join(': ');
}

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

/** One check's answer as the scheduler needs it. */
type CheckResult = { outcome: WaitOutcome } | { pending: true };

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

/** One check of one run: its outcome when the wait for it is over, else pending. */
async function checkOnce(ctx: IExecuteFunctions, state: RunState, settings: WaitSettings, signal: AbortSignal): Promise<CheckResult> {
	const { itemIndex } = state.target;
	state.checks++;
	const response = await apiRequest<IDataObject>(
		ctx,
		{ method: 'GET', path: '/runs/{runId}', pathParams: { runId: state.runId }, itemIndex },
		{
			acceptStatuses: [404],
			retry: state.deadline ? { deadline: state.deadline + 60_000 } : undefined,
			// A check that hangs (a stalled connection) must not hold the wait far past its limit.
			timeoutMs: state.deadline ? Math.min(300_000, Math.max(5_000, state.deadline - Date.now() + 5_000)) : undefined,
			signal,
		},
	);
	const now = Date.now();

	if (response.statusCode === 404) {
		state.notFoundSince ??= now;
		if (now - state.notFoundSince < settings.notFoundGraceMs) {
			// The run may simply not exist yet: check again soon.
			return pendingOrTimeLimit(ctx, state, settings, now, Math.min(settings.initialIntervalMs, 2000));
		}
		return await explainMissingRun(ctx, state, settings, response.correlationId, now, signal);
	}

	state.notFoundSince = undefined;
	const run = response.body ?? {};
	state.lastRun = run;
	const status = typeof run.status === 'string' ? run.status : '';

	if (status === 'completed') return { outcome: { itemIndex, item: await finalItem(ctx, state, run, 'completed', settings, signal) } };
	if (status === 'failed' || status === 'cancelled') {
		if (settings.onFailed === 'error') return { outcome: { itemIndex, error: failedRunError(ctx, state, run, status) } };
		const detail = runErrorText(run);
		return {
			outcome: {
				itemIndex,
				item: await finalItem(ctx, state, run, status, settings, signal, `Run ${state.runId} ${status === 'failed' ? 'failed' : 'was cancelled'}${detail ? ` (${detail})` : ''}.`),
			},
		};
	}
	if (settings.stopAt.includes(status)) {
		const why =
			status === 'review'
				? 'it waits for a person to finish a review task in the review queue (this can take hours)'
				: 'it is parked on a Wait node (this can take hours)';
		return {
			outcome: {
				itemIndex,
				item: await finalItem(ctx, state, run, 'stoppedEarly', settings, signal, `Stopped waiting: run ${state.runId} is "${status}": ${why}. Use Run → Wait for Completion later to wait for the rest.`),
			},
		};
	}
	// Not final (known or unknown status): keep waiting; the scheduler says when to look again.
	return pendingOrTimeLimit(ctx, state, settings, now);
}

/**
 * The run is not final: pending (with `pinDelayMs`, checked again after that long rather
 * than when the scheduler says), or its time limit has come. The scheduler is told to
 * check it no later than the limit, for one last check exactly then.
 */
function pendingOrTimeLimit(ctx: IExecuteFunctions, state: RunState, settings: WaitSettings, now: number, pinDelayMs?: number): CheckResult {
	if (state.deadline !== undefined && now >= state.deadline) return { outcome: timeLimitOutcome(ctx, state, settings) };
	if (pinDelayMs !== undefined) state.pinnedAt = Math.min(now + pinDelayMs, state.deadline ?? Infinity);
	return { pending: true };
}

function timeLimitOutcome(ctx: IExecuteFunctions, state: RunState, settings: WaitSettings): WaitOutcome {
	const { itemIndex } = state.target;
	const status = typeof state.lastRun?.status === 'string' ? state.lastRun.status : 'not found (404)';
	const message = `Run ${state.runId} was still ${status === 'not found (404)' ? status : `"${status}"`} when the time limit of ${describeDuration(settings.maxWaitMs)} was reached.`;
	if (settings.onTimeLimit === 'error') {
		return {
			itemIndex,
			error: new NodeOperationError(ctx.getNode(), message, {
				itemIndex,
				description:
					'The run is not final yet; it goes on in the service. Raise "Max Wait Time" in the options (0 waits without limit), stop at Review/Waiting, or set "On Time Limit" to "Return an Item" to route such runs and wait for them later with Run → Wait for Completion.',
			}),
		};
	}
	const json: IDataObject = {
		...(state.target.base ?? {}),
		...(state.lastRun ?? {}),
		runId: state.runId,
		documentId: documentIdOf(state),
		status: state.lastRun?.status ?? null,
		waitOutcome: 'timeLimit' satisfies WaitOutcomeKind,
		finished: false,
		message,
	};
	return { itemIndex, item: { json, pairedItem: { item: itemIndex } } };
}

function documentIdOf(state: RunState): string | null {
	const fromRun = state.lastRun?.documentId;
	if (typeof fromRun === 'string') return fromRun;
	return state.target.documentId ?? null;
}

function failedRunError(ctx: IExecuteFunctions, state: RunState, run: IDataObject, status: string): NodeOperationError {
	const detail = runErrorText(run);
	const what = status === 'failed' ? 'failed' : 'was cancelled';
	return new NodeOperationError(ctx.getNode(), `Run ${state.runId} ${what}${detail ? `: ${detail}` : ''}`, {
		itemIndex: state.target.itemIndex,
		description: `${status === 'failed' ? 'The run stopped on an error in the service' : 'The run was cancelled in the service'}${
			documentIdOf(state) ? ` (document ${documentIdOf(state)})` : ''
		}. Look at the run in the service to see why. To route such runs in the workflow instead of failing, set "On Failed or Cancelled Run" to "Return an Item".`,
	});
}

async function finalItem(
	ctx: IExecuteFunctions,
	state: RunState,
	run: IDataObject,
	outcome: WaitOutcomeKind,
	settings: WaitSettings,
	signal: AbortSignal,
	message?: string,
): Promise<INodeExecutionData> {
	const { itemIndex } = state.target;
	const json: IDataObject = {
		...(state.target.base ?? {}),
		...run,
		runId: typeof run.id === 'string' ? run.id : state.runId,
		documentId: documentIdOf(state),
		waitOutcome: outcome,
		finished: FINAL_STATUSES.includes(String(run.status)),
	};
	if (message) json.message = message;
	if (state.replacedRunIds.length > 0) json.triggerRunId = state.replacedRunIds[0];
	let binary: IBinaryKeyData | undefined;
	if (settings.includeOutput && run.status === 'completed') {
		const output = await fetchRunOutputIfAvailable(ctx, state.runId, {
			nodeId: settings.outputNodeId,
			binaryPropertyName: settings.binaryPropertyName,
			itemIndex,
			signal,
		});
		if ('unavailable' in output) {
			json.output = null;
			json.outputError = output.unavailable.message;
			json.outputErrorDescription = output.unavailable.description;
		} else {
			json.outputKind = output.json.kind ?? null;
			json.outputContentType = output.json.contentType ?? null;
			json.outputFilename = output.json.filename ?? null;
			if (output.binary) {
				json.outputBinaryPropertyName = settings.binaryPropertyName;
				binary = output.binary;
			} else {
				json.output = output.json.output ?? null;
			}
		}
	}
	return binary ? { json, binary, pairedItem: { item: itemIndex } } : { json, pairedItem: { item: itemIndex } };
}

/**
 * The run id stayed 404 past the grace period. The document says why: `held` (nobody ran
 * it yet), `failed` or `cancelled` (it stopped before a run started). Otherwise its run
 * list may show the run under another id; failing that, keep waiting (slowly) to the limit.
 */
async function explainMissingRun(
	ctx: IExecuteFunctions,
	state: RunState,
	settings: WaitSettings,
	correlationId: string | undefined,
	now: number,
	signal: AbortSignal,
): Promise<CheckResult> {
	const { itemIndex } = state.target;
	const documentId = state.target.documentId;
	const grace = describeDuration(settings.notFoundGraceMs);
	if (!documentId) {
		return { outcome: {
			itemIndex,
			error: new NodeOperationError(ctx.getNode(), `Run ${state.runId} was not found (404) for ${grace}`, {
				itemIndex,
				description: `Check the Run ID: it must be a run of the API key's organization (and of the credential's workspace, if one is set). A run that never started also stays 404; look up its document (Document → Get) to see why.${correlationId ? `\nCorrelation ID: ${correlationId}` : ''}`,
			}),
		} };
	}

	const { body: document } = await apiRequest<IDataObject>(
		ctx,
		{ method: 'GET', path: '/documents/{documentId}', pathParams: { documentId }, itemIndex },
		{ signal },
	);
	const documentStatus = typeof document?.status === 'string' ? document.status : 'unknown';
	const explanations: Record<string, string> = {
		held: "the document is held: the workflow's automatic run is off, so it waits until someone runs it in the service",
		failed: 'the document failed before a run started',
		cancelled: 'the document was cancelled before a run started',
	};
	const explanation = explanations[documentStatus];
	if (explanation) {
		const message = `Run ${state.runId} never started (404 for ${grace}): ${explanation}.`;
		if (documentStatus !== 'held' && settings.onFailed === 'error') {
			return { outcome: {
				itemIndex,
				error: new NodeOperationError(ctx.getNode(), message, {
					itemIndex,
					description: `Document ${documentId} has the status "${documentStatus}". Look at it in the service. To route such documents instead of failing, set "On Failed or Cancelled Run" to "Return an Item".`,
				}),
			} };
		}
		const json: IDataObject = {
			...(state.target.base ?? {}),
			runId: state.runId,
			documentId,
			status: documentStatus,
			document,
			waitOutcome: (documentStatus === 'held' ? 'held' : 'notStarted') satisfies WaitOutcomeKind,
			finished: documentStatus !== 'held',
			message,
		};
		return { outcome: { itemIndex, item: { json, pairedItem: { item: itemIndex } } } };
	}

	// The run may exist under another id (the document's top-level runs, newest first).
	const { body: runs } = await apiRequest<{ data?: IDataObject[] }>(
		ctx,
		{ method: 'GET', path: '/documents/{documentId}/runs', pathParams: { documentId }, itemIndex },
		{ signal },
	);
	const other = (runs?.data ?? []).find((run) => typeof run.id === 'string' && run.id !== state.runId);
	if (other) {
		state.replacedRunIds.push(state.runId);
		state.runId = other.id as string;
		state.notFoundSince = undefined;
		return pendingOrTimeLimit(ctx, state, settings, now, 0);
	}
	// Still nothing to explain it: keep checking at the longest interval until the time limit.
	return pendingOrTimeLimit(ctx, state, settings, now, settings.maxIntervalMs);
}
