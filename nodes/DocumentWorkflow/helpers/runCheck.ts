/**
 * One check of one run, and what its answer means for the item the wait returns: final,
 * stopped early, at its time limit, a run id still 404 (and then why), or pending; and the
 * types a wait shares with its callers. The watcher (`runWatcher.ts`) decides when to check.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { waitOutputFields } from './runOutput';
import { apiRequest } from '../../shared/transport';

/** The wait's options as the node reads them (`../actions/waitOptions.ts`, where each is described), times in ms. */
export interface WaitSettings {
	maxWaitMs: number;
	stopAt: string[];
	includeOutput: boolean;
	outputNodeId?: string;
	binaryPropertyName: string;
	onFailed: 'error' | 'item';
	onTimeLimit: 'error' | 'item';
	concurrency: number;
	initialIntervalMs: number;
	maxIntervalMs: number;
	notFoundGraceMs: number;
}

export interface WaitTarget {
	itemIndex: number;
	runId: string;
	/** Known from the trigger result; lets a run that never starts be explained. */
	documentId?: string;
	/** The API workflow the run belongs to, where known: its earlier runs tell how long this one may take. */
	workflowId?: string;
	/** Fields to keep in the output item (e.g. the trigger result's `reference`). */
	base?: IDataObject;
	/** When the run was created or submitted (ms since epoch); unknown for runs waited on by id. */
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

/** The only final statuses; every other status, known or not, keeps the run waiting. */
export const FINAL_STATUSES = ['completed', 'failed', 'cancelled'];

/** What the wait knows of one run between its checks. */
export interface RunState {
	target: WaitTarget;
	runId: string;
	/** Local time the run's age counts from. */
	submittedAt: number;
	/** A next check this module decides itself (a 404 within the grace period, a replaced run id), not the scheduler. */
	pinnedAt?: number;
	deadline?: number;
	notFoundSince?: number;
	lastRun?: IDataObject;
	/** The run id the trigger gave, where the run turned up under another id. */
	triggerRunId?: string;
}

const describeDuration = (ms: number): string =>
	ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 100) / 10} s`;

function runErrorText(run: IDataObject): string {
	const error = run.error as IDataObject | undefined;
	if (!error || typeof error !== 'object') return '';
	return [error.code, error.message]
		.filter((part) => typeof part === 'string' && part !== '')
		.join(': ');
}

function errorOutcome(
	ctx: IExecuteFunctions,
	state: RunState,
	message: string,
	description: string,
): WaitOutcome {
	const { itemIndex } = state.target;
	return {
		itemIndex,
		error: new NodeOperationError(ctx.getNode(), message, { itemIndex, description }),
	};
}

/** An item of a run the wait ended on without a final run answer (its time limit; a run that never started). */
function plainOutcome(state: RunState, json: IDataObject): WaitOutcome {
	const { itemIndex } = state.target;
	return {
		itemIndex,
		item: { json: { ...(state.target.base ?? {}), ...json }, pairedItem: { item: itemIndex } },
	};
}

function documentIdOf(state: RunState): string | null {
	const fromRun = state.lastRun?.documentId;
	return typeof fromRun === 'string' ? fromRun : (state.target.documentId ?? null);
}

/** One check of one run: its outcome when the wait for it is over, else undefined (pending). */
export async function checkOnce(
	ctx: IExecuteFunctions,
	state: RunState,
	settings: WaitSettings,
	signal: AbortSignal,
): Promise<WaitOutcome | undefined> {
	const { itemIndex } = state.target;
	const response = await apiRequest<IDataObject>(
		ctx,
		{ method: 'GET', path: '/runs/{runId}', pathParams: { runId: state.runId }, itemIndex },
		{
			acceptStatuses: [404],
			retry: state.deadline ? { deadline: state.deadline + 60_000 } : undefined,
			// A check that hangs (a stalled connection) must not hold the wait far past its limit.
			timeoutMs: state.deadline
				? Math.min(300_000, Math.max(5_000, state.deadline - Date.now() + 5_000))
				: undefined,
			signal,
		},
	);
	const now = Date.now();
	if (response.statusCode === 404) {
		state.notFoundSince ??= now;
		// Within the grace period the run may simply not exist yet: check again soon.
		if (now - state.notFoundSince < settings.notFoundGraceMs)
			return pendingOrTimeLimit(
				ctx,
				state,
				settings,
				now,
				Math.min(settings.initialIntervalMs, 2000),
			);
		return await explainMissingRun(ctx, state, settings, response.correlationId, now, signal);
	}
	state.notFoundSince = undefined;
	const run = response.body ?? {};
	state.lastRun = run;
	const status = typeof run.status === 'string' ? run.status : '';
	const finalOutcome = async (
		outcome: WaitOutcomeKind,
		message?: string,
	): Promise<WaitOutcome> => ({
		itemIndex,
		item: await finalItem(ctx, state, run, outcome, settings, signal, message),
	});
	if (status === 'completed') return await finalOutcome('completed');
	if (status === 'failed' || status === 'cancelled') {
		const detail = runErrorText(run);
		if (settings.onFailed === 'error') return failedRunError(ctx, state, status, detail);
		return await finalOutcome(
			status,
			`Run ${state.runId} ${status === 'failed' ? 'failed' : 'was cancelled'}${detail ? ` (${detail})` : ''}.`,
		);
	}
	if (settings.stopAt.includes(status)) {
		const why =
			status === 'review'
				? 'it waits for a person to finish a review task in the review queue (this can take hours)'
				: 'it is parked on a Wait node (this can take hours)';
		return await finalOutcome(
			'stoppedEarly',
			`Stopped waiting: run ${state.runId} is "${status}": ${why}. Use Run → Wait for Completion later to wait for the rest.`,
		);
	}
	// Not final (known or unknown status): keep waiting; the scheduler says when to look again.
	return pendingOrTimeLimit(ctx, state, settings, now);
}

/** The run is not final: pending (undefined; with `pinDelayMs`, checked again after that long, not when the scheduler says), or at its time limit. */
function pendingOrTimeLimit(
	ctx: IExecuteFunctions,
	state: RunState,
	settings: WaitSettings,
	now: number,
	pinDelayMs?: number,
): WaitOutcome | undefined {
	if (state.deadline !== undefined && now >= state.deadline)
		return timeLimitOutcome(ctx, state, settings);
	if (pinDelayMs !== undefined)
		state.pinnedAt = Math.min(now + pinDelayMs, state.deadline ?? Infinity);
	return undefined;
}

function timeLimitOutcome(
	ctx: IExecuteFunctions,
	state: RunState,
	settings: WaitSettings,
): WaitOutcome {
	const status =
		typeof state.lastRun?.status === 'string' ? state.lastRun.status : 'not found (404)';
	const message = `Run ${state.runId} was still ${status === 'not found (404)' ? status : `"${status}"`} when the time limit of ${describeDuration(settings.maxWaitMs)} was reached.`;
	if (settings.onTimeLimit === 'error') {
		return errorOutcome(
			ctx,
			state,
			message,
			'The run is not final yet; it goes on in the service. Raise "Max Wait Time" in the options (0 waits without limit), stop at Review/Waiting, or set "On Time Limit" to "Return an Item" to route such runs and wait for them later with Run → Wait for Completion.',
		);
	}
	const waitOutcome: WaitOutcomeKind = 'timeLimit';
	return plainOutcome(state, {
		...(state.lastRun ?? {}),
		runId: state.runId,
		documentId: documentIdOf(state),
		status: state.lastRun?.status ?? null,
		waitOutcome,
		finished: false,
		message,
	});
}

function failedRunError(
	ctx: IExecuteFunctions,
	state: RunState,
	status: string,
	detail: string,
): WaitOutcome {
	const [what, why] =
		status === 'failed'
			? ['failed', 'The run stopped on an error in the service']
			: ['was cancelled', 'The run was cancelled in the service'];
	const documentId = documentIdOf(state);
	const description = `${why}${documentId ? ` (document ${documentId})` : ''}. Look at the run in the service to see why. To route such runs in the workflow instead of failing, set "On Failed or Cancelled Run" to "Return an Item".`;
	return errorOutcome(
		ctx,
		state,
		`Run ${state.runId} ${what}${detail ? `: ${detail}` : ''}`,
		description,
	);
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
	if (state.triggerRunId !== undefined) json.triggerRunId = state.triggerRunId;
	if (!settings.includeOutput || run.status !== 'completed')
		return { json, pairedItem: { item: itemIndex } };
	const output = await waitOutputFields(ctx, state.runId, {
		nodeId: settings.outputNodeId,
		binaryPropertyName: settings.binaryPropertyName,
		itemIndex,
		signal,
	});
	Object.assign(json, output.json);
	return output.binary
		? { json, binary: output.binary, pairedItem: { item: itemIndex } }
		: { json, pairedItem: { item: itemIndex } };
}

/** The run id stayed 404 past the grace period: the document says why, or its run list shows the run under another id. */
async function explainMissingRun(
	ctx: IExecuteFunctions,
	state: RunState,
	settings: WaitSettings,
	correlationId: string | undefined,
	now: number,
	signal: AbortSignal,
): Promise<WaitOutcome | undefined> {
	const { itemIndex, documentId } = state.target;
	const grace = describeDuration(settings.notFoundGraceMs);
	const correlation = correlationId ? `\nCorrelation ID: ${correlationId}` : '';
	if (!documentId) {
		return errorOutcome(
			ctx,
			state,
			`Run ${state.runId} was not found (404) for ${grace}`,
			`Check the Run ID: it must be a run of the API key's organization (and of the credential's workspace, if one is set). A run that never started also stays 404; look up its document (Document → Get) to see why.${correlation}`,
		);
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
			return errorOutcome(
				ctx,
				state,
				message,
				`Document ${documentId} has the status "${documentStatus}". Look at it in the service. To route such documents instead of failing, set "On Failed or Cancelled Run" to "Return an Item".`,
			);
		}
		const waitOutcome: WaitOutcomeKind = documentStatus === 'held' ? 'held' : 'notStarted';
		return plainOutcome(state, {
			runId: state.runId,
			documentId,
			status: documentStatus,
			document,
			waitOutcome,
			finished: documentStatus !== 'held',
			message,
		});
	}
	// The run may exist under another id (the document's top-level runs, newest first).
	const { body: runs } = await apiRequest<{ data?: IDataObject[] }>(
		ctx,
		{ method: 'GET', path: '/documents/{documentId}/runs', pathParams: { documentId }, itemIndex },
		{ signal },
	);
	const other = (runs?.data ?? []).find(
		(run) => typeof run.id === 'string' && run.id !== state.runId,
	);
	if (other) {
		state.triggerRunId ??= state.runId;
		state.runId = other.id as string;
		state.notFoundSince = undefined;
		return pendingOrTimeLimit(ctx, state, settings, now, 0);
	}
	// Nothing explains it and no run turned up: waiting on would never end (with Max Wait 0, not at all).
	const message = `Run ${state.runId} was not found (404) for ${grace}, and document ${documentId} (status "${documentStatus}") lists no run.`;
	const description = `The run never started, or it is not visible to this API key (another organization or workspace). Look at the document in the service. If its runs take longer than ${grace} to appear, raise "Not Found Grace Period".${correlation}`;
	if (settings.onFailed === 'error') return errorOutcome(ctx, state, message, description);
	const waitOutcome: WaitOutcomeKind = 'notStarted';
	return plainOutcome(state, {
		runId: state.runId,
		documentId,
		status: documentStatus,
		document,
		waitOutcome,
		finished: false,
		message,
	});
}
