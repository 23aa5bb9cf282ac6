/**
 * Reading the event list after a cursor (`eventCursor.ts`) for both triggers, through a page reader
 * (`readEventPage` in n8n): the events to emit and the cursor the caller stores with them, or not.
 */
import type { IDataObject } from 'n8n-workflow';

import type { EventCursor } from './eventCursor';
import {
	compareIds,
	createdOnMs,
	frontier,
	idOf,
	isDone,
	moveAfter,
	oldestKnownMs,
	startingAfter,
} from './eventCursor';
import type { EventFilter } from './eventFilter';
import { matches } from './eventFilter';
import type { EventPage, EventQuery } from './eventList';
import { MAX_PAGE_SIZE } from './transport/responses';

export type PageReader = (query: EventQuery) => Promise<EventPage>;

/** How late an event may be listed and still come out, unless the user sets it (polling trigger). */
export const DEFAULT_OVERLAP_MINUTES = 5;
/** Near the end of the API's 7 days, events leaving the list move positions: nothing is counted there. */
const COUNTABLE_MS = (7 * 24 - 1) * 60 * 60 * 1000;

/** A read lists at most `maxEvents` events not listed before (the rest comes with the next) and asks for no page after `until` (local ms); with `recheck` it goes over what was read before, for events committed late (every poll does). */
export interface ReadOptions {
	filter: EventFilter;
	overlapMs: number;
	maxEvents: number;
	until: number;
	recheck: boolean;
}

/** New events of the chosen types, lowest id first, with the cursor to store with them (or not at all); whether the read reached the end of the list; the newest API time it saw (-Infinity: none); a failure after what was read before it. */
export type CursorRead = Awaited<ReturnType<typeof readEvents>>;

/** A lower bound of the API's clock when it answered: its `Date` (less the round trip), or the newest event listed. */
export function timeOf(page: EventPage): number {
	const times = [page.apiTimeMs, ...page.events.map(createdOnMs)].filter(Number.isFinite);
	return times.length > 0 ? Math.max(...(times as number[])) : NaN;
}

/** A page; one past the end of the list may be refused (400, 404): then an empty one. */
const pageOrNone = async (read: PageReader, query: EventQuery): Promise<EventPage> =>
	await read(query).catch((error: { httpCode?: string }) => {
		if (error.httpCode !== '400' && error.httpCode !== '404') throw error;
		return { events: [], count: 0, pages: 0, listed: 0, full: false, apiTimeMs: NaN };
	});

/**
 * Counting instead of reading: how many of `ids` page P after `after` holds at their places, given
 * the pages before hold theirs; all exactly when no event entered before them (events only enter).
 */
async function inPlace(ask: PageReader, after: string | null, ids: string[], page: number) {
	const answer = await pageOrNone(ask, { after, page });
	const first = (page - 1) * MAX_PAGE_SIZE;
	const off = answer.events.findIndex((event, i) => idOf(event) !== ids[first + i]);
	return { answer, count: first + (off < 0 ? answer.events.length : off) };
}

/**
 * The events after the cursor not done yet, and its next state. With `recheck` it also goes over
 * what was read before (events committed late), counting first (`inPlace`); where something
 * entered, what can be let go first, in at most half the time, then new events, so a trigger
 * catching up emits some every read, and the rest once caught up. Pages by key, so events
 * committed or expired meanwhile hide none and list none twice.
 */
export async function readEvents(read: PageReader, cursor: EventCursor, options: ReadOptions) {
	const events: IDataObject[] = [];
	let [requests, apiTimeMs, added, complete] = [0, -Infinity, 0, false];
	let failure: Error | undefined;
	const ask: PageReader = async (query) => {
		requests++;
		const page = await read(query);
		apiTimeMs = Math.max(apiTimeMs, timeOf(page) || -Infinity);
		return page;
	};
	let next: EventCursor = { ...cursor, listed: { ...cursor.listed } };
	/** The page where counting found something entered, from that place on: a read on from there starts with it instead of asking for it again (each request may cost a second under a read limit). */
	let entered: { from: string | null; page: EventPage } | undefined;
	/** Reads on from `from` until `until`, or until it has gone over `known` ids done before; with `sinceMs` (all up to `from` was in place then) `after` moves over it. */
	const forward = async (
		from: string | null,
		stretch: { sinceMs?: number; known?: number; until?: number } = {},
	) => {
		const { known = Infinity, until = options.until } = stretch;
		let [after, done, sinceMs, goneOver] = [from, false, stretch.sinceMs ?? NaN, 0];
		try {
			for (let pages = 0; !done && goneOver < known; pages++) {
				const room = options.maxEvents - added;
				if (room <= 0 || (requests > 0 && Date.now() >= until)) break;
				const kept = pages === 0 && entered?.from === from ? entered.page : undefined;
				entered = kept ? undefined : entered;
				const page =
					kept && kept.events.length <= room
						? kept
						: await ask({ after, page: 1, pageSize: Math.min(MAX_PAGE_SIZE, room) });
				if (pages === 0 && from === cursor.after && Number.isNaN(sinceMs)) sinceMs = timeOf(page);
				for (const event of page.events) {
					const id = idOf(event);
					if (after !== null && compareIds(id, after) <= 0) continue;
					after = id;
					if (isDone(next, id)) goneOver++;
					else {
						added++;
						next.listed[id] = createdOnMs(event);
						if (matches(options.filter, event)) events.push(event);
					}
				}
				done = page.events.length === 0 || !(page.full || page.count > page.listed);
			}
		} finally {
			if (!Number.isNaN(sinceMs) && (done || after !== from))
				next = moveAfter(next, done ? null : after, sinceMs, options.overlapMs);
		}
		return done;
	};
	try {
		const ids = Object.keys(cursor.listed).sort();
		const newest = frontier(cursor);
		if (!options.recheck) complete = await forward(newest);
		// Up to two pages of known ids, reading them costs no more than counting them and reading on
		// past the newest (two requests), and where late events entered among them, fewer.
		else if (ids.length < 2 * MAX_PAGE_SIZE) complete = await forward(cursor.after);
		else {
			const pages = Math.ceil(ids.length / MAX_PAGE_SIZE);
			const last = await inPlace(ask, cursor.after, ids, pages);
			const sinceMs = timeOf(last.answer);
			const countable = oldestKnownMs(cursor) > sinceMs - COUNTABLE_MS;
			if (countable && last.count === ids.length) {
				next = moveAfter(next, null, sinceMs, options.overlapMs);
				complete = last.answer.count === ids.length || (await forward(newest, { sinceMs }));
			} else {
				// The first page not all in place holds the first place something entered.
				let firstOff = countable ? last.count : 0;
				let offPage = countable ? { ...last, number: pages } : undefined;
				for (let low = 1, high = countable ? pages : 1; low < high; ) {
					const middle = Math.floor((low + high) / 2);
					const probe = await inPlace(ask, cursor.after, ids, middle);
					if (probe.count === middle * MAX_PAGE_SIZE) low = middle + 1;
					else [high, firstOff, offPage] = [middle, probe.count, { ...probe, number: middle }];
				}
				const upTo = firstOff > 0 ? ids[firstOff - 1] : cursor.after;
				if (offPage) {
					// The rest of that page is the list after `upTo`, as a read by key from there lists it.
					const { answer, number } = offPage;
					const skip = firstOff - (number - 1) * MAX_PAGE_SIZE;
					const [events, count, listed] = [
						answer.events.slice(skip),
						answer.count - firstOff,
						answer.listed - skip,
					];
					if (events.length > 0)
						entered = { from: upTo, page: { ...answer, events, count, listed } };
				}
				if (firstOff > 0) next = moveAfter(next, upTo, sinceMs, options.overlapMs);
				// First, in at most half the time, what `after` could move over now, with the late events in
				// it (so `listed` stays one overlap window while catching up, on any machine); then new events.
				const limit = sinceMs - options.overlapMs;
				const old = ids.slice(firstOff).filter((id) => (cursor.listed[id] ?? Infinity) < limit);
				const half = (Date.now() + options.until) / 2;
				// Where that reached the end of the list, it has read what follows too: nothing is asked again.
				const through =
					old.length > 0 && (await forward(upTo, { sinceMs, known: old.length, until: half }));
				const resume = compareIds(next.after ?? '', upTo ?? '') > 0 ? next.after : upTo;
				// Where `after` has reached the newest id, reading on from it is the read of new events: asked once.
				const caughtUp = through || resume === newest || (await forward(newest));
				complete = through || (caughtUp && (await forward(resume, { sinceMs })));
			}
		}
	} catch (error) {
		failure = error as Error;
	}
	events.sort((a, b) => compareIds(idOf(a), idOf(b)));
	return { events, cursor: next, complete, requests, apiTimeMs, failure };
}

/** The list's newest page and its number (page 1 tells how many). Events listed since are new ones; an empty or refused last page: the list shrank meanwhile (events left the 7 days), page 1 is asked again. */
async function newestPage(read: PageReader): Promise<{ page: EventPage; number: number }> {
	let page = await read({ page: 1 });
	for (let tries = 0; page.pages > 1 || (!page.events.length && page.count > 0); tries++) {
		if (tries === 3) throw new Error('The event list kept changing while the newest page was read');
		const last = await pageOrNone(read, { page: page.pages });
		if (last.events.length > 0) return { page: last, number: page.pages };
		page = await read({ page: 1 });
	}
	return { page, number: 1 };
}

/**
 * A cursor that starts from now: every event listed now is done, so only later events, and late
 * ones among them, come out. `after` goes no nearer now than one overlap window (a late event may
 * take an id below the newest); a newest page all within it (a burst) takes a look back first.
 */
export async function anchorAtNewest(read: PageReader, options: Omit<ReadOptions, 'recheck'>) {
	const { page } = await newestPage(read);
	const { overlapMs } = options;
	const anchored = moveAfter(startingAfter(null, page.events), null, timeOf(page), overlapMs);
	if (anchored.after !== null || page.pages <= 1) return anchored;
	const lookBack = await startBefore(read, overlapMs);
	const anchor = await readEvents(read, lookBack, { ...options, recheck: false });
	if (anchor.failure) throw anchor.failure;
	return anchor.cursor;
}

/**
 * A cursor at the newest event created before (the API's now − `lookBackMs`), so the next read
 * emits every event created since: on the newest page, else by a binary search, then on by key.
 */
export async function startBefore(read: PageReader, lookBackMs: number): Promise<EventCursor> {
	const newest = await newestPage(read);
	// No `Date` header: the newest event is the API's only clock (old on a quiet list); ours stands in.
	const ours = Number.isFinite(newest.page.apiTimeMs) ? -Infinity : Date.now();
	const startMs = Math.max(timeOf(newest.page) || -Infinity, ours) - lookBackMs;
	const before = (event?: IDataObject) => !!event && (createdOnMs(event) ?? Infinity) < startMs;
	// The last page whose first event was created before the start: the start lies in it.
	let page = newest.page;
	for (let low = 1, high = newest.number - 1; !before(newest.page.events[0]) && low <= high; ) {
		const middle = Math.ceil((low + high) / 2);
		const candidate = await read({ page: middle });
		if (before(candidate.events[0])) [page, low] = [candidate, middle + 1];
		else high = middle - 1;
	}
	let start = page.events.filter((event) => before(event)).pop();
	for (let pages = 0; start && pages < 20 && start === page.events.at(-1); pages++) {
		page = await read({ after: idOf(start) });
		start = page.events.filter((event) => before(event)).pop() ?? start;
	}
	return startingAfter(start ?? null);
}
