/** The cursor both triggers keep on the API's event list, and its store in static data (reads:
 * `cursorRead.ts`; why it holds: docs/polling-trigger.md). Ids reflect creation, not commit, so
 * an event may be listed later below ids already read. Invariant: `after` plus `listed` is the
 * done set (emitted, or not of the chosen types): all ids up to `after`, all listed above it. */
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { isObject } from './transport/responses';

export interface EventCursor {
	after: string | null;
	afterCreatedOnMs: number | null; // ms: tells when `after` has left the API's 7 days
	listed: Record<string, number | null>; // done ids above `after` → `createdOn` (ms; null: none)
	resume?: string; // where the last look back stopped at its bound: the next count probes there
}

/** As kept: whose, times saved (`seq`), under which name; webhook: ids `owed` → delivered at. */
export interface StoredCursor extends EventCursor {
	v: 2;
	workflowId?: string;
	nodeId: string;
	nodeName: string;
	seq: number;
	owed?: Record<string, number>;
	base?: EventCursor; // in the copy, while n8n committed no cursor of the node: where polls began
}

export const CURSOR_KEY = 'eventCursor';
/** The workflow's static data keeps a copy per node id, for a rename in n8n's default mode. */
export const COPIES_KEY = 'documentWorkflowTriggerCursors';

export const idOf = (event: IDataObject): string => String(event.id).toLowerCase();

export const createdOnMs = (event: IDataObject): number | null =>
	Date.parse(String(event.createdOn)) || null;

export const startingAfter = (event: IDataObject | null, listed: IDataObject[] = []) => ({
	after: event ? idOf(event) : null,
	afterCreatedOnMs: event ? createdOnMs(event) : null,
	listed: Object.fromEntries(listed.map((entry) => [idOf(entry), createdOnMs(entry)] as const)),
});

/** The newest id the cursor knows (where new events follow), or `after`. */
export const frontier = (cursor: EventCursor): string | null =>
	Object.keys(cursor.listed).reduce((max, id) => (id > max ? id : max), cursor.after ?? '') || null;

/** `createdOn` of the oldest event known: `after`'s, else the lowest id listed's; NaN: none. */
export const oldestKnownMs = (cursor: EventCursor): number =>
	cursor.afterCreatedOnMs ?? cursor.listed[Object.keys(cursor.listed).sort()[0]] ?? NaN;

export const isDone = (cursor: EventCursor | undefined, id: string): boolean =>
	!!cursor && (id <= (cursor.after ?? '') || id in cursor.listed);

/** Moves `after` over (`after`, `upTo`] (null: all), read or found in place in one go from
 * API time T on, to the newest created before `beforeMs` = T − overlap: all listed at T. */
export function moveAfter(cursor: EventCursor, upTo: string | null, beforeMs: number): EventCursor {
	let { after, afterCreatedOnMs } = cursor;
	for (const [id, created] of Object.entries(cursor.listed))
		if (created !== null && created < beforeMs && (upTo === null || id <= upTo))
			if (after === null || id > after) [after, afterCreatedOnMs] = [id, created];
	if (after === cursor.after) return cursor;
	const listed = Object.entries(cursor.listed).filter(([id]) => id > after!);
	return { ...cursor, after, afterCreatedOnMs, listed: Object.fromEntries(listed) };
}

/** Two copies of one trigger's cursor as one: neither's events come out again; `a`'s `resume`. */
export function mergeCursors(a: EventCursor, b: EventCursor): EventCursor {
	const [ahead, other] = (b.after ?? '') > (a.after ?? '') ? [b, a] : [a, b];
	const listed = { ...ahead.listed };
	for (const [id, created] of Object.entries(other.listed))
		if (!isDone(ahead, id)) listed[id] = created;
	return { after: ahead.after, afterCreatedOnMs: ahead.afterCreatedOnMs, listed, resume: a.resume };
}

type CursorContext = Pick<IPollFunctions, 'getNode' | 'getWorkflow' | 'getWorkflowStaticData'>;

/** The node's cursor (never another node's or workflow's), or undefined: start afresh. n8n saves
 * the node's (by name) with the copy (by id); durable: the copy at emit, the node's at commit. */
export function loadCursor(ctx: CursorContext): StoredCursor | undefined {
	const [{ id: nodeId, name }, { id: workflowId }] = [ctx.getNode(), ctx.getWorkflow()];
	const ifOurs = (raw: unknown) => {
		// Saved by version 0.1 (`v: 1`): its `after`, and the ids it emitted since as the listed ones.
		if (isObject(raw) && raw.v === 1 && isObject(raw.seen))
			raw = { ...raw, v: 2, workflowId, nodeId: raw.owner ?? nodeId, listed: raw.seen };
		if (!isObject(raw) || raw.v !== 2) return undefined;
		const stored = JSON.parse(JSON.stringify({ nodeName: name, ...raw })) as StoredCursor;
		return stored.nodeId === nodeId && stored.workflowId === workflowId ? stored : undefined;
	};
	const own = ifOurs(ctx.getWorkflowStaticData('node')[CURSOR_KEY]);
	const copies = ctx.getWorkflowStaticData('global')[COPIES_KEY];
	const copy = ifOurs(isObject(copies) ? copies[nodeId] : undefined);
	if (!own && copy) {
		// None of its own. Copy under this name: durable, no commit landed since polls began at `base`
		// (a crash, a lost lease), so none of their executions ran: back to `base`. Under another
		// name: a rename left n8n's under the old name; the copy is newest. Both keep `base`.
		const { after, afterCreatedOnMs, listed } = copy.base ?? copy;
		const base = { after, afterCreatedOnMs, listed };
		return copy.nodeName === name ? { ...copy, ...base, base } : { ...copy, base };
	}
	// Renamed away and back: n8n's cursor under this name is from before; the copy may be newer.
	const renamedBack = own && copy && own.nodeName === name && copy.nodeName !== name;
	return renamedBack && copy.seq > own.seq ? copy : own;
}

/** Saves the cursor under the node and its copy by node id (each assigned whole: n8n notices). */
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
	const copy = { ...stored, base }; // `base` kept till a load finds the node's own
	global[COPIES_KEY] = JSON.parse(JSON.stringify(Object.fromEntries([...kept, [nodeId, copy]])));
}
