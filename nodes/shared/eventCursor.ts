/**
 * The cursor both triggers keep on the API's event list, and where it is kept; pure (the reads:
 * `cursorRead.ts`; why it holds: docs/polling-trigger.md). Ids reflect creation, not commit, time
 * (api-spec, "List events"): an event can be listed later below one already read, hence two parts:
 * - `after`: every event with an id at or below it is done (emitted, or not of the chosen types);
 * - `listed`: every event the API listed after `after` (all types), each done, with `createdOn`.
 */
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { isObject } from './transport/responses';

export interface EventCursor {
	after: string | null;
	/** `createdOn` of the `after` event (ms), to tell when it has left the API's 7 days. */
	afterCreatedOnMs: number | null;
	/** Event id → its `createdOn` in ms (null when unreadable). */
	listed: Record<string, number | null>;
	/** Where a read's look back over listed ids stopped at its bound: the next read counts from there. */
	resume?: string;
}

/** As kept in static data: whose it is, how often saved (`seq`), under which node name, and (webhook) delivered ids not done yet → delivery time. */
export interface StoredCursor extends EventCursor {
	v: 2;
	workflowId?: string;
	nodeId: string;
	nodeName: string;
	seq: number;
	owed?: Record<string, number>;
	/** In the copy only, while n8n has committed no cursor of the node: where its polls since started. */
	base?: EventCursor;
}

export const CURSOR_KEY = 'eventCursor';
/** The workflow's static data keeps a copy per trigger node id, for a rename in n8n's default mode. */
export const COPIES_KEY = 'documentWorkflowTriggerCursors';

export const idOf = (event: IDataObject): string => String(event.id).toLowerCase();

export const createdOnMs = (event: IDataObject): number | null =>
	Date.parse(String(event.createdOn)) || null;

export function startingAfter(event: IDataObject | null, listed: IDataObject[] = []): EventCursor {
	return {
		after: event ? idOf(event) : null,
		afterCreatedOnMs: event ? createdOnMs(event) : null,
		listed: Object.fromEntries(listed.map((entry) => [idOf(entry), createdOnMs(entry)] as const)),
	};
}

/** The newest id the cursor knows (where new events follow), or `after`. */
export const frontier = (cursor: EventCursor): string | null =>
	Object.keys(cursor.listed).reduce((max, id) => (id > max ? id : max), cursor.after ?? '') || null;

/** The `createdOn` of the oldest event the cursor knows (`after`, else the oldest listed); NaN: none. */
export function oldestKnownMs(cursor: EventCursor): number {
	const times = Object.values(cursor.listed).filter((ms) => ms !== null) as number[];
	return cursor.afterCreatedOnMs ?? times.reduce((min, ms) => (min < ms ? min : ms), NaN);
}

export const isDone = (cursor: EventCursor | undefined, id: string): boolean =>
	!!cursor && (id <= (cursor.after ?? '') || id in cursor.listed);

/** Moves `after` over (`after`, `upTo`] (null: all listed), read in one go from API time `sinceMs` (a lower bound of its clock) on, to the newest event there created before `sinceMs` − overlap: all those were committed by `sinceMs`, so listed. */
export function moveAfter(
	cursor: EventCursor,
	upTo: string | null,
	sinceMs: number,
	overlapMs: number,
): EventCursor {
	let { after, afterCreatedOnMs } = cursor;
	for (const [id, created] of Object.entries(cursor.listed))
		if (created !== null && created < sinceMs - overlapMs && (upTo === null || id <= upTo))
			if (after === null || id > after) [after, afterCreatedOnMs] = [id, created];
	if (after === cursor.after) return cursor;
	const listed = Object.entries(cursor.listed).filter(([id]) => id > after!);
	return { ...cursor, after, afterCreatedOnMs, listed: Object.fromEntries(listed) };
}

/** Two copies of one trigger's cursor (another process's, or an older one) as one: neither's events come out again; where `a`'s look back stopped is kept. */
export function mergeCursors(a: EventCursor, b: EventCursor): EventCursor {
	const [ahead, other] = (b.after ?? '') > (a.after ?? '') ? [b, a] : [a, b];
	const listed = { ...ahead.listed };
	for (const [id, created] of Object.entries(other.listed))
		if (!isDone(ahead, id)) listed[id] = created;
	return { after: ahead.after, afterCreatedOnMs: ahead.afterCreatedOnMs, listed, resume: a.resume };
}

type CursorContext = Pick<IPollFunctions, 'getNode' | 'getWorkflow' | 'getWorkflowStaticData'>;

/**
 * The node's cursor (never another node's or workflow's), or undefined: it starts afresh. n8n keeps
 * it under the node's name (durable poll cursors: by node id, committed with the execution, after
 * the copy is saved); the copy stands in where it is missing (renamed; no commit landed: its `base`)
 * or older (renamed back).
 */
export function loadCursor(ctx: CursorContext): StoredCursor | undefined {
	const { id: nodeId, name } = ctx.getNode();
	const workflowId = ctx.getWorkflow().id;
	const ours = (raw: unknown) => {
		// Saved by version 0.1 (`v: 1`): its `after`, and the ids it emitted since as the listed ones.
		if (isObject(raw) && raw.v === 1 && isObject(raw.seen))
			raw = { ...raw, v: 2, workflowId, nodeId: raw.owner ?? nodeId, listed: raw.seen };
		if (!isObject(raw) || raw.v !== 2) return undefined;
		const stored = JSON.parse(JSON.stringify({ nodeName: name, ...raw })) as StoredCursor;
		return stored.nodeId === nodeId && stored.workflowId === workflowId ? stored : undefined;
	};
	const own = ours(ctx.getWorkflowStaticData('node')[CURSOR_KEY]);
	const copies = ctx.getWorkflowStaticData('global')[COPIES_KEY];
	const copy = ours(isObject(copies) ? copies[nodeId] : undefined);
	const renamedBack = own && copy && own.nodeName === name && copy.nodeName !== name;
	if (!own && copy) {
		const { after, afterCreatedOnMs, listed } = copy.base ?? copy;
		const base = { after, afterCreatedOnMs, listed };
		return copy.nodeName === name ? { ...copy, ...base, base } : { ...copy, base };
	}
	return renamedBack && copy.seq > own.seq ? copy : own;
}

/** Saves the cursor under the node and its copy by node id (one top-level assignment each, so n8n notices); `owed`: the webhook trigger's. */
export function storeCursor(
	ctx: CursorContext,
	{ after, afterCreatedOnMs, listed, resume }: EventCursor,
	previous?: StoredCursor,
	owed?: Record<string, number>,
	base?: EventCursor,
): void {
	const { id: nodeId, name: nodeName } = ctx.getNode();
	const whose = { v: 2, workflowId: ctx.getWorkflow().id, nodeId, nodeName };
	const where = { after, afterCreatedOnMs, listed, resume, owed };
	const stored = { ...whose, seq: (previous?.seq ?? 0) + 1, ...where };
	const global = ctx.getWorkflowStaticData('global');
	const copies = Object.entries(isObject(global[COPIES_KEY]) ? global[COPIES_KEY] : {});
	// The 10 triggers saved last keep their copies; a deleted trigger's goes in time.
	const kept = copies.filter(([id]) => id !== nodeId).slice(-9);
	ctx.getWorkflowStaticData('node')[CURSOR_KEY] = JSON.parse(JSON.stringify(stored));
	const copy = { ...stored, base }; // no `base` once the node's own is saved (JSON drops undefined)
	global[COPIES_KEY] = JSON.parse(JSON.stringify(Object.fromEntries([...kept, [nodeId, copy]])));
}
