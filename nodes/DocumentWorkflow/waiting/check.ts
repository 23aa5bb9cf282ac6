/**
 * One check of one run, and what the answer means for the item its wait returns: final,
 * stopped early, at its time limit, a run id still 404 (and then why), or pending. It changes
 * nothing it is given: the policy (`policy.ts`) takes the answer and decides what comes next.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { waitOutputFields } from '../helpers/runOutput';
import { apiRequest } from '../../shared/transport';
import type { Answer, Run, WaitOutcome } from './policy';
import { FINAL_STATUSES } from './policy';

/** How the wait ended, in every item it returns (`waitOutcome`). */
export type WaitOutcomeKind =
	| 'completed'
	| 'failed'
	| 'cancelled'
	| 'stoppedEarly'
	| 'timeLimit'
	| 'held'
	| 'notStarted';

const describeDuration = (ms: number): string =>
	ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 100) / 10} s`;

const statusOf = (answer: IDataObject | undefined): string | undefined =>
	typeof answer?.status === 'string' ? answer.status : undefined;

function errorOutcome(
	ctx: IExecuteFunctions,
	run: Run,
	message: string,
	description: string,
): WaitOutcome {
	const { itemIndex } = run.target;
	return {
		itemIndex,
		error: new NodeOperationError(ctx.getNode(), message, { itemIndex, description }),
	};
}

/** An item of a run the wait ended on without a final answer (its time limit, a run that never started). */
function plainOutcome(run: Run, json: IDataObject): WaitOutcome {
	const { itemIndex } = run.target;
	return {
		itemIndex,
		item: { json: { ...run.target.base, ...json }, pairedItem: { item: itemIndex } },
	};
}

function documentIdOf(run: Run, answer = run.lastAnswer): string | null {
	return typeof answer?.documentId === 'string'
		? answer.documentId
		: (run.target.documentId ?? null);
}

/** One check of one run: its answer for the policy, with the run's outcome when its wait for it is over. */
export async function checkRun(
	ctx: IExecuteFunctions,
	run: Run,
	signal: AbortSignal,
): Promise<Answer> {
	const { settings, maxWaitEndsAt } = run.wait;
	const { itemIndex } = run.target;
	const response = await apiRequest<IDataObject>(
		ctx,
		{ method: 'GET', path: '/runs/{runId}', pathParams: { runId: run.runId }, itemIndex },
		{ acceptStatuses: [404], signal },
	);
	const now = Date.now();
	const atLimit = maxWaitEndsAt !== undefined && now >= maxWaitEndsAt;
	if (response.statusCode === 404) {
		// Within the grace period the run may simply not exist yet.
		if (now - (run.notFoundSince ?? now) < settings.notFoundGraceMs)
			return atLimit
				? { kind: 'done', outcome: timeLimitOutcome(ctx, run, undefined, true) }
				: { kind: 'pending' };
		return await explainMissingRun(ctx, run, response.correlationId, signal);
	}
	const answer = response.body ?? {};
	const status = statusOf(answer) ?? '';
	const done = async (outcome: WaitOutcomeKind, message?: string): Promise<Answer> => ({
		kind: 'done',
		run: answer,
		outcome: { itemIndex, item: await finalItem(ctx, run, answer, outcome, signal, message) },
	});
	if (status === 'completed') return await done('completed');
	if (status === 'failed' || status === 'cancelled') {
		const error = answer.error as IDataObject | undefined;
		const detail = [error?.code, error?.message]
			.filter((part) => typeof part === 'string' && part)
			.join(': ');
		if (settings.onFailed === 'error')
			return {
				kind: 'done',
				run: answer,
				outcome: failedRunError(ctx, run, answer, status, detail),
			};
		const what = status === 'failed' ? 'failed' : 'was cancelled';
		return await done(status, `Run ${run.runId} ${what}${detail ? ` (${detail})` : ''}.`);
	}
	if (settings.stopAt.includes(status)) {
		const why =
			status === 'review'
				? 'it waits for a person to finish a review task in the review queue (this can take hours)'
				: 'it is parked on a Wait node (this can take hours)';
		return await done(
			'stoppedEarly',
			`Stopped waiting: run ${run.runId} is "${status}": ${why}. Use Run → Wait for Completion later to wait for the rest.`,
		);
	}
	// Not final (a known or unknown status): pending, unless its time is up.
	return atLimit
		? { kind: 'done', run: answer, outcome: timeLimitOutcome(ctx, run, answer) }
		: { kind: 'pending', run: answer };
}

/** The item (or error) of a run still not final at its Max Wait Time, by its last answer. */
export function timeLimitOutcome(
	ctx: IExecuteFunctions,
	run: Run,
	answer = run.lastAnswer,
	notFound = run.notFoundSince !== undefined,
): WaitOutcome {
	const status = statusOf(answer);
	const shown = status ? `"${status}"` : notFound ? 'not found (404)' : 'without an answer';
	const limit = describeDuration(run.wait.settings.maxWaitMs);
	const message = `Run ${run.runId} was still ${shown} when the time limit of ${limit} was reached.`;
	if (run.wait.settings.onTimeLimit === 'error')
		return errorOutcome(
			ctx,
			run,
			message,
			'The run is not final yet; it goes on in the service. Raise "Max Wait Time" in the options (0 waits without limit), stop at Review/Waiting, or set "On Time Limit" to "Return an Item" to route such runs and wait for them later with Run → Wait for Completion.',
		);
	const waitOutcome: WaitOutcomeKind = 'timeLimit';
	return plainOutcome(run, {
		...answer,
		runId: run.runId,
		documentId: documentIdOf(run, answer),
		status: status ?? null,
		waitOutcome,
		finished: false,
		message,
	});
}

function failedRunError(
	ctx: IExecuteFunctions,
	run: Run,
	answer: IDataObject,
	status: string,
	detail: string,
): WaitOutcome {
	const [what, why] =
		status === 'failed'
			? ['failed', 'The run stopped on an error in the service']
			: ['was cancelled', 'The run was cancelled in the service'];
	const documentId = documentIdOf(run, answer);
	const description = `${why}${documentId ? ` (document ${documentId})` : ''}. Look at the run in the service to see why. To route such runs in the workflow instead of failing, set "On Failed or Cancelled Run" to "Return an Item".`;
	return errorOutcome(
		ctx,
		run,
		`Run ${run.runId} ${what}${detail ? `: ${detail}` : ''}`,
		description,
	);
}

async function finalItem(
	ctx: IExecuteFunctions,
	run: Run,
	answer: IDataObject,
	outcome: WaitOutcomeKind,
	signal: AbortSignal,
	message?: string,
): Promise<INodeExecutionData> {
	const { itemIndex } = run.target;
	const json: IDataObject = {
		...run.target.base,
		...answer,
		runId: typeof answer.id === 'string' ? answer.id : run.runId,
		documentId: documentIdOf(run, answer),
		waitOutcome: outcome,
		finished: FINAL_STATUSES.includes(String(answer.status)),
	};
	if (message) json.message = message;
	if (run.triggerRunId !== undefined) json.triggerRunId = run.triggerRunId;
	if (!run.wait.settings.includeOutput || answer.status !== 'completed')
		return { json, pairedItem: { item: itemIndex } };
	const { outputNodeId: nodeId, binaryPropertyName } = run.wait.settings;
	const output = await waitOutputFields(ctx, run.runId, {
		nodeId,
		binaryPropertyName,
		itemIndex,
		signal,
	});
	Object.assign(json, output.json);
	return {
		json,
		...(output.binary ? { binary: output.binary } : {}),
		pairedItem: { item: itemIndex },
	};
}

/** The run id stayed 404 past the grace period: the document says why, or its run list shows the run under another id. */
async function explainMissingRun(
	ctx: IExecuteFunctions,
	run: Run,
	correlationId: string | undefined,
	signal: AbortSignal,
): Promise<Answer> {
	const { settings } = run.wait;
	const { itemIndex, documentId } = run.target;
	const grace = describeDuration(settings.notFoundGraceMs);
	const correlation = correlationId ? `\nCorrelation ID: ${correlationId}` : '';
	const done = (outcome: WaitOutcome): Answer => ({ kind: 'done', outcome });
	if (!documentId)
		return done(
			errorOutcome(
				ctx,
				run,
				`Run ${run.runId} was not found (404) for ${grace}`,
				`Check the Run ID: it must be a run of the API key's organization (and of the credential's workspace, if one is set). A run that never started also stays 404; look up its document (Document → Get) to see why.${correlation}`,
			),
		);
	const { body: document } = await apiRequest<IDataObject>(
		ctx,
		{ method: 'GET', path: '/documents/{documentId}', pathParams: { documentId }, itemIndex },
		{ signal },
	);
	const documentStatus = statusOf(document) ?? 'unknown';
	const explanations: Record<string, string> = {
		held: "the document is held: the workflow's automatic run is off, so it waits until someone runs it in the service",
		failed: 'the document failed before a run started',
		cancelled: 'the document was cancelled before a run started',
	};
	const explanation = explanations[documentStatus];
	const plain = (waitOutcome: WaitOutcomeKind, message: string, finished: boolean) =>
		done(
			plainOutcome(run, {
				...{ runId: run.runId, documentId, status: documentStatus, document },
				...{ waitOutcome, finished, message },
			}),
		);
	if (explanation) {
		const message = `Run ${run.runId} never started (404 for ${grace}): ${explanation}.`;
		if (documentStatus === 'held') return plain('held', message, false);
		if (settings.onFailed === 'item') return plain('notStarted', message, true);
		return done(
			errorOutcome(
				ctx,
				run,
				message,
				`Document ${documentId} has the status "${documentStatus}". Look at it in the service. To route such documents instead of failing, set "On Failed or Cancelled Run" to "Return an Item".`,
			),
		);
	}
	// The run may exist under another id (the document's top-level runs, newest first).
	const { body: runs } = await apiRequest<{ data?: IDataObject[] }>(
		ctx,
		{ method: 'GET', path: '/documents/{documentId}/runs', pathParams: { documentId }, itemIndex },
		{ signal },
	);
	const other = (runs?.data ?? []).find(
		(listed) => typeof listed.id === 'string' && listed.id !== run.runId,
	);
	if (other) return { kind: 'replaced', runId: String(other.id) };
	// Nothing explains it and no run turned up: waiting on would never end (with Max Wait 0, not at all).
	const message = `Run ${run.runId} was not found (404) for ${grace}, and document ${documentId} (status "${documentStatus}") lists no run.`;
	const description = `The run never started, or it is not visible to this API key (another organization or workspace). Look at the document in the service. If its runs take longer than ${grace} to appear, raise "Not Found Grace Period".${correlation}`;
	if (settings.onFailed === 'error') return done(errorOutcome(ctx, run, message, description));
	return plain('notStarted', message, false);
}
