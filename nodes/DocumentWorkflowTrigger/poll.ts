/**
 * What one poll of the Document Workflow Trigger does: what is the polling trigger's own (the
 * first activation, the fresh start under durable cursors, the 7-day history check, the
 * progress log and the poll's budget) around the read both triggers share
 * (`../shared/cursorRead.ts`). "Fetch Test Event" is `./testEvents.ts`; the settings, `./triggerSettings.ts`.
 *
 * The static data is written only at the end of a poll, together with the items the poll
 * returns. A poll that fails leaves it as it was, so whatever n8n saved last (it saves
 * only after a poll that emitted, and after activation; with durable cursors also after a
 * poll that emitted nothing) always matches what was emitted.
 */
import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';

import { freshStartLookBackMs, isScheduledFreshStart } from './pollInterval';
import type { Deadlines } from './eventList';
import { asItems, deadlinesFor, listEvents, pollLimits } from './eventList';
import type { TriggerSettings } from './triggerSettings';
import type { CursorEvent, EventCursorState } from '../shared/eventCursor';
import { compareIds, emptyCursorState, settle } from '../shared/eventCursor';
import type { CursorRead } from '../shared/cursorRead';
import { anchorAtNewest, readNewEvents, startBefore } from '../shared/cursorRead';
import { loadCursor, storeCursor } from '../shared/cursorStore';

/**
 * First activation without saved state, starting from now: nothing is emitted. The newest
 * events become the known baseline: at most two requests, whatever the size of the history.
 */
async function startFromNow(ctx: IPollFunctions, settings: TriggerSettings): Promise<null> {
	storeCursor(ctx, await anchorAtNewest(ctx, settings, pollLimits(deadlinesFor(ctx))));
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

/**
 * A regular poll: the shared read of the events after the cursor, within the poll's budget
 * (`readNewEvents`), the 7-day history check, the progress log; the new state is stored
 * whatever the poll emits (n8n keeps it only when it emits, and with durable cursors).
 */
export async function pollNewEvents(
	ctx: IPollFunctions,
	settings: TriggerSettings,
): Promise<INodeExecutionData[][] | null> {
	const deadlines = deadlinesFor(ctx);
	let state = loadCursor(ctx);
	if (!state) {
		if (settings.startFrom === 'now' && !isScheduledFreshStart(ctx))
			return await startFromNow(ctx, settings);
		// A scheduled poll without saved state (n8n 2.41's durable cursors drop what the activation
		// poll wrote): from the newest event created before (API now − look-back), so the poll
		// emits every event since activation.
		state =
			settings.startFrom === 'now'
				? await startBefore(ctx, settings, freshStartLookBackMs(ctx), () => pollLimits(deadlines))
				: emptyCursorState(null);
	}
	state = settle(state, settings.overlapMs);
	const read = await readNewEvents(ctx, state, settings, {
		readUntil: deadlines.read,
		page: () => pollLimits(deadlines),
	});
	if (read.failure && read.events.length === 0) throw read.failure; // nothing to hand over: the state stays as saved

	const next = read.next;
	if (!read.failure && read.firstAfter) {
		const history = await checkCursorInHistory(ctx, state, read.firstAfter, settings, deadlines);
		if (history.checked && next.after === history.checked.after) next.checked = history.checked;
		if (history.gap) next.gap = history.gap;
	}
	reportProgress(ctx, state, read);
	storeCursor(ctx, next);
	return read.events.length === 0 ? null : asItems(read.events);
}

/**
 * Says when a poll could not read everything: one warning when catching up begins (with
 * the number of events still to read), one info line when it is over; `behind` in the state
 * makes the next poll read from the frontier first.
 */
function reportProgress(ctx: IPollFunctions, previous: EventCursorState, read: CursorRead): void {
	const name = ctx.getNode().name;
	if (read.failure) {
		ctx.logger?.warn(
			`Document Workflow Trigger "${name}": reading events stopped after ${read.pagesRead} page(s): ${read.failure.message}. Emitting the ${read.events.length} new event(s) read so far; the next poll continues from there.`,
			{ workflowId: ctx.getWorkflow().id },
		);
	}
	if (read.next.behind && !previous.behind) {
		ctx.logger?.warn(
			`Document Workflow Trigger "${name}": more events than one poll can read within its budget; ${read.remaining} event(s) are still to read. Each poll emits the next ones, oldest first, until the trigger has caught up (late events in between are emitted then).`,
			{
				workflowId: ctx.getWorkflow().id,
				remaining: read.remaining,
				pagesRead: read.pagesRead,
			},
		);
	} else if (!read.next.behind && previous.behind && read.caughtUp) {
		ctx.logger?.info(`Document Workflow Trigger "${name}": caught up with the event list.`, {
			workflowId: ctx.getWorkflow().id,
		});
	}
}
