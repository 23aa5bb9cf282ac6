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
		ctx.logger?.debug('Run index unavailable; using 0 in the idempotency key', { error: (error as Error).message });
		return 0;
	}
}

export function automaticIdempotencyKey(ctx: IExecuteFunctions, itemIndex: number): string {
	const node = ctx.getNode();
	const executionId = ctx.getExecutionId() ?? '';
	const workflowId = ctx.getWorkflow().id ?? '';
	return uuidFromText(
		['n8n-nodes-document-workflow', 'trigger', workflowId, executionId, node.id ?? node.name, runIndexOf(ctx, itemIndex), itemIndex].join('\u0000'),
	);
}

const STORE_KEY = 'documentWorkflowTriggerResults';

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

export function rememberTriggerResult(ctx: IExecuteFunctions, key: string, result: IDataObject): void {
	store(ctx)[key.toLowerCase()] = result;
}

export function recalledTriggerResult(ctx: IExecuteFunctions, key: string): IDataObject | undefined {
	const found = store(ctx)[key.toLowerCase()];
	return found && typeof found === 'object' ? { ...(found as IDataObject) } : undefined;
}
