/**
 * The event cursor both triggers keep (the polling and the webhook trigger): which events it
 * has already emitted, and where the next read starts. Pure logic, no I/O; `cursorRead.ts`
 * reads the API and records here what it read, `cursorStore.ts` keeps it in static data.
 *
 * Why it looks like this (api-spec "List events", rule 3): event ids reflect creation
 * time, not commit time, so an event can become visible later with a lower id than one
 * already read. The only way to find such an event is to read the place where it belongs
 * again (`after` = an id read earlier, from page 1) and drop the ids already emitted.
 *
 * The rule everything rests on: a stretch of the id line that was read contiguously
 * starting at API time S (a lower bound of the API's clock when it answered the first page
 * of that read) holds every event created before S − overlap, because such an event was
 * committed by S (commit delays are at most the overlap window). So once the newest event
 * of a stretch was created before (its read time − overlap), nothing can ever appear in
 * that stretch again: the stretch is *final* and never needs reading again.
 *
 * The state:
 * - `after`: everything up to this id is final (null: nothing is, read from the oldest
 *   event of the 7-day history). It only moves forward, and only to an id that was read.
 * - `spans`: the stretches read since, in id order and contiguous: span i covers
 *   (previous span's `to`, or `after`; `to`], read starting at API time `readAtMs`. The last
 *   span's `to` is the frontier: the newest id read. A read overwrites the spans it covers.
 * - `seen`: the ids emitted (or taken as known at activation) that lie in spans that are
 *   not final, with their `createdOn`. Ids in final spans or at or before `after` can never
 *   be listed by a read again (reads skip final spans), so they are forgotten.
 * - `spans[i].n`: how many events the API listed in the span when it was read (NaN when
 *   unknown). Events are only ever added to the list (late commits), never removed inside the
 *   7-day history, so when the API's `count` after a boundary equals the events known after
 *   it, no late event has entered any span there: the poll takes that as a read of those
 *   spans (`verifyRead`) instead of reading them again. A quiet trigger costs two requests.
 * - `resume`: where the next re-read of the young spans starts, when the last one ran out
 *   of budget before the frontier (absent: at `after`).
 * - `behind`: set while the trigger is catching up (a poll ran out of budget before the
 *   end of the list); then the next poll reads from the frontier first, so every poll emits
 *   new events, and re-reads the young spans only once it has caught up.
 *
 * Bound (memory and static data): `seen` holds only events of spans that were read within
 * one overlap window of their newest event's creation. That is at most the events created
 * in one overlap window plus the length of one poll, and never more than what the polls of
 * one overlap window can read, whatever the size of a burst. Spans: at most one per poll
 * within an overlap window, plus one final span merged from all the older ones.
 */
import type { IDataObject } from 'n8n-workflow';

import { isObject } from './transport/responses';

/** One event as far as the cursor is concerned. */
export interface CursorEvent {
	id: string;
	/** `createdOn` in ms since the epoch; NaN when the API sent no readable date. */
	createdOnMs: number;
}

/** A stretch of ids read contiguously, ending at `to` (inclusive), starting where the previous one ends. */
export interface Span {
	to: string;
	/** `createdOn` (ms) of the `to` event; NaN when unknown (the span is then never final by itself). */
	toCreatedOnMs: number;
	/** A lower bound of the API's clock when the read that covered this span began. */
	readAtMs: number;
	/** How many events the API listed in the span (after the previous boundary, up to `to`) when it was read; NaN when unknown. */
	n: number;
}

export interface EventCursorState {
	/** Format version of this structure. */
	v: 1;
	/** The id of the trigger node that wrote it: a new node given a deleted node's name does not take it over. */
	owner?: string;
	/** Everything up to this id is final; null reads from the oldest available event. */
	after: string | null;
	/** `createdOn` (ms) of the `after` event; null with `after` null or unknown. */
	afterCreatedOnMs: number | null;
	/** The newest lower bound of the API's clock known to the cursor (ms); null before any read. */
	horizonMs: number | null;
	/** Ids in spans that are not final, emitted (or part of the activation baseline) → `createdOn` ms. */
	seen: Record<string, number>;
	/** The stretches read after `after`, in id order. */
	spans?: Span[];
	/** A span boundary (`to`) where the next re-read of the young spans starts; absent: at `after`. */
	resume?: string;
	/** Set while catching up: when it began (API ms) and how many events were still to read then. */
	behind?: { sinceMs: number; remaining: number };
	/** `after` id and the first id listed after it, last time `after` was confirmed to be inside the 7-day history. */
	checked?: { after: string; first: string };
	/** The last time the cursor was found outside the 7-day history (reported once per `after` id). */
	gap?: {
		after: string;
		afterCreatedOn: string | null;
		oldestAvailableId: string;
		detectedOn: string;
	};
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

/** A listed event as the cursor sees it. */
export function toCursorEvent(event: IDataObject): CursorEvent {
	return { id: String(event.id).toLowerCase(), createdOnMs: parseCreatedOn(event.createdOn) };
}

/** The newest `createdOn` among the events (NaN when none is known): a lower bound of the API's clock. */
export function newestCreatedOn(events: CursorEvent[]): number {
	let newest = NaN;
	for (const event of events)
		if (Number.isFinite(event.createdOnMs) && !(event.createdOnMs <= newest))
			newest = event.createdOnMs;
	return newest;
}

/** JSON keeps no NaN: null and anything else that is not a number reads back as NaN. */
function numberOrNaN(value: unknown): number {
	return typeof value === 'number' ? value : NaN;
}

function loadSpans(raw: unknown): Span[] {
	if (!Array.isArray(raw)) return [];
	const spans: Span[] = [];
	for (const entry of raw) {
		if (!isObject(entry) || typeof entry.to !== 'string') continue;
		spans.push({
			to: entry.to.toLowerCase(),
			toCreatedOnMs: numberOrNaN(entry.toCreatedOnMs),
			readAtMs: numberOrNaN(entry.readAtMs),
			n: numberOrNaN(entry.n),
		});
	}
	spans.sort((a, b) => compareIds(a.to, b.to));
	return spans;
}

/**
 * The state as saved in static data, or undefined when there is none (first activation)
 * or it is not one this code wrote. Returns a private copy: the poll changes it freely and
 * writes it back only together with the items it emits. A state saved before spans existed
 * becomes one span over its remembered ids, read at its horizon.
 */
export function loadCursorState(staticData: Record<string, unknown>): EventCursorState | undefined {
	const raw = staticData[CURSOR_KEY];
	if (!isObject(raw) || raw.v !== 1) return undefined;
	const after = typeof raw.after === 'string' ? raw.after.toLowerCase() : null;
	const seen: Record<string, number> = {};
	if (isObject(raw.seen)) {
		for (const [id, ms] of Object.entries(raw.seen)) seen[id.toLowerCase()] = numberOrNaN(ms);
	}
	const horizonMs = typeof raw.horizonMs === 'number' ? raw.horizonMs : null;
	let spans = loadSpans(raw.spans);
	if (raw.spans === undefined) {
		const ids = Object.keys(seen).sort(compareIds);
		const newest = ids[ids.length - 1];
		if (newest !== undefined)
			spans = [{ to: newest, toCreatedOnMs: seen[newest], readAtMs: horizonMs ?? NaN, n: NaN }];
	}
	const state: EventCursorState = {
		v: 1,
		...(typeof raw.owner === 'string' ? { owner: raw.owner } : {}),
		after,
		afterCreatedOnMs: typeof raw.afterCreatedOnMs === 'number' ? raw.afterCreatedOnMs : null,
		horizonMs,
		seen,
		spans,
	};
	if (typeof raw.resume === 'string') state.resume = raw.resume.toLowerCase();
	if (isObject(raw.behind) && typeof raw.behind.sinceMs === 'number') {
		state.behind = { sinceMs: raw.behind.sinceMs, remaining: Number(raw.behind.remaining) || 0 };
	}
	if (
		isObject(raw.checked) &&
		typeof raw.checked.after === 'string' &&
		typeof raw.checked.first === 'string'
	) {
		state.checked = { after: raw.checked.after, first: raw.checked.first };
	}
	if (isObject(raw.gap) && typeof raw.gap.after === 'string') {
		state.gap = JSON.parse(JSON.stringify(raw.gap)) as EventCursorState['gap'];
	}
	return state;
}

/** Writes the state into the node's static data (one top-level assignment, so n8n notices the change). */
export function storeCursorState(
	staticData: Record<string, unknown>,
	state: EventCursorState,
): void {
	staticData[CURSOR_KEY] = JSON.parse(JSON.stringify(state)) as unknown;
}

/** A state with nothing read: the next poll reads everything after `after` (or everything, with null). */
export function emptyCursorState(after: CursorEvent | null = null): EventCursorState {
	return {
		v: 1,
		after: after ? after.id.toLowerCase() : null,
		afterCreatedOnMs: after && Number.isFinite(after.createdOnMs) ? after.createdOnMs : null,
		horizonMs: null,
		seen: {},
		spans: [],
	};
}

/** True when nothing can ever appear in the span again: its newest event was created before (its read time − overlap). */
export function isFinal(span: Span, overlapMs: number): boolean {
	return (
		Number.isFinite(span.toCreatedOnMs) &&
		Number.isFinite(span.readAtMs) &&
		span.toCreatedOnMs < span.readAtMs - overlapMs
	);
}

/** The newest id read so far (where a catching-up poll continues), or `after` when nothing was read since. */
export function frontier(state: EventCursorState): string | null {
	const spans = state.spans ?? [];
	return spans.length > 0 ? spans[spans.length - 1].to : state.after;
}

/** Where a read that has reached `id` (or starts at it) must jump to skip final spans; undefined when the next ids are not final. */
export function skipFinal(
	state: EventCursorState,
	id: string | null,
	overlapMs: number,
): string | undefined {
	let jumpTo: string | undefined;
	for (const span of state.spans ?? []) {
		if (id !== null && compareIds(span.to, id) <= 0) continue;
		if (!isFinal(span, overlapMs)) break;
		jumpTo = span.to;
	}
	return jumpTo;
}

/** True when the event was already emitted, or can never be listed again because it lies in a final stretch. */
export function alreadySeen(state: EventCursorState, id: string, overlapMs: number): boolean {
	const key = id.toLowerCase();
	if (state.after !== null && compareIds(key, state.after) <= 0) return true;
	if (Object.prototype.hasOwnProperty.call(state.seen, key)) return true;
	for (const span of state.spans ?? []) {
		if (compareIds(key, span.to) <= 0) return isFinal(span, overlapMs);
	}
	return false;
}

export interface ReadRecord {
	/** Where the read started (`after` of its first page): `after`, or the `to` of a span. */
	from: string | null;
	/** Every event the read listed (all types it was sent, emitted or not), in id order. */
	read: CursorEvent[];
	/** Lower bound of the API's clock when the read's first page was answered. */
	readAtMs: number;
}

/**
 * Records one contiguous read: its stretch (from, newest read] replaces the spans it
 * covers, split at the newest event created before (read time − overlap) so that the part
 * before it becomes final at once.
 */
export function recordRead(
	state: EventCursorState,
	record: ReadRecord,
	overlapMs: number,
): EventCursorState {
	const read = [...record.read].sort((a, b) => compareIds(a.id, b.id));
	const newest = read[read.length - 1];
	const next: EventCursorState = {
		...state,
		seen: { ...state.seen },
		spans: [...(state.spans ?? [])],
	};
	if (Number.isFinite(record.readAtMs))
		next.horizonMs =
			next.horizonMs === null ? record.readAtMs : Math.max(next.horizonMs, record.readAtMs);
	if (!newest) return next;
	const threshold = record.readAtMs - overlapMs;
	let split: CursorEvent | undefined;
	let splitIndex = -1;
	read.forEach((event, index) => {
		if (Number.isFinite(event.createdOnMs) && event.createdOnMs < threshold) {
			split = event;
			splitIndex = index;
		}
	});
	const covered: Span[] = [];
	if (split && split.id !== newest.id)
		covered.push({
			to: split.id,
			toCreatedOnMs: split.createdOnMs,
			readAtMs: record.readAtMs,
			n: splitIndex + 1,
		});
	covered.push({
		to: newest.id,
		toCreatedOnMs: newest.createdOnMs,
		readAtMs: record.readAtMs,
		n: covered.length > 0 ? read.length - splitIndex - 1 : read.length,
	});
	const old = next.spans!;
	const kept = old.filter(
		(span) => !(isAfter(span.to, record.from) && compareIds(span.to, newest.id) <= 0),
	);
	// The span the read ended inside now starts at the read's newest id: how many events it holds is no longer known.
	const cut = old.findIndex((span) => compareIds(span.to, newest.id) > 0);
	const cutStart = cut > 0 ? old[cut - 1].to : state.after;
	if (cut >= 0 && (cutStart === null || compareIds(cutStart, newest.id) !== 0)) {
		const index = kept.indexOf(old[cut]);
		kept[index] = { ...old[cut], n: NaN };
	}
	next.spans = [...kept, ...covered].sort((a, b) => compareIds(a.to, b.to));
	return next;
}

/**
 * How many events the API should list after `from` (`after` or a span boundary) if nothing
 * entered the spans since they were read: the sum of their counts; NaN when one is unknown
 * or `from` is not a boundary.
 */
export function knownAfter(state: EventCursorState, from: string | null): number {
	const spans = state.spans ?? [];
	if (from !== state.after && !spans.some((span) => span.to === from)) return NaN;
	let known = 0;
	for (const span of spans) if (isAfter(span.to, from)) known += span.n;
	return known;
}

/**
 * Takes a count that matched `knownAfter(from)` as a read of every span after `from`: each
 * held exactly the events known in it at API time `readAtMs` (counts only grow), so nothing
 * created before `readAtMs` − overlap can still appear in it.
 */
export function verifyRead(
	state: EventCursorState,
	from: string | null,
	readAtMs: number,
): EventCursorState {
	if (!Number.isFinite(readAtMs)) return state;
	const spans = (state.spans ?? []).map((span) =>
		isAfter(span.to, from) && !(span.readAtMs >= readAtMs) ? { ...span, readAtMs } : span,
	);
	const horizonMs = state.horizonMs === null ? readAtMs : Math.max(state.horizonMs, readAtMs);
	return { ...state, spans, horizonMs };
}

function isAfter(id: string, from: string | null): boolean {
	return from === null || compareIds(id, from) > 0;
}

/** Adds the ids a poll emitted (or takes as known) to the remembered ones. */
export function remember(state: EventCursorState, events: CursorEvent[]): EventCursorState {
	const seen = { ...state.seen };
	for (const event of events) seen[event.id.toLowerCase()] = event.createdOnMs;
	return { ...state, seen };
}

/**
 * Moves `after` over the leading final spans, merges runs of final spans into one, and
 * forgets the ids that can no longer be listed. Call after the reads of a poll.
 */
export function settle(state: EventCursorState, overlapMs: number): EventCursorState {
	let after = state.after;
	let afterCreatedOnMs = state.afterCreatedOnMs;
	const spans: Span[] = [];
	for (const span of state.spans ?? []) {
		if (after !== null && compareIds(span.to, after) <= 0) continue;
		const final = isFinal(span, overlapMs);
		if (final && spans.length === 0) {
			after = span.to;
			afterCreatedOnMs = span.toCreatedOnMs;
			continue;
		}
		const previous = spans[spans.length - 1];
		if (final && previous && isFinal(previous, overlapMs))
			spans[spans.length - 1] = { ...span, n: previous.n + span.n };
		else spans.push(span);
	}
	const seen: Record<string, number> = {};
	for (const [id, createdOnMs] of Object.entries(state.seen)) {
		if (after !== null && compareIds(id, after) <= 0) continue;
		const span = spans.find((candidate) => compareIds(id, candidate.to) <= 0);
		if (span && isFinal(span, overlapMs)) continue;
		seen[id] = createdOnMs;
	}
	const next: EventCursorState = { ...state, after, afterCreatedOnMs, seen, spans };
	if (state.checked && state.checked.after !== after) delete next.checked;
	if (
		next.resume !== undefined &&
		!spans.some((span) => span.to === next.resume && !isFinal(span, overlapMs))
	)
		delete next.resume;
	return next;
}

/** How far a state has read: what orders two copies of one trigger's state. */
export interface CursorProgress {
	frontier: string | null;
	after: string | null;
	horizonMs: number | null;
}

export function progressOf(state: EventCursorState): CursorProgress {
	return { frontier: frontier(state), after: state.after, horizonMs: state.horizonMs };
}

/** The progress of a state as saved in static data, read without loading the rest (its ids); undefined when it is none. */
export function peekProgress(raw: unknown): CursorProgress | undefined {
	if (!isObject(raw) || raw.v !== 1) return undefined;
	const after = typeof raw.after === 'string' ? raw.after.toLowerCase() : null;
	// A state saved before spans existed reads as one span over its remembered ids.
	const tos = Array.isArray(raw.spans)
		? raw.spans.map((span) => (isObject(span) ? span.to : undefined))
		: Object.keys(isObject(raw.seen) ? raw.seen : {});
	let newest = after;
	for (const to of tos)
		if (typeof to === 'string' && (newest === null || compareIds(to, newest) > 0))
			newest = to.toLowerCase();
	return {
		frontier: newest,
		after,
		horizonMs: typeof raw.horizonMs === 'number' ? raw.horizonMs : null,
	};
}

/** Orders two states by how far they have read: frontier, then `after`, then the API time last seen. */
export function compareProgress(a: CursorProgress, b: CursorProgress): number {
	const byId = (x: string | null, y: string | null) =>
		x === y ? 0 : x === null ? -1 : y === null ? 1 : compareIds(x, y);
	return (
		byId(a.frontier, b.frontier) ||
		byId(a.after, b.after) ||
		Math.sign((a.horizonMs ?? -Infinity) - (b.horizonMs ?? -Infinity))
	);
}

/**
 * The more advanced of two copies of one trigger's state (a newer one, or one from another
 * process), with the other's emitted ids added: neither copy's events come out again. Either
 * may be undefined; `a` wins a tie.
 */
export function mergeCursors(
	a: EventCursorState | undefined,
	b: EventCursorState | undefined,
): EventCursorState | undefined {
	if (!a || !b) return a ?? b;
	const [base, other] = compareProgress(progressOf(a), progressOf(b)) >= 0 ? [a, b] : [b, a];
	const seen = { ...base.seen };
	let added = false;
	for (const [id, createdOnMs] of Object.entries(other.seen)) {
		if (base.after !== null && compareIds(id, base.after) <= 0) continue;
		if (Object.prototype.hasOwnProperty.call(seen, id)) continue;
		seen[id] = createdOnMs;
		added = true;
	}
	return added ? { ...base, seen } : base;
}
