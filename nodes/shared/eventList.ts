/**
 * The one reader of the API's event list (`GET /events`), used by the polling trigger, the
 * webhook trigger and the action node's waiting: one page per request, the envelope checked,
 * entries without an event id skipped (and logged), and the `Date` header read as the API's clock.
 */
import type { IDataObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import type { ApiContext, RetryPolicy } from './transport';
import { MAX_PAGE_SIZE, apiRequest, isObject, isUuid } from './transport';

export interface EventQuery {
	/** Only events whose id is greater (the API's `after`). */
	after?: string | null;
	/** Default 1. */
	page?: number;
	/** Default the API's largest page. */
	pageSize?: number;
	/** One event type (the API's `type` filter). */
	type?: string;
}

/** How long a read may take and wait, and what ends it early. */
export interface ReadLimits {
	retry?: Partial<RetryPolicy>;
	/** How long one attempt may take until the answer's headers arrive. */
	timeoutMs?: number;
	signal?: AbortSignal;
	/** Told when the request leaves, past the rate limit and the read pacer. */
	onSent?: (at: number) => void;
}

export interface EventPage {
	/** The listed events that carry an event id (a UUID), as the API returned them, in its order. */
	events: IDataObject[];
	/** The envelope's totals (after the query's `after`): events, and pages of this page size. */
	count: number;
	pages: number;
	/** How many entries the page held, events without a valid id included (`count` counts them too). */
	listed: number;
	/** Whether the page was full: more events may follow it. */
	full: boolean;
	/** A lower bound of the API's clock when it evaluated the request: its `Date` less the round trip; NaN without `Date`. */
	apiTimeMs: number;
}

/** One page of the event list. Throws `NodeApiError` on an error the transport could not wait or retry away. */
export async function readEventPage(
	ctx: ApiContext,
	query: EventQuery,
	limits: ReadLimits = {},
): Promise<EventPage> {
	const pageSize = query.pageSize ?? MAX_PAGE_SIZE;
	const qs: IDataObject = { page: query.page ?? 1, pageSize };
	if (query.after) qs.after = query.after;
	if (query.type) qs.type = query.type;
	const sentAt = Date.now();
	const response = await apiRequest<unknown>(
		ctx,
		{ method: 'GET', path: '/events', qs, rateLimit: 'read' },
		{
			retry: limits.retry,
			timeoutMs: limits.timeoutMs,
			signal: limits.signal,
			onSent: limits.onSent,
		},
	);
	const body = response.body;
	if (!isObject(body) || !Array.isArray(body.data)) {
		const correlation = response.correlationId ? `\nCorrelation ID: ${response.correlationId}` : '';
		throw new NodeApiError(
			ctx.getNode(),
			{ path: '/events', correlationId: response.correlationId ?? null },
			{
				message: 'The API answered the event list with an unexpected body',
				description: `GET /events returned ${response.statusCode} without the paged envelope ({count, pages, data}).${correlation}`,
			},
		);
	}
	const data = body.data as unknown[];
	const events = data.filter((entry): entry is IDataObject => isObject(entry) && isUuid(entry.id));
	if (events.length < data.length) {
		ctx.logger?.warn(
			`Document Workflow: skipped ${data.length - events.length} listed event(s) without a valid id`,
			{
				example: JSON.stringify(
					data.find((entry) => !events.includes(entry as IDataObject)),
				)?.slice(0, 200),
			},
		);
	}
	const count = Number(body.count);
	const pages = Number(body.pages);
	return {
		events,
		count: Number.isFinite(count) ? count : data.length,
		pages: Number.isFinite(pages) ? pages : data.length > 0 ? 1 : 0,
		listed: data.length,
		full: data.length >= pageSize,
		// `Date` is whole seconds rounded down, sent after the list was evaluated: less the round trip it is never later.
		apiTimeMs: Date.parse(response.headers.date ?? '') - (Date.now() - sentAt),
	};
}
