/** The webhook trigger's reads in one n8n process, shaped as n8n's `ConnectionPoolManager`: one
 * instance, a bounded map of triggers, one read in flight per trigger that deliveries join (when:
 * `readPolicy.ts`; why: README.md). A delivered id stays owed, and saved, until the cursor has it
 * done, a read looked for it past the overlap window, or `MAX_OWED` lets it go. */
import { createHash } from 'node:crypto';
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { CREDENTIAL_TYPE } from '../shared/credentialType';
import type { CursorRead, PageReader, ReadOptions } from '../shared/cursorRead';
import { readEvents, startBefore } from '../shared/cursorRead';
import type { EventCursor } from '../shared/eventCursor';
import { idOf, isDone, loadCursor, mergeCursors, storeCursor } from '../shared/eventCursor';
import { readEventPage } from '../shared/eventList';
import { LruMap } from '../shared/lruMap';
import type { Held, ReadTiming } from './readPolicy';
import { READ_MS, afterRead, firstTiming, nextReadAt, rechecks, waitsUntil } from './readPolicy';

/** A trigger without a cursor starts this long back (deliveries come before activation ends). */
export const FRESH_START_LOOK_BACK_MS = 60_000;
export const MAX_TRIGGERS = 100;
export const MAX_HELD = 8;
/** Owed ids kept per trigger; beyond it the oldest is let go (a later read still emits it). */
export const MAX_OWED = 1000;
const MAX_EVENTS_PER_READ = 2000;
const READ_TIMEOUT_MS = 30_000;
const REPORT_EVERY_MS = 60_000;

export type TriggerSettings = Pick<ReadOptions, 'filter' | 'overlapMs'>;

interface Delivery extends Held {
	events: IDataObject[];
	/** Started the read in flight, joined it, or asleep until its next read; `wake` ends a wait. */
	state: 'reading' | 'joined' | 'asleep';
	wake: () => void;
}

class Trigger {
	cursor?: EventCursor; // the newest known: what requests loaded, merged with what reads found
	owed = new Map<string, number>(); // delivered ids not done → delivered at (local ms); saved
	rung = new Set<string>(); // ids that rang since the last read started: its first look for them
	timing: ReadTiming = firstTiming();
	held = new Set<Delivery>(); // the deliveries still held: one leaves it when it is done
	read?: Promise<void>;
	reads = 0; // reads started so far: a delivery's `readsBefore` tells which came after it
	report = { notListed: 0, example: '', failures: 0, failure: '', at: -Infinity }; // logged 1/min
}
const inUse = (trigger: Trigger) => trigger.held.size > 0 || trigger.read !== undefined;

/** One trigger's key, the same for its deliveries and activation hook; a hash, with no secret. */
export function triggerKey(ctx: IWebhookFunctions | IHookFunctions): string {
	const { id, credentials } = ctx.getNode();
	const url = ctx.getMode() === 'manual' ? 'test' : 'production';
	const parts = [credentials?.[CREDENTIAL_TYPE]?.id, ctx.getWorkflow().id, id, url];
	return createHash('sha256').update(parts.join('\u0000')).digest('hex');
}

const nameOf = (ctx: IWebhookFunctions | IHookFunctions) =>
	`${ctx.getWorkflow().id}\u0000${ctx.getNode().name}`;

/** Pages of the event list: two retries within one timeout (the next delivery reads anyway). */
export function pageReader(ctx: IWebhookFunctions | IHookFunctions): PageReader {
	return async (query) => {
		const deadline = Date.now() + READ_TIMEOUT_MS;
		const retry = { maxRetries: 2, baseDelayMs: 200, maxDelayMs: 1000, deadline };
		return await readEventPage(ctx, query, { retry, timeoutMs: READ_TIMEOUT_MS });
	};
}

/** Whether a new delivery may be held: past MAX_HELD the oldest joined to the read in flight (a
 * 429 can hold it) gives way, the newcomer likelier to carry new events; none joined: it is not. */
function makeRoom(trigger: Trigger): boolean {
	if (trigger.held.size < MAX_HELD) return true;
	const oldest = [...trigger.held].find((delivery) => delivery.state === 'joined');
	oldest?.wake(); // it leaves as it runs again, no longer held
	return !!oldest && trigger.held.delete(oldest);
}

export class WebhookReaders {
	private static instance: WebhookReaders | undefined;
	static getInstance = () => (WebhookReaders.instance ??= new WebhookReaders());
	/** Forgets every trigger, as a restart of n8n does (tests). */
	static reset = () => void (WebhookReaders.instance = undefined);
	private readonly triggers = new LruMap<string, Trigger>(MAX_TRIGGERS, inUse);
	/** The node seen last per workflow and node name: a delivery held by one replaced meanwhile saves
	 * nothing (n8n saves a request's whole static data: it would take back the new node's). */
	private readonly lastNode = new LruMap<string, string>(MAX_TRIGGERS);

	/** Deliveries held and ids owed, in this process and at most by one trigger (tests). */
	size(): { held: number; owed: number; mostOwed: number } {
		const owed = [...this.triggers.values()].map((trigger) => trigger.owed.size);
		const held = [...this.triggers.values()].reduce((n, trigger) => n + trigger.held.size, 0);
		return { held, owed: owed.reduce((a, b) => a + b, 0), mostOwed: Math.max(0, ...owed) };
	}

	/** As an activation saves a start: the cursor and owed ids this process holds now (kept). */
	activated(ctx: IHookFunctions) {
		this.lastNode.set(nameOf(ctx), ctx.getNode().id);
		const trigger = this.triggers.get(triggerKey(ctx));
		return trigger?.cursor && { cursor: trigger.cursor, owed: Object.fromEntries(trigger.owed) };
	}

	/** The events this delivery emits (all one read found, when it carries that read), lowest id
	 * first; whether ids it brought are still owed. */
	async receive(ctx: IWebhookFunctions, ids: string[], settings: TriggerSettings) {
		this.lastNode.set(nameOf(ctx), ctx.getNode().id);
		const trigger = this.triggers.getOrCreate(triggerKey(ctx), () => new Trigger());
		const { owed } = trigger;
		const [loaded, now] = [loadCursor(ctx), Date.now()];
		if (loaded) trigger.cursor = trigger.cursor ? mergeCursors(trigger.cursor, loaded) : loaded;
		// A saved copy older than the cursor may owe ids done since: those are not taken back.
		for (const [id, at] of Object.entries(loaded?.owed ?? {}))
			if (!isDone(trigger.cursor, id)) owed.set(id, Math.min(at, owed.get(id) ?? at));
		const rung = ids.filter((id) => !owed.has(id) && !isDone(trigger.cursor, id));
		for (const id of rung) owed.set(id, now);
		for (const id of rung) trigger.rung.add(id);
		// Past the bound the oldest go, by age, not map order (a later read still emits them).
		if (owed.size > MAX_OWED)
			for (const [id] of [...owed].sort(([, a], [, b]) => a - b).slice(0, owed.size - MAX_OWED))
				owed.delete(id);
		if (rung.length > 0) trigger.timing.rungAt = Math.min(trigger.timing.rungAt, now);
		let wake = () => {};
		const woken = new Promise<void>((resolve) => (wake = resolve));
		const [events, readsBefore] = [[], trigger.reads];
		const delivery: Delivery = { arrivedAt: now, readsBefore, events, state: 'asleep', wake };
		if (nextReadAt(trigger.timing, owed.size) !== undefined && makeRoom(trigger))
			trigger.held.add(delivery);
		// Until a read lets it go: start the read that is due; leave once its hold is over (or no read
		// is wanted); else wait, for the read in flight (joined) or its next (asleep), within the hold.
		try {
			while (trigger.held.has(delivery)) {
				const due = nextReadAt(trigger.timing, owed.size) ?? Infinity;
				const until = waitsUntil(delivery, due, !!trigger.read);
				if (!trigger.read && due <= Date.now()) {
					// Open until the read ends: its context reads, and what it finds has a carrier.
					delivery.state = 'reading';
					// Those joining it await this same promise: they run on with `read` already unset.
					const read = this.readOnce(trigger, settings, ctx);
					await (trigger.read = read.finally(() => (trigger.read = undefined)));
				} else if (until <= Date.now() || (!trigger.read && due === Infinity)) break;
				else {
					delivery.state = trigger.read ? 'joined' : 'asleep';
					const timer = new AbortController(); // aborted as the wait ends: no timer outlives it
					const timeUp = sleep(until - Date.now(), timer.signal).catch(() => {});
					await Promise.race([trigger.read ?? timeUp, woken, timeUp]).finally(() => timer.abort());
				}
			}
		} finally {
			trigger.held.delete(delivery);
		}
		// n8n saves this request's static data as it ends: the newest cursor, with the events it
		// emits or a change of the owed ids.
		const saved = Object.keys(loaded?.owed ?? {});
		const changed = saved.length !== owed.size || saved.some((id) => !owed.has(id));
		const replaced = this.lastNode.get(nameOf(ctx)) !== ctx.getNode().id;
		if (trigger.cursor && !replaced && (changed || !loaded || delivery.events.length > 0))
			storeCursor(ctx, trigger.cursor, loaded, Object.fromEntries(owed));
		return { events: delivery.events, owes: ids.some((id) => owed.has(id)) };
	}

	private async readOnce(trigger: Trigger, settings: TriggerSettings, ctx: IWebhookFunctions) {
		const [firstLook, startedAt, index] = [trigger.rung, Date.now(), ++trigger.reads];
		const owed = [...trigger.owed.keys()]; // the read looks for them first
		const recheck = rechecks(trigger.timing, startedAt, owed, trigger.cursor);
		[trigger.rung, trigger.timing.rungAt] = [new Set(), Infinity];
		const pages = pageReader(ctx);
		const limits = { maxEvents: MAX_EVENTS_PER_READ, until: startedAt + READ_MS, recheck, owed };
		const read: Partial<CursorRead> = await (async () => {
			const start = trigger.cursor ?? (await startBefore(pages, FRESH_START_LOOK_BACK_MS));
			return await readEvents(pages, start, { ...settings, ...limits });
		})().catch((failure: Error) => ({ failure })); // only startBefore throws; readEvents returns it
		const failure = read.failure;
		// A copy a delivery loaded meanwhile (another process's save) is kept, and what it has done is
		// not emitted again; the start adds nothing.
		const events = read.events?.filter((event) => !isDone(trigger.cursor, idOf(event)));
		if (read.cursor) trigger.cursor = mergeCursors(read.cursor, trigger.cursor ?? read.cursor);
		// An id past its overlap window goes once a read of the whole list after the cursor missed it.
		const whole = recheck && !!read.complete;
		for (const [id, at] of trigger.owed)
			if (isDone(trigger.cursor, id) || (whole && startedAt - at > settings.overlapMs))
				trigger.owed.delete(id);
		const unlisted = [...firstLook].filter((id) => trigger.owed.has(id));
		trigger.timing = {
			...trigger.timing,
			lastReadAt: startedAt,
			// A look again (nothing new rang) lists all only if nothing stays owed; it paces at 1/s.
			lastRequests: firstLook.size > 0 ? (read.requests ?? 1) : 1,
			listedAll: !failure && (firstLook.size > 0 ? unlisted.length === 0 : trigger.owed.size === 0),
			more: !failure && !read.complete,
			checkedAt: recheck && !failure ? startedAt : trigger.timing.checkedAt,
		};
		const found = !!events?.length;
		const outcome = { ...trigger.timing, index, failed: !!failure, found, owed: trigger.owed.size };
		// For every delivery held (those that came during it too): who carries the events, who stays
		// till when, who leaves: at once, one asleep too (woken), its place free for a newcomer.
		const { carrier, staying } = afterRead(trigger.held, outcome, Date.now());
		if (carrier && events) carrier.events = events;
		for (const [delivery, holdUntil] of staying) delivery.holdUntil = holdUntil;
		const leaving = [...trigger.held].filter((delivery) => !staying.has(delivery));
		for (const delivery of leaving) trigger.held.delete(delivery);
		for (const delivery of leaving) delivery.wake();
		// Logged at most once a minute: delivered ids not listed when first looked for, failed reads.
		const report = trigger.report;
		if (failure) [report.failures, report.failure] = [report.failures + 1, failure.message];
		else if (unlisted.length)
			[report.notListed, report.example] = [report.notListed + unlisted.length, unlisted[0]];
		if (!(report.notListed || report.failures) || Date.now() - report.at < REPORT_EVERY_MS) return;
		const node = `Document Workflow Webhook Trigger "${ctx.getNode().name}"`;
		const notListed =
			`${node}: ${report.notListed} delivered event id(s) the API did not list when looked for ` +
			`start nothing (e.g. ${report.example}). Forged deliveries, test pings and events of ` +
			'another environment look like this; an event the API lists later comes out with a ' +
			'later delivery, once.';
		const failed =
			`${node}: ${report.failures} read(s) of the event list failed (${report.failure}). ` +
			"Delivered events are not lost: a later delivery's read emits them.";
		if (report.notListed > 0) ctx.logger?.warn(notListed, { workflowId: ctx.getWorkflow().id });
		if (report.failures > 0) ctx.logger?.error(failed, { workflowId: ctx.getWorkflow().id });
		trigger.report = { ...report, notListed: 0, failures: 0, at: Date.now() };
	}
}
