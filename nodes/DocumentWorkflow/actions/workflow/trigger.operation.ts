import type {
	IBinaryData,
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { mapWithConcurrency } from '../../helpers/concurrency';
import {
	automaticIdempotencyKey,
	recalledTriggerResult,
	rememberTimedOutUpload,
	rememberTriggerResult,
	uploadTimedOutBefore,
} from '../../helpers/idempotency';
import type { MultipartUpload } from '../../helpers/multipartUpload';
import { multipartUpload, uploadTimeoutMs } from '../../helpers/multipartUpload';
import type { WaitOutcomeKind } from '../../waiting/check';
import type { OpenWait } from '../../waiting/loop';
import type { WaitTarget } from '../../waiting/policy';
import type { ApiErrorOverrides, ApiResponse } from '../../../shared/transport';
import { apiErrorFromResponse, apiRequest, isUuid, requireUuid } from '../../../shared/transport';
import { optionsCollection, workflowIdField } from '../fields';
import { errorItem, withItemIndex } from '../forEachItem';
import { openWait, outcomesIntoOutput, readWaitSettings, waitOptionFields } from '../waitOptions';

const show = { resource: ['workflow'], operation: ['trigger'] };

export const description: INodeProperties[] = [
	workflowIdField(show),
	{
		displayName: 'Input Binary Field',
		name: 'binaryPropertyName',
		type: 'string',
		required: true,
		default: 'data',
		placeholder: 'e.g. data',
		hint: 'The name of the input binary field containing the file to be uploaded',
		description:
			"The item's binary property holding the file to submit (its file name and media type are sent with it). The file must come from an earlier node; an AI agent cannot pass one as a parameter. With Include Output, a file output is put into the binary property of this name.",
		displayOptions: { show },
	},
	{
		displayName: 'Reference',
		name: 'reference',
		type: 'string',
		default: '',
		placeholder: 'e.g. invoice-2024-0815',
		description:
			'Optional text stored with the document and echoed back in the result and on the run, e.g. an ID from your own system to match results to their source',
		displayOptions: { show },
	},
	{
		displayName: 'Wait for Completion',
		name: 'waitForCompletion',
		type: 'boolean',
		default: false,
		description:
			'Whether to wait until the run is completed, failed or cancelled and return the finished run (optionally with its output) instead of the submission receipt. All items are submitted first, then waited on together.',
		displayOptions: { show },
	},
	optionsCollection(show, [
		...waitOptionFields(true),
		{
			displayName: 'Idempotency Key',
			name: 'idempotencyKeyMode',
			type: 'options',
			options: [
				{
					name: 'Automatic',
					value: 'automatic',
					description:
						'Derived from the execution, this node and the item, so Retry On Fail and network retries never submit the same item twice',
				},
				{
					name: 'Custom',
					value: 'custom',
					description: 'Use your own key per item, e.g. a GUID from an upstream system',
				},
				{
					name: 'Off',
					value: 'off',
					description:
						'Send no key: every attempt may create a new document, so an upload whose answer was lost is not retried',
				},
			],
			default: 'automatic',
			description:
				'The Idempotency-Key sent with each submission. The API answers a repeated key with 409 instead of creating a second document.',
		},
		{
			displayName: 'Custom Idempotency Key',
			name: 'customIdempotencyKey',
			type: 'string',
			default: '',
			placeholder: 'e.g. 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70',
			description:
				'A GUID, unique per document you want created; usually an expression. Used when Idempotency Key is Custom.',
			displayOptions: { show: { idempotencyKeyMode: ['custom'] } },
		},
		{
			displayName: 'Upload Timeout (Seconds)',
			name: 'uploadTimeoutSeconds',
			type: 'number',
			typeOptions: { minValue: 0 },
			default: 0,
			description:
				'How long one upload attempt may take until the API answers. 0 sizes it to the file: 5 minutes plus 8 seconds per MB (about 1 Mbit/s), so a large file on a slow link is not cut off.',
		},
	]),
];

/** The binary to upload, or an error that names the property and lists what the item has. */
export function inputBinary(
	ctx: IExecuteFunctions,
	item: INodeExecutionData,
	itemIndex: number,
	name: string,
): IBinaryData {
	const available = Object.keys(item.binary ?? {});
	let binary = item.binary?.[name];
	if (!binary) {
		// n8n's "combined" binary mode keeps files inside the item's JSON: its helper finds them.
		try {
			binary = ctx.helpers.assertBinaryData(itemIndex, name);
		} catch (error) {
			ctx.logger?.debug('No binary found by n8n either', { error: (error as Error).message });
		}
	}
	if (!binary) {
		throw new NodeOperationError(
			ctx.getNode(),
			`The item has no file in binary property "${name}" to upload: Submit Document sends a file that an earlier node put into the item, never one given as a parameter`,
			{
				itemIndex,
				description: available.length
					? `This item's binary properties: ${available.map((n) => `"${n}"`).join(', ')}. Set "Input Binary Field" to one of them.`
					: 'This item has no binary data at all. Put a file into it first, e.g. with a Read/Write Files from Disk, HTTP Request or Form node, and set "Input Binary Field" to its property name. An AI agent cannot pass a file to this tool: run Submit Document in the workflow before the agent, or tell the user which file is needed.',
			},
		);
	}
	const empty = binary.bytes === 0 || (!binary.id && (binary.data ?? '') === '');
	if (empty) {
		throw new NodeOperationError(ctx.getNode(), `The file in binary property "${name}" is empty`, {
			itemIndex,
			description: `The file${binary.fileName ? ` "${binary.fileName}"` : ''} has 0 bytes; the API needs a document. Check the node that produced it.`,
		});
	}
	return binary;
}

function idempotencyKeyFor(
	ctx: IExecuteFunctions,
	itemIndex: number,
	options: IDataObject,
): string | undefined {
	const mode = (options.idempotencyKeyMode as string | undefined) ?? 'automatic';
	if (mode === 'off') return undefined;
	if (mode === 'custom') {
		const raw = String(options.customIdempotencyKey ?? '').trim();
		if (!isUuid(raw)) {
			throw new NodeOperationError(
				ctx.getNode(),
				`The custom idempotency key "${String(raw).slice(0, 60)}" is not a GUID`,
				{
					itemIndex,
					description:
						'The API honours only GUID keys (like 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70); any other value would silently give no protection. Set a GUID per item, or choose Automatic.',
				},
			);
		}
		return raw.toLowerCase();
	}
	if (mode !== 'automatic') {
		throw new NodeOperationError(ctx.getNode(), `"${mode}" is not an idempotency key mode`, {
			itemIndex,
			description: 'Choose Automatic, Custom or Off.',
		});
	}
	return automaticIdempotencyKey(ctx, itemIndex);
}

/** Lists a workflow's accepted formats for an error message; undefined if it cannot be read. */
async function acceptedFormats(
	ctx: IExecuteFunctions,
	workflowId: string,
	itemIndex: number,
): Promise<string[] | undefined> {
	try {
		const { body } = await apiRequest<IDataObject>(
			ctx,
			{ method: 'GET', path: '/workflows/{workflowId}', pathParams: { workflowId }, itemIndex },
			{ retry: { maxRetries: 1 } },
		);
		return Array.isArray(body?.triggerFormats) ? (body.triggerFormats as string[]) : undefined;
	} catch (error) {
		ctx.logger?.debug('Could not read the workflow to list its formats', {
			error: (error as Error).message,
		});
		return undefined;
	}
}

/** One item's submission, read once from the item and the node's parameters. */
interface ItemSubmission {
	itemIndex: number;
	workflowId: string;
	binary: IBinaryData;
	reference: string;
	/** Undefined when Idempotency Key is Off. */
	idempotencyKey?: string;
	/** 0: sized to the file. */
	uploadTimeoutSeconds: number;
}

function readSubmission(
	ctx: IExecuteFunctions,
	item: INodeExecutionData,
	itemIndex: number,
): ItemSubmission {
	const workflowId = requireUuid(
		ctx.getNode(),
		'workflowId',
		ctx.getNodeParameter('workflowId', itemIndex),
		itemIndex,
	);
	const binaryPropertyName = String(
		ctx.getNodeParameter('binaryPropertyName', itemIndex, 'data'),
	).trim();
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	return {
		itemIndex,
		workflowId,
		binary: inputBinary(ctx, item, itemIndex, binaryPropertyName),
		reference: String(ctx.getNodeParameter('reference', itemIndex, '') ?? ''),
		idempotencyKey: idempotencyKeyFor(ctx, itemIndex, options),
		uploadTimeoutSeconds: Math.max(0, Number(options.uploadTimeoutSeconds ?? 0) || 0),
	};
}

interface Submitted {
	result: IDataObject;
	submittedAt: number;
}

/**
 * Submissions of this node execution by idempotency key: items that share a (custom) key
 * share one submission instead of racing each other into a 409.
 */
type SubmissionsInFlight = Map<string, Promise<Submitted>>;

async function submit(
	ctx: IExecuteFunctions,
	submission: ItemSubmission,
	inFlight: SubmissionsInFlight,
): Promise<Submitted> {
	const key = submission.idempotencyKey;
	// Retry On Fail re-runs the node in the same execution: what this key already got is reused.
	const earlier = key ? recalledTriggerResult(ctx, key, submission.reference) : undefined;
	if (earlier) return { result: earlier, submittedAt: Date.now() };
	const pending = key ? inFlight.get(key) : undefined;
	if (pending) return await pending;
	const sending = send(ctx, submission);
	if (key) inFlight.set(key, sending);
	return await sending;
}

async function send(ctx: IExecuteFunctions, submission: ItemSubmission): Promise<Submitted> {
	const { itemIndex, workflowId, idempotencyKey: key } = submission;
	const upload = await multipartUpload(ctx, submission.binary, submission.reference);
	const timeoutMs =
		submission.uploadTimeoutSeconds > 0
			? submission.uploadTimeoutSeconds * 1000
			: uploadTimeoutMs(upload.fileBytes);
	const response = await apiRequest<IDataObject>(
		ctx,
		{
			method: 'POST',
			path: '/workflows/{workflowId}/trigger',
			pathParams: { workflowId },
			headers: { 'Content-Type': upload.contentType },
			bodyFactory: upload.body,
			rateLimit: 'trigger',
			idempotencyKey: key,
			itemIndex,
		},
		{
			acceptStatuses: [400, 409],
			timeoutMs,
			// A later attempt (or a Retry On Fail of this node) may then meet the key still held by this one.
			onTimedOut: key ? () => rememberTimedOutUpload(ctx, key) : undefined,
		},
	);

	if (response.statusCode === 409) {
		const stored = key ? recalledTriggerResult(ctx, key, submission.reference) : undefined;
		if (stored) return { result: stored, submittedAt: Date.now() };
		throw repeatedKeyError(ctx, submission, response, timeoutMs);
	}
	if (response.statusCode === 400)
		throw await rejectedFormatError(ctx, submission, upload, response);
	const result = response.body ?? {};
	if (key) rememberTriggerResult(ctx, key, result, submission.reference);
	return { result, submittedAt: Date.now() };
}

/** What a 409 on a repeated key means for the document: accepted, or possibly still in the API's hands. */
type RepeatedKeyState = 'accepted' | 'inFlight';

/** `waitOutcome` of an item whose submission ended in a 409, by what the 409 means. */
const REPEATED_KEY_OUTCOMES: Record<RepeatedKeyState, string> = {
	accepted: 'alreadySubmitted',
	inFlight: 'submissionInFlight',
};

function repeatedKeyState(ctx: IExecuteFunctions, key: string | undefined): RepeatedKeyState {
	// After our own time-out (in this request, or in an earlier run of this node in this
	// execution) the first attempt may still be uploading or being processed: its key is then
	// held (409) though no document may exist yet. A connection lost otherwise means the API
	// either accepted the request or released the key.
	return key !== undefined && uploadTimedOutBefore(ctx, key) ? 'inFlight' : 'accepted';
}

function repeatedKeyError(
	ctx: IExecuteFunctions,
	submission: ItemSubmission,
	response: ApiResponse<IDataObject>,
	timeoutMs: number,
) {
	const key = submission.idempotencyKey ?? '(none)';
	const state = repeatedKeyState(ctx, submission.idempotencyKey);
	const overrides =
		state === 'inFlight'
			? {
					message:
						'An earlier attempt with the same idempotency key may still be in progress (409)',
					advice: `The upload with Idempotency-Key ${key} got no answer within ${Math.round(timeoutMs / 1000)} s, and when it was sent again the API still held the key. The first attempt may still be uploading or being processed: it may yet create the document, or fail and free the key. No document ID is known yet, and no second document can be created with this key. Run the item again in a few minutes with the same key (a Retry On Fail with a wait of a few minutes does this): it is submitted if the first attempt failed, and reported as already accepted if it succeeded. If uploads of this size take longer than ${Math.round(timeoutMs / 1000)} s, raise Options → Upload Timeout.`,
				}
			: {
					message:
						'This document was already accepted by an earlier attempt with the same idempotency key (409)',
					advice: `An earlier request with Idempotency-Key ${key} was accepted, for example when its response was lost to a dropped connection. No second document was created. The API does not return the earlier result for a repeated key, so this node cannot show its document ID: find the document in the service (or with Document → Get Runs / Event → Get Many, e.g. by its reference), or, to submit the file again as a new document, use a new key (a new execution gets new automatic keys).`,
				};
	const error = submissionError(ctx, submission, response, overrides);
	// In the error's details (shown in n8n and kept in error items) so a workflow can branch on it.
	if (error.errorResponse)
		Object.assign(error.errorResponse, {
			submission: state,
			idempotencyKey: submission.idempotencyKey ?? null,
		});
	return error;
}

async function rejectedFormatError(
	ctx: IExecuteFunctions,
	submission: ItemSubmission,
	upload: MultipartUpload,
	response: ApiResponse<IDataObject>,
) {
	const formats = await acceptedFormats(ctx, submission.workflowId, submission.itemIndex);
	const formatsText = formats
		? formats.length
			? `The workflow accepts: ${formats.join(', ')}.`
			: 'The workflow has no API trigger, so it rejects every document; add an API trigger to its graph.'
		: '';
	return submissionError(ctx, submission, response, {
		message: 'The workflow did not accept this document (400)',
		advice:
			`The file "${upload.file.fileName}" (${upload.file.mimeType}) was rejected, usually because its format is not one the workflow's trigger accepts. ${formatsText} Convert the file, or submit it to a workflow that accepts its format.`.trim(),
	});
}

/** The error for a trigger answer the node does not take as a success, with this submission's place. */
function submissionError(
	ctx: IExecuteFunctions,
	submission: ItemSubmission,
	response: ApiResponse<IDataObject>,
	overrides: ApiErrorOverrides,
) {
	return apiErrorFromResponse(
		ctx.getNode(),
		{ statusCode: response.statusCode, body: response.body, headers: response.headers },
		{
			method: 'POST',
			path: `/workflows/${submission.workflowId}/trigger`,
			itemIndex: submission.itemIndex,
		},
		overrides,
	);
}

/** An error item for a failed submission; a 409 also says what it means for the document. */
function submissionErrorItem(
	error: unknown,
	itemIndex: number,
	waitForCompletion: boolean,
): INodeExecutionData {
	const item = errorItem(error, itemIndex);
	const state = (error as { errorResponse?: IDataObject })?.errorResponse?.submission as
		| RepeatedKeyState
		| undefined;
	if (state && state in REPEATED_KEY_OUTCOMES) {
		item.json.submission = state;
		if (waitForCompletion) item.json.waitOutcome = REPEATED_KEY_OUTCOMES[state];
	}
	return item;
}

/** The item for a trigger result that came back `held` (no run yet). */
function heldItem(triggerResult: IDataObject, itemIndex: number): INodeExecutionData {
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

/** A submission's result as its item, or (with Wait for Completion and a run) what to wait on. */
function settleSubmission(
	ctx: IExecuteFunctions,
	entry: { value: Submitted } | { error: unknown },
	itemIndex: number,
	waitForCompletion: boolean,
): INodeExecutionData | WaitTarget {
	if ('error' in entry) return submissionErrorItem(entry.error, itemIndex, waitForCompletion);
	const { result, submittedAt } = entry.value;
	if (!waitForCompletion) return { json: result, pairedItem: { item: itemIndex } };
	if (result.status === 'held') return heldItem(result, itemIndex);
	if (typeof result.runId !== 'string' || !result.runId)
		return {
			json: {
				...result,
				waitOutcome: 'notStarted',
				finished: false,
				message: `The submission was accepted with status "${String(result.status)}" but no run ID, so there is no run to wait for. Use Document → Get Runs with this document ID later to find its run.`,
			},
			pairedItem: { item: itemIndex },
		};
	return {
		itemIndex,
		runId: result.runId,
		documentId: typeof result.documentId === 'string' ? result.documentId : undefined,
		workflowId: String(ctx.getNodeParameter('workflowId', itemIndex, '')),
		base: result,
		submittedAt,
	};
}

/**
 * The parts the items are uploaded in, [from, to): all at once without waiting; with it, parts
 * doubling from `concurrency` items (the first waited on soon, few waits in all), the last taking
 * whatever is left once that is at most twice its size (no small part at the end).
 */
export function uploadParts(
	count: number,
	concurrency: number,
	waitForCompletion: boolean,
): Array<[number, number]> {
	const parts: Array<[number, number]> = [];
	let size = waitForCompletion ? Math.max(1, Math.floor(concurrency)) : count;
	for (let from = 0; from < count; from += size, size *= 2) {
		const to = count - from <= 2 * size ? count : from + size;
		parts.push([from, to]);
		if (to === count) break;
	}
	return parts;
}

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const continueOnFail = this.continueOnFail();
	const waitForCompletion = this.getNodeParameter('waitForCompletion', 0, false) as boolean;
	const options = this.getNodeParameter('options', 0, {}) as IDataObject;
	const binaryPropertyName = String(this.getNodeParameter('binaryPropertyName', 0, 'data')).trim();
	const settings = readWaitSettings(
		this,
		waitForCompletion ? options : { concurrency: options.concurrency },
		binaryPropertyName,
	);

	// Submit every item, at most `concurrency` uploads at once. With Wait for Completion the items
	// go in parts, whose runs join one wait as each part is uploaded: the first runs are read
	// while later documents still upload.
	const output: Array<INodeExecutionData | undefined> = new Array(items.length).fill(undefined);
	const inFlight: SubmissionsInFlight = new Map();
	let waiting: OpenWait | undefined;
	let firstTarget: number | undefined;
	try {
		for (const [from, to] of uploadParts(items.length, settings.concurrency, waitForCompletion)) {
			const submitted = await mapWithConcurrency(
				to - from,
				settings.concurrency,
				async (offset) => {
					// A run that failed meanwhile fails the node: no more documents are uploaded.
					if (waiting?.failed) throw new Error('The wait failed');
					const itemIndex = from + offset;
					return await submit(this, readSubmission(this, items[itemIndex], itemIndex), inFlight);
				},
				!continueOnFail,
			);
			const targets: WaitTarget[] = [];
			submitted.results.forEach((entry, offset) => {
				const itemIndex = from + offset;
				const settled = entry && settleSubmission(this, entry, itemIndex, waitForCompletion);
				if (settled && 'json' in settled) output[itemIndex] = settled;
				else if (settled) targets.push(settled);
			});
			if (waiting?.failed) break;
			const { firstError } = submitted;
			if (firstError) throw withItemIndex(this, firstError.error, from + firstError.index);
			if (targets.length === 0) continue;
			waiting ??= await openWait(this, settings);
			firstTarget ??= targets[0].itemIndex;
			waiting.add(targets);
		}
	} catch (error) {
		// An upload's error (or any other) ends the wait begun: the runs waited on so far are let
		// go, and nothing of the wait outlives the node.
		const failure = withItemIndex(this, error, firstTarget ?? 0);
		if (!waiting) throw failure;
		waiting.fail(failure);
	}
	if (waiting) {
		waiting.close();
		await outcomesIntoOutput(this, waiting, output, firstTarget ?? 0);
	}
	return output.filter((item): item is INodeExecutionData => item !== undefined);
}
