/**
 * One poll of the Document Workflow Trigger: where a trigger without a cursor starts, then the
 * read both triggers share (`../shared/cursorRead.ts`) within the poll's budget and Max Events per
 * Poll. The cursor is written to static data with the items the poll returns: n8n saves it with
 * them (at emit in its default mode; with durable poll cursors it commits the node's static data
 * with the execution), so what n8n keeps always matches what was emitted. A poll that fails
 * throws before writing anything.
 */
import type { INodeExecutionData, IPollFunctions } from 'n8n-workflow';

import { freshStartLookBackMs, isScheduledFreshStart } from './pollInterval';
import { asItems, deadlinesFor, listEvents } from './eventList';
import type { TriggerSettings } from './triggerSettings';
import type { EventCursor } from '../shared/eventCursor';
import { loadCursor, oldestKnownMs, startingAfter, storeCursor } from '../shared/eventCursor';
import type { PageReader } from '../shared/cursorRead';
import { anchorAtNewest, readEvents, startBefore } from '../shared/cursorRead';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The triggers (workflow and node id) with a poll running in this process. */
const polling = new Set<string>();

/**
 * n8n starts a poll on every tick, also while the last one of the trigger still runs (its budget
 * is up to 5 minutes, a `Retry-After` may be waited out): both would read from the same cursor and
 * emit the same events. The later one ends at once, emitting nothing.
 */
export async function pollNewEvents(
	ctx: IPollFunctions,
	settings: TriggerSettings,
): Promise<INodeExecutionData[][] | null> {
	const key = `${ctx.getWorkflow().id}\u0000${ctx.getNode().id}`;
	if (polling.has(key)) return null;
	polling.add(key);
	try {
		return await pollOnce(ctx, settings);
	} finally {
		polling.delete(key);
	}
}

async function pollOnce(
	ctx: IPollFunctions,
	settings: TriggerSettings,
): Promise<INodeExecutionData[][] | null> {
	const deadlines = deadlinesFor(ctx);
	const read: PageReader = async (query) => await listEvents(ctx, query, deadlines);
	const stored = loadCursor(ctx);
	let cursor: EventCursor;
	if (stored) cursor = stored;
	else if (settings.startFrom === 'oldest') cursor = startingAfter(null);
	else if (isScheduledFreshStart(ctx))
		// A scheduled poll without a cursor: n8n 2.41's durable cursors dropped what the activation
		// poll wrote, so every event since activation is emitted (docs: durable poll cursors).
		cursor = await startBefore(read, freshStartLookBackMs(ctx));
	else {
		// First activation, starting from now: the newest events are done, nothing is emitted.
		const { filter, overlapMs } = settings;
		storeCursor(ctx, await anchorAtNewest(read, { filter, overlapMs, until: deadlines.read }));
		return null;
	}

	const result = await readEvents(read, cursor, {
		filter: settings.filter,
		overlapMs: settings.overlapMs,
		maxEvents: settings.maxEvents,
		until: deadlines.read,
		recheck: true,
	});
	if (result.failure && result.events.length === 0) throw result.failure;
	const name = ctx.getNode().name;
	const workflowId = ctx.getWorkflow().id;
	if (result.failure)
		ctx.logger?.warn(
			`Document Workflow Trigger "${name}": reading events stopped after ${result.requests} request(s): ${result.failure.message}. Emitting the ${result.events.length} new event(s) read before; the next poll goes on from there.`,
			{ workflowId },
		);
	else if (!result.complete)
		ctx.logger?.info(
			`Document Workflow Trigger "${name}": more events are listed than one poll emits (Max Events per Poll, or the poll's time); the next poll goes on with them, oldest first.`,
			{ workflowId, emitted: result.events.length },
		);
	if (result.apiTimeMs - oldestKnownMs(cursor) > 7 * DAY_MS)
		ctx.logger?.warn(
			`Document Workflow Trigger "${name}": the events it read last are more than 7 days old, older than the API's 7-day event history: events from between may have been missed (was the workflow inactive?). It carries on from the oldest available event.`,
			{ workflowId, after: cursor.after },
		);
	// Until n8n commits one, the copy keeps where the first poll started (durable: a lost commit).
	storeCursor(ctx, result.cursor, stored, undefined, stored ? stored.base : cursor);
	return result.events.length === 0 ? null : asItems(result.events);
}
