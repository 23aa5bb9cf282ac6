/**
 * The entry to waiting on runs: "Workflow → Submit Document" with "Wait for Completion", and
 * "Run → Wait for Completion", as a node or as an AI agent's tool. Each call hands its runs to
 * the watcher of its API key (`runWatcher.ts`) and gets one outcome per run back; the types
 * the wait shares with its callers live here.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { watcherFor } from './runWatcher';
import { CREDENTIAL_TYPE, limitScope, normalizeBaseUrl } from '../../shared/transport';

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

/**
 * Waits for every target's run to be final (or to stop early, time out, or never start); one
 * outcome per target, in order. With `failFast` the first item error ends this wait and is
 * thrown once its checks in flight are aborted and awaited. Other executions' waits go on.
 */
export async function waitForRuns(ctx: IExecuteFunctions, targets: WaitTarget[], settings: WaitSettings, failFast: boolean): Promise<WaitOutcome[]> {
	const credentials = await ctx.getCredentials(CREDENTIAL_TYPE);
	const scope = limitScope(normalizeBaseUrl(ctx.getNode(), credentials.baseUrl), credentials);
	return await watcherFor(scope).wait(ctx, targets, settings, failFast);
}
