/** Both triggers' read of the event list after a cursor (`eventCursor.ts`): what to emit, and the cursor to store with it. */
import type { IDataObject } from 'n8n-workflow';

import type { EventCursor } from './eventCursor';
import { createdOnMs, idOf, isDone, moveAfter, oldestKnownMs, startingAfter } from './eventCursor';
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

/** Reads on until `until`, or until it has gone over `known` ids done before; with `sinceMs` (all up to where it starts was in place then) `after` moves over what it read. */
type Stretch = { sinceMs?: number; known?: number; until?: number };

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

/** Counting instead of reading: how many of `ids` page P after `after` holds at their places, given the pages before hold theirs; all exactly when no event entered before them (events only enter). */
async function inPlace(ask: PageReader, after: string | null, ids: string[], page: number) {
	const answer = await pageOrNone(ask, { after, page });
	const first = (page - 1) * MAX_PAGE_SIZE;
	const off = answer.events.findIndex((event, i) => idOf(event) !== ids[first + i]);
	return { answer, number: page, count: first + (off < 0 ? answer.events.length : off) };
}

/**
 * The events after the cursor not done yet, and its next state; with `recheck`, also those listed
 * late among what was read before (counted first). Pages by key: events committed or expired
 * meanwhile hide none and list none twice.
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
	/** The rest of the page where counting stopped: a read on from `from` starts with it instead of asking again (under a read limit a request can cost a second). */
	let entered: { from: string | null; page: EventPage } | undefined;
	let reached: string | null = null; // where the last `forward` stopped
	const forward = async (from: string | null, stretch: Stretch = {}) => {
		const { known = Infinity, until = options.until } = stretch;
		let [after, done, sinceMs, goneOver, idless] = [from, false, stretch.sinceMs ?? NaN, 0, 0];
		try {
			for (let pages = 0; !done && goneOver < known; pages++) {
				const room = options.maxEvents - added;
				if (room <= 0 || (requests > 0 && Date.now() >= until)) break;
				const kept = pages === 0 && entered?.from === from ? entered.page : undefined;
				entered = kept ? undefined : entered;
				const size = Math.min(MAX_PAGE_SIZE, room);
				const page =
					kept && kept.events.length <= room
						? kept
						: await ask({ after, page: 1 + idless, pageSize: size });
				if (pages === 0 && from === cursor.after && Number.isNaN(sinceMs)) sinceMs = timeOf(page);
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
				// `idless` pages of entries without an event id (dropped as read) move no `after`: the next by number.
				idless = !page.events.length && page.count > idless * size + page.listed ? idless + 1 : 0;
				done = !idless && (page.events.length === 0 || !(page.full || page.count > page.listed));
			}
		} finally {
			reached = after;
			if (!Number.isNaN(sinceMs) && (done || after !== from))
				next = moveAfter(next, done ? null : after, sinceMs, options.overlapMs);
		}
		return done;
	};
	/** Where the ids known stop being in place: the last page tells if all are, else a binary search finds the first page not all in place; after a look back cut at its bound, the page where it stopped (`hint`) is asked first, and all in place up to there, the read goes on from it. What is in place moves; the rest of that page is kept. */
	const count = async (ids: string[], hint = '') => {
		const target = ids.filter((id) => id <= hint).length || ids.length;
		const first = Math.ceil(target / MAX_PAGE_SIZE); // the page holding the hint, or the last
		const asked = await inPlace(ask, cursor.after, ids, first);
		// Events listed before were created before the API's now: a clock also without a `Date`.
		const newestKnown = cursor.listed[ids.at(-1)!] ?? -Infinity;
		const sinceMs = Math.max(timeOf(asked.answer) || -Infinity, newestKnown);
		let off = oldestKnownMs(cursor) > sinceMs - COUNTABLE_MS ? asked : undefined;
		for (let low = 1, high = off && off.count < target ? first : 1; low < high; ) {
			const middle = Math.floor((low + high) / 2);
			const probe = await inPlace(ask, cursor.after, ids, middle);
			if (probe.count === middle * MAX_PAGE_SIZE) low = middle + 1;
			else [high, off] = [middle, probe];
		}
		const inOrder = off?.count ?? 0;
		const from = inOrder > 0 ? ids[inOrder - 1] : cursor.after;
		if (off) {
			// The rest of the page is the list after `from` (kept if not empty, or at the list's end).
			const [answer, before] = [off.answer, inOrder - (off.number - 1) * MAX_PAGE_SIZE];
			const [count, listed] = [answer.count - inOrder, answer.listed - before];
			const rest = { ...answer, events: answer.events.slice(before), count, listed };
			if (rest.events.length || (answer.listed && count <= listed)) entered = { from, page: rest };
		}
		if (inOrder > 0) next = moveAfter(next, from, sinceMs, options.overlapMs);
		return { from, sinceMs };
	};
	try {
		const ids = Object.keys(cursor.listed).sort(); // all after `after`
		const newest = ids.at(-1) ?? cursor.after;
		if (!options.recheck) complete = await forward(newest);
		// Up to two pages of known ids, reading costs no more than counting and reading past the newest.
		else if (ids.length < 2 * MAX_PAGE_SIZE) complete = await forward(cursor.after);
		else {
			const { from, sinceMs } = await count(ids, cursor.resume);
			// First, within half the time, what `after` can move over: `listed` stays one overlap window.
			const limit = sinceMs - options.overlapMs;
			const old = ids.filter((id) => id > (from ?? '') && (cursor.listed[id] ?? Infinity) < limit);
			const half = (Date.now() + options.until) / 2;
			const through =
				old.length > 0 && (await forward(from, { sinceMs, known: old.length, until: half }));
			const on = (next.after ?? '') > (from ?? '') ? next.after : from;
			// Reaching the end, or `after` reaching the newest id, reads new events too: asked once.
			const caughtUp = through || on === newest || (await forward(newest));
			complete = through || (caughtUp && (await forward(on, { sinceMs })));
			// A look back cut before the newest id known: the next read counts from where it stopped.
			const cut = caughtUp && !complete && (reached ?? '') < (newest ?? '');
			next.resume = cut ? (reached ?? undefined) : undefined;
		}
	} catch (error) {
		failure = error as Error;
	}
	events.sort((a, b) => (idOf(a) < idOf(b) ? -1 : 1));
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

/** A cursor from now: every event listed now is done. `after` goes no nearer now than one overlap window (a late event may take an id below the newest); a newest page all within it (a burst) looks back first. */
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

/** A cursor at the newest event created before the API's now − `lookBackMs` (the next read emits all since): on the newest page, else by a binary search, then on by key. */
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
