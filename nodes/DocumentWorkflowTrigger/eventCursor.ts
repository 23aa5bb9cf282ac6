/**
 * The Document Workflow Trigger's event cursor: which events it has already emitted, and
 * which `after` id the next poll asks for. Pure logic, no I/O; the trigger node reads the
 * API and calls `advanceCursor` with what it read.
 *
 * Why it looks like this (api-spec "List events", rule 3): event ids reflect creation
 * time, not commit time, so an event can become visible later with a lower id than one
 * already read. A poll therefore asks for events `after` an id seen about one overlap
 * window before the newest one, reads every page, and drops the ids it already emitted.
 *
 * The state:
 * - `after`: the id the next poll passes as `after` (null: read from the oldest event of
 *   the 7-day history). It only ever moves forward, and only to an id that was read.
 * - `seen`: every id greater than `after` that the trigger emitted (or, on the first
 *   activation, took as the already-known baseline), with its `createdOn` in ms. Ids not
 *   greater than `after` can never be listed again, so they are pruned: the map holds at
 *   most the events of one overlap window (plus the length of one poll), however long the
 *   workflow runs.
 * - `horizonMs`: the newest `createdOn` read so far minus the time the poll that read it
 *   spent reading; a lower bound of the API's clock at the start of that poll.
 *
 * The cursor rule: an event still invisible when a poll read the place where it belongs
 * was created after (start of that poll − its commit delay). So with commit delays of at
 * most the overlap window, every event that can still appear late was created after
 * `horizonMs − overlap`. The new `after` is the greatest read id whose `createdOn` is
 * strictly before that threshold: every event that can still show up has a greater id.
 */

/** One event as far as the cursor is concerned. */
export interface CursorEvent {
	id: string;
	/** `createdOn` in ms since the epoch; NaN when the API sent no readable date. */
	createdOnMs: number;
}

export interface EventCursorState {
	/** Format version of this structure. */
	v: 1;
	/** The `after` id of the next poll; null reads from the oldest available event. */
	after: string | null;
	/** `createdOn` (ms) of the `after` event; null with `after` null. */
	afterCreatedOnMs: number | null;
	/** Newest `createdOn` read minus the reading time of that poll (ms); null before any event. */
	horizonMs: number | null;
	/** Ids greater than `after` already emitted (or part of the first activation's baseline) → `createdOn` ms. */
	seen: Record<string, number>;
	/** `after` id and the first id listed after it, last time `after` was confirmed to be inside the 7-day history. */
	checked?: { after: string; first: string };
	/** The last time the cursor was found outside the 7-day history (reported once per `after` id). */
	gap?: { after: string; afterCreatedOn: string | null; oldestAvailableId: string; detectedOn: string };
}

/** The key of the node's static data that holds the state. */
export const CURSOR_KEY = 'eventCursor';

/** Event ids compare as the API compares them for `after`: as lower-case strings (time-ordered UUIDs). */
export function compareIds(a: string, b: string): number {
	const x = a.toLowerCase();
	const y = b.toLowerCase();
	return x < y ? -1 : x > y ? 1 : 0;
}

export function parseCreatedOn(value: unknown): number {
	if (typeof value !== 'string' && typeof value !== 'number') return NaN;
	return typeof value === 'number' ? value : Date.parse(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
	return !!value && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The state as saved in static data, or undefined when there is none (first activation)
 * or it is not one this code wrote. Returns a private copy: the poll changes it freely and
 * writes it back only together with the items it emits.
 */
export function loadCursorState(staticData: Record<string, unknown>): EventCursorState | undefined {
	const raw = staticData[CURSOR_KEY];
	if (!isObject(raw) || raw.v !== 1) return undefined;
	const after = typeof raw.after === 'string' ? raw.after.toLowerCase() : null;
	const seen: Record<string, number> = {};
	if (isObject(raw.seen)) {
		for (const [id, ms] of Object.entries(raw.seen)) seen[id.toLowerCase()] = typeof ms === 'number' ? ms : NaN;
	}
	const state: EventCursorState = {
		v: 1,
		after,
		afterCreatedOnMs: typeof raw.afterCreatedOnMs === 'number' ? raw.afterCreatedOnMs : null,
		horizonMs: typeof raw.horizonMs === 'number' ? raw.horizonMs : null,
		seen,
	};
	if (isObject(raw.checked) && typeof raw.checked.after === 'string' && typeof raw.checked.first === 'string') {
		state.checked = { after: raw.checked.after, first: raw.checked.first };
	}
	if (isObject(raw.gap) && typeof raw.gap.after === 'string') {
		state.gap = JSON.parse(JSON.stringify(raw.gap)) as EventCursorState['gap'];
	}
	return state;
}

/** Writes the state into the node's static data (one top-level assignment, so n8n notices the change). */
export function storeCursorState(staticData: Record<string, unknown>, state: EventCursorState): void {
	staticData[CURSOR_KEY] = JSON.parse(JSON.stringify(state)) as unknown;
}

/** A state with nothing seen: the next poll reads everything after `after` (or everything, with null). */
export function emptyCursorState(after: CursorEvent | null = null): EventCursorState {
	return {
		v: 1,
		after: after ? after.id.toLowerCase() : null,
		afterCreatedOnMs: after && Number.isFinite(after.createdOnMs) ? after.createdOnMs : null,
		horizonMs: after && Number.isFinite(after.createdOnMs) ? after.createdOnMs : null,
		seen: {},
	};
}

/** True when the event was already emitted, or can never be listed again because it is not after the cursor. */
export function alreadySeen(state: EventCursorState, id: string): boolean {
	const key = id.toLowerCase();
	if (state.after !== null && compareIds(key, state.after) <= 0) return true;
	return Object.prototype.hasOwnProperty.call(state.seen, key);
}

export interface AdvanceInput {
	/** Every event this poll read (all types it was sent, emitted or not), in any order. */
	read: CursorEvent[];
	/** The events this poll emits (or takes as known without emitting, on a first activation). */
	emitted: CursorEvent[];
	/** The overlap window in ms: the longest commit delay the cursor tolerates. */
	overlapMs: number;
	/** How long this poll spent reading (ms); widens the window by that much. */
	elapsedMs: number;
}

/** The state after a poll: new ids remembered, cursor moved forward, ids at or before the cursor forgotten. */
export function advanceCursor(previous: EventCursorState, input: AdvanceInput): EventCursorState {
	const seen: Record<string, number> = { ...previous.seen };
	for (const event of input.emitted) seen[event.id.toLowerCase()] = event.createdOnMs;

	let newestRead = -Infinity;
	for (const event of input.read) if (Number.isFinite(event.createdOnMs) && event.createdOnMs > newestRead) newestRead = event.createdOnMs;
	let horizonMs = previous.horizonMs;
	if (newestRead > -Infinity) {
		const candidate = newestRead - Math.max(0, input.elapsedMs);
		horizonMs = horizonMs === null ? candidate : Math.max(horizonMs, candidate);
	}

	let after = previous.after;
	let afterCreatedOnMs = previous.afterCreatedOnMs;
	if (horizonMs !== null) {
		const threshold = horizonMs - input.overlapMs;
		const consider = (id: string, createdOnMs: number) => {
			if (!Number.isFinite(createdOnMs) || createdOnMs >= threshold) return;
			if (after === null || compareIds(id, after) > 0) {
				after = id.toLowerCase();
				afterCreatedOnMs = createdOnMs;
			}
		};
		for (const event of input.read) consider(event.id, event.createdOnMs);
		for (const [id, createdOnMs] of Object.entries(seen)) consider(id, createdOnMs);
	}

	if (after !== null) {
		for (const id of Object.keys(seen)) if (compareIds(id, after) <= 0) delete seen[id];
	}

	const next: EventCursorState = { v: 1, after, afterCreatedOnMs, horizonMs, seen };
	if (previous.checked && previous.checked.after === after) next.checked = previous.checked;
	if (previous.gap) next.gap = previous.gap;
	return next;
}

/** Number of ids the state remembers (bounded by the overlap window). */
export function rememberedIds(state: EventCursorState): number {
	return Object.keys(state.seen).length;
}
