/**
 * The entry to waiting on runs: "Workflow → Submit Document" with "Wait for Completion", and
 * "Run → Wait for Completion", as a node or as an AI agent's tool. Each call hands its runs to
 * the watcher of its API key (`runWatcher.ts`) and gets one outcome per run back.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { watcherFor } from './runWatcher';
import { CREDENTIAL_TYPE, limitScope, normalizeBaseUrl } from '../../shared/transport';

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

export type WaitOutcome = { itemIndex: number; item: INodeExecutionData; error?: undefined } | { itemIndex: number; error: Error; item?: undefined };

/** How the wait ended, in every item it returns (`waitOutcome`). */
export type WaitOutcomeKind = 'completed' | 'failed' | 'cancelled' | 'stoppedEarly' | 'timeLimit' | 'held' | 'notStarted';

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
