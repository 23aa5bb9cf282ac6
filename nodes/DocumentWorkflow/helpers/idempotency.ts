/**
 * Idempotency keys for trigger requests, and the execution-scoped memory of what each key
 * returned.
 *
 * The default key is derived from the execution, the node, the node's run index (a node
 * inside a loop runs several times per execution, each time with items 0..n) and the item,
 * so n8n's "Retry On Fail" (which re-runs the node in the same execution with the same run
 * index) and the transport's own retries send the same key and never create a second
 * document, while a new execution or a new loop pass gets new keys.
 */
import { createHash } from 'node:crypto';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

/** A UUID formatted from a sha256 digest (the UUID v5 layout: version 5, RFC 4122 variant). */
export function uuidFromText(text: string): string {
	const bytes = createHash('sha256').update(text, 'utf8').digest().subarray(0, 16);
	bytes[6] = (bytes[6] & 0x0f) | 0x50;
	bytes[8] = (bytes[8] & 0x3f) | 0x80;
	const hex = bytes.toString('hex');
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The node's run index in this execution (0 unless the node runs in a loop); same for Retry On Fail. */
function runIndexOf(ctx: IExecuteFunctions, itemIndex: number): number {
	try {
		const value = ctx.getWorkflowDataProxy(itemIndex).$thisRunIndex;
		return typeof value === 'number' ? value : 0;
	} catch (error) {
		ctx.logger?.debug('Run index unavailable; using 0 in the idempotency key', {
			error: (error as Error).message,
		});
		return 0;
	}
}

export function automaticIdempotencyKey(ctx: IExecuteFunctions, itemIndex: number): string {
	const node = ctx.getNode();
	const executionId = ctx.getExecutionId() ?? '';
	const workflowId = ctx.getWorkflow().id ?? '';
	return uuidFromText(
		[
			'n8n-nodes-document-workflow',
			'trigger',
			workflowId,
			executionId,
			node.id ?? node.name,
			runIndexOf(ctx, itemIndex),
			itemIndex,
		].join('\u0000'),
	);
}

const STORE_KEY = 'documentWorkflowTriggerResults';

/**
 * What a retry needs of a trigger result, as a short tuple: the document, its run and the
 * status, plus the reference only when the API echoed something other than what was sent.
 * n8n saves the execution context with the execution, so for a batch of thousands of items
 * this stays a few dozen bytes per item however long the references or answers are.
 */
type Remembered = [
	documentId: string | null,
	runId: string | null,
	status: string | null,
	reference?: unknown,
];

/**
 * Trigger results by idempotency key, kept in the node's execution context. n8n keeps that
 * context for the whole execution, including the re-runs of "Retry On Fail", so a retry can
 * reuse what an earlier attempt got instead of asking the API again.
 */
function store(ctx: IExecuteFunctions): IDataObject {
	const context = ctx.getContext('node');
	if (!context[STORE_KEY] || typeof context[STORE_KEY] !== 'object') context[STORE_KEY] = {};
	return context[STORE_KEY] as IDataObject;
}

/** Kept for a key whose upload ran out of time: a 409 on it in a later attempt may mean "still in flight". */
const TIMED_OUT = 'timedOut';

export function rememberTimedOutUpload(ctx: IExecuteFunctions, key: string): void {
	const entries = store(ctx);
	if (!Array.isArray(entries[key.toLowerCase()])) entries[key.toLowerCase()] = TIMED_OUT;
}

export function uploadTimedOutBefore(ctx: IExecuteFunctions, key: string): boolean {
	return store(ctx)[key.toLowerCase()] === TIMED_OUT;
}

const textOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The API echoes the reference sent; an empty one comes back as null. */
const echoOf = (reference: string): string | null => (reference === '' ? null : reference);

export function rememberTriggerResult(
	ctx: IExecuteFunctions,
	key: string,
	result: IDataObject,
	sentReference: string,
): void {
	const remembered: Remembered = [
		textOrNull(result.documentId),
		textOrNull(result.runId),
		textOrNull(result.status),
	];
	if ((result.reference ?? null) !== echoOf(sentReference))
		remembered.push(result.reference ?? null);
	store(ctx)[key.toLowerCase()] = remembered;
}

/** The trigger result an earlier attempt with this key got, rebuilt from what was kept; undefined if none. */
export function recalledTriggerResult(
	ctx: IExecuteFunctions,
	key: string,
	sentReference: string,
): IDataObject | undefined {
	const found = store(ctx)[key.toLowerCase()];
	if (!Array.isArray(found)) return undefined;
	const [documentId, runId, status, reference] = found as Remembered;
	return {
		documentId,
		runId,
		status,
		reference: found.length > 3 ? (reference as IDataObject['reference']) : echoOf(sentReference),
	};
}
