/**
 * Reading the event list after a cursor (`eventCursor.ts`), for both triggers: the events to emit
 * and the cursor's next state, through a page reader (`eventList.ts`'s `readEventPage` in n8n).
 * Nothing here writes static data: the caller stores the cursor with the events it emits, or not.
 */
import type { IDataObject } from 'n8n-workflow';

import type { EventCursor } from './eventCursor';
import {
	compareIds,
	createdOnMs,
	frontier,
	isDone,
	listedIds,
	moveAfter,
	oldestKnownMs,
	startingAfter,
} from './eventCursor';
import type { EventFilter } from './eventFilter';
import { matches } from './eventFilter';
import type { EventPage, EventQuery } from './eventList';
import { MAX_PAGE_SIZE } from './transport/responses';

export type PageReader = (query: EventQuery) => Promise<EventPage>;

/** The overlap window both triggers use unless told otherwise: how late an event may be listed and still come out. */
export const DEFAULT_OVERLAP_MINUTES = 5;
/** Near the end of the API's 7 days, events leaving the list move positions: nothing is counted there. */
const COUNTABLE_MS = (7 * 24 - 1) * 60 * 60 * 1000;

export interface ReadOptions {
	filter: EventFilter;
	overlapMs: number;
	/** At most this many events listed by one read; the rest comes with the next one. */
	maxEvents: number;
	/** Local time after which no further page is requested (the first always is). */
	until: number;
	/** Go over what was read before, for events committed late (a poll always does). */
	recheck: boolean;
}

export interface CursorRead {
	/** New events of the chosen types, lowest id first. */
	events: IDataObject[];
	/** Store it together with `events`, or not at all. */
	cursor: EventCursor;
	/** Every id this read saw listed. */
	listed: Set<string>;
	/** It reached the end of the list. */
	complete: boolean;
	requests: number;
	/** The newest API time it saw (ms; NaN without a `Date` header or an event). */
	apiTimeMs: number;
	/** A request failed; what was read before it is in `events` and `cursor`. */
	failure?: Error;
}

const idOf = (event: IDataObject) => String(event.id).toLowerCase();

/** A lower bound of the API's clock when it answered: its `Date` (less the round trip), or the newest event listed. */
export function timeOf(page: EventPage): number {
	let ms = Number.isFinite(page.apiTimeMs) ? page.apiTimeMs : -Infinity;
	for (const event of page.events) ms = Math.max(ms, createdOnMs(event) ?? -Infinity);
	return Number.isFinite(ms) ? ms : NaN;
}

/**
 * Counting instead of reading: page P (of 100) after `after` holds the listed ids at its
 * positions exactly when nothing entered before them (events are only added). Returns how many
 * of `ids` are in place up to page P's end, given the pages before it are.
 */
async function inPlace(ask: PageReader, after: string | null, ids: string[], page: number) {
	// A page past the end (fewer events than listed: another list than before) may be refused.
	const answer = await ask({ after, page }).catch((error: { httpCode?: string }) => {
		if (error.httpCode !== '400' && error.httpCode !== '404') throw error;
		return { events: [], count: 0, pages: 0, listed: 0, full: false, apiTimeMs: NaN };
	});
	let count = (page - 1) * MAX_PAGE_SIZE;
	for (const event of answer.events)
		if (count < ids.length && idOf(event) === ids[count]) count++;
		else break;
	return { answer, count };
}

/** The last listed id before which nothing entered (null: `after`): a binary search over the pages below `pages`, whose last is not all in place. */
async function lastInPlace(
	ask: PageReader,
	after: string | null,
	ids: string[],
	last: { page: number; count: number },
): Promise<string | null> {
	let firstOff = last.count;
	for (let low = 1, high = last.page; low < high; ) {
		const middle = Math.floor((low + high) / 2);
		const { count } = await inPlace(ask, after, ids, middle);
		if (count === middle * MAX_PAGE_SIZE) low = middle + 1;
		else [high, firstOff] = [middle, count];
	}
	return firstOff > 0 ? ids[firstOff - 1] : after;
}

/**
 * The events after the cursor that are not done, and its next state. With `recheck` it also
 * goes over the stretch read before, for events committed late, counting first: one request
 * when nothing entered it. New events come first (a trigger catching up emits new events every
 * read, late ones once it has caught up). Pages by key: each asks for what follows the last id
 * read, so events that commit or expire meanwhile neither hide one nor list one twice.
 */
export async function readEvents(
	read: PageReader,
	cursor: EventCursor,
	options: ReadOptions,
): Promise<CursorRead> {
	const result: CursorRead = {
		events: [],
		cursor,
		listed: new Set(),
		complete: false,
		requests: 0,
		apiTimeMs: NaN,
	};
	const ask: PageReader = async (query) => {
		const page = await read(query);
		result.requests++;
		const ms = timeOf(page);
		if (!(ms <= result.apiTimeMs)) result.apiTimeMs = ms;
		return page;
	};
	let next: EventCursor = { ...cursor, listed: { ...cursor.listed } };
	/** Reads from `from` to the end or the limits; with `sinceMs` (everything up to `from` was in place then), moves `after` over what it read. */
	const forward = async (from: string | null, sinceMs = NaN): Promise<boolean> => {
		let after = from;
		let complete = false;
		try {
			for (let pages = 0; !complete; pages++) {
				const room = options.maxEvents - result.listed.size;
				if (room <= 0 || (result.requests > 0 && Date.now() >= options.until)) break;
				const page = await ask({ after, page: 1, pageSize: Math.min(MAX_PAGE_SIZE, room) });
				if (pages === 0 && !Number.isFinite(sinceMs) && from === cursor.after && options.recheck)
					sinceMs = timeOf(page);
				for (const event of page.events) {
					const id = idOf(event);
					if (after !== null && compareIds(id, after) <= 0) continue;
					result.listed.add(id);
					after = id;
					if (isDone(next, id)) continue;
					next.listed[id] = createdOnMs(event);
					if (matches(options.filter, event)) result.events.push(event);
				}
				complete = page.events.length === 0 || !(page.full || page.count > page.listed);
			}
		} finally {
			if (Number.isFinite(sinceMs) && (complete || after !== from))
				next = moveAfter(next, complete ? null : after, sinceMs, options.overlapMs);
		}
		return complete;
	};
	try {
		const ids = listedIds(cursor);
		const newest = frontier(cursor);
		if (!options.recheck) result.complete = await forward(newest);
		else if (ids.length < MAX_PAGE_SIZE) result.complete = await forward(cursor.after);
		else {
			const pages = Math.ceil(ids.length / MAX_PAGE_SIZE);
			const last = await inPlace(ask, cursor.after, ids, pages);
			const sinceMs = timeOf(last.answer);
			if (!(oldestKnownMs(cursor) > sinceMs - COUNTABLE_MS))
				// Near the end of the 7 days, events leaving the list move positions too: read it all again.
				result.complete = (await forward(newest)) && (await forward(cursor.after, sinceMs));
			else if (last.count === ids.length) {
				next = moveAfter(next, null, sinceMs, options.overlapMs);
				result.complete = last.answer.count === ids.length || (await forward(newest, sinceMs));
			} else {
				const caughtUp = await forward(newest);
				const upTo = await lastInPlace(ask, cursor.after, ids, { page: pages, ...last });
				next = moveAfter(next, upTo, sinceMs, options.overlapMs);
				result.complete = caughtUp && (await forward(upTo, sinceMs));
			}
		}
	} catch (error) {
		result.failure = error as Error;
	}
	result.cursor = next;
	result.events.sort((a, b) => compareIds(idOf(a), idOf(b)));
	return result;
}

/**
 * A cursor that starts from now: the newest page (page 1 tells how many there are) taken as done,
 * so only later events, and late ones among them, come out. Events leaving the 7 days while it
 * reads shrink the list: the last page is asked for again, a few times at most.
 */
export async function anchorAtNewest(read: PageReader, overlapMs: number): Promise<EventCursor> {
	let number = 1;
	let page = await read({ page: number });
	for (let tries = 0; ; tries++) {
		// Page 1 is the newest only when it is the last; a later one asked for as the last one is.
		const found =
			page.events.length > 0 ? number > 1 || page.pages <= 1 : page.count === 0 || number === 1;
		if (found) break;
		if (tries === 3)
			throw new Error(
				'The event list kept changing while the trigger looked for its newest events; the next poll tries again',
			);
		number = Math.max(page.pages, 1);
		page = await read({ page: number });
	}
	const [oldest, ...rest] = [...page.events].sort((a, b) => compareIds(idOf(a), idOf(b)));
	if (!oldest) return startingAfter(null);
	return moveAfter(startingAfter(oldest, rest), null, timeOf(page), overlapMs);
}

/**
 * A cursor at the newest event created before (the API's now − `lookBackMs`), so the next read
 * emits every event created since: a binary search over the pages, then on by key to the exact
 * place (which also corrects a search that pages moving under it sent too low). With `since`
 * (local time), the look-back counts from then.
 */
export async function startBefore(
	read: PageReader,
	lookBackMs: number,
	since = Date.now(),
): Promise<EventCursor> {
	const first = await read({ page: 1 });
	let apiNow = first.apiTimeMs;
	if (!Number.isFinite(apiNow)) apiNow = timeOf(await read({ page: Math.max(first.pages, 1) }));
	const startMs = apiNow - Math.max(0, Date.now() - since) - lookBackMs;
	const before = (event?: IDataObject) => !!event && (createdOnMs(event) ?? Infinity) < startMs;
	if (!before(first.events[0])) return startingAfter(null);
	let low = 1;
	let high = Math.max(first.pages, 1);
	let page = first;
	while (low < high) {
		const middle = Math.ceil((low + high) / 2);
		const candidate = await read({ page: middle });
		if (before(candidate.events[0])) [low, page] = [middle, candidate];
		else high = middle - 1;
	}
	let start = page.events.filter((event) => before(event)).pop()!;
	for (let pages = 0; pages < 20; pages++) {
		const after = await read({ after: idOf(start) });
		const older = after.events.filter((event) => before(event));
		if (older.length > 0) start = older[older.length - 1];
		if (older.length < after.events.length || !after.full) break;
	}
	return startingAfter(start);
}
