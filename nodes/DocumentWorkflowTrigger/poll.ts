/**
 * What one poll of the Document Workflow Trigger does: the first activation and a regular
 * poll with the exactly-once cursor (`./eventCursor.ts`). The event list is read through
 * `./eventList.ts`; "Fetch Test Event" is `./testEvents.ts`; the settings, `./triggerSettings.ts`.
 *
 * The static data is written only at the end of a poll, together with the items the poll
 * returns. A poll that fails leaves it as it was, so whatever n8n saved last (it saves
 * only after a poll that emitted, and after activation; with durable cursors also after a
 * poll that emitted nothing) always matches what was emitted.
 */
import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';

import type { CursorEvent, EventCursorState, ReadRecord } from './eventCursor';
import {
	alreadySeen,
	compareIds,
	emptyCursorState,
	frontier,
	knownAfter,
	loadCursorCopy,
	loadCursorState,
	recordRead,
	remember,
	settle,
	skipFinal,
	storeCursorCopy,
	storeCursorState,
	verifyRead,
} from './eventCursor';
import { freshStartLookBackMs, isScheduledFreshStart } from './pollInterval';
import type { Deadlines } from './eventList';
import {
	asItems,
	deadlinesFor,
	listEvents,
	pollLimits,
	pageQuery,
	toCursorEvent,
} from './eventList';
import type { TriggerSettings } from './triggerSettings';
import { matches } from '../shared/eventFilter';
import type { EventPage } from '../shared/eventList';
import { readNewestPage } from '../shared/eventList';
import { MAX_PAGE_SIZE } from '../shared/transport';

/** The newest `createdOn` among the events, as a lower bound of the API's clock where no `Date` header came. */
function newestCreatedOn(events: CursorEvent[]): number {
	let newest = NaN;
	for (const event of events)
		if (Number.isFinite(event.createdOnMs) && !(event.createdOnMs <= newest))
			newest = event.createdOnMs;
	return newest;
}

/**
 * First activation without saved state, starting from now: nothing is emitted. Page 1
 * tells how many pages there are; the last page holds the newest events, which become
 * the known baseline. At most two requests, whatever the size of the history.
 */
async function startFromNow(
	ctx: IPollFunctions,
	settings: TriggerSettings,
	staticData: IDataObject,
): Promise<null> {
	const deadlines = deadlinesFor(ctx);
	const envelope = await readNewestPage(ctx, { type: settings.apiType }, pollLimits(deadlines));
	const baseline = envelope.events.map(toCursorEvent);
	baseline.sort((a, b) => compareIds(a.id, b.id));
	const [oldest, ...rest] = baseline;
	let state = emptyCursorState(oldest ?? null);
	if (oldest) {
		const readAtMs = Number.isFinite(envelope.apiTimeMs)
			? envelope.apiTimeMs
			: newestCreatedOn(baseline) - (Date.now() - deadlines.start);
		state = settle(
			remember(
				recordRead(state, { from: oldest.id, read: rest, readAtMs }, settings.overlapMs),
				rest,
			),
			settings.overlapMs,
		);
	}
	store(ctx, staticData, state);
	return null;
}

/**
 * A scheduled poll that finds no saved state (n8n 2.41's durable cursors drop what the
 * activation poll wrote): the cursor starts at the newest event created before (API now −
 * look-back), found by a binary search over the pages, so the poll emits every event since
 * activation. About log2(pages) + 2 requests.
 */
async function startBefore(
	ctx: IPollFunctions,
	settings: TriggerSettings,
	lookBackMs: number,
	deadlines: Deadlines,
): Promise<EventCursorState> {
	const pages = new Map<number, CursorEvent[]>();
	const first = await listEvents(ctx, pageQuery(settings, 1), deadlines);
	pages.set(1, first.events.map(toCursorEvent));
	const lastPage = Math.max(first.pages, 1);
	const readPage = async (page: number): Promise<CursorEvent[]> => {
		if (!pages.has(page))
			pages.set(
				page,
				(await listEvents(ctx, pageQuery(settings, page), deadlines)).events.map(toCursorEvent),
			);
		return pages.get(page)!;
	};
	let apiNow = first.apiTimeMs;
	if (!Number.isFinite(apiNow)) apiNow = newestCreatedOn(await readPage(lastPage));
	const startMs = apiNow - lookBackMs;
	const createdBefore = (events: CursorEvent[]) =>
		events.filter((event) => Number.isFinite(event.createdOnMs) && event.createdOnMs < startMs);
	// The last page whose oldest event was created before the start: the start lies in it.
	let low = 1;
	let high = lastPage;
	if (createdBefore((await readPage(1)).slice(0, 1)).length === 0) return emptyCursorState(null);
	if (createdBefore((await readPage(lastPage)).slice(0, 1)).length > 0) low = lastPage;
	while (low < high) {
		const middle = Math.ceil((low + high) / 2);
		if (createdBefore((await readPage(middle)).slice(0, 1)).length > 0) low = middle;
		else high = middle - 1;
	}
	const before = createdBefore(await readPage(low)).sort((a, b) => compareIds(a.id, b.id));
	const start = emptyCursorState(before[before.length - 1] ?? null);
	start.horizonMs = Number.isFinite(apiNow) ? apiNow : null;
	return start;
}

/**
 * The oldest event the cursor knows of: the `after` event, or (before `after` is set) the
 * oldest remembered one. Every event after it has been read, unless it left the history.
 */
function cursorReference(state: EventCursorState): CursorEvent | undefined {
	if (state.after !== null) return { id: state.after, createdOnMs: state.afterCreatedOnMs ?? NaN };
	let oldest: CursorEvent | undefined;
	for (const [id, createdOnMs] of Object.entries(state.seen)) {
		if (!oldest || compareIds(id, oldest.id) < 0) oldest = { id, createdOnMs };
	}
	return oldest;
}

/**
 * Is the cursor still inside the 7-day history? Asked only when the first event listed
 * after it is more than one overlap window younger (a quiet spell, or n8n was down): one
 * request for the oldest available event. If that one is newer than the cursor, the
 * cursor event has left the history, and events between may have been lost.
 */
async function checkCursorInHistory(
	ctx: IPollFunctions,
	state: EventCursorState,
	firstAfter: CursorEvent,
	settings: TriggerSettings,
	deadlines: Deadlines,
): Promise<{ checked?: EventCursorState['checked']; gap?: EventCursorState['gap'] }> {
	const reference = cursorReference(state);
	if (!reference) return {};
	const after = reference.id;
	if (state.checked && state.checked.after === after && state.checked.first === firstAfter.id)
		return {};
	const afterMs = Number.isFinite(reference.createdOnMs) ? reference.createdOnMs : null;
	if (
		afterMs !== null &&
		Number.isFinite(firstAfter.createdOnMs) &&
		firstAfter.createdOnMs - afterMs <= settings.overlapMs
	)
		return {};
	if (Date.now() >= deadlines.wait) return {};
	let oldest: IDataObject | undefined;
	try {
		const probe = await listEvents(ctx, { pageSize: 1 }, deadlines);
		oldest = probe.events[0];
	} catch (error) {
		ctx.logger?.debug(
			'Document Workflow Trigger: could not check whether the cursor is still in the event history',
			{ error: (error as Error).message },
		);
		return {};
	}
	if (!oldest) return {};
	const oldestId = String(oldest.id).toLowerCase();
	if (compareIds(oldestId, after) <= 0) return { checked: { after, first: firstAfter.id } };
	const gap = {
		after,
		afterCreatedOn: afterMs === null ? null : new Date(afterMs).toISOString(),
		oldestAvailableId: oldestId,
		detectedOn: new Date().toISOString(),
	};
	if (state.gap?.after !== after) {
		ctx.logger?.warn(
			`Document Workflow Trigger "${ctx.getNode().name}": the last event it read (${after}, created ${gap.afterCreatedOn ?? 'at an unknown time'}) is no longer in the API's 7-day event history, so events between then and the oldest available one (${oldestId}) may have been missed (was the workflow inactive for more than 7 days?). Continuing from the oldest available event.`,
			{ workflowId: ctx.getWorkflow().id, node: ctx.getNode().name, ...gap },
		);
	}
	return { gap };
}

/** What the reads of one poll found, across the contiguous reads it made. */
interface PollReading {
	/** One entry per contiguous read, in the order made; `startedAt` is local time, for the no-`Date` fallback. */
	reads: Array<ReadRecord & { startedAt: number }>;
	emit: IDataObject[];
	emitted: CursorEvent[];
	/** The first event listed after `after` (page 1 of the read from `after`), for the 7-day history check. */
	firstAfter?: CursorEvent;
	pagesRead: number;
	reachedEnd: boolean;
	stoppedForBudget: boolean;
	/** Events still listed after the last page read, when the poll stopped for its budget (the envelope's `count`). */
	remaining: number;
	/** Events listed after the newest id read, as the last page of the read that reached the end said (normally 0). */
	tail: number;
	/** Set when the API's count after this boundary matched the events known after it: no span there needs reading. */
	verifiedFrom?: string | null;
	failure?: Error;
}

/**
 * Reads from `from` until the end of the list, the read deadline or an error, jumping over
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
	ctx: IPollFunctions,
	settings: TriggerSettings,
	state: EventCursorState,
	from: string | null,
	deadlines: Deadlines,
	reading: PollReading,
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
			if (reading.pagesRead > 0 && Date.now() >= deadlines.read) {
				reading.stoppedForBudget = true;
				break;
			}
			let envelope: EventPage;
			try {
				envelope = await listEvents(ctx, pageQuery(settings, 1, after), deadlines);
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

/** The node's id, under which the global copy of its state is kept; undefined where n8n gives none. */
function nodeIdOf(ctx: IPollFunctions): string | undefined {
	const id = ctx.getNode().id;
	return typeof id === 'string' && id.length > 0 ? id : undefined;
}

/** Saves the state in the node's static data and its copy (by node id) in the workflow's global static data. */
function store(ctx: IPollFunctions, staticData: IDataObject, state: EventCursorState): void {
	storeCursorState(staticData, state);
	const nodeId = nodeIdOf(ctx);
	if (nodeId !== undefined) storeCursorCopy(ctx.getWorkflowStaticData('global'), nodeId, state);
}

/**
 * The saved state: the node's own, or else the copy kept by node id, which a renamed
 * trigger finds (n8n keeps node static data under the node's name). Undefined when the node
 * has never polled, or (n8n 2.41's durable cursors) its first scheduled poll finds neither.
 */
function loadState(ctx: IPollFunctions, staticData: IDataObject): EventCursorState | undefined {
	const own = loadCursorState(staticData);
	if (own) return own;
	const nodeId = nodeIdOf(ctx);
	const copy =
		nodeId === undefined ? undefined : loadCursorCopy(ctx.getWorkflowStaticData('global'), nodeId);
	if (copy)
		ctx.logger?.debug(
			`Document Workflow Trigger "${ctx.getNode().name}": continuing from the cursor saved under the node's id (the node was renamed)`,
		);
	return copy;
}

/**
 * A regular poll. It reads from the newest id read so far (the frontier) first, so every
 * poll emits events it has not emitted before even while catching up. Once at the end, it
 * goes over the young stretches again (from `after`, or where the last such re-read ran out
 * of budget), over which late events can still enter, skipping those that are final; one
 * request does that when the API's count shows nothing entered them. New events come out
 * oldest first.
 */
export async function pollNewEvents(
	ctx: IPollFunctions,
	settings: TriggerSettings,
): Promise<INodeExecutionData[][] | null> {
	const staticData = ctx.getWorkflowStaticData('node');
	const deadlines = deadlinesFor(ctx);
	let state = loadState(ctx, staticData);
	if (!state) {
		if (settings.startFrom === 'now' && !isScheduledFreshStart(ctx))
			return await startFromNow(ctx, settings, staticData);
		state =
			settings.startFrom === 'now'
				? await startBefore(ctx, settings, freshStartLookBackMs(ctx), deadlines)
				: emptyCursorState(null);
	}
	state = settle(state, settings.overlapMs);

	const reading: PollReading = {
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
	// Young stretches that fit in one page: one request from `after` reads them and what is new.
	const oneRead =
		newest === state.after || (!state.behind && knownAfter(state, state.after) < MAX_PAGE_SIZE);
	let caughtUp = false;
	let known = NaN;
	if (!oneRead) {
		await readForward(ctx, settings, state, newest, deadlines, reading);
		caughtUp = reading.reachedEnd;
		// What the API should count after the re-read's start if no late event came: the spans' events, the new ones, and any listed since.
		known =
			knownAfter(state, state.resume ?? state.after) + reading.reads[0].read.length + reading.tail;
	}
	const frontierReads = reading.reads.length;
	const rereadFrom = oneRead ? state.after : (state.resume ?? state.after);
	if (!reading.failure && !reading.stoppedForBudget) {
		reading.reachedEnd = false;
		await readForward(ctx, settings, state, rereadFrom, deadlines, reading, known);
		if (oneRead) caughtUp = reading.reachedEnd;
	}
	const { failure } = reading;
	if (failure && reading.emit.length === 0) throw failure; // nothing to hand over: the state stays as saved

	let history: Awaited<ReturnType<typeof checkCursorInHistory>> = {};
	if (!failure && reading.firstAfter)
		history = await checkCursorInHistory(ctx, state, reading.firstAfter, settings, deadlines);

	const previous = state;
	const fallbackMs = newestCreatedOn(reading.reads.flatMap((read) => read.read));
	let next = remember(state, reading.emitted);
	let verifiedAtMs = NaN;
	for (const read of reading.reads) {
		// Without a `Date` header: the newest event read was created before the API answered, less the time since this read began.
		let readAtMs = read.readAtMs;
		if (!Number.isFinite(readAtMs))
			readAtMs = Math.max(
				previous.horizonMs ?? -Infinity,
				fallbackMs - (Date.now() - read.startedAt),
			);
		if (!Number.isFinite(readAtMs)) readAtMs = NaN;
		next = recordRead(next, { ...read, readAtMs }, settings.overlapMs);
		if (read === reading.reads[reading.reads.length - 1]) verifiedAtMs = readAtMs;
	}
	// The count matched when the last request was answered: every span after that boundary held exactly its known events then.
	if (reading.verifiedFrom !== undefined)
		next = verifyRead(next, reading.verifiedFrom, verifiedAtMs);
	// A re-read that ran out of budget before the old frontier: the next one goes on from the newest id it read.
	let rereadNewest: string | undefined;
	for (const read of reading.reads.slice(frontierReads)) {
		for (const event of read.read)
			if (rereadNewest === undefined || compareIds(event.id, rereadNewest) > 0)
				rereadNewest = event.id;
	}
	if (caughtUp && reading.reachedEnd) delete next.resume;
	else if (
		caughtUp &&
		rereadNewest !== undefined &&
		newest !== null &&
		compareIds(rereadNewest, newest) < 0
	)
		next.resume = rereadNewest;
	next = settle(next, settings.overlapMs);
	if (history.checked && next.after === history.checked.after) next.checked = history.checked;
	if (history.gap) next.gap = history.gap;
	reportProgress(ctx, previous, next, reading, caughtUp);

	store(ctx, staticData, next);
	if (reading.emit.length === 0) return null;
	const order = reading.emit.map((event, index) => ({ event, id: reading.emitted[index].id }));
	order.sort((a, b) => compareIds(a.id, b.id));
	return asItems(order.map((entry) => entry.event));
}

/**
 * Says when a poll could not read everything: one warning when catching up begins (with
 * the number of events still to read), one info line when it is over; `behind` in the state
 * makes the next poll read from the frontier first.
 */
function reportProgress(
	ctx: IPollFunctions,
	previous: EventCursorState,
	next: EventCursorState,
	reading: PollReading,
	caughtUp: boolean,
): void {
	const name = ctx.getNode().name;
	if (reading.failure) {
		ctx.logger?.warn(
			`Document Workflow Trigger "${name}": reading events stopped after ${reading.pagesRead} page(s): ${reading.failure.message}. Emitting the ${reading.emit.length} new event(s) read so far; the next poll continues from there.`,
			{ workflowId: ctx.getWorkflow().id },
		);
	}
	if (reading.stoppedForBudget && !caughtUp) {
		next.behind = previous.behind ?? { sinceMs: next.horizonMs ?? 0, remaining: reading.remaining };
		if (!previous.behind) {
			ctx.logger?.warn(
				`Document Workflow Trigger "${name}": more events than one poll can read within its budget; ${reading.remaining} event(s) are still to read. Each poll emits the next ones, oldest first, until the trigger has caught up (late events in between are emitted then).`,
				{
					workflowId: ctx.getWorkflow().id,
					remaining: reading.remaining,
					pagesRead: reading.pagesRead,
				},
			);
		}
	} else if (caughtUp) {
		delete next.behind;
		if (previous.behind)
			ctx.logger?.info(`Document Workflow Trigger "${name}": caught up with the event list.`, {
				workflowId: ctx.getWorkflow().id,
			});
	}
}
