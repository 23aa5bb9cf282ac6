/**
 * The webhook trigger's reads in one n8n process: per trigger one reader and one up-to-date
 * cursor, shared by its deliveries (in an `LruMap`, keyed by a hash of the credential's id,
 * workflow, node and mode). A delivery naming ids newer than what was read rings the bell
 * (`bell.ts`) and waits for the read (at most MAX_WAITING_DELIVERIES per trigger; the others
 * end at once); the read lists what follows the cursor, and one waiting delivery carries all
 * it found: its items, and the cursor written to its static data, which n8n saves as the
 * request ends. Nothing runs once no delivery waits.
 */
import { createHash } from 'node:crypto';
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import type { CursorRead, CursorSettings } from '../shared/cursorRead';
import { readNewEvents, startBefore } from '../shared/cursorRead';
import { refreshCursor, storeCursor } from '../shared/cursorStore';
import type { EventCursorState } from '../shared/eventCursor';
import { alreadySeen, compareIds, frontier, mergeCursors } from '../shared/eventCursor';
import type { ReadLimits } from '../shared/eventList';
import { LruMap } from '../shared/lruMap';
import type { ApiContext } from '../shared/transport/cancellation';
import { CREDENTIAL_TYPE } from '../shared/credentialType';
import type { Bell, BellTiming } from './bell';
import {
	DEFAULT_BELL_TIMING,
	expire,
	newBell,
	nextReadAt,
	readEnds,
	readStarts,
	ring,
} from './bell';
import type { DeliveredEvent } from './delivery';

/**
 * A trigger that starts afresh (no cursor: at activation, or a delivery finding none) takes as
 * known only the events created more than this before it started, on the API's clock: n8n
 * routes deliveries to the node as soon as it has registered the webhook, before it calls
 * `checkExists`, and an event created just before that may be delivered just after. Those
 * events, and every later one, are emitted once.
 */
export const FRESH_START_LOOK_BACK_MS = 60_000;
/** Deliveries of one trigger held open while they wait for a read; more end at once (their ids still ring). */
export const MAX_WAITING_DELIVERIES = 8;
/** Triggers with state in one process; the least recently used idle one is let go beyond it. */
export const MAX_TRIGGERS = 100;
/** A delivery waits for its ids this long after the last look at most (a read in progress is waited for). */
const WAIT_MARGIN_MS = 1000;
/** Waiting for a read is done in slices, so a delivery that rings meanwhile is not kept waiting for a later one. */
const SLICE_MS = 50;
/** The log lines about ids that start nothing, and about reads that failed, come at most this often per trigger. */
const REPORT_EVERY_MS = 60_000;
/** One read's limits: the rest of a long list comes out with the next read. */
const READ_BUDGET_MS = 10_000;
const MAX_PAGES_PER_READ = 20;
/** Stretches already read are gone over again (for events listed late) at most this often, unless an id is looked for there. */
const RECHECK_MS = 1000;
/** Retries of one page: few and short, since the next read comes soon anyway. */
const READ_RETRY = { maxRetries: 2, baseDelayMs: 200, maxDelayMs: 1000 };
/** A slow list is waited for: answers never depend on it, and the cursor only moves with what was read. */
const READ_TIMEOUT_MS = 30_000;

interface Waiter {
	ctx: IWebhookFunctions;
	/** The delivered ids it waits for (being looked for when it came). */
	ids: string[];
	until: number;
	/** What it emits: everything one read found, when it carries that read. */
	events: IDataObject[];
	done: boolean;
}

interface Report {
	/** Ids let go: not listed by the reads after their delivery. */
	notListed: number;
	/** Ids at or below what the trigger had read, and not among the events it emitted there. */
	passed: number;
	example?: string;
	lastAt: number;
	failures: number;
	failure?: string;
	lastFailureAt: number;
}

interface TriggerReader {
	cursor?: EventCursorState;
	/** When the first delivery that found no cursor came (local time): a fresh start looks back from then. */
	freshSince?: number;
	bell: Bell;
	/** When a read last went over the stretches already read (local time). */
	checkedAt: number;
	waiters: Set<Waiter>;
	sweep?: Promise<void>;
	report: Report;
	/** Set by `forgetAll` (a restart, in tests): its sweeps end and hand over nothing. */
	forgotten: boolean;
}

const readers = new LruMap<string, TriggerReader>(
	MAX_TRIGGERS,
	(reader) => reader.waiters.size > 0 || reader.sweep !== undefined,
);

/**
 * The key of one trigger's reader, the same for its deliveries and its activation: a hash of
 * the credential's id (not its content: no credential is loaded for a delivery), the workflow,
 * the node, and production or test URL, so no secret is kept as a key.
 */
export function triggerKey(ctx: IWebhookFunctions | IHookFunctions): string {
	const node = ctx.getNode();
	const parts = [
		node.credentials?.[CREDENTIAL_TYPE]?.id ?? '',
		ctx.getWorkflow().id ?? '',
		node.id,
		ctx.getMode() === 'manual' ? 'test' : 'production',
	];
	return createHash('sha256').update(parts.join('\u0000')).digest('hex');
}

/**
 * A cursor for a trigger starting afresh at local time `since`: at the newest event created
 * more than FRESH_START_LOOK_BACK_MS before it (`startBefore`), so the next read emits every
 * event created since.
 */
export async function startAfresh(
	ctx: ApiContext,
	settings: CursorSettings,
	since: number,
	limits: () => ReadLimits,
): Promise<EventCursorState> {
	return await startBefore(ctx, settings, FRESH_START_LOOK_BACK_MS, limits, since);
}

/** The cursor this process holds for a trigger, if any (an activation keeps the more advanced of it and its own). */
export function heldCursor(key: string): EventCursorState | undefined {
	return readers.get(key)?.cursor;
}

/** What this process holds (for tests): triggers, ids looked for and deliveries waiting, in all and at most per trigger. */
export function readerSize(): {
	triggers: number;
	pending: number;
	waiting: number;
	mostPending: number;
	mostWaiting: number;
} {
	const size = { triggers: readers.size, pending: 0, waiting: 0, mostPending: 0, mostWaiting: 0 };
	for (const reader of readers.values()) {
		size.pending += reader.bell.pending.size;
		size.waiting += reader.waiters.size;
		size.mostPending = Math.max(size.mostPending, reader.bell.pending.size);
		size.mostWaiting = Math.max(size.mostWaiting, reader.waiters.size);
	}
	return size;
}

/** Forgets every trigger's reader, as a restart of n8n does (for tests): reads in progress hand over nothing. */
export function forgetAll(): void {
	for (const reader of readers.values()) {
		reader.forgotten = true;
		for (const waiter of reader.waiters) finish(reader, waiter);
	}
	readers.clear();
}

function newReader(): TriggerReader {
	return {
		bell: newBell(),
		checkedAt: -Infinity,
		waiters: new Set(),
		report: { notListed: 0, passed: 0, lastAt: -Infinity, failures: 0, lastFailureAt: -Infinity },
		forgotten: false,
	};
}

function finish(reader: TriggerReader, waiter: Waiter): void {
	waiter.done = true;
	reader.waiters.delete(waiter);
}

/**
 * The events a delivery emits, as listed, lowest id first: everything one read found when
 * this delivery carries it, else none. The answer was sent before.
 */
export async function receive(
	ctx: IWebhookFunctions,
	key: string,
	delivered: DeliveredEvent[],
	settings: CursorSettings,
	timing: BellTiming = DEFAULT_BELL_TIMING,
): Promise<IDataObject[]> {
	const reader = readers.getOrCreate(key, newReader);
	// Static data is loaded per request: the process keeps the newest copy.
	reader.cursor = refreshCursor(ctx, reader.cursor);
	const cursor = reader.cursor;
	if (cursor) reader.freshSince = undefined;
	else reader.freshSince ??= Date.now();
	const newest = cursor && frontier(cursor);
	const fresh: string[] = [];
	const waitFor: string[] = [];
	for (const event of delivered) {
		// A stated type the filter excludes: the event would not be emitted anyway.
		if (settings.types && event.statedType !== undefined && !settings.types.has(event.statedType))
			continue;
		const id = event.id;
		if (reader.bell.pending.has(id)) waitFor.push(id);
		else if (cursor && Object.prototype.hasOwnProperty.call(cursor.seen, id)) continue;
		else if (
			cursor &&
			(alreadySeen(cursor, id, settings.overlapMs) || (newest && compareIds(id, newest) <= 0))
		)
			note(reader, 'passed', id);
		else fresh.push(id);
	}
	for (const id of expire(reader.bell, Date.now(), timing)) note(reader, 'notListed', id);
	for (const id of ring(reader.bell, fresh, Date.now(), timing)) note(reader, 'notListed', id);
	waitFor.push(...fresh.filter((id) => reader.bell.pending.has(id)));
	report(reader, ctx, timing);
	const carried = fresh.length > 0 || reader.waiters.size === 0;
	// Nothing of its own to wait for, but there is more to read than the last read took, and no
	// delivery waits to carry the next read: this one carries it (reads stay those the API's events call for).
	const carries = waitFor.length === 0 && goesOn(reader) && reader.waiters.size === 0;
	if (
		(waitFor.length === 0 && !carries) ||
		!carried ||
		reader.waiters.size >= MAX_WAITING_DELIVERIES
	)
		return [];

	const waiter: Waiter = {
		ctx,
		ids: waitFor,
		until: Date.now() + timing.lookForMs + WAIT_MARGIN_MS,
		events: [],
		done: false,
	};
	reader.waiters.add(waiter);
	try {
		while (!waiter.done) {
			reader.sweep ??= sweep(reader, settings, timing).finally(() => {
				reader.sweep = undefined;
			});
			await reader.sweep;
		}
	} finally {
		reader.waiters.delete(waiter);
		// The last delivery to leave lets go of the ids nobody is left to look for.
		if (reader.waiters.size === 0 && !reader.forgotten) {
			for (const id of expire(reader.bell, Date.now(), timing)) note(reader, 'notListed', id);
		}
	}
	return waiter.events;
}

/** Waits until a read is due, then reads once; ends earlier when a waiting delivery's time is up or nothing is wanted. */
async function sweep(
	reader: TriggerReader,
	settings: CursorSettings,
	timing: BellTiming,
): Promise<void> {
	for (;;) {
		if (reader.forgotten) return;
		const now = Date.now();
		let timedOut = false;
		for (const waiter of reader.waiters)
			if (now >= waiter.until) {
				finish(reader, waiter);
				timedOut = true;
			}
		if (timedOut || reader.waiters.size === 0) return;
		const due = reader.cursor === undefined ? now : nextReadAt(reader.bell, timing);
		if (due === undefined) {
			for (const waiter of reader.waiters) finish(reader, waiter);
			return;
		}
		if (due <= now) return await readOnce(reader, settings, timing);
		await sleep(Math.min(due - now, SLICE_MS));
	}
}

/** The last read stopped before the end of the list: another read follows at the bell's pace. */
function goesOn(reader: TriggerReader): boolean {
	return reader.bell.goOnAt !== undefined;
}

function pageLimits(): ReadLimits {
	return {
		retry: { ...READ_RETRY, deadline: Date.now() + READ_TIMEOUT_MS },
		timeoutMs: READ_TIMEOUT_MS,
	};
}

/** One read with the newest waiting delivery's context; the events it finds go to one waiting delivery. */
async function readOnce(
	reader: TriggerReader,
	settings: CursorSettings,
	timing: BellTiming,
): Promise<void> {
	const riders = [...reader.waiters];
	const ctx = riders[riders.length - 1].ctx;
	const purpose = readStarts(reader.bell, Date.now());
	const before = reader.cursor;
	// Stretches already read are gone over when an id looked for lies there, or once a second
	// (events listed late): first one request for the event where the frontier was, which also
	// tells whether anything came after it (a quiet read is that request alone).
	const newest = before && frontier(before);
	const lookedFor = [...purpose.rung, ...purpose.lookedAgain];
	const inRead =
		newest !== undefined && newest !== null && lookedFor.some((id) => compareIds(id, newest) <= 0);
	const checks = inRead || purpose.startedAt - reader.checkedAt >= RECHECK_MS;
	const recheck = checks ? 'probe' : 'no';
	let read: CursorRead | undefined;
	let failure: Error | undefined;
	try {
		// No cursor (none saved yet when this delivery's request loaded the static data): a fresh start.
		const start =
			before ??
			(await startAfresh(ctx, settings, reader.freshSince ?? purpose.startedAt, pageLimits));
		read = await readNewEvents(ctx, start, settings, {
			readUntil: Date.now() + READ_BUDGET_MS,
			maxPages: MAX_PAGES_PER_READ,
			page: pageLimits,
			recheck,
		});
		failure = read.failure;
		if (checks && !failure) reader.checkedAt = purpose.startedAt;
	} catch (error) {
		failure = error as Error;
	}
	if (reader.forgotten) return;
	// Newer copies loaded by deliveries meanwhile are kept; this read wins a tie.
	if (read) reader.cursor = mergeCursors(read.next, reader.cursor);
	const cursor = reader.cursor;
	if (cursor) reader.freshSince = undefined;
	const letGo = readEnds(
		reader.bell,
		purpose,
		{
			complete: read !== undefined && !failure && read.caughtUp && !read.stoppedForBudget,
			failed: failure !== undefined,
			requests: read?.pagesRead ?? 1,
			listed: (id) =>
				(read?.listed.has(id) ?? false) ||
				(cursor !== undefined && alreadySeen(cursor, id, settings.overlapMs)),
		},
		Date.now(),
		timing,
	);
	for (const id of letGo) note(reader, 'notListed', id);
	if (failure) {
		reader.report.failures++;
		reader.report.failure = failure.message;
	}
	report(reader, ctx, timing);

	const waitsFor = (waiter: Waiter) => waiter.ids.some((id) => reader.bell.pending.has(id));
	if (read && read.events.length > 0 && cursor) {
		// The read is recorded in static data only together with its events, by the delivery that emits them.
		const carrier = riders.find((waiter) => !waitsFor(waiter)) ?? riders[0];
		storeCursor(carrier.ctx, cursor);
		carrier.events = read.events;
		finish(reader, carrier);
	}
	// While there is more to read, the deliveries still waiting stay to carry the next reads, each
	// up to its time limit; otherwise those whose ids were all listed end.
	if (!goesOn(reader))
		for (const waiter of riders) if (!waiter.done && !waitsFor(waiter)) finish(reader, waiter);
}

function note(reader: TriggerReader, kind: 'notListed' | 'passed', id: string): void {
	reader.report[kind]++;
	reader.report.example ??= id;
}

/** The rate-limited log lines: ids that start nothing, and reads that failed. */
function report(reader: TriggerReader, ctx: IWebhookFunctions, timing: BellTiming): void {
	const r = reader.report;
	const now = Date.now();
	const node = ctx.getNode().name;
	if (r.notListed + r.passed > 0 && now - r.lastAt >= REPORT_EVERY_MS) {
		ctx.logger?.warn(
			`Document Workflow Webhook Trigger "${node}": ${r.notListed} delivered event id(s) the API did not list within ${timing.lookForMs / 1000} s of their delivery, and ${r.passed} at or below what the trigger had already read without emitting them, start nothing (e.g. ${r.example}). Forged deliveries, test pings and events of another environment look like this; an event the API lists later is emitted by a later read, once.`,
			{ workflowId: ctx.getWorkflow().id, notListed: r.notListed, passed: r.passed },
		);
		r.notListed = 0;
		r.passed = 0;
		r.example = undefined;
		r.lastAt = now;
	}
	if (r.failures > 0 && now - r.lastFailureAt >= REPORT_EVERY_MS) {
		ctx.logger?.error(
			`Document Workflow Webhook Trigger "${node}": ${r.failures} read(s) of the event list failed (${r.failure}). Delivered events are not lost: they come out with the next read that succeeds.`,
			{ workflowId: ctx.getWorkflow().id },
		);
		r.failures = 0;
		r.lastFailureAt = now;
	}
}
