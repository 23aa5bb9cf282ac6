/**
 * Identifiers: the one way every operation checks an id before it goes into a path or a
 * query, and the one place that names each id for people (field labels and messages).
 */
import type { INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
	return typeof value === 'string' && UUID_PATTERN.test(value);
}

interface IdKind {
	/** The field's label in the editor, also used in messages. */
	label: string;
	/** What the id names, for the field's description. */
	what: string;
	/** A message that replaces the generic one when the value is not a UUID. */
	notUuid?: (shown: string) => { message: string; description: string };
}

/** Every id the nodes take, by parameter name. The labels are fixed by saved workflows and tests. */
export const ID_KINDS = {
	workflowId: { label: 'Workflow ID', what: 'workflow' },
	runId: { label: 'Run ID', what: 'run' },
	documentId: { label: 'Document ID', what: 'document' },
	reviewTaskId: { label: 'Review Task ID', what: 'review task' },
	after: {
		label: 'After Event ID',
		what: 'event',
		notUuid: (shown) => ({
			message: `"After Event ID" must be an event ID (a UUID), not "${shown.slice(0, 60)}"`,
			description: 'Use the "id" of an event returned earlier, or leave the filter empty.',
		}),
	},
} satisfies Record<string, IdKind>;

export type IdName = keyof typeof ID_KINDS;

/** A name that is no known id (e.g. a typo in a path template) is shown as it is. */
const kindOf = (name: string): IdKind =>
	(ID_KINDS as Record<string, IdKind>)[name] ?? { label: name, what: name };

export function idLabel(name: IdName): string {
	return kindOf(name).label;
}

function isEmpty(value: unknown): boolean {
	return value === undefined || value === null || value === '';
}

/**
 * Returns the trimmed, lower-cased id, or throws an error naming the field when it is not a
 * UUID. Checked before any request, so an id like `../events` can never reach the path.
 */
export function requireUuid(node: INode, name: string, value: unknown, itemIndex?: number): string {
	const text = typeof value === 'string' ? value.trim() : value;
	if (isUuid(text)) return text.toLowerCase();
	const kind = kindOf(name);
	if (isEmpty(text)) {
		throw new NodeOperationError(node, `The ${kind.label} is empty`, {
			itemIndex,
			description: `${kind.label} must be a UUID like 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70. If an expression fills it, the expression found no value: check that the incoming item has that field.`,
		});
	}
	if (kind.notUuid) {
		const { message, description } = kind.notUuid(String(text));
		throw new NodeOperationError(node, message, { itemIndex, description });
	}
	const shown =
		typeof value === 'string'
			? `"${value.length > 60 ? value.slice(0, 60) + '…' : value}"`
			: String(value);
	throw new NodeOperationError(node, `The ${kind.label} ${shown} is not a valid UUID`, {
		itemIndex,
		description: `${kind.label} must look like 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70. Check the field or the expression that fills it; if it comes from an earlier node, make sure that node returned an id.`,
	});
}

/** An optional id (a filter): undefined when empty, else checked like `requireUuid`. */
export function optionalUuid(
	node: INode,
	name: string,
	value: unknown,
	itemIndex?: number,
): string | undefined {
	if (isEmpty(typeof value === 'string' ? value.trim() : value)) return undefined;
	return requireUuid(node, name, value, itemIndex);
}
