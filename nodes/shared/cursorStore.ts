/**
 * Where both triggers keep their cursor (`eventCursor.ts`): in the node's static data, which
 * n8n keeps under the node's name, and a copy by node id in the workflow's static data, so a
 * renamed trigger finds its place. The state names the node that wrote it. Loading never
 * changes static data; storing is one top-level assignment per key, so n8n notices it.
 */
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import type { EventCursorState } from './eventCursor';
import {
	CURSOR_KEY,
	compareProgress,
	loadCursorState,
	mergeCursors,
	peekProgress,
	progressOf,
	storeCursorState,
} from './eventCursor';
import { isObject } from './transport/responses';

/** The key of the workflow's static data that holds the copies by node id. */
export const COPIES_KEY = 'documentWorkflowTriggerCursors';
/** Copies kept per workflow: the triggers that read most recently (a deleted trigger's copy goes in time). */
export const MAX_CURSOR_COPIES = 10;
/** A copy whose trigger has not read for this long (the API's 7 days and one) is dropped by the next store. */
const COPY_MAX_AGE_MS = 8 * 24 * 60 * 60 * 1000;

/** What the store needs of n8n's context: every trigger context has it (poll, webhook, activation hook). */
export type CursorStoreContext = Pick<
	IPollFunctions,
	'getWorkflowStaticData' | 'getNode' | 'logger'
>;

type Copies = Record<string, unknown>;

function nodeIdOf(ctx: CursorStoreContext): string | undefined {
	const id = ctx.getNode().id;
	return typeof id === 'string' && id.length > 0 ? id : undefined;
}

function copiesOf(ctx: CursorStoreContext): Copies {
	const copies = ctx.getWorkflowStaticData('global')[COPIES_KEY];
	return isObject(copies) ? (copies as Copies) : {};
}

/**
 * Whose the state under the node's name is: the node it names, or for a state written before
 * states named their node, the node whose copy is the same (both were written together).
 */
function ownerOf(raw: unknown, state: EventCursorState, copies: Copies): string | undefined {
	if (state.owner !== undefined) return state.owner;
	const text = JSON.stringify(raw);
	for (const [nodeId, copy] of Object.entries(copies))
		if (JSON.stringify(copy) === text) return nodeId;
	return undefined;
}

/**
 * The node's state: the more advanced of the one under its name and its copy by node id. A state
 * under its name that another node wrote (a deleted trigger whose name it was given) is not its
 * own. Undefined when the node has none (it starts afresh).
 */
export function loadCursor(ctx: CursorStoreContext): EventCursorState | undefined {
	const nodeData = ctx.getWorkflowStaticData('node');
	const nodeId = nodeIdOf(ctx);
	const copies = copiesOf(ctx);
	let own = loadCursorState(nodeData);
	const owner = own && ownerOf(nodeData[CURSOR_KEY], own, copies);
	if (own && nodeId !== undefined && owner !== undefined && owner !== nodeId) {
		ctx.logger?.debug(
			`Document Workflow trigger "${ctx.getNode().name}": the cursor kept under this name is another (deleted) node's; this node starts afresh`,
		);
		own = undefined;
	}
	const rawCopy = nodeId === undefined ? undefined : copies[nodeId];
	// A copy that has not read further than the state under the name adds nothing (it is an older one).
	const copyAhead =
		!own || compareProgress(peekProgress(rawCopy) ?? progressOf(own), progressOf(own)) > 0;
	const copy = copyAhead ? loadCursorState({ [CURSOR_KEY]: rawCopy }) : undefined;
	if (!own && copy)
		ctx.logger?.debug(
			`Document Workflow trigger "${ctx.getNode().name}": continuing from the cursor kept by node id (the node was renamed)`,
		);
	return mergeCursors(own, copy);
}

/**
 * What a process that already holds a state (`held`) should go on with: the stored state
 * merged in when it has read further (another process saved it, or `held` is none), else
 * `held`, without loading the stored one's ids (a request's copy is usually an older `held`).
 */
export function refreshCursor(
	ctx: CursorStoreContext,
	held: EventCursorState | undefined,
): EventCursorState | undefined {
	if (held) {
		const nodeId = nodeIdOf(ctx);
		const stored = [
			ctx.getWorkflowStaticData('node')[CURSOR_KEY],
			nodeId === undefined ? undefined : copiesOf(ctx)[nodeId],
		];
		const heldProgress = progressOf(held);
		const ahead = stored.some((raw) => {
			const progress = peekProgress(raw);
			return progress !== undefined && compareProgress(progress, heldProgress) > 0;
		});
		if (!ahead) return held;
	}
	return mergeCursors(held, loadCursor(ctx));
}

/** Keeps the copies bounded: its own, then those whose triggers read most recently, none far older than its own. */
function pruneCopies(copies: Copies, nodeId: string, horizonMs: number | null): Copies {
	const horizonOf = (copy: unknown) =>
		isObject(copy) && typeof copy.horizonMs === 'number' ? copy.horizonMs : -Infinity;
	const others = Object.entries(copies)
		.filter(([id, copy]) => id !== nodeId && isObject(copy))
		.filter(([, copy]) => {
			const their = horizonOf(copy);
			return horizonMs === null || their === -Infinity || their >= horizonMs - COPY_MAX_AGE_MS;
		})
		.sort(([, a], [, b]) => horizonOf(b) - horizonOf(a))
		.slice(0, MAX_CURSOR_COPIES - 1);
	return Object.fromEntries([[nodeId, copies[nodeId]], ...others]);
}

/** Saves the state under the node's name and its copy by node id, both naming the node. */
export function storeCursor(ctx: CursorStoreContext, state: EventCursorState): void {
	const nodeId = nodeIdOf(ctx);
	const owned: EventCursorState = nodeId === undefined ? state : { ...state, owner: nodeId };
	storeCursorState(ctx.getWorkflowStaticData('node'), owned);
	if (nodeId === undefined) return;
	const global = ctx.getWorkflowStaticData('global');
	const copies = pruneCopies({ ...copiesOf(ctx), [nodeId]: owned }, nodeId, owned.horizonMs);
	global[COPIES_KEY] = JSON.parse(JSON.stringify(copies)) as IDataObject;
}
