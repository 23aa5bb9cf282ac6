/**
 * Where waiting's reads of the event list start, and which pages they read; pure. Events commit
 * late and are then listed under ids below ones already read (api-spec, "List events"), so each
 * read goes back over the last few minutes (the triggers' overlap window): it starts after the
 * newest event created that long before the newest one seen, and counts instead of reading again.
 * Events only enter the list, so when the ids seen are still all there, the first page with
 * unseen events is where they end; a count above them says late ones entered earlier pages.
 */
import type { IDataObject } from 'n8n-workflow';
import { DEFAULT_OVERLAP_MINUTES } from '../../shared/cursorRead';
import { MAX_PAGE_SIZE } from '../../shared/transport';

/** Not waiting's own choice: the triggers' overlap window. An event listed up to this late is
 * still seen. */
export const LOOKBACK_MS = DEFAULT_OVERLAP_MINUTES * 60_000;

/** `after`: where reads start (undefined: the list's start); `seen`: every id listed after it,
 * with its `createdOn` (ms, NaN when unreadable). */
export interface ListWindow {
	anchored: boolean;
	after?: string;
	seen: Map<string, number>;
}

export const newListWindow = (): ListWindow => ({ anchored: false, seen: new Map() });

const idOf = (event: IDataObject) => String(event.id).toLowerCase();
/** Whether an id comes after where reads start (undefined: the list's start). */
const isAfter = (id: string, after?: string) => after === undefined || id > after;

/** The first page a read asks for: its end, the first time; then the first with ids not seen. */
export const firstListPage = ({ anchored, seen }: ListWindow): number =>
	anchored ? Math.floor(seen.size / MAX_PAGE_SIZE) + 1 : 1;

/** The page read after `page` (undefined: the read is done). The first read: page 1, then the
 * last. Then the pages after the first, then back from it while the list counts more events than
 * the ids seen and the new ones read (late ones entered before). */
export function nextListPage(
	window: ListWindow,
	first: number,
	page: number,
	answer: { count: number; pages: number },
	events: IDataObject[],
): number | undefined {
	if (!window.anchored) return page === 1 && answer.pages > 1 ? answer.pages : undefined;
	if (page >= first && page < answer.pages) return page + 1;
	const fresh = new Set(events.map(idOf).filter((id) => !window.seen.has(id))).size;
	const next = page >= first ? first - 1 : page - 1;
	return next >= 1 && answer.count > window.seen.size + fresh ? next : undefined;
}

/** Takes a read's events into the window; returns the ones not seen before (none the first time:
 * it only finds where the list ends). */
export function takeListRead(window: ListWindow, events: IDataObject[]): IDataObject[] {
	const byId = new Map(events.map((event) => [idOf(event), event]));
	const ids = [...byId.keys()].sort();
	const see = (id: string) => window.seen.set(id, Date.parse(String(byId.get(id)!.createdOn)));
	if (!window.anchored) {
		// The newest page's first event is where reads start; the rest of that page is seen.
		const newest = ids.slice(-(((ids.length - 1) % MAX_PAGE_SIZE) + 1));
		window.anchored = true;
		window.after = newest[0];
		newest.slice(1).forEach(see);
		return [];
	}
	const fresh = ids.filter((id) => !window.seen.has(id) && isAfter(id, window.after));
	fresh.forEach(see);
	// Reads start after the newest event created LOOKBACK_MS before the newest one seen.
	const newestMs = Math.max(...[...window.seen.values()].filter(Number.isFinite));
	let after = window.after;
	for (const [id, createdMs] of window.seen)
		if (createdMs < newestMs - LOOKBACK_MS && isAfter(id, after)) after = id;
	for (const id of window.seen.keys()) if (!isAfter(id, after)) window.seen.delete(id);
	window.after = after;
	return fresh.map((id) => byId.get(id)!);
}
