/**
 * Reading the events after a cursor (`eventCursor.ts`), for both triggers: the new events to
 * emit and the cursor's next state, within the caller's limits, through the one reader of the
 * event list (`eventList.ts`). It writes no static data: the caller stores the state together
 * with the events it emits (`cursorStore.ts`), or not at all.
 */
import type { IDataObject } from 'n8n-workflow';

import type { CursorEvent, EventCursorState, ReadRecord } from './eventCursor';
import {
	alreadySeen,
	compareIds,
	emptyCursorState,
	frontier,
	knownAfter,
	newestCreatedOn,
	recordRead,
	remember,
	settle,
	skipFinal,
	toCursorEvent,
	verifyRead,
} from './eventCursor';
import type { EventFilter } from './eventFilter';
import { matches } from './eventFilter';
import type { EventPage, EventQuery, ReadLimits } from './eventList';
import { readEventPage, readNewestPage } from './eventList';
import type { ApiContext } from './transport/cancellation';
import { MAX_PAGE_SIZE } from './transport/responses';

/** The overlap window both triggers use unless told otherwise: how late an event may be listed and still come out. */
export const DEFAULT_OVERLAP_MINUTES = 5;

export interface CursorSettings extends EventFilter {
	/** The API's `type` filter, when exactly one type is selected. */
	apiType?: string;
	/** How late an event may become visible and still be emitted (the triggers' overlap window). */
	overlapMs: number;
}

export interface CursorReadLimits {
	/** Local time after which no further page is requested (the first is always). */
	readUntil: number;
	/** At most this many pages (default: no limit but `readUntil`). */
	maxPages?: number;
	/** Retries, waits and timeout of each page request. */
	page: () => ReadLimits;
	/**
	 * How the young stretches (where late events can still appear) are gone over: `after` the
	 * frontier is read (the default: read again, or one request when the API's count shows
	 * nothing entered them); `probe`: first one request for the event at the frontier's
	 * position after `after`, still the frontier when nothing entered before it (its count then
	 * says whether anything came after it: a quiet read is that one request); `no`: not at all
	 * (late events come out with a later read).
	 */
	recheck?: 'after' | 'probe' | 'no';
}

export interface CursorRead {
	/** The new events that match the filter, as listed, lowest id first. */
	events: IDataObject[];
	/** The state after this read, settled: store it together with `events`, or not at all. */
	next: EventCursorState;
	/** Every id the pages listed, emitted or not. */
	listed: Set<string>;
	/** The first event listed after `after` (when the read started there), for the 7-day history check. */
	firstAfter?: CursorEvent;
	pagesRead: number;
	/** The read reached the end of the list. */
	caughtUp: boolean;
	/** It stopped at its limits before the end (`next.behind` says so too). */
	stoppedForBudget: boolean;
	/** Events still listed after the last page read, when it stopped at its limits. */
	remaining: number;
	/** A page could not be read; the events read before it are still in `events` and `next`. */
	failure?: Error;
}

/** The settings of a read for an events filter: the API's own `type` filter when exactly one type is selected. */
export function cursorSettings(filter: EventFilter, overlapMs: number): CursorSettings {
	const settings: CursorSettings = { ...filter, overlapMs };
	if (filter.types?.size === 1) settings.apiType = [...filter.types][0];
	return settings;
}

/** One page `after` an id: the query both triggers send. */
export function pageQuery(
	settings: CursorSettings,
	page: number,
	after?: string | null,
): EventQuery {
	return { page, after, type: settings.apiType };
}

/** What the reads of one call found, across the contiguous reads it made. */
interface Reading {
	/** One entry per contiguous read, in the order made; `startedAt` is local time, for the no-`Date` fallback. */
	reads: Array<ReadRecord & { startedAt: number }>;
	emit: IDataObject[];
	emitted: CursorEvent[];
	firstAfter?: CursorEvent;
	pagesRead: number;
	reachedEnd: boolean;
	stoppedForBudget: boolean;
	remaining: number;
	/** Events listed after the newest id read, as the last page of the read that reached the end said (normally 0). */
	tail: number;
	/** Set when the API's count after this boundary matched the events known after it: no span there needs reading. */
	verifiedFrom?: string | null;
	/** When that was established (API clock); undefined: when the last read began. */
	verifiedAtMs?: number;
	failure?: Error;
}

/**
 * Reads from `from` until the end of the list, the limits or an error, jumping over
 * stretches the cursor knows to be final, and collects the events not emitted before.
 *
 * Pages by key: every request asks for page 1 `after` the newest id read so far, so events
 * that leave the 7-day history while the read runs (which moves every later page back) or
 * late events (which move them on) can neither hide an event nor list it twice.
 *
 * With `known` (the events the cursor knows after `from`, plus those just listed after the
 * frontier), the first answer's `count` may show that nothing entered those spans: then the
 * read stops there, as if it had read them all (`verifiedFrom`).
 */
async function readForward(
	ctx: ApiContext,
	settings: CursorSettings,
	state: EventCursorState,
	from: string | null,
	limits: CursorReadLimits,
	reading: Reading,
	known = NaN,
): Promise<void> {
	const emittedIds = new Set(reading.emitted.map((event) => event.id));
	let read: (typeof reading.reads)[number] = {
		from,
		read: [],
		readAtMs: NaN,
		startedAt: Date.now(),
	};
	let after = from;
	const readIds = new Set<string>();
	try {
		for (;;) {
			if (
				reading.pagesRead > 0 &&
				(Date.now() >= limits.readUntil || reading.pagesRead >= (limits.maxPages ?? Infinity))
			) {
				reading.stoppedForBudget = true;
				break;
			}
			let envelope: EventPage;
			try {
				envelope = await readEventPage(ctx, pageQuery(settings, 1, after), limits.page());
			} catch (error) {
				reading.failure = error as Error;
				break;
			}
			reading.pagesRead++;
			const firstPage = after === read.from;
			if (firstPage) read.readAtMs = envelope.apiTimeMs;
			const events = envelope.events;
			if (
				firstPage &&
				read.from === state.after &&
				reading.firstAfter === undefined &&
				events.length > 0
			)
				reading.firstAfter = toCursorEvent(events[0]);
			if (firstPage && envelope.count === known) {
				reading.verifiedFrom = read.from;
				reading.reachedEnd = true;
				reading.remaining = 0;
				break;
			}
			let lastId: string | undefined;
			for (const event of events) {
				const cursorEvent = toCursorEvent(event);
				if (lastId === undefined || compareIds(cursorEvent.id, lastId) > 0) lastId = cursorEvent.id;
				if (readIds.has(cursorEvent.id)) continue;
				readIds.add(cursorEvent.id);
				read.read.push(cursorEvent);
				if (
					emittedIds.has(cursorEvent.id) ||
					alreadySeen(state, cursorEvent.id, settings.overlapMs) ||
					!matches(settings, event)
				)
					continue;
				emittedIds.add(cursorEvent.id);
				reading.emit.push(event);
				reading.emitted.push(cursorEvent);
			}
			reading.remaining = Math.max(0, envelope.count - envelope.listed);
			if (!envelope.full || envelope.pages <= 1 || lastId === undefined) {
				reading.reachedEnd = true;
				reading.tail = reading.remaining;
				reading.remaining = 0;
				break;
			}
			const jumpTo = skipFinal(state, lastId, settings.overlapMs);
			if (jumpTo !== undefined) {
				reading.reads.push(read);
				read = { from: jumpTo, read: [], readAtMs: NaN, startedAt: Date.now() };
				readIds.clear();
				after = jumpTo;
			} else after = lastId;
		}
	} finally {
		reading.reads.push(read);
	}
}

/**
 * Did anything enter the young stretches? When nothing did, the event at position K after
 * `after` (K: the events the cursor knows there) is still the newest one read before, however
 * many events came after it: one request of one event. Sets `verifiedFrom` when it is, and
 * returns the count after `after` (undefined when it could not tell).
 */
async function probeFrontier(
	ctx: ApiContext,
	settings: CursorSettings,
	state: EventCursorState,
	limits: CursorReadLimits,
	reading: Reading,
): Promise<number | undefined> {
	const known = knownAfter(state, state.after);
	const newest = frontier(state);
	if (!(known > 0) || newest === null) return undefined;
	let probe: EventPage;
	try {
		probe = await readEventPage(
			ctx,
			{ ...pageQuery(settings, known, state.after), pageSize: 1 },
			limits.page(),
		);
	} catch {
		// Fewer events than that after `after` (some left the 7-day history: the API refuses the
		// page), or no answer: not verified, the stretches are read as without a probe.
		reading.pagesRead++;
		return undefined;
	}
	reading.pagesRead++;
	const atPosition = probe.events[0] && toCursorEvent(probe.events[0]).id;
	if (atPosition !== newest) return undefined;
	reading.verifiedFrom = state.after;
	reading.verifiedAtMs = probe.apiTimeMs;
	return probe.count;
}

/**
 * The events after the cursor that it has not emitted, and its next state. It reads from the
 * newest id read so far (the frontier) first, so every read emits events it has not emitted
 * before even while catching up. Once at the end, it goes over the young stretches again
 * (from `after`, or where the last such re-read stopped), over which late events can still
 * enter, skipping those that are final; one request does that when the API's count shows
 * nothing entered them. Where the young stretches fit in one page, one request reads them and
 * what is new.
 */
export async function readNewEvents(
	ctx: ApiContext,
	current: EventCursorState,
	settings: CursorSettings,
	limits: CursorReadLimits,
): Promise<CursorRead> {
	const state = settle(current, settings.overlapMs);
	const reading: Reading = {
		reads: [],
		emit: [],
		emitted: [],
		pagesRead: 0,
		reachedEnd: false,
		stoppedForBudget: false,
		remaining: 0,
		tail: 0,
	};
	const newest = frontier(state);
	const oneRead =
		newest === state.after || (!state.behind && knownAfter(state, state.after) < MAX_PAGE_SIZE);
	const recheck = limits.recheck ?? 'after';
	let caughtUp = false;
	let known = NaN;
	let verifiedCount: number | undefined;
	if (!oneRead && recheck === 'probe' && !state.behind)
		verifiedCount = await probeFrontier(ctx, settings, state, limits, reading);
	const verified = reading.verifiedFrom !== undefined;
	// Verified, and the count shows nothing after the frontier either: that one request was the read.
	if (verified && verifiedCount === knownAfter(state, state.after)) {
		caughtUp = true;
		reading.reachedEnd = true;
	} else if (!oneRead && !reading.failure) {
		await readForward(ctx, settings, state, newest, limits, reading);
		caughtUp = reading.reachedEnd;
		// What the API should count after the re-read's start if no late event came: the spans' events, the new ones, and any listed since.
		known =
			knownAfter(state, state.resume ?? state.after) + reading.reads[0].read.length + reading.tail;
	}
	const rereadSkipped = verified || (!oneRead && recheck === 'no');
	const frontierReads = reading.reads.length;
	const rereadFrom = oneRead ? state.after : (state.resume ?? state.after);
	if (!reading.failure && !reading.stoppedForBudget && !rereadSkipped) {
		reading.reachedEnd = false;
		await readForward(ctx, settings, state, rereadFrom, limits, reading, known);
		if (oneRead) caughtUp = reading.reachedEnd;
	}
	const listed = new Set(reading.reads.flatMap((read) => read.read.map((event) => event.id)));
	const result = {
		listed,
		firstAfter: reading.firstAfter,
		pagesRead: reading.pagesRead,
		caughtUp,
		stoppedForBudget: reading.stoppedForBudget,
		remaining: reading.remaining,
		failure: reading.failure,
	};
	// Nothing to hand over: the state stays as it was.
	if (reading.failure && reading.emit.length === 0) return { ...result, events: [], next: state };

	const fallbackMs = newestCreatedOn(reading.reads.flatMap((read) => read.read));
	let next = remember(state, reading.emitted);
	let verifiedAtMs = NaN;
	for (const read of reading.reads) {
		// Without a `Date` header: the newest event read was created before the API answered, less the time since this read began.
		let readAtMs = read.readAtMs;
		if (!Number.isFinite(readAtMs))
			readAtMs = Math.max(state.horizonMs ?? -Infinity, fallbackMs - (Date.now() - read.startedAt));
		if (!Number.isFinite(readAtMs)) readAtMs = NaN;
		next = recordRead(next, { ...read, readAtMs }, settings.overlapMs);
		if (read === reading.reads[reading.reads.length - 1]) verifiedAtMs = readAtMs;
	}
	// The count matched when the last request was answered: every span after that boundary held exactly its known events then.
	if (reading.verifiedFrom !== undefined)
		next = verifyRead(next, reading.verifiedFrom, reading.verifiedAtMs ?? verifiedAtMs);
	// A re-read that ran out of budget before the old frontier: the next one goes on from the newest id it read.
	let rereadNewest: string | undefined;
	for (const read of reading.reads.slice(frontierReads)) {
		for (const event of read.read)
			if (rereadNewest === undefined || compareIds(event.id, rereadNewest) > 0)
				rereadNewest = event.id;
	}
	if (reading.verifiedFrom !== undefined && !reading.stoppedForBudget) delete next.resume;
	else if (!rereadSkipped) {
		if (caughtUp && reading.reachedEnd) delete next.resume;
		else if (
			caughtUp &&
			rereadNewest !== undefined &&
			newest !== null &&
			compareIds(rereadNewest, newest) < 0
		)
			next.resume = rereadNewest;
	}
	next = settle(next, settings.overlapMs);
	// Catching up: the next read goes on from the frontier first, until one reaches the end.
	if (reading.stoppedForBudget && !caughtUp)
		next.behind = state.behind ?? { sinceMs: next.horizonMs ?? 0, remaining: reading.remaining };
	else if (caughtUp) delete next.behind;

	const order = reading.emit.map((event, index) => ({ event, id: reading.emitted[index].id }));
	order.sort((a, b) => compareIds(a.id, b.id));
	return { ...result, events: order.map((entry) => entry.event), next };
}

/**
 * A cursor that starts from now: the newest page is read (page 1 tells how many there are, so
 * at most two requests, whatever the size of the history) and its events are taken as known,
 * so only later events, and late ones among them, are new.
 */
export async function anchorAtNewest(
	ctx: ApiContext,
	settings: CursorSettings,
	limits: ReadLimits,
): Promise<EventCursorState> {
	const startedAt = Date.now();
	const envelope = await readNewestPage(ctx, { type: settings.apiType }, limits);
	const page = envelope.events.map(toCursorEvent).sort((a, b) => compareIds(a.id, b.id));
	const [oldest, ...rest] = page;
	if (!oldest) {
		const empty = emptyCursorState(null);
		if (Number.isFinite(envelope.apiTimeMs)) empty.horizonMs = envelope.apiTimeMs;
		return empty;
	}
	const readAtMs = Number.isFinite(envelope.apiTimeMs)
		? envelope.apiTimeMs
		: newestCreatedOn(page) - (Date.now() - startedAt);
	const read = recordRead(
		emptyCursorState(oldest),
		{ from: oldest.id, read: rest, readAtMs },
		settings.overlapMs,
	);
	return settle(remember(read, rest), settings.overlapMs);
}

/**
 * A cursor at the newest event created before (the API's now − `lookBackMs`), found by a binary
 * search over the pages, so the next read emits every event created since: about log2(pages) + 2
 * requests, two when the newest page reaches back that far. With `since` (local time), the
 * look-back counts from then instead of from the first answer (a slow or retried first request
 * does not shorten it). The API's now is the first answer's `Date` less its round trip, or
 * without one the newest event's `createdOn`.
 */
export async function startBefore(
	ctx: ApiContext,
	settings: CursorSettings,
	lookBackMs: number,
	limits: () => ReadLimits,
	since?: number,
): Promise<EventCursorState> {
	const pages = new Map<number, CursorEvent[]>();
	const first = await readEventPage(ctx, pageQuery(settings, 1), limits());
	const sinceAnswerMs = since === undefined ? 0 : Math.max(0, Date.now() - since);
	pages.set(1, first.events.map(toCursorEvent));
	const lastPage = Math.max(first.pages, 1);
	const readPage = async (page: number): Promise<CursorEvent[]> => {
		if (!pages.has(page))
			pages.set(
				page,
				(await readEventPage(ctx, pageQuery(settings, page), limits())).events.map(toCursorEvent),
			);
		return pages.get(page)!;
	};
	let apiNow = first.apiTimeMs;
	if (!Number.isFinite(apiNow)) apiNow = newestCreatedOn(await readPage(lastPage));
	const startMs = apiNow - sinceAnswerMs - lookBackMs;
	const createdBefore = (events: CursorEvent[]) =>
		events.filter((event) => Number.isFinite(event.createdOnMs) && event.createdOnMs < startMs);
	// The last page whose oldest event was created before the start: the start lies in it.
	let low = 1;
	let high = lastPage;
	const horizonMs = Number.isFinite(apiNow) ? apiNow : null;
	if (createdBefore((await readPage(1)).slice(0, 1)).length === 0)
		return { ...emptyCursorState(null), horizonMs };
	if (createdBefore((await readPage(lastPage)).slice(0, 1)).length > 0) low = lastPage;
	while (low < high) {
		const middle = Math.ceil((low + high) / 2);
		if (createdBefore((await readPage(middle)).slice(0, 1)).length > 0) low = middle;
		else high = middle - 1;
	}
	const before = createdBefore(await readPage(low)).sort((a, b) => compareIds(a.id, b.id));
	return { ...emptyCursorState(before[before.length - 1] ?? null), horizonMs };
}
