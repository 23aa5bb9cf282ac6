/**
 * What one poll of the Document Workflow Trigger does: the first activation, a regular
 * poll with the exactly-once cursor (`../shared/eventCursor.ts`), and "Fetch Test Event".
 *
 * The static data is written only at the end of a poll, together with the items the poll
 * returns. A poll that fails leaves it as it was, so whatever n8n saved last (it saves
 * only after a poll that emitted, and after activation) always matches what was emitted.
 */
import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import type { CursorEvent, EventCursorState } from './eventCursor';
import {
	advanceCursor,
	alreadySeen,
	compareIds,
	emptyCursorState,
	loadCursorState,
	parseCreatedOn,
	storeCursorState,
} from './eventCursor';
import type { RetryPolicy } from '../shared/transport';
import { apiRequest, isUuid } from '../shared/transport';
import { EVENT_TYPES } from '../shared/eventTypes';


/** The API's largest page: fewest requests per poll. */
export const PAGE_SIZE = 100;
/** How many recent events "Fetch Test Event" returns at most. */
export const TEST_EVENT_COUNT = 5;
/** How many pages "Fetch Test Event" reads at most when several types are filtered in the node. */
export const TEST_EVENT_MAX_PAGES = 10;
/** The poll budget where n8n has none (1.x): n8n polls at most once a minute. */
export const DEFAULT_POLL_BUDGET_MS = 60_000;
/** Share of the budget after which no further page is requested. */
const READ_SHARE = 0.7;
/** Share of the budget by which every wait (Retry-After, retry backoff) must have ended. */
const WAIT_SHARE = 0.9;
/** Retries for a poll: fewer and shorter than an execution's, since the next poll comes soon anyway. */
const POLL_RETRY: Partial<RetryPolicy> = { maxRetries: 3, baseDelayMs: 250, maxDelayMs: 4000 };

export const DEFAULT_OVERLAP_MINUTES = 5;

export type StartFrom = 'now' | 'oldest';

export interface TriggerSettings {
	/** Types to emit; undefined emits every type (also types the API adds later). */
	types?: Set<string>;
	/** The API's `type` filter, when exactly one type is selected. */
	apiType?: string;
	overlapMs: number;
	startFrom: StartFrom;
}

interface Deadlines {
	start: number;
	/** No page is requested after this. */
	read: number;
	/** Every wait must end before this. */
	wait: number;
}

interface Envelope {
	data: unknown[];
	pages: number;
	count: number;
}

export function readSettings(ctx: IPollFunctions): TriggerSettings {
	const rawEvents = ctx.getNodeParameter('events', []) as unknown;
	const selected = Array.isArray(rawEvents) ? [...new Set(rawEvents.map((value) => String(value)))] : [];
	const unknown = selected.filter((value) => !EVENT_TYPES.includes(value));
	if (unknown.length > 0) {
		throw new NodeOperationError(ctx.getNode(), `Unknown event type "${unknown[0]}" in "Events"`, {
			description: `Choose among: ${EVENT_TYPES.join(', ')}, or leave "Events" empty for all of them.`,
		});
	}
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	const minutes = options.overlapMinutes === undefined ? DEFAULT_OVERLAP_MINUTES : Number(options.overlapMinutes);
	if (!Number.isFinite(minutes) || minutes <= 0) {
		throw new NodeOperationError(ctx.getNode(), `The overlap window must be a positive number of minutes, not "${String(options.overlapMinutes)}"`, {
			description: 'Set Options → Overlap Window (Minutes) to e.g. 5.',
		});
	}
	const startFrom: StartFrom = options.startFrom === 'oldest' ? 'oldest' : 'now';
	const settings: TriggerSettings = { overlapMs: Math.round(minutes * 60_000), startFrom };
	if (selected.length > 0) settings.types = new Set(selected);
	if (selected.length === 1) settings.apiType = selected[0];
	return settings;
}

/** The poll budget n8n gives this poll (2.x), or a default where n8n has none (1.x). */
export function pollBudgetMs(ctx: IPollFunctions): number {
	const candidate = ctx as Partial<Pick<IPollFunctions, 'getPollBudgetMs'>>;
	if (typeof candidate.getPollBudgetMs === 'function') {
		const budget = Number(candidate.getPollBudgetMs());
		if (Number.isFinite(budget) && budget > 0) return budget;
	}
	return DEFAULT_POLL_BUDGET_MS;
}

function deadlinesFor(ctx: IPollFunctions): Deadlines {
	const start = Date.now();
	const budget = pollBudgetMs(ctx);
	return { start, read: start + budget * READ_SHARE, wait: start + budget * WAIT_SHARE };
}

function isObject(value: unknown): value is IDataObject {
	return !!value && typeof value === 'object' && !Array.isArray(value);
}

/** One page of events. Throws NodeApiError (from the transport) on errors it could not wait or retry away. */
async function listEvents(ctx: IPollFunctions, qs: IDataObject, deadlines: Deadlines): Promise<Envelope> {
	const response = await apiRequest<unknown>(
		ctx,
		{ method: 'GET', path: '/events', qs, rateLimit: 'read' },
		{ retry: { ...POLL_RETRY, deadline: deadlines.wait }, timeoutMs: Math.max(1000, deadlines.wait - Date.now()) },
	);
	const body = response.body;
	if (!isObject(body) || !Array.isArray(body.data)) {
		throw new NodeApiError(ctx.getNode(), { path: '/events', correlationId: response.correlationId ?? null }, {
			message: 'The API answered the event list with an unexpected body',
			description: `GET /events returned ${response.statusCode} without the paged envelope ({count, pages, data}).${response.correlationId ? `\nCorrelation ID: ${response.correlationId}` : ''}`,
		});
	}
	const count = Number(body.count);
	const pages = Number(body.pages);
	return {
		data: body.data,
		count: Number.isFinite(count) ? count : body.data.length,
		pages: Number.isFinite(pages) ? pages : body.data.length > 0 ? 1 : 0,
	};
}

function pageQuery(settings: TriggerSettings, page: number, after?: string | null): IDataObject {
	const qs: IDataObject = { page, pageSize: PAGE_SIZE };
	if (after) qs.after = after;
	if (settings.apiType) qs.type = settings.apiType;
	return qs;
}

function matches(settings: TriggerSettings, event: IDataObject): boolean {
	return settings.types === undefined || settings.types.has(String(event.type));
}

function toCursorEvent(event: IDataObject): CursorEvent {
	return { id: String(event.id).toLowerCase(), createdOnMs: parseCreatedOn(event.createdOn) };
}

/** The events of a page that have an id the cursor can work with; others are logged and skipped. */
function validEvents(ctx: IPollFunctions, data: unknown[]): IDataObject[] {
	const valid: IDataObject[] = [];
	for (const entry of data) {
		if (isObject(entry) && isUuid(entry.id)) valid.push(entry);
		else ctx.logger?.warn('Document Workflow Trigger: skipped an event without a valid id', { event: JSON.stringify(entry)?.slice(0, 200) });
	}
	return valid;
}

function describeTypes(settings: TriggerSettings): string {
	if (!settings.types) return 'events';
	return `${[...settings.types].join(', ')} events`;
}

function asItems(events: IDataObject[]): INodeExecutionData[][] {
	return [events.map((json) => ({ json }))];
}

/**
 * "Fetch Test Event": the most recent matching events (at most TEST_EVENT_COUNT), oldest
 * first. Reads the static data nowhere and writes it never.
 */
export async function fetchTestEvents(ctx: IPollFunctions, settings: TriggerSettings): Promise<INodeExecutionData[][]> {
	const deadlines = deadlinesFor(ctx);
	const first = await listEvents(ctx, pageQuery(settings, 1), deadlines);
	const found: IDataObject[] = [];
	let pagesRead = 0;
	let eventsRead = 0;
	let page = Math.max(first.pages, 1);
	while (page >= 1 && found.length < TEST_EVENT_COUNT && pagesRead < TEST_EVENT_MAX_PAGES) {
		if (pagesRead > 0 && Date.now() >= deadlines.read) break;
		const data = page === 1 ? first.data : (await listEvents(ctx, pageQuery(settings, page), deadlines)).data;
		pagesRead++;
		const events = validEvents(ctx, data);
		eventsRead += events.length;
		for (let index = events.length - 1; index >= 0 && found.length < TEST_EVENT_COUNT; index--) {
			if (matches(settings, events[index])) found.push(events[index]);
		}
		page--;
	}
	if (found.length === 0) {
		const where = page >= 1 ? `among the ${eventsRead} most recent events of the last 7 days` : 'in the last 7 days';
		throw new NodeOperationError(ctx.getNode(), `No ${describeTypes(settings)} ${where}`, {
			description:
				"The API lists the events of the last 7 days in the API key's environment (dev or prod). Make one happen (e.g. submit a document to a workflow), or select other event types, then fetch a test event again.",
		});
	}
	return asItems(found.reverse());
}

/**
 * First activation without saved state, starting from now: nothing is emitted. Page 1
 * tells how many pages there are; the last page holds the newest events, which become
 * the known baseline. At most two requests, whatever the size of the history.
 */
async function startFromNow(ctx: IPollFunctions, settings: TriggerSettings, staticData: IDataObject): Promise<null> {
	const deadlines = deadlinesFor(ctx);
	const first = await listEvents(ctx, pageQuery(settings, 1), deadlines);
	let data = first.data;
	if (first.pages > 1) data = (await listEvents(ctx, pageQuery(settings, first.pages), deadlines)).data;
	const baseline = validEvents(ctx, data).map(toCursorEvent);
	baseline.sort((a, b) => compareIds(a.id, b.id));
	let state = emptyCursorState(baseline[0] ?? null);
	if (baseline.length > 0) {
		state = advanceCursor(state, { read: baseline, emitted: baseline, overlapMs: settings.overlapMs, elapsedMs: Date.now() - deadlines.start });
	}
	storeCursorState(staticData, state);
	return null;
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
	if (state.checked && state.checked.after === after && state.checked.first === firstAfter.id) return {};
	const afterMs = Number.isFinite(reference.createdOnMs) ? reference.createdOnMs : null;
	if (afterMs !== null && Number.isFinite(firstAfter.createdOnMs) && firstAfter.createdOnMs - afterMs <= settings.overlapMs) return {};
	if (Date.now() >= deadlines.wait) return {};
	let oldest: IDataObject | undefined;
	try {
		const probe = await listEvents(ctx, { page: 1, pageSize: 1 }, deadlines);
		oldest = validEvents(ctx, probe.data)[0];
	} catch (error) {
		ctx.logger?.debug('Document Workflow Trigger: could not check whether the cursor is still in the event history', { error: (error as Error).message });
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

/**
 * A regular poll: every event listed after the cursor, from page 1 until the last page
 * or the poll budget, minus the ids already emitted. Returns the new events, oldest first.
 */
export async function pollNewEvents(ctx: IPollFunctions, settings: TriggerSettings): Promise<INodeExecutionData[][] | null> {
	const staticData = ctx.getWorkflowStaticData('node');
	let state = loadCursorState(staticData);
	if (!state) {
		if (settings.startFrom === 'now') return await startFromNow(ctx, settings, staticData);
		state = emptyCursorState(null);
	}

	const deadlines = deadlinesFor(ctx);
	const read: CursorEvent[] = [];
	const readIds = new Set<string>();
	const emit: IDataObject[] = [];
	const emitted: CursorEvent[] = [];
	let firstAfter: CursorEvent | undefined;
	let failure: Error | undefined;
	let stoppedForBudget = false;
	let pagesRead = 0;

	for (let page = 1; ; page++) {
		if (page > 1 && Date.now() >= deadlines.read) {
			stoppedForBudget = true;
			break;
		}
		let envelope: Envelope;
		try {
			envelope = await listEvents(ctx, pageQuery(settings, page, state.after), deadlines);
		} catch (error) {
			failure = error as Error;
			break;
		}
		pagesRead++;
		for (const event of validEvents(ctx, envelope.data)) {
			const cursorEvent = toCursorEvent(event);
			if (readIds.has(cursorEvent.id)) continue; // moved to the next page by a late event
			readIds.add(cursorEvent.id);
			read.push(cursorEvent);
			if (page === 1 && firstAfter === undefined) firstAfter = cursorEvent;
			if (alreadySeen(state, cursorEvent.id) || !matches(settings, event)) continue;
			emit.push(event);
			emitted.push(cursorEvent);
		}
		if (envelope.data.length < PAGE_SIZE || page >= envelope.pages) break;
	}

	if (failure && emit.length === 0) throw failure; // nothing to hand over: the state stays as saved

	let history: Awaited<ReturnType<typeof checkCursorInHistory>> = {};
	if (!failure && firstAfter) history = await checkCursorInHistory(ctx, state, firstAfter, settings, deadlines);

	const next = advanceCursor(state, { read, emitted, overlapMs: settings.overlapMs, elapsedMs: Date.now() - deadlines.start });
	if (history.checked && next.after === history.checked.after) next.checked = history.checked;
	if (history.gap) next.gap = history.gap;

	if (failure) {
		ctx.logger?.warn(
			`Document Workflow Trigger "${ctx.getNode().name}": reading events stopped after ${pagesRead} page(s): ${failure.message}. Emitting the ${emit.length} new event(s) read so far; the next poll continues from there.`,
			{ workflowId: ctx.getWorkflow().id },
		);
	} else if (stoppedForBudget) {
		ctx.logger?.debug(
			`Document Workflow Trigger "${ctx.getNode().name}": stopped after ${pagesRead} page(s) to stay within the poll budget; the next poll continues from there.`,
		);
	}

	storeCursorState(staticData, next);
	return emit.length > 0 ? asItems(emit) : null;
}
