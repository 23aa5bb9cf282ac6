/**
 * The webhook trigger's reads in one n8n process, in the shape of n8n's `ConnectionPoolManager`:
 * one instance, a bounded map of triggers keyed by a hash (the credential's id, workflow, node,
 * mode: no secret), one read in flight per trigger that deliveries join. When to read and who
 * waits is `readPolicy.ts`; the cursor and the read are `../shared/`.
 */
import { createHash } from 'node:crypto';
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { CREDENTIAL_TYPE } from '../shared/credentialType';
import type { CursorRead, PageReader } from '../shared/cursorRead';
import { readEvents, startBefore } from '../shared/cursorRead';
import type { EventCursor, StoredCursor } from '../shared/eventCursor';
import {
	compareIds,
	frontier,
	isDone,
	loadCursor,
	mergeCursors,
	storeCursor,
} from '../shared/eventCursor';
import type { EventFilter } from '../shared/eventFilter';
import { readEventPage } from '../shared/eventList';
import { LruMap } from '../shared/lruMap';
import type { ReadTiming, Waiting } from './readPolicy';
import { HOLD_MS, afterRead, firstTiming, nextReadAt, rechecks } from './readPolicy';

/** A trigger without a cursor starts at the newest event created this long before (n8n routes deliveries a moment before activation ends). */
export const FRESH_START_LOOK_BACK_MS = 60_000;
export const MAX_TRIGGERS = 100;
/** Deliveries held per trigger; more are answered and end at once (their ids are still owed). */
export const MAX_HELD = 8;
/** Owed ids kept per trigger; beyond it the oldest is let go (a later read still emits its event). */
export const MAX_OWED = 1000;
/** One read lists at most this many events; the rest comes with the next. */
const MAX_EVENTS_PER_READ = 2000;
const READ_LIMITS = {
	retry: { maxRetries: 2, baseDelayMs: 200, maxDelayMs: 1000 },
	timeoutMs: 30_000,
};
const REPORT_EVERY_MS = 60_000;

export interface TriggerSettings {
	filter: EventFilter;
	overlapMs: number;
}

interface Delivery extends Waiting {
	ctx: IWebhookFunctions;
	events: IDataObject[];
	done: boolean;
}

interface Trigger {
	/** The newest cursor this process knows: what requests loaded, merged with what its reads found. */
	cursor?: EventCursor;
	/** Delivered ids not done yet → when delivered (local ms); saved with the cursor so a restart keeps them. */
	owed: Map<string, number>;
	timing: ReadTiming;
	held: Set<Delivery>;
	read?: Promise<void>;
	/** Ids that rang since the last read started: its first look for them. */
	rung: Set<string>;
	/** Log lines at most once a minute: ids not listed when first looked for, failed reads. */
	report: {
		notListed: number;
		example?: string;
		failures: number;
		lastAt: number;
		failure?: string;
	};
}

/** The key of one trigger's state: the same for its deliveries and its activation hook. */
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

export function pageReader(ctx: IWebhookFunctions | IHookFunctions): PageReader {
	return async (query) =>
		await readEventPage(ctx, query, {
			...READ_LIMITS,
			retry: { ...READ_LIMITS.retry, deadline: Date.now() + READ_LIMITS.timeoutMs },
		});
}

export class WebhookReaders {
	private static instance: WebhookReaders | undefined;

	static getInstance(): WebhookReaders {
		return (WebhookReaders.instance ??= new WebhookReaders());
	}

	/** Forgets every trigger, as a restart of n8n does (tests). */
	static reset(): void {
		WebhookReaders.instance = undefined;
	}

	private readonly triggers = new LruMap<string, Trigger>(
		MAX_TRIGGERS,
		(trigger) => trigger.held.size > 0 || trigger.read !== undefined,
	);

	/** What this process holds: triggers, deliveries held and ids owed, in all and at most per trigger (tests). */
	size(): { triggers: number; held: number; owed: number; mostHeld: number; mostOwed: number } {
		const size = { triggers: this.triggers.size, held: 0, owed: 0, mostHeld: 0, mostOwed: 0 };
		for (const { held, owed } of this.triggers.values()) {
			size.held += held.size;
			size.owed += owed.size;
			size.mostHeld = Math.max(size.mostHeld, held.size);
			size.mostOwed = Math.max(size.mostOwed, owed.size);
		}
		return size;
	}

	/** The cursor this process holds for a trigger (an activation keeps it). */
	cursorOf(key: string): EventCursor | undefined {
		return this.triggers.get(key)?.cursor;
	}

	/** The events this delivery emits (everything one read found, when it carries that read), lowest id first. */
	async receive(
		ctx: IWebhookFunctions,
		ids: string[],
		settings: TriggerSettings,
	): Promise<IDataObject[]> {
		const trigger = this.triggers.getOrCreate(triggerKey(ctx), () => ({
			owed: new Map(),
			timing: firstTiming(),
			held: new Set(),
			rung: new Set(),
			report: { notListed: 0, failures: 0, lastAt: -Infinity },
		}));
		const loaded = loadCursor(ctx);
		const now = Date.now();
		if (loaded) trigger.cursor = trigger.cursor ? mergeCursors(trigger.cursor, loaded) : loaded;
		for (const [id, at] of Object.entries(loaded?.owed ?? {}))
			trigger.owed.set(id, Math.min(at, trigger.owed.get(id) ?? at));
		for (const id of ids) {
			if (trigger.owed.has(id) || (trigger.cursor && isDone(trigger.cursor, id))) continue;
			trigger.owed.set(id, now);
			trigger.rung.add(id);
			trigger.timing.rungAt ??= now;
		}
		this.letGoOf(trigger, settings, now);
		const delivery: Delivery = { ctx, arrivedAt: now, events: [], done: false };
		if (
			trigger.held.size >= MAX_HELD ||
			nextReadAt(trigger.timing, trigger.owed.size) === undefined
		)
			delivery.done = true;
		trigger.held.add(delivery);
		try {
			while (!delivery.done) {
				const due = nextReadAt(trigger.timing, trigger.owed.size);
				if (trigger.read) await trigger.read;
				else if (due === undefined) delivery.done = true;
				else if (due <= Date.now())
					await (trigger.read = this.readOnce(trigger, settings).finally(() => {
						trigger.read = undefined;
					}));
				else if (Date.now() >= delivery.arrivedAt + HOLD_MS) delivery.done = true;
				else await sleep(Math.min(due - Date.now(), delivery.arrivedAt + HOLD_MS - Date.now()));
			}
		} finally {
			trigger.held.delete(delivery);
		}
		this.save(ctx, trigger, loaded, delivery.events.length > 0);
		return delivery.events;
	}

	/**
	 * Writes the trigger's cursor and owed ids into this request's static data, which n8n saves as
	 * the request ends: with the events it emits, or when the ids still to look for changed (a
	 * restart keeps them). Always the newest cursor, never the request's older copy.
	 */
	private save(
		ctx: IWebhookFunctions,
		trigger: Trigger,
		loaded: StoredCursor | undefined,
		carries: boolean,
	): void {
		if (!trigger.cursor) return;
		const owed = Object.fromEntries(trigger.owed);
		const saved = Object.keys(loaded?.owed ?? {});
		const changed = saved.length !== trigger.owed.size || saved.some((id) => !trigger.owed.has(id));
		if (carries || changed || !loaded) storeCursor(ctx, trigger.cursor, loaded, owed);
	}

	private async readOnce(trigger: Trigger, settings: TriggerSettings): Promise<void> {
		const waiting = [...trigger.held].filter((delivery) => !delivery.done);
		const ctx = waiting[waiting.length - 1].ctx;
		const startedAt = Date.now();
		const cursor = trigger.cursor;
		const newest = cursor && frontier(cursor);
		const firstLook = trigger.rung;
		const behind = [...firstLook].some(
			(id) => newest !== undefined && newest !== null && compareIds(id, newest) <= 0,
		);
		const recheck = !cursor || rechecks(trigger.timing, startedAt, behind);
		trigger.rung = new Set();
		trigger.timing.rungAt = undefined;
		let read: CursorRead | undefined;
		let failure: Error | undefined;
		try {
			const read$ = pageReader(ctx);
			const start = cursor ?? (await startBefore(read$, FRESH_START_LOOK_BACK_MS));
			read = await readEvents(read$, start, {
				...settings,
				maxEvents: MAX_EVENTS_PER_READ,
				until: Date.now() + 10_000,
				recheck,
			});
			failure = read.failure;
		} catch (error) {
			failure = error as Error;
		}
		// Copies loaded by deliveries meanwhile (another process's saves) are kept.
		if (read)
			trigger.cursor =
				trigger.cursor && trigger.cursor !== cursor
					? mergeCursors(read.cursor, trigger.cursor)
					: read.cursor;
		for (const id of trigger.owed.keys())
			if (trigger.cursor && isDone(trigger.cursor, id)) trigger.owed.delete(id);
		trigger.timing = {
			lastReadAt: startedAt,
			lastRequests: read?.requests ?? 1,
			listedAll: !failure && [...firstLook].every((id) => !trigger.owed.has(id)),
			rungAt: trigger.timing.rungAt,
			more: !!read && !failure && !read.complete,
			checkedAt: recheck && !failure ? startedAt : trigger.timing.checkedAt,
		};
		const report = trigger.report;
		if (failure) [report.failures, report.failure] = [report.failures + 1, failure.message];
		else
			for (const id of firstLook)
				if (trigger.owed.has(id)) [report.notListed, report.example] = [report.notListed + 1, id];
		const { carrier, staying } = afterRead(
			waiting,
			{
				startedAt,
				failed: !!failure,
				found: (read?.events.length ?? 0) > 0,
				owed: trigger.owed.size,
				more: trigger.timing.more,
			},
			Date.now(),
		);
		if (carrier && read) carrier.events = read.events;
		for (const delivery of waiting) if (!staying.includes(delivery)) delivery.done = true;
		this.report(trigger, ctx);
	}

	/** Lets go of owed ids past the overlap window since their delivery (they will never be listed), and beyond MAX_OWED. */
	private letGoOf(trigger: Trigger, settings: TriggerSettings, now: number): void {
		for (const [id, at] of trigger.owed)
			if (now - at > settings.overlapMs || trigger.owed.size > MAX_OWED) trigger.owed.delete(id);
	}

	private report(trigger: Trigger, ctx: IWebhookFunctions): void {
		const report = trigger.report;
		if (report.notListed + report.failures === 0 || Date.now() - report.lastAt < REPORT_EVERY_MS)
			return;
		const node = ctx.getNode().name;
		if (report.notListed > 0)
			ctx.logger?.warn(
				`Document Workflow Webhook Trigger "${node}": ${report.notListed} delivered event id(s) the API did not list when looked for start nothing (e.g. ${report.example}). Forged deliveries, test pings and events of another environment look like this; an event the API lists later comes out with a later delivery, once.`,
				{ workflowId: ctx.getWorkflow().id },
			);
		if (report.failures > 0)
			ctx.logger?.error(
				`Document Workflow Webhook Trigger "${node}": ${report.failures} read(s) of the event list failed (${report.failure}). Delivered events are not lost: a later delivery's read emits them.`,
				{ workflowId: ctx.getWorkflow().id },
			);
		trigger.report = { notListed: 0, failures: 0, lastAt: Date.now() };
	}
}
