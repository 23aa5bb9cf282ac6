/**
 * How far back a trigger that finds no saved state on a scheduled poll looks, so "Start
 * From: Now" keeps its promise when n8n did not keep what the activation poll wrote.
 *
 * n8n 2.41 with durable poll cursors polls at activation but drops what that poll writes;
 * the first scheduled poll comes at most one poll interval later (the node's own Poll
 * Times) and finds no state. Starting that poll from (API now − one interval − a margin)
 * emits every event since activation; events from at most that long before activation can
 * be emitted too.
 */
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The interval a Poll Times entry stands for; custom cron expressions are taken as hourly. */
const INTERVAL_BY_MODE: Record<string, number> = {
	everyMinute: MINUTE,
	everyHour: HOUR,
	everyDay: DAY,
	everyWeek: 7 * DAY,
	everyMonth: 31 * DAY,
	custom: HOUR,
};

/** Extra look-back for a scheduler that starts a poll a little after its due time: half an interval, at most a minute. */
const MAX_MARGIN_MS = MINUTE;

function entryIntervalMs(entry: IDataObject): number {
	if (entry.mode === 'everyX') {
		const value = Number(entry.value);
		const unit = entry.unit === 'hours' ? HOUR : MINUTE;
		return Number.isFinite(value) && value > 0 ? value * unit : MINUTE;
	}
	return INTERVAL_BY_MODE[String(entry.mode)] ?? MINUTE;
}

/** The shortest interval of the node's Poll Times (n8n adds that parameter to every polling node); one minute when absent. */
export function pollIntervalMs(ctx: IPollFunctions): number {
	let pollTimes: unknown;
	try {
		pollTimes = ctx.getNodeParameter('pollTimes', {});
	} catch {
		return MINUTE;
	}
	const items = (pollTimes as { item?: unknown })?.item;
	if (!Array.isArray(items) || items.length === 0) return MINUTE;
	return Math.min(...items.map((entry) => entryIntervalMs((entry ?? {}) as IDataObject)));
}

/** How far before the API's now a stateless scheduled poll starts. */
export function freshStartLookBackMs(ctx: IPollFunctions): number {
	const interval = pollIntervalMs(ctx);
	return interval + Math.min(interval / 2, MAX_MARGIN_MS);
}

/**
 * True when a poll without saved state is a scheduled poll rather than the activation
 * poll: n8n 2.41 runs durable-cursor polls with activation mode `update`. A workflow updated
 * while active also polls with it, with its state kept; a renamed trigger finds its state
 * through the copy kept by node id (`eventCursor.ts` COPIES_KEY), so it never gets here.
 */
export function isScheduledFreshStart(ctx: IPollFunctions): boolean {
	const candidate = ctx as Partial<Pick<IPollFunctions, 'getActivationMode'>>;
	return (
		typeof candidate.getActivationMode === 'function' && candidate.getActivationMode() === 'update'
	);
}
