/**
 * The one place that waits on runs: "Workflow → Submit Document" with "Wait for
 * Completion", and "Run → Wait for Completion".
 *
 * All runs of a node execution are waited on together. A small dispatcher keeps, for each
 * run, when it is next due for a check, and starts due checks while fewer than
 * `concurrency` requests are in flight, so a batch takes about as long as its slowest
 * run, not the sum of all runs, and never floods the API. Each run's check interval
 * starts short and grows by ×1.5 up to a cap; `Retry-After` is obeyed by the transport
 * (per rate limit, shared by all checks); the execution's cancel signal ends the wait
 * within a fraction of a second.
 *
 * Only `completed`, `failed` and `cancelled` are final; every other status, known or not,
 * keeps the run waiting, unless the caller asked to stop at `review` or `waiting`. A run
 * id that answers 404 is checked again at short intervals during a grace period (the run
 * may not exist yet); after it the document's status explains why the run never started.
 */
import type { IBinaryKeyData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { fetchRunOutputIfAvailable } from './runOutput';
import { ExecutionCancelledError, apiRequest, cancelSignalOf, pause } from '../../shared/transport';

export const FINAL_STATUSES = ['completed', 'failed', 'cancelled'];

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

export const DEFAULT_WAIT_SETTINGS: WaitSettings = {
	maxWaitMs: 60 * 60_000,
	stopAt: [],
	includeOutput: false,
	binaryPropertyName: 'data',
	onFailed: 'error',
	onTimeLimit: 'error',
	concurrency: 10,
	initialIntervalMs: 1000,
	maxIntervalMs: 20_000,
	notFoundGraceMs: 30_000,
};

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
	nextAt: number;
	intervalMs: number;
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

/**
 * Waits for every target's run to be final (or to stop early, time out, or turn out never
 * to have started) and returns one outcome per target, in the order given.
 * With `failFast` the first item error ends the whole wait and is thrown.
 */
export async function waitForRuns(
	ctx: IExecuteFunctions,
	targets: WaitTarget[],
	settings: WaitSettings,
	failFast: boolean,
): Promise<WaitOutcome[]> {
	const signal = cancelSignalOf(ctx);
	const begin = Date.now();
	const outcomes = new Map<number, WaitOutcome>();
	const states: RunState[] = targets.map((target) => ({
		target,
		runId: target.runId,
		nextAt: Math.max(begin, (target.submittedAt ?? begin) + settings.initialIntervalMs),
		intervalMs: settings.initialIntervalMs,
		deadline: settings.maxWaitMs > 0 ? begin + settings.maxWaitMs : undefined,
		checks: 0,
		replacedRunIds: [],
	}));
	const byState = new Map<RunState, number>(states.map((state, index) => [state, index]));
	const queue = [...states];
	const concurrency = Math.max(1, Math.floor(settings.concurrency));
	let inFlight = 0;
	let failure: Error | undefined;

	const finish = (state: RunState, outcome: WaitOutcome) => {
		outcomes.set(byState.get(state)!, outcome);
		if (outcome.error && failFast && !failure) failure = outcome.error;
	};

	const runCheck = async (state: RunState) => {
		try {
			const done = await checkOnce(ctx, state, settings);
			if (done) finish(state, done);
			else queue.push(state);
		} catch (error) {
			if (error instanceof ExecutionCancelledError || signal?.aborted) {
				failure ??= new NodeOperationError(ctx.getNode(), 'The execution was cancelled while waiting for runs', {
					itemIndex: state.target.itemIndex,
				});
				return;
			}
			finish(state, { itemIndex: state.target.itemIndex, error: error as Error });
		} finally {
			inFlight--;
		}
	};

	while ((queue.length > 0 || inFlight > 0) && !failure) {
		if (signal?.aborted) {
			failure = new NodeOperationError(ctx.getNode(), 'The execution was cancelled while waiting for runs');
			break;
		}
		const now = Date.now();
		queue.sort((a, b) => a.nextAt - b.nextAt);
		while (inFlight < concurrency && queue.length > 0 && queue[0].nextAt <= now) {
			const state = queue.shift()!;
			inFlight++;
			void runCheck(state);
		}
		// Short slices: a finished check frees its slot within 100 ms, and cancellation is
		// noticed at once (pause ends on the signal).
		const nextDue = queue.length > 0 ? queue[0].nextAt - now : 100;
		const slice = inFlight >= concurrency ? 50 : Math.min(100, Math.max(5, nextDue));
		try {
			await pause(slice, signal);
		} catch {
			failure = new NodeOperationError(ctx.getNode(), 'The execution was cancelled while waiting for runs');
		}
	}
	// Checks still in flight after a failure end on their own (their requests carry the
	// cancel signal; `runCheck` never rejects); their results are dropped.
	if (failure) throw failure;
	return states.map((_state, index) => outcomes.get(index)!);
}

/** One check of one run. Returns the outcome when the wait for it is over, else schedules the next check. */
async function checkOnce(ctx: IExecuteFunctions, state: RunState, settings: WaitSettings): Promise<WaitOutcome | undefined> {
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
		},
	);
	const now = Date.now();

	if (response.statusCode === 404) {
		state.notFoundSince ??= now;
		if (now - state.notFoundSince < settings.notFoundGraceMs) {
			// The run may simply not exist yet: check again soon.
			return schedule(ctx, state, settings, Math.min(settings.initialIntervalMs, 2000), now);
		}
		return await explainMissingRun(ctx, state, settings, response.correlationId, now);
	}

	state.notFoundSince = undefined;
	const run = response.body ?? {};
	state.lastRun = run;
	const status = typeof run.status === 'string' ? run.status : '';

	if (status === 'completed') return { itemIndex, item: await finalItem(ctx, state, run, 'completed', settings) };
	if (status === 'failed' || status === 'cancelled') {
		if (settings.onFailed === 'error') return { itemIndex, error: failedRunError(ctx, state, run, status) };
		const detail = runErrorText(run);
		return {
			itemIndex,
			item: await finalItem(ctx, state, run, status, settings, `Run ${state.runId} ${status === 'failed' ? 'failed' : 'was cancelled'}${detail ? ` (${detail})` : ''}.`),
		};
	}
	if (settings.stopAt.includes(status)) {
		const why =
			status === 'review'
				? 'it waits for a person to finish a review task in the review queue (this can take hours)'
				: 'it is parked on a Wait node (this can take hours)';
		return {
			itemIndex,
			item: await finalItem(ctx, state, run, 'stoppedEarly', settings, `Stopped waiting: run ${state.runId} is "${status}": ${why}. Use Run → Wait for Completion later to wait for the rest.`),
		};
	}
	// Not final (known or unknown status): keep waiting, a little longer each time.
	state.intervalMs = Math.min(settings.maxIntervalMs, Math.max(settings.initialIntervalMs, state.intervalMs * 1.5));
	return schedule(ctx, state, settings, state.intervalMs, now);
}

/** Schedules the next check, or ends the wait at the time limit. */
function schedule(ctx: IExecuteFunctions, state: RunState, settings: WaitSettings, delayMs: number, now: number): WaitOutcome | undefined {
	if (state.deadline !== undefined) {
		if (now >= state.deadline) return timeLimitOutcome(ctx, state, settings);
		// One last check exactly at the limit.
		state.nextAt = Math.min(now + delayMs, state.deadline);
		return undefined;
	}
	state.nextAt = now + delayMs;
	return undefined;
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
): Promise<WaitOutcome | undefined> {
	const { itemIndex } = state.target;
	const documentId = state.target.documentId;
	const grace = describeDuration(settings.notFoundGraceMs);
	if (!documentId) {
		return {
			itemIndex,
			error: new NodeOperationError(ctx.getNode(), `Run ${state.runId} was not found (404) for ${grace}`, {
				itemIndex,
				description: `Check the Run ID: it must be a run of the API key's organization (and of the credential's workspace, if one is set). A run that never started also stays 404; look up its document (Document → Get) to see why.${correlationId ? `\nCorrelation ID: ${correlationId}` : ''}`,
			}),
		};
	}

	const { body: document } = await apiRequest<IDataObject>(ctx, {
		method: 'GET',
		path: '/documents/{documentId}',
		pathParams: { documentId },
		itemIndex,
	});
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
			return {
				itemIndex,
				error: new NodeOperationError(ctx.getNode(), message, {
					itemIndex,
					description: `Document ${documentId} has the status "${documentStatus}". Look at it in the service. To route such documents instead of failing, set "On Failed or Cancelled Run" to "Return an Item".`,
				}),
			};
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
		return { itemIndex, item: { json, pairedItem: { item: itemIndex } } };
	}

	// The run may exist under another id (the document's top-level runs, newest first).
	const { body: runs } = await apiRequest<{ data?: IDataObject[] }>(ctx, {
		method: 'GET',
		path: '/documents/{documentId}/runs',
		pathParams: { documentId },
		itemIndex,
	});
	const other = (runs?.data ?? []).find((run) => typeof run.id === 'string' && run.id !== state.runId);
	if (other) {
		state.replacedRunIds.push(state.runId);
		state.runId = other.id as string;
		state.notFoundSince = undefined;
		return schedule(ctx, state, settings, 0, now);
	}
	// Still nothing to explain it: keep checking at the longest interval until the time limit.
	state.intervalMs = settings.maxIntervalMs;
	return schedule(ctx, state, settings, settings.maxIntervalMs, now);
}
