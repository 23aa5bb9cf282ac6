/**
 * Reading the API's event list within one poll's budget: retries and rate-limit waits cut
 * short so the poll ends in time. The list itself is read by the shared reader.
 */
import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';

import type { EventPage, EventQuery, ReadLimits } from '../shared/eventList';
import { readEventPage } from '../shared/eventList';
import type { RetryPolicy } from '../shared/transport';

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

/** Retries and waits that end by the poll's deadline. */
export function pollLimits(deadlines: Deadlines): ReadLimits {
	return {
		retry: { ...POLL_RETRY, deadline: deadlines.wait },
		timeoutMs: Math.max(1000, deadlines.wait - Date.now()),
	};
}

/** One page of events within the poll's deadlines (the shared reader, `../shared/eventList.ts`). */
export async function listEvents(
	ctx: IPollFunctions,
	query: EventQuery,
	deadlines: Deadlines,
): Promise<EventPage> {
	return await readEventPage(ctx, query, pollLimits(deadlines));
}

export function asItems(events: IDataObject[]): INodeExecutionData[][] {
	return [events.map((json) => ({ json }))];
}
