/**
 * "Fetch Test Event" (the editor's manual run): the most recent matching events, read from
 * the newest page back. It never reads or writes the cursor.
 */
import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { asItems, deadlinesFor, listEvents } from './eventList';
import type { TriggerSettings } from './triggerSettings';
import { describeTypes, matches } from '../shared/eventFilter';
import type { EventQuery } from '../shared/eventList';

/** How many recent events "Fetch Test Event" returns at most. */
export const TEST_EVENT_COUNT = 5;
/** How many pages "Fetch Test Event" reads at most when several types are filtered in the node. */
export const TEST_EVENT_MAX_PAGES = 10;

/**
 * "Fetch Test Event": the most recent matching events (at most TEST_EVENT_COUNT), oldest
 * first. Reads the static data nowhere and writes it never.
 */
/** One page, with the API's own `type` filter when exactly one type is chosen. */
function pageQuery(settings: TriggerSettings, page: number): EventQuery {
	const types = settings.filter.types;
	return { page, type: types?.size === 1 ? [...types][0] : undefined };
}

export async function fetchTestEvents(
	ctx: IPollFunctions,
	settings: TriggerSettings,
): Promise<INodeExecutionData[][]> {
	const deadlines = deadlinesFor(ctx);
	const first = await listEvents(ctx, pageQuery(settings, 1), deadlines);
	const found: IDataObject[] = [];
	let pagesRead = 0;
	let eventsRead = 0;
	let page = Math.max(first.pages, 1);
	while (page >= 1 && found.length < TEST_EVENT_COUNT && pagesRead < TEST_EVENT_MAX_PAGES) {
		if (pagesRead > 0 && Date.now() >= deadlines.read) break;
		const data = page === 1 ? first : await listEvents(ctx, pageQuery(settings, page), deadlines);
		pagesRead++;
		const events = data.events;
		eventsRead += events.length;
		for (let index = events.length - 1; index >= 0 && found.length < TEST_EVENT_COUNT; index--) {
			if (matches(settings.filter, events[index])) found.push(events[index]);
		}
		page--;
	}
	if (found.length === 0) {
		const where =
			page >= 1
				? `among the ${eventsRead} most recent events of the last 7 days`
				: 'in the last 7 days';
		throw new NodeOperationError(ctx.getNode(), `No ${describeTypes(settings.filter)} ${where}`, {
			description:
				"The API lists the events of the last 7 days in the API key's environment (dev or prod). Make one happen (e.g. submit a document to a workflow), or select other event types, then fetch a test event again.",
		});
	}
	return asItems(found.reverse());
}
