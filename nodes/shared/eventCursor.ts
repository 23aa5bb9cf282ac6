/**
 * The cursor both triggers keep on the API's event list, and where it is kept. Pure: the reads
 * are `cursorRead.ts`.
 *
 * Event ids reflect creation time, not commit time (api-spec, "List events"): an event can be
 * listed later with a lower id than one already read, so the recent past is read again and
 * de-duplicated. The cursor is two things a person can check by eye:
 *
 * - `after`: every event with an id at or below it is done: emitted, or not of the chosen types.
 * - `listed`: every event the API has listed after `after` (all types), each done, with its
 *   `createdOn`. Events are only ever added to the list within its 7 days, so what the API lists
 *   after `after` now is `listed` plus what has entered since: counting tells whether anything did.
 *
 * `after` moves on only over a stretch read in one go, from `after`, starting at API time S (a
 * lower bound of the API's clock when it answered the first page): every event created before
 * S − overlap had been committed by then, so it was listed. `after` becomes the newest listed
 * event of that stretch created before S − overlap (`moveAfter`), and what lies at or below it
 * is forgotten. So `listed` holds the events of about one overlap window and one read.
 */
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { isObject } from './transport/responses';

export interface EventCursor {
	after: string | null;
	/** `createdOn` of the `after` event (ms), to tell when it has left the API's 7 days. */
	afterCreatedOnMs: number | null;
	/** Event id → its `createdOn` in ms (null when the API sent none readable). */
	listed: Record<string, number | null>;
}

/** A cursor as kept in static data: whose it is, how often saved, and (webhook) delivered ids not done yet. */
export interface StoredCursor extends EventCursor {
	v: 2;
	workflowId?: string;
	nodeId: string;
	/** The node's name when it was saved: tells a copy written after a rename from the state under this name. */
	nodeName: string;
	seq: number;
	/** Webhook trigger: delivered ids not listed yet → when they were delivered (local ms). */
	owed?: Record<string, number>;
}

export const CURSOR_KEY = 'eventCursor';
/** The workflow's static data keeps a copy per trigger node id, for a rename in n8n's default mode. */
export const COPIES_KEY = 'documentWorkflowTriggerCursors';
const MAX_COPIES = 10;

/** Ids compare as the API compares them for `after`: as lower-case text (time-ordered UUIDs). */
export function compareIds(a: string, b: string): number {
	return a < b ? -1 : a > b ? 1 : 0;
}

export function createdOnMs(event: IDataObject): number | null {
	const ms = Date.parse(String(event.createdOn));
	return Number.isFinite(ms) ? ms : null;
}

export function startingAfter(event: IDataObject | null, listed: IDataObject[] = []): EventCursor {
	const cursor: EventCursor = {
		after: event ? String(event.id).toLowerCase() : null,
		afterCreatedOnMs: event ? createdOnMs(event) : null,
		listed: {},
	};
	for (const entry of listed) cursor.listed[String(entry.id).toLowerCase()] = createdOnMs(entry);
	return cursor;
}

/** The listed ids in id order. */
export function listedIds(cursor: EventCursor): string[] {
	return Object.keys(cursor.listed).sort(compareIds);
}

/** The newest id the cursor knows (where reading new events goes on), or `after`. */
export function frontier(cursor: EventCursor): string | null {
	let newest = cursor.after;
	for (const id in cursor.listed) if (newest === null || compareIds(id, newest) > 0) newest = id;
	return newest;
}

/** The `createdOn` of the oldest event the cursor knows (`after`, else the oldest listed one); NaN: none. */
export function oldestKnownMs(cursor: EventCursor): number {
	if (cursor.afterCreatedOnMs !== null) return cursor.afterCreatedOnMs;
	let oldest = Infinity;
	for (const ms of Object.values(cursor.listed)) if (ms !== null && ms < oldest) oldest = ms;
	return oldest === Infinity ? NaN : oldest;
}

/** True when the event is done: at or below `after`, or listed before. */
export function isDone(cursor: EventCursor, id: string): boolean {
	return (cursor.after !== null && compareIds(id, cursor.after) <= 0) || id in cursor.listed;
}

/**
 * Moves `after` to the newest listed event up to `upTo` (inclusive; null: all) created before
 * `sinceMs` − `overlapMs`, where (`after`, `upTo`] was read in one go starting at API time `sinceMs`.
 */
export function moveAfter(
	cursor: EventCursor,
	upTo: string | null,
	sinceMs: number,
	overlapMs: number,
): EventCursor {
	let { after, afterCreatedOnMs } = cursor;
	for (const [id, created] of Object.entries(cursor.listed))
		if (
			created !== null &&
			created < sinceMs - overlapMs &&
			(upTo === null || compareIds(id, upTo) <= 0) &&
			(after === null || compareIds(id, after) > 0)
		)
			[after, afterCreatedOnMs] = [id, created];
	if (after === cursor.after) return cursor;
	const listed: EventCursor['listed'] = {};
	for (const [id, created] of Object.entries(cursor.listed))
		if (compareIds(id, after!) > 0) listed[id] = created;
	return { after, afterCreatedOnMs, listed };
}

/** Two copies of one trigger's cursor (another process's, or an older one) as one: neither's events come out again. */
export function mergeCursors(a: EventCursor, b: EventCursor): EventCursor {
	const [ahead, other] =
		a.after === null || (b.after !== null && compareIds(b.after, a.after) > 0) ? [b, a] : [a, b];
	const listed = { ...ahead.listed };
	for (const [id, created] of Object.entries(other.listed))
		if (!isDone(ahead, id)) listed[id] = created;
	return { after: ahead.after, afterCreatedOnMs: ahead.afterCreatedOnMs, listed };
}

/** What the store needs of n8n's context: every trigger context has it (poll, webhook, activation hook). */
export type CursorContext = Pick<
	IPollFunctions,
	'getWorkflowStaticData' | 'getNode' | 'getWorkflow'
>;

function parse(raw: unknown): StoredCursor | undefined {
	if (!isObject(raw) || raw.v !== 2 || !isObject(raw.listed) || typeof raw.nodeId !== 'string')
		return undefined;
	return JSON.parse(JSON.stringify(raw)) as StoredCursor;
}

/**
 * The node's cursor, undefined when it has none (it starts afresh). n8n keeps a node's static data
 * under its name (its id with durable poll cursors, which commit it with the execution); the copy
 * by node id in the workflow's static data is saved with it in the default mode, and earlier than
 * it with durable cursors. So the copy stands in only where n8n lost the node's own: none under
 * this name (a rename), or one saved under this name before a rename away and back (the copy was
 * saved under the other name since). A cursor of another node or workflow is never taken.
 */
export function loadCursor(ctx: CursorContext): StoredCursor | undefined {
	const { id: nodeId, name } = ctx.getNode();
	const workflowId = ctx.getWorkflow().id;
	const ours = (stored?: StoredCursor) =>
		stored && stored.nodeId === nodeId && stored.workflowId === workflowId ? stored : undefined;
	const own = ours(parse(ctx.getWorkflowStaticData('node')[CURSOR_KEY]));
	const copies = ctx.getWorkflowStaticData('global')[COPIES_KEY];
	const copy = ours(parse(isObject(copies) ? copies[nodeId] : undefined));
	if (!own) return copy;
	const renamedBack = copy && own.nodeName === name && copy.nodeName !== name && copy.seq > own.seq;
	return renamedBack ? copy : own;
}

/** Saves the cursor under the node and its copy by node id (one top-level assignment each, so n8n notices). */
export function storeCursor(
	ctx: CursorContext,
	cursor: EventCursor,
	previous?: StoredCursor,
	owed?: Record<string, number>,
): StoredCursor {
	const { id: nodeId, name: nodeName } = ctx.getNode();
	const stored: StoredCursor = {
		v: 2,
		workflowId: ctx.getWorkflow().id,
		nodeId,
		nodeName,
		seq: (previous?.seq ?? 0) + 1,
		after: cursor.after,
		afterCreatedOnMs: cursor.afterCreatedOnMs,
		listed: cursor.listed,
		...(owed && Object.keys(owed).length > 0 ? { owed } : {}),
	};
	const global = ctx.getWorkflowStaticData('global');
	const copies = isObject(global[COPIES_KEY]) ? { ...(global[COPIES_KEY] as IDataObject) } : {};
	delete copies[nodeId];
	// The triggers saved most recently keep their copies; a deleted trigger's goes in time.
	const kept = Object.entries(copies).slice(-(MAX_COPIES - 1));
	ctx.getWorkflowStaticData('node')[CURSOR_KEY] = JSON.parse(JSON.stringify(stored));
	global[COPIES_KEY] = JSON.parse(JSON.stringify(Object.fromEntries([...kept, [nodeId, stored]])));
	return stored;
}
