/**
 * Reading the API's event list within one poll's budget: one page per request (the largest
 * page the API allows), retries and rate-limit waits cut short so the poll ends in time, and
 * the `Date` header read as the API's clock.
 */
import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import type { CursorEvent } from './eventCursor';
import { parseCreatedOn } from './eventCursor';
import type { TriggerSettings } from './triggerSettings';
import type { RetryPolicy } from '../shared/transport';
import { apiRequest, isUuid } from '../shared/transport';

/** The API's largest page: fewest requests per poll. */
export const PAGE_SIZE = 100;
/** The poll budget where n8n has none (1.x): n8n polls at most once a minute. */
export const DEFAULT_POLL_BUDGET_MS = 60_000;
/** Share of the budget after which no further page is requested. */
const READ_SHARE = 0.7;
/** Share of the budget by which every wait (Retry-After, retry backoff) must have ended. */
const WAIT_SHARE = 0.9;
/** Retries for a poll: fewer and shorter than an execution's, since the next poll comes soon anyway. */
const POLL_RETRY: Partial<RetryPolicy> = { maxRetries: 3, baseDelayMs: 250, maxDelayMs: 4000 };

export interface Deadlines {
	start: number;
	/** No page is requested after this. */
	read: number;
	/** Every wait must end before this. */
	wait: number;
}

export interface Envelope {
	data: unknown[];
	pages: number;
	count: number;
	/** A lower bound of the API's clock when it evaluated the request: its `Date` less the round trip; NaN without `Date`. */
	apiTimeMs: number;
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

export function deadlinesFor(ctx: IPollFunctions): Deadlines {
	const start = Date.now();
	const budget = pollBudgetMs(ctx);
	return { start, read: start + budget * READ_SHARE, wait: start + budget * WAIT_SHARE };
}

function isObject(value: unknown): value is IDataObject {
	return !!value && typeof value === 'object' && !Array.isArray(value);
}

/** One page of events. Throws NodeApiError (from the transport) on errors it could not wait or retry away. */
export async function listEvents(
	ctx: IPollFunctions,
	qs: IDataObject,
	deadlines: Deadlines,
): Promise<Envelope> {
	const sentAt = Date.now();
	const response = await apiRequest<unknown>(
		ctx,
		{ method: 'GET', path: '/events', qs, rateLimit: 'read' },
		{
			retry: { ...POLL_RETRY, deadline: deadlines.wait },
			timeoutMs: Math.max(1000, deadlines.wait - Date.now()),
		},
	);
	const body = response.body;
	if (!isObject(body) || !Array.isArray(body.data)) {
		throw new NodeApiError(
			ctx.getNode(),
			{ path: '/events', correlationId: response.correlationId ?? null },
			{
				message: 'The API answered the event list with an unexpected body',
				description: `GET /events returned ${response.statusCode} without the paged envelope ({count, pages, data}).${response.correlationId ? `\nCorrelation ID: ${response.correlationId}` : ''}`,
			},
		);
	}
	const count = Number(body.count);
	const pages = Number(body.pages);
	// `Date` is whole seconds rounded down, sent after the list was evaluated: less the round trip it is never later than that.
	const apiTimeMs = Date.parse(response.headers.date ?? '') - (Date.now() - sentAt);
	return {
		apiTimeMs,
		data: body.data,
		count: Number.isFinite(count) ? count : body.data.length,
		pages: Number.isFinite(pages) ? pages : body.data.length > 0 ? 1 : 0,
	};
}

export function pageQuery(
	settings: TriggerSettings,
	page: number,
	after?: string | null,
): IDataObject {
	const qs: IDataObject = { page, pageSize: PAGE_SIZE };
	if (after) qs.after = after;
	if (settings.apiType) qs.type = settings.apiType;
	return qs;
}

export function toCursorEvent(event: IDataObject): CursorEvent {
	return { id: String(event.id).toLowerCase(), createdOnMs: parseCreatedOn(event.createdOn) };
}

/** The events of a page that have an id the cursor can work with; others are logged and skipped. */
export function validEvents(ctx: IPollFunctions, data: unknown[]): IDataObject[] {
	const valid: IDataObject[] = [];
	for (const entry of data) {
		if (isObject(entry) && isUuid(entry.id)) valid.push(entry);
		else
			ctx.logger?.warn('Document Workflow Trigger: skipped an event without a valid id', {
				event: JSON.stringify(entry)?.slice(0, 200),
			});
	}
	return valid;
}

export function asItems(events: IDataObject[]): INodeExecutionData[][] {
	return [events.map((json) => ({ json }))];
}
