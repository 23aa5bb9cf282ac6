/**
 * One check of one run, and what the answer means for the item its wait returns: final,
 * stopped early, at its Max Wait Time, a run id still 404 (and then why), or pending. It changes
 * nothing it is given: the policy (`policy.ts`) takes the answer and decides what comes next.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { waitOutputFields } from '../helpers/runOutput';
import { apiRequest } from '../../shared/transport';
import type { Answer, Run, WaitOutcome } from './policy';
import { FINAL_STATUSES, maxWaitReached } from './policy';

/** How the wait ended, in every item it returns (`waitOutcome`): at a final status, or else. */
type FinalStatus = 'completed' | 'failed' | 'cancelled';
const ROUTE_FAILED = 'set "On Failed or Cancelled Run" to "Return an Item"';
export type WaitOutcomeKind = FinalStatus | 'stoppedEarly' | 'timeLimit' | 'held' | 'notStarted';

const duration = (ms: number): string =>
	ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 100) / 10} s`;
const statusOf = (answer?: IDataObject) =>
	typeof answer?.status === 'string' ? answer.status : undefined;
const documentIdOf = (run: Run, answer = run.lastAnswer) =>
	typeof answer?.documentId === 'string' ? answer.documentId : (run.target.documentId ?? null);

/** The run's item (`json` over its trigger result), or with `description` an error of `message`. */
function ended(ctx: IExecuteFunctions, run: Run, json: IDataObject, description?: string) {
	const { itemIndex } = run.target;
	if (description !== undefined) {
		const message = String(json.message);
		const error = new NodeOperationError(ctx.getNode(), message, { itemIndex, description });
		return { itemIndex, error };
	}
	const item = { json: { ...run.target.base, ...json }, pairedItem: { item: itemIndex } };
	return { itemIndex, item };
}

/** One check of one run: its answer for the policy, with its outcome once its wait is over. */
export async function checkRun(
	ctx: IExecuteFunctions,
	run: Run,
	signal: AbortSignal,
): Promise<Answer> {
	const { settings } = run.wait;
	const { itemIndex } = run.target;
	const pathParams = { runId: run.runId };
	const request = { method: 'GET' as const, path: '/runs/{runId}', pathParams, itemIndex };
	const options = { acceptStatuses: [404], signal };
	const { outputNodeId: nodeId, binaryPropertyName } = settings;
	const fields = { nodeId, binaryPropertyName, itemIndex, signal };
	// An event listed the run completed: its output is read beside its status, one wait for both.
	const early = settings.includeOutput && run.completedListed;
	const output = early ? waitOutputFields(ctx, run.runId, fields) : undefined;
	output?.catch(() => {}); // used only if the status read says completed
	const response = await apiRequest<IDataObject>(ctx, request, options);
	const now = Date.now();
	const maxWaitNow = maxWaitReached(run, now) !== 'no';
	if (response.statusCode === 404) {
		// Within the grace period the run may simply not exist yet.
		if (now - (run.notFoundSince ?? now) >= settings.notFoundGraceMs)
			return await explainMissingRun(ctx, run, response.correlationId, signal);
		return maxWaitNow
			? { kind: 'done', outcome: maxWaitOutcome(ctx, run, undefined, true) }
			: { kind: 'pending' };
	}
	const answer = response.body ?? {};
	const status = statusOf(answer) ?? '';
	const done = async (waitOutcome: WaitOutcomeKind, message?: string): Promise<Answer> => {
		const json: IDataObject = { ...answer, runId: answer.id ?? run.runId };
		json.documentId = documentIdOf(run, answer);
		Object.assign(json, { waitOutcome, finished: FINAL_STATUSES.includes(status) }, { message });
		if (!message) delete json.message;
		if (run.triggerRunId !== undefined) json.triggerRunId = run.triggerRunId;
		const { item } = ended(ctx, run, json) as { item: INodeExecutionData };
		if (status === 'completed' && settings.includeOutput) {
			const read = await (output ?? waitOutputFields(ctx, run.runId, fields));
			Object.assign(item.json, read.json);
			if (read.binary) item.binary = read.binary;
		}
		return { kind: 'done', run: answer, outcome: { itemIndex, item } };
	};
	if (status === 'completed') return await done('completed');
	if (status === 'failed' || status === 'cancelled') {
		const error = answer.error as IDataObject | undefined;
		const parts = [error?.code, error?.message].filter((part) => typeof part === 'string' && part);
		const detail = parts.join(': ');
		const what = status === 'failed' ? 'failed' : 'was cancelled';
		if (settings.onFailed === 'item')
			return await done(status, `Run ${run.runId} ${what}${detail ? ` (${detail})` : ''}.`);
		const why = status === 'failed' ? 'stopped on an error' : 'was cancelled';
		const documentId = documentIdOf(run, answer);
		const message = `Run ${run.runId} ${what}${detail ? `: ${detail}` : ''}`;
		const description =
			`The run ${why} in the service${documentId ? ` (document ${documentId})` : ''}. Look at ` +
			`the run in the service to see why. To route such runs in the workflow instead of ` +
			`failing, ${ROUTE_FAILED}.`;
		return { kind: 'done', run: answer, outcome: ended(ctx, run, { message }, description) };
	}
	if (settings.stopAt.includes(status)) {
		const why =
			status === 'review'
				? 'it waits for a person to finish a review task in the review queue (this can take hours)'
				: 'it is parked on a Wait node (this can take hours)';
		const message =
			`Stopped waiting: run ${run.runId} is "${status}": ${why}. Use Run → Wait for ` +
			'Completion later to wait for the rest.';
		return await done('stoppedEarly', message);
	}
	// Not final (a known or unknown status): pending, unless its time is up.
	if (!maxWaitNow) return { kind: 'pending', run: answer };
	return { kind: 'done', run: answer, outcome: maxWaitOutcome(ctx, run, answer) };
}

/** The item (or error) of a run still not final at its Max Wait Time, by its last answer. */
export function maxWaitOutcome(
	ctx: IExecuteFunctions,
	run: Run,
	answer = run.lastAnswer,
	notFound = run.notFoundSince !== undefined,
): WaitOutcome {
	const status = statusOf(answer);
	const shown = status ? `"${status}"` : notFound ? 'not found (404)' : 'without an answer';
	const message =
		`Run ${run.runId} was still ${shown} when the time limit of ` +
		`${duration(run.wait.settings.maxWaitMs)} was reached.`;
	if (run.wait.settings.onTimeLimit === 'error')
		return ended(
			ctx,
			run,
			{ message },
			'The run is not final yet; it goes on in the service. Raise "Max Wait Time" in the ' +
				'options (0 waits without limit), stop at Review/Waiting, or set "On Time Limit" to ' +
				'"Return an Item" to route such runs and wait for them later with Run → Wait for ' +
				'Completion.',
		);
	const documentId = documentIdOf(run, answer);
	const json = { ...answer, runId: run.runId, documentId, status: status ?? null };
	return ended(ctx, run, { ...json, waitOutcome: 'timeLimit', finished: false, message });
}

/** A run id 404 past the grace period: its document says why, or lists it under another id. */
async function explainMissingRun(
	ctx: IExecuteFunctions,
	run: Run,
	correlationId: string | undefined,
	signal: AbortSignal,
): Promise<Answer> {
	const { settings } = run.wait;
	const { itemIndex, documentId } = run.target;
	const grace = duration(settings.notFoundGraceMs);
	const correlation = correlationId ? `\nCorrelation ID: ${correlationId}` : '';
	const done = (json: IDataObject, description?: string): Answer => ({
		kind: 'done',
		outcome: ended(ctx, run, { runId: run.runId, documentId, ...json }, description),
	});
	if (!documentId)
		return done(
			{ message: `Run ${run.runId} was not found (404) for ${grace}` },
			"Check the Run ID: it must be a run of the API key's organization (and of the " +
				"credential's workspace, if one is set). A run that never started also stays 404; " +
				`look up its document (Document → Get) to see why.${correlation}`,
		);
	const get = { method: 'GET' as const, pathParams: { documentId }, itemIndex };
	const read = async <T>(path: string) =>
		(await apiRequest<T>(ctx, { ...get, path }, { signal })).body;
	const document = await read<IDataObject>('/documents/{documentId}');
	const status = statusOf(document) ?? 'unknown';
	const explanation = {
		held:
			"the document is held: the workflow's automatic run is off, so it waits until someone " +
			'runs it in the service',
		failed: 'the document failed before a run started',
		cancelled: 'the document was cancelled before a run started',
	}[status];
	const plain = { status, document, finished: status !== 'held' };
	if (explanation) {
		const message = `Run ${run.runId} never started (404 for ${grace}): ${explanation}.`;
		if (status === 'held' || settings.onFailed === 'item')
			return done({ ...plain, waitOutcome: status === 'held' ? 'held' : 'notStarted', message });
		return done(
			{ message },
			`Document ${documentId} has the status "${status}". Look at it in the service. To ` +
				`route such documents instead of failing, ${ROUTE_FAILED}.`,
		);
	}
	// The run may exist under another id (the document's top-level runs, newest first).
	const runs = await read<{ data?: IDataObject[] }>('/documents/{documentId}/runs');
	const other = runs?.data?.find((o) => typeof o.id === 'string' && o.id !== run.runId);
	if (other) return { kind: 'replaced', runId: String(other.id) };
	// Nothing explains it and no run turned up: waiting on would never end (with a Max Wait Time
	// of 0, ever).
	const message =
		`Run ${run.runId} was not found (404) for ${grace}, and document ${documentId} ` +
		`(status "${status}") lists no run.`;
	const description =
		'The run never started, or it is not visible to this API key (another organization or ' +
		'workspace). Look at the document in the service. If its runs take longer than ' +
		`${grace} to appear, raise "Not Found Grace Period".${correlation}`;
	if (settings.onFailed === 'error') return done({ message }, description);
	return done({ ...plain, finished: false, waitOutcome: 'notStarted', message });
}
