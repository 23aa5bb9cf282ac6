/**
 * The webhook trigger's reads in one n8n process, shaped as n8n's `ConnectionPoolManager`: one
 * instance, a bounded map of triggers, one read in flight per trigger that deliveries join.
 * When: `readPolicy.ts`. Why: README.md.
 */
import { createHash } from 'node:crypto';
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { CREDENTIAL_TYPE } from '../shared/credentialType';
import type { CursorRead, PageReader, ReadOptions } from '../shared/cursorRead';
import { readEvents, startBefore } from '../shared/cursorRead';
import type { EventCursor } from '../shared/eventCursor';
import { frontier, isDone, loadCursor, mergeCursors, storeCursor } from '../shared/eventCursor';
import { readEventPage } from '../shared/eventList';
import { LruMap } from '../shared/lruMap';
import { READ_MS, afterRead, firstTiming, nextReadAt, rechecks, waitsUntil } from './readPolicy';

/** A trigger without a cursor starts at the newest event created this long before (n8n routes deliveries a moment before activation ends). */
export const FRESH_START_LOOK_BACK_MS = 60_000;
export const MAX_TRIGGERS = 100;
export const MAX_HELD = 8;
/** Owed ids kept per trigger; beyond it the oldest is let go (a later read still emits its event). */
export const MAX_OWED = 1000;
const MAX_EVENTS_PER_READ = 2000;
const READ_TIMEOUT_MS = 30_000;
const REPORT_EVERY_MS = 60_000;

export type TriggerSettings = Pick<ReadOptions, 'filter' | 'overlapMs'>;

interface Delivery {
	arrivedAt: number;
	/** When its hold ends, as the last read's `afterRead` set it (unset: HOLD_MS after it came); how long it waits: `waitsUntil`. */
	holdUntil?: number;
	readsBefore: number;
	events: IDataObject[];
	/** Started the read in flight, joined it (`wake` ends that wait), asleep until its next, or let go asleep (it leaves as it wakes). */
	state: 'reading' | 'joined' | 'asleep' | 'leaving';
	wake: () => void;
}

class Trigger {
	/** The newest cursor this process knows: what requests loaded, merged with what its reads found. */
	cursor?: EventCursor;
	/** Delivered ids not done yet → when delivered (local ms); saved with the cursor, so a restart keeps them (a loaded copy older than this process's cursor may owe ids done since: not taken back). */
	owed = new Map<string, number>();
	/** Ids that rang since the last read started: its first look for them. */
	rung = new Set<string>();
	timing = firstTiming();
	/** The deliveries still held: one leaves it when it is done. */
	held = new Set<Delivery>();
	read?: Promise<void>;
	/** Reads started so far: a delivery's `readsBefore` tells which came after it. */
	reads = 0;
	/** Counts for the log lines, written at most once a minute; an example or a failure is read only with its count. */
	report = { notListed: 0, example: '', failures: 0, failure: '', at: -Infinity };
}

/** The key of one trigger's state: the same for its deliveries and its activation hook; a hash, with no secret in it. */
export function triggerKey(ctx: IWebhookFunctions | IHookFunctions): string {
	const { id, credentials } = ctx.getNode();
	const url = ctx.getMode() === 'manual' ? 'test' : 'production';
	const parts = [credentials?.[CREDENTIAL_TYPE]?.id, ctx.getWorkflow().id, id, url];
	return createHash('sha256').update(parts.join('\u0000')).digest('hex');
}

/** Pages of the event list for the webhook trigger: few, short retries (the next delivery reads anyway). */
export function pageReader(ctx: IWebhookFunctions | IHookFunctions): PageReader {
	const retry = { maxRetries: 2, baseDelayMs: 200, maxDelayMs: 1000 };
	return async (query) =>
		await readEventPage(ctx, query, {
			retry: { ...retry, deadline: Date.now() + READ_TIMEOUT_MS },
			timeoutMs: READ_TIMEOUT_MS,
		});
}

/**
 * Whether a new delivery may be held: past MAX_HELD the oldest waiting for the read in flight (held
 * while it waits out a 429) gives its place to the newcomer, likelier to carry events listed since;
 * one asleep until its own next read, seconds away, keeps its place.
 */
function makeRoom(trigger: Trigger): boolean {
	if (trigger.held.size < MAX_HELD) return true;
	const oldest = [...trigger.held].find((delivery) => delivery.state === 'joined');
	oldest?.wake(); // it leaves as it runs again, no longer held
	return !!oldest && trigger.held.delete(oldest);
}

export class WebhookReaders {
	private static instance: WebhookReaders | undefined;

	static getInstance(): WebhookReaders {
		return (WebhookReaders.instance ??= new WebhookReaders());
	}

	/** Forgets every trigger, as a restart of n8n does (tests). */
	static reset = () => void (WebhookReaders.instance = undefined);

	private readonly triggers = new LruMap<string, Trigger>(
		MAX_TRIGGERS,
		(trigger) => trigger.held.size > 0 || trigger.read !== undefined,
	);

	/** Deliveries held and ids owed, in this process and at most by one trigger (tests). */
	size(): { held: number; owed: number; mostOwed: number } {
		const owed = [...this.triggers.values()].map((trigger) => trigger.owed.size);
		const held = [...this.triggers.values()].reduce((n, trigger) => n + trigger.held.size, 0);
		return { held, owed: owed.reduce((a, b) => a + b, 0), mostOwed: Math.max(0, ...owed) };
	}

	/** The cursor and owed ids this process holds for a trigger (an activation keeps them). */
	heldFor(key: string) {
		const trigger = this.triggers.get(key);
		return trigger?.cursor && { cursor: trigger.cursor, owed: Object.fromEntries(trigger.owed) };
	}

	/** The events this delivery emits (all one read found, when it carries that read), lowest id first; whether ids it brought are still owed. */
	async receive(ctx: IWebhookFunctions, ids: string[], settings: TriggerSettings) {
		const trigger = this.triggers.getOrCreate(triggerKey(ctx), () => new Trigger());
		const loaded = loadCursor(ctx);
		const now = Date.now();
		if (loaded) trigger.cursor = trigger.cursor ? mergeCursors(trigger.cursor, loaded) : loaded;
		for (const [id, at] of Object.entries(loaded?.owed ?? {}))
			if (!isDone(trigger.cursor, id))
				trigger.owed.set(id, Math.min(at, trigger.owed.get(id) ?? at));
		for (const id of ids.filter((id) => !trigger.owed.has(id) && !isDone(trigger.cursor, id))) {
			trigger.owed.set(id, now);
			trigger.rung.add(id);
			trigger.timing.rungAt = Math.min(trigger.timing.rungAt, now);
		}
		// An id past the overlap window since its delivery will never be listed (but may have been since the last read: one more read); the map is bounded.
		for (const [id, at] of trigger.owed)
			if (now - at > settings.overlapMs || trigger.owed.size > MAX_OWED) {
				trigger.owed.delete(id);
				trigger.timing.rungAt = Math.min(trigger.timing.rungAt, now);
			}
		let wake = () => {};
		const woken = new Promise<void>((resolve) => (wake = resolve));
		const [events, readsBefore] = [[], trigger.reads];
		const delivery: Delivery = { arrivedAt: now, readsBefore, events, state: 'asleep', wake };
		if (nextReadAt(trigger.timing, trigger.owed.size) !== undefined && makeRoom(trigger))
			trigger.held.add(delivery);
		try {
			while (trigger.held.has(delivery) && delivery.state !== 'leaving') {
				const due = nextReadAt(trigger.timing, trigger.owed.size) ?? Infinity;
				const until = waitsUntil(delivery, due, !!trigger.read);
				if (!trigger.read && due <= Date.now()) {
					// Open until the read ends (only joined ones leave early): its context reads, and what it finds has a carrier.
					delivery.state = 'reading';
					trigger.read = this.readOnce(trigger, settings, ctx);
					await trigger.read.finally(() => (trigger.read = undefined));
				} else if (until <= Date.now() || (!trigger.read && due === Infinity))
					trigger.held.delete(delivery);
				else {
					delivery.state = trigger.read ? 'joined' : 'asleep';
					const timer = new AbortController(); // cleared as the wait ends: no timer outlives it
					const held = sleep(until - Date.now(), timer.signal).catch(() => {});
					await Promise.race([trigger.read ?? held, woken, held]).finally(() => timer.abort());
				}
			}
		} finally {
			trigger.held.delete(delivery);
		}
		// n8n saves this request's static data as it ends: the newest cursor, with the events it emits or a change of the owed ids (a restart keeps them).
		const saved = Object.keys(loaded?.owed ?? {});
		const changed = saved.length !== trigger.owed.size || saved.some((id) => !trigger.owed.has(id));
		if (trigger.cursor && (delivery.events.length > 0 || changed || !loaded))
			storeCursor(ctx, trigger.cursor, loaded, Object.fromEntries(trigger.owed));
		return { events: delivery.events, owes: ids.some((id) => trigger.owed.has(id)) };
	}

	private async readOnce(trigger: Trigger, settings: TriggerSettings, ctx: IWebhookFunctions) {
		const [startedAt, index] = [Date.now(), ++trigger.reads];
		const newest = trigger.cursor && frontier(trigger.cursor);
		const firstLook = trigger.rung;
		// Every owed id, not just those that rang now: one listed late below the frontier is found.
		const behind = [...trigger.owed.keys()].some((id) => !!newest && id <= newest);
		const recheck = rechecks(trigger.timing, startedAt, behind);
		[trigger.rung, trigger.timing.rungAt] = [new Set(), Infinity];
		let read: Partial<CursorRead>;
		try {
			const pages = pageReader(ctx);
			const start = trigger.cursor ?? (await startBefore(pages, FRESH_START_LOOK_BACK_MS));
			const limits = { maxEvents: MAX_EVENTS_PER_READ, until: startedAt + READ_MS, recheck };
			read = await readEvents(pages, start, { ...settings, ...limits });
		} catch (error) {
			read = { failure: error as Error }; // only startBefore throws: readEvents returns its failure
		}
		const failure = read.failure;
		// A copy loaded by a delivery meanwhile (another process's save) is kept; the read's start adds nothing.
		if (read.cursor) trigger.cursor = mergeCursors(read.cursor, trigger.cursor ?? read.cursor);
		for (const id of trigger.owed.keys()) if (isDone(trigger.cursor, id)) trigger.owed.delete(id);
		const unlisted = [...firstLook].filter((id) => trigger.owed.has(id));
		trigger.timing = {
			...trigger.timing,
			lastReadAt: startedAt,
			// A look again (nothing new rung) lists all only if nothing stays owed, and paces the next a second on.
			lastRequests: firstLook.size > 0 ? (read.requests ?? 1) : 1,
			listedAll: !failure && (firstLook.size > 0 ? unlisted.length === 0 : trigger.owed.size === 0),
			more: !failure && !read.complete,
			checkedAt: recheck && !failure ? startedAt : trigger.timing.checkedAt,
		};
		const [found, owed] = [!!read.events?.length, trigger.owed.size];
		const outcome = { ...trigger.timing, index, failed: !!failure, found, owed };
		// What this read decides for every delivery held (those that came during it too): who carries its events, whose hold it sets (`holdUntil`), who leaves; one asleep that it lets go leaves (still counted) as it wakes.
		const waiting = [...trigger.held].filter((d) => d.state !== 'leaving');
		const { carrier, staying } = afterRead(waiting, outcome, Date.now());
		if (carrier && read.events) carrier.events = read.events;
		for (const [delivery, holdUntil] of staying) delivery.holdUntil = holdUntil;
		for (const d of waiting.filter((w) => !staying.has(w)))
			if (d.state === 'asleep') d.state = 'leaving';
			else trigger.held.delete(d);
		// The log tells at most once a minute: delivered ids not listed when first looked for, failed reads.
		const report = trigger.report;
		if (failure) [report.failures, report.failure] = [report.failures + 1, failure.message];
		else if (unlisted.length)
			[report.notListed, report.example] = [report.notListed + unlisted.length, unlisted[0]];
		if (report.notListed + report.failures === 0 || Date.now() - report.at < REPORT_EVERY_MS)
			return;
		const node = `Document Workflow Webhook Trigger "${ctx.getNode().name}"`;
		const notListed = `${node}: ${report.notListed} delivered event id(s) the API did not list when looked for start nothing (e.g. ${report.example}). Forged deliveries, test pings and events of another environment look like this; an event the API lists later comes out with a later delivery, once.`;
		const failed = `${node}: ${report.failures} read(s) of the event list failed (${report.failure}). Delivered events are not lost: a later delivery's read emits them.`;
		if (report.notListed > 0) ctx.logger?.warn(notListed, { workflowId: ctx.getWorkflow().id });
		if (report.failures > 0) ctx.logger?.error(failed, { workflowId: ctx.getWorkflow().id });
		trigger.report = { ...report, notListed: 0, failures: 0, at: Date.now() };
	}
}
