/**
 * Identifiers: the one way every operation checks an id before it goes into a path, and
 * the one place that names each id for people.
 */
import type { INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
	return typeof value === 'string' && UUID_PATTERN.test(value);
}

/** Human names of the identifiers, for messages. */
const ID_LABELS: Record<string, string> = {
	workflowId: 'Workflow ID',
	runId: 'Run ID',
	documentId: 'Document ID',
	reviewTaskId: 'Review Task ID',
};

export function idLabel(name: string): string {
	return ID_LABELS[name] ?? name;
}

/**
 * Returns the trimmed id, or throws an error naming the field when it is not a UUID.
 * Checked before any request, so an id like `../events` can never reach the path.
 */
export function requireUuid(node: INode, name: string, value: unknown, itemIndex?: number): string {
	const text = typeof value === 'string' ? value.trim() : value;
	if (isUuid(text)) return text.toLowerCase();
	if (text === undefined || text === null || text === '') {
		throw new NodeOperationError(node, `The ${idLabel(name)} is empty`, {
			itemIndex,
			description: `${idLabel(name)} must be a UUID like 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70. If an expression fills it, the expression found no value: check that the incoming item has that field.`,
		});
	}
	const shown = typeof value === 'string' ? `"${value.length > 60 ? value.slice(0, 60) + '…' : value}"` : String(value);
	throw new NodeOperationError(node, `The ${idLabel(name)} ${shown} is not a valid UUID`, {
		itemIndex,
		description: `${idLabel(name)} must look like 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70. Check the field or the expression that fills it; if it comes from an earlier node, make sure that node returned an id.`,
	});
}
