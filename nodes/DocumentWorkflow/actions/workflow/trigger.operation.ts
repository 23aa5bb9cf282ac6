import type { IBinaryData, IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { mapWithConcurrency } from '../../helpers/concurrency';
import { automaticIdempotencyKey, recalledTriggerResult, rememberTriggerResult } from '../../helpers/idempotency';
import { buildMultipartBody, newBoundary, uploadFileOf } from '../../helpers/multipartUpload';
import type { WaitTarget } from '../../helpers/runWaiter';
import { DEFAULT_WAIT_SETTINGS, heldItem } from '../../helpers/runWaiter';
import { apiErrorFromResponse, apiRequest, isUuid, requireUuid } from '../../../shared/transport';
import { workflowIdField } from '../fields';
import { errorItem, withItemIndex } from '../forEachItem';
import { readWaitSettings, waitIntoOutput, waitOptionFields } from '../waitOptions';

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
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show },
		options: [
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
					{ name: 'Custom', value: 'custom', description: 'Use your own key per item, e.g. a GUID from an upstream system' },
					{ name: 'Off', value: 'off', description: 'Send no key: every attempt may create a new document, and failed uploads are not retried' },
				],
				default: 'automatic',
				description: 'The Idempotency-Key sent with each submission. The API answers a repeated key with 409 instead of creating a second document.',
			},
			{
				displayName: 'Custom Idempotency Key',
				name: 'customIdempotencyKey',
				type: 'string',
				default: '',
				placeholder: 'e.g. 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70',
				description: 'A GUID, unique per document you want created; usually an expression. Used when Idempotency Key is Custom.',
				displayOptions: { show: { idempotencyKeyMode: ['custom'] } },
			},
		],
	},
];

/** The binary to upload, or an error that names the property and lists what the item has. */
export function inputBinary(ctx: IExecuteFunctions, item: INodeExecutionData, itemIndex: number, name: string): IBinaryData {
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
		throw new NodeOperationError(ctx.getNode(), `The item has no file in binary property "${name}" to upload: Submit Document sends a file that an earlier node put into the item, never one given as a parameter`, {
			itemIndex,
			description: available.length
				? `This item's binary properties: ${available.map((n) => `"${n}"`).join(', ')}. Set "Input Binary Field" to one of them.`
				: 'This item has no binary data at all. Put a file into it first, e.g. with a Read/Write Files from Disk, HTTP Request or Form node, and set "Input Binary Field" to its property name. An AI agent cannot pass a file to this tool: run Submit Document in the workflow before the agent, or tell the user which file is needed.',
		});
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

function idempotencyKeyFor(ctx: IExecuteFunctions, itemIndex: number): string | undefined {
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const mode = (options.idempotencyKeyMode as string | undefined) ?? 'automatic';
	if (mode === 'off') return undefined;
	if (mode === 'custom') {
		const raw = String(options.customIdempotencyKey ?? '').trim();
		if (!isUuid(raw)) {
			throw new NodeOperationError(ctx.getNode(), `The custom idempotency key "${String(raw).slice(0, 60)}" is not a GUID`, {
				itemIndex,
				description:
					'The API honours only GUID keys (like 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70); any other value would silently give no protection. Set a GUID per item, or choose Automatic.',
			});
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
async function acceptedFormats(ctx: IExecuteFunctions, workflowId: string, itemIndex: number): Promise<string[] | undefined> {
	try {
		const { body } = await apiRequest<IDataObject>(
			ctx,
			{ method: 'GET', path: '/workflows/{workflowId}', pathParams: { workflowId }, itemIndex },
			{ retry: { maxRetries: 1 } },
		);
		return Array.isArray(body?.triggerFormats) ? (body.triggerFormats as string[]) : undefined;
	} catch (error) {
		ctx.logger?.debug('Could not read the workflow to list its formats', { error: (error as Error).message });
		return undefined;
	}
}

interface Submission {
	result: IDataObject;
	submittedAt: number;
}

/**
 * Submissions of this node execution by idempotency key: items that share a (custom) key
 * share one submission instead of racing each other into a 409.
 */
type SubmissionsInFlight = Map<string, Promise<Submission>>;

async function submit(
	ctx: IExecuteFunctions,
	item: INodeExecutionData,
	itemIndex: number,
	inFlight: SubmissionsInFlight,
): Promise<Submission> {
	const node = ctx.getNode();
	const workflowId = requireUuid(node, 'workflowId', ctx.getNodeParameter('workflowId', itemIndex), itemIndex);
	const binaryPropertyName = String(ctx.getNodeParameter('binaryPropertyName', itemIndex, 'data')).trim();
	const reference = String(ctx.getNodeParameter('reference', itemIndex, '') ?? '');
	const binary = inputBinary(ctx, item, itemIndex, binaryPropertyName);
	const key = idempotencyKeyFor(ctx, itemIndex);

	// Retry On Fail re-runs the node in the same execution: what this key already got is reused.
	const earlier = key ? recalledTriggerResult(ctx, key) : undefined;
	if (earlier) return { result: earlier, submittedAt: Date.now() };
	const pending = key ? inFlight.get(key) : undefined;
	if (pending) return await pending;
	const sending = send(ctx, itemIndex, workflowId, binaryPropertyName, binary, reference, key);
	if (key) inFlight.set(key, sending);
	return await sending;
}

async function send(
	ctx: IExecuteFunctions,
	itemIndex: number,
	workflowId: string,
	binaryPropertyName: string,
	binary: IBinaryData,
	reference: string,
	key: string | undefined,
): Promise<Submission> {
	const node = ctx.getNode();
	const boundary = newBoundary();
	const response = await apiRequest<IDataObject>(
		ctx,
		{
			method: 'POST',
			path: '/workflows/{workflowId}/trigger',
			pathParams: { workflowId },
			headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
			bodyFactory: async () => (await buildMultipartBody(ctx, itemIndex, binaryPropertyName, binary, reference, boundary)).body,
			rateLimit: 'trigger',
			idempotencyKey: key,
			itemIndex,
		},
		{ acceptStatuses: [400, 409] },
	);
	const where = { method: 'POST', path: `/workflows/${workflowId}/trigger`, itemIndex };
	const raw = { statusCode: response.statusCode, body: response.body, headers: response.headers };

	if (response.statusCode === 409) {
		const stored = key ? recalledTriggerResult(ctx, key) : undefined;
		if (stored) return { result: stored, submittedAt: Date.now() };
		throw apiErrorFromResponse(node, raw, where, {
			message: 'This document was already accepted by an earlier attempt with the same idempotency key (409)',
			advice: `An earlier request with Idempotency-Key ${key ?? '(none)'} was accepted (or is still being processed), for example when its response was lost to a dropped connection. No second document was created. The API does not return the earlier result for a repeated key, so this node cannot show its document ID: find the document in the service (or with Document → Get Runs / Event → Get Many, e.g. by its reference), or, to submit the file again as a new document, use a new key (a new execution gets new automatic keys).`,
		});
	}
	if (response.statusCode === 400) {
		const formats = await acceptedFormats(ctx, workflowId, itemIndex);
		const file = uploadFileOf(binary);
		const formatsText = formats
			? formats.length
				? `The workflow accepts: ${formats.join(', ')}.`
				: 'The workflow has no API trigger, so it rejects every document; add an API trigger to its graph.'
			: '';
		throw apiErrorFromResponse(node, raw, where, {
			message: 'The workflow did not accept this document (400)',
			advice: `The file "${file.fileName}" (${file.mimeType}) was rejected, usually because its format is not one the workflow's trigger accepts. ${formatsText} Convert the file, or submit it to a workflow that accepts its format.`.trim(),
		});
	}
	const result = response.body ?? {};
	if (key) rememberTriggerResult(ctx, key, result);
	return { result, submittedAt: Date.now() };
}

export async function execute(this: IExecuteFunctions, items: INodeExecutionData[]): Promise<INodeExecutionData[]> {
	const continueOnFail = this.continueOnFail();
	const waitForCompletion = this.getNodeParameter('waitForCompletion', 0, false) as boolean;
	const options = this.getNodeParameter('options', 0, {}) as IDataObject;
	const binaryPropertyName = String(this.getNodeParameter('binaryPropertyName', 0, 'data')).trim();
	const settings = readWaitSettings(this, waitForCompletion ? options : { concurrency: options.concurrency }, binaryPropertyName);

	// 1. Submit every item (at most `concurrency` uploads at once).
	const inFlight: SubmissionsInFlight = new Map();
	const submitted = await mapWithConcurrency(
		items.length,
		settings.concurrency ?? DEFAULT_WAIT_SETTINGS.concurrency,
		async (itemIndex) => await submit(this, items[itemIndex], itemIndex, inFlight),
		!continueOnFail,
	);
	if (submitted.firstError) throw withItemIndex(this, submitted.firstError.error, submitted.firstError.index);

	const output: Array<INodeExecutionData | undefined> = new Array(items.length).fill(undefined);
	const targets: WaitTarget[] = [];
	submitted.results.forEach((entry, itemIndex) => {
		if (!entry) return;
		if ('error' in entry) {
			output[itemIndex] = errorItem(entry.error, itemIndex);
			return;
		}
		const { result, submittedAt } = entry.value;
		if (!waitForCompletion) {
			output[itemIndex] = { json: result, pairedItem: { item: itemIndex } };
		} else if (result.status === 'held') {
			output[itemIndex] = heldItem(result, itemIndex);
		} else if (typeof result.runId !== 'string' || !result.runId) {
			output[itemIndex] = {
				json: {
					...result,
					waitOutcome: 'notStarted',
					finished: false,
					message: `The submission was accepted with status "${String(result.status)}" but no run ID, so there is no run to wait for. Use Document → Get Runs with this document ID later to find its run.`,
				},
				pairedItem: { item: itemIndex },
			};
		} else {
			targets.push({
				itemIndex,
				runId: result.runId,
				documentId: typeof result.documentId === 'string' ? result.documentId : undefined,
				base: result,
				submittedAt,
			});
		}
	});

	// 2. Wait for all runs together.
	await waitIntoOutput(this, targets, settings, output);
	return output.filter((item): item is INodeExecutionData => item !== undefined);
}
