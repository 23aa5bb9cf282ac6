/** Both triggers' read of the event list after a cursor (`eventCursor.ts`): the events to emit
 * and the cursor to store with them. Invariant: each event read not done joins `listed`; `after`
 * moves only over ids read (or found in place) below which none is listed late any more. */
import type { IDataObject } from 'n8n-workflow';

import type { EventCursor } from './eventCursor';
import { createdOnMs, idOf, isDone, moveAfter, oldestKnownMs, startingAfter } from './eventCursor';
import type { EventFilter } from './eventFilter';
import { matches } from './eventFilter';
import type { EventPage, EventQuery } from './eventList';
import { MAX_PAGE_SIZE } from './transport/responses';

export type PageReader = (query: EventQuery) => Promise<EventPage>;

/** How late an event may be listed and still come out, unless the user sets it (polling). */
export const DEFAULT_OVERLAP_MINUTES = 5;
/** Near the end of the API's 7 days, expiring events shift positions: nothing is counted. */
const COUNTABLE_MS = (7 * 24 - 1) * 60 * 60 * 1000;

export interface ReadOptions {
	filter: EventFilter;
	overlapMs: number;
	maxEvents: number; // new ids listed at most: the next read goes on
	until: number; // local ms: past the first, no request the pace so far says would end past it
	recheck: boolean; // also go over what was read before, for events listed late (every poll)
	owed?: string[]; // delivered ids not done (webhook): with `recheck`, their places are read first
}

type ReadBounds = { sinceMs?: number; goOver?: number; until?: number; pages?: number };

/** New events of the chosen types (lowest id first) and the `cursor` to store with them, or not at
 * all; `complete`: it reached the list's end; `failure`: what stopped it, after what it read. */
export type CursorRead = Awaited<ReturnType<typeof readEvents>>;

/** A lower bound of the API's clock as it answered (events age by it): its `Date`, else the later
 * of the newest event listed and `oursMs` (a read's: its clock less a window, docs' assumption). */
export function apiNowOf(page: EventPage, oursMs = -Infinity): number {
	const clock = Number.isFinite(page.apiTimeMs) ? page.apiTimeMs : oursMs;
	return Math.max(clock, ...page.events.map((event) => createdOnMs(event) ?? -Infinity));
}

/** A page; one past the end of the list may be refused (400, 404): then an empty one. */
const pageOrNone = async (read: PageReader, query: EventQuery): Promise<EventPage> =>
	await read(query).catch((error: { httpCode?: string }) => {
		if (error.httpCode !== '400' && error.httpCode !== '404') throw error;
		return { events: [], count: 0, pages: 0, listed: 0, full: false, apiTimeMs: NaN };
	});

/** How many of the known `ids` (ascending) are still in place in the list after `after`, through
 * page `page`. The list only grows: an id still at place k has just `ids[0..k)` below it, so all
 * before it are in place; if the page's first moved, the caller searches the pages before it. */
async function inPlaceUpTo(ask: PageReader, after: string | null, ids: string[], page: number) {
	const answer = await pageOrNone(ask, { after, page });
	const first = (page - 1) * MAX_PAGE_SIZE; // the place of the page's first entry
	const moved = answer.events.findIndex((event, i) => idOf(event) !== ids[first + i]);
	return { answer, page, inPlace: first + (moved < 0 ? answer.events.length : moved) };
}

/** The events after the cursor not done yet, and its next state; with `recheck`, also those listed
 * late among what was read before. By key: events entering or leaving meanwhile shift no page. */
export async function readEvents(read: PageReader, cursor: EventCursor, options: ReadOptions) {
	const [events, startedAt] = [[] as IDataObject[], Date.now()];
	let [requests, apiTimeMs, added, complete] = [0, -Infinity, 0, false];
	const ask: PageReader = async (query) => {
		const oursMs = Date.now() - options.overlapMs;
		requests++;
		const page = await read(query).then((got) => ({ ...got, apiTimeMs: apiNowOf(got, oursMs) }));
		apiTimeMs = Math.max(apiTimeMs, page.apiTimeMs);
		return page;
	};
	const overdue = (until: number) =>
		requests > 0 && Date.now() + (Date.now() - startedAt) / requests > until;
	let next: EventCursor = { ...cursor, listed: { ...cursor.listed } };
	// What followed `from` on the page a count stopped in: `readFrom(from)` starts with it.
	let leftover: { from: string | null; page: EventPage } | undefined;
	let stoppedAt: string | null = null; // where the last `readFrom` stopped
	// Reads by key after `from`, to the list's end (true) or a bound (`goOver`: done ids); with
	// `sinceMs` (all up to `from` done then), moves `after` over what it read, also on a failure.
	const readFrom = async (from: string | null, bounds: ReadBounds = {}) => {
		const { goOver = Infinity, until = options.until, pages: most = Infinity } = bounds;
		let [after, atEnd, sinceMs, goneOver, idless] = [from, false, bounds.sinceMs, 0, 0];
		try {
			for (let pages = 0; !atEnd && goneOver < goOver && pages < most; pages++) {
				const room = options.maxEvents - added;
				if (room <= 0 || overdue(until)) break;
				const kept = pages === 0 && leftover?.from === from ? leftover.page : undefined;
				if (kept) leftover = undefined;
				const size = Math.min(MAX_PAGE_SIZE, room);
				const query = { after, page: 1 + idless, pageSize: size };
				const page = kept && kept.events.length <= room ? kept : await ask(query);
				if (pages === 0 && from === cursor.after) sinceMs ??= apiNowOf(page); // all up to it done
				for (const event of page.events) {
					const id = idOf(event);
					if (after !== null && id <= after) continue;
					after = id;
					if (isDone(next, id)) goneOver++;
					else {
						added++;
						next.listed[id] = createdOnMs(event);
						if (matches(options.filter, event)) events.push(event);
					}
				}
				// A page only of id-less entries (dropped) moves no `after`: ask the next by number while
				// `count` exceeds the entries since `after`: `idless` full pages of `size`, and this one.
				idless = !page.events.length && page.count > idless * size + page.listed ? idless + 1 : 0;
				atEnd = !idless && (!page.events.length || !(page.full || page.count > page.listed));
			}
		} finally {
			stoppedAt = after;
			if (sinceMs !== undefined && (atEnd || after !== from))
				next = moveAfter(next, atEnd ? null : after, sinceMs - options.overlapMs);
		}
		return atEnd;
	};
	// How far the known `ids` are still in place: `after` moves over them; reads go on from the last.
	const countInPlace = async (ids: string[], hint = '') => {
		const upTo = ids.filter((id) => id <= hint).length || ids.length; // through `hint`, else all
		const hinted = await inPlaceUpTo(ask, cursor.after, ids, Math.ceil(upTo / MAX_PAGE_SIZE));
		// Events listed before were created before the API's now: a clock also without a `Date`.
		const sinceMs = Math.max(apiNowOf(hinted.answer), cursor.listed[ids.at(-1)!] ?? -Infinity);
		const countable = oldestKnownMs(cursor) > sinceMs - COUNTABLE_MS; // else none counts as in place
		let counted = countable ? hinted : undefined; // the page whose count is the answer
		// Short of `upTo`: binary search for the first page not whole; whole ones prove those before.
		let [low, high] = [1, counted && counted.inPlace < upTo ? hinted.page : 1];
		while (low < high && !overdue(options.until)) {
			const middle = Math.floor((low + high) / 2);
			const probe = await inPlaceUpTo(ask, cursor.after, ids, middle);
			if (probe.inPlace === middle * MAX_PAGE_SIZE) low = middle + 1;
			else [high, counted] = [middle, probe];
		}
		if (low < high) counted = undefined; // cut at the time bound: only the pages proved whole
		const inPlace = counted?.inPlace ?? (low - 1) * MAX_PAGE_SIZE;
		const from = inPlace > 0 ? ids[inPlace - 1] : cursor.after;
		if (counted) {
			// The rest of the page is the list after `from`: kept if not empty, or at the list's end.
			const [page, onPage] = [counted.answer, inPlace - (counted.page - 1) * MAX_PAGE_SIZE];
			const [count, listed] = [page.count - inPlace, page.listed - onPage];
			const rest = { ...page, events: page.events.slice(onPage), count, listed };
			if (rest.events.length || (page.listed && count <= listed)) leftover = { from, page: rest };
		}
		if (inPlace > 0) next = moveAfter(next, from, sinceMs - options.overlapMs);
		return { from, sinceMs };
	};
	// What stopped the read (it keeps what it read before).
	const failure = await (async (): Promise<undefined> => {
		const ids = Object.keys(cursor.listed).sort(); // all after `after`
		const newest = ids.at(-1) ?? cursor.after;
		if (!options.recheck) complete = await readFrom(newest);
		// Up to two pages of known ids, reading costs no more than counting and reading past them.
		else if (ids.length < 2 * MAX_PAGE_SIZE) complete = await readFrom(cursor.after);
		else {
			// Owed ids first (a slow API may stop the look back short of them), three pages at most: after
			// the known id below the highest (the new events, if one is new), then each from the lowest.
			const below = (id: string) => ids.findLast((known) => known < id) ?? cursor.after;
			const places = [...(options.owed ?? [])].sort().map(below);
			for (const from of [...new Set([...places.slice(-1), ...places])].slice(0, 3))
				await readFrom(from, { pages: 1 });
			const { from, sinceMs } = await countInPlace(ids, cursor.resume);
			// The look back over known ids, in 3 steps. 1: in half the time, over the ids old enough for
			// `after` to pass (`listed` shrinks while catching up; none: no request).
			const limit = sinceMs - options.overlapMs;
			const old = ids.filter((id) => id > (from ?? '') && (cursor.listed[id] ?? Infinity) < limit);
			const half = (Date.now() + options.until) / 2;
			const oldToEnd = await readFrom(from, { sinceMs, goOver: old.length, until: half });
			// 2: the new events first (Max Events per Poll goes to them), unless 1 or 3 reaches them.
			const restFrom = (next.after ?? '') > (from ?? '') ? next.after : from;
			const near = ids.filter((id) => id > (restFrom ?? '')).length < 3 * MAX_PAGE_SIZE;
			const newCovered = oldToEnd || near || (await readFrom(newest));
			// 3: the rest, once no new event waits; cut short of the newest known id, `resume` is its stop.
			complete = oldToEnd || (newCovered && (await readFrom(restFrom, { sinceMs })));
			const cut = newCovered && !complete && (stoppedAt ?? '') < (newest ?? '');
			next.resume = cut ? (stoppedAt ?? undefined) : undefined;
		}
	})().catch((error: Error) => error);
	events.sort((a, b) => (idOf(a) < idOf(b) ? -1 : 1));
	return { events, cursor: next, complete, requests, apiTimeMs, failure };
}

/** The list's newest page and its number; asked again while the list shrinks (events expire). */
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

type AnchorOptions = Omit<ReadOptions, 'recheck' | 'maxEvents'>;

/** A cursor from now: all listed now is done. `after` stays an overlap window back (a late event
 * may take an id below the newest); a newest page all within it (a burst) looks back first, over
 * the whole burst: Max Events per Poll bounds what a poll emits, and this read emits nothing. */
export async function anchorAtNewest(read: PageReader, options: AnchorOptions) {
	const [{ page }, { overlapMs }] = [await newestPage(read), options];
	const anchored = moveAfter(startingAfter(null, page.events), null, apiNowOf(page) - overlapMs);
	if (anchored.after !== null || page.pages <= 1) return anchored;
	const lookBack = await startBefore(read, overlapMs);
	const wholeBurst = { ...options, maxEvents: Infinity, recheck: false };
	const anchor = await readEvents(read, lookBack, wholeBurst);
	if (anchor.failure) throw anchor.failure;
	return anchor.cursor;
}

/** A cursor at the newest event created before the API's now − `lookBackMs` (the next read emits
 * all since): on the newest page, else found by a binary search, then on by key. */
export async function startBefore(read: PageReader, lookBackMs: number): Promise<EventCursor> {
	const newest = await newestPage(read);
	const startMs = apiNowOf(newest.page, Date.now()) - lookBackMs; // a quiet list's newest is old
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
