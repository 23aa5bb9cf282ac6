/** The cursor rule itself (nodes/shared/eventCursor.ts), without the API. */
import {
	CURSOR_KEY,
	alreadySeen,
	emptyCursorState,
	frontier,
	isFinal,
	knownAfter,
	mergeCursors,
	peekProgress,
	progressOf,
	loadCursorState,
	recordRead,
	remember,
	settle,
	skipFinal,
	storeCursorState,
	verifyRead,
} from '../../../nodes/shared/eventCursor';
import type { CursorEvent, EventCursorState } from '../../../nodes/shared/eventCursor';

const MINUTE = 60_000;
/** Time-ordered ids like the API's: the creation time in hex first. */
const ev = (ms: number, n = 0): CursorEvent => ({
	id: `${ms.toString(16).padStart(12, '0').slice(0, 8)}-${ms.toString(16).padStart(12, '0').slice(8)}-7000-8000-${n.toString(16).padStart(12, '0')}`,
	createdOnMs: ms,
});

const T = 1_700_000_000_000;
const overlapMs = 5 * MINUTE;

/** One poll that read `read` contiguously from `from` at API time `at` and emitted what it had not seen. */
function poll(
	state: EventCursorState,
	from: string | null,
	read: CursorEvent[],
	at: number,
): EventCursorState {
	const fresh = read.filter((event) => !alreadySeen(state, event.id, overlapMs));
	return settle(
		remember(recordRead(state, { from, read, readAtMs: at }, overlapMs), fresh),
		overlapMs,
	);
}

describe('a read and settle', () => {
	test('after moves to the newest id created before (read time − overlap); newer ids are remembered in one young span', () => {
		const read = [
			ev(T),
			ev(T + MINUTE),
			ev(T + 3 * MINUTE),
			ev(T + 6 * MINUTE),
			ev(T + 8 * MINUTE),
		];
		const next = poll(emptyCursorState(null), null, read, T + 8 * MINUTE - 1000);
		// threshold = T + 8 min - 1 s - 5 min = T + 2:59 → T + 1 min is the newest before it.
		expect(next.after).toBe(read[1].id);
		expect(Object.keys(next.seen).sort()).toEqual([read[2].id, read[3].id, read[4].id].sort());
		expect(next.spans).toEqual([
			{ to: read[4].id, toCreatedOnMs: T + 8 * MINUTE, readAtMs: T + 8 * MINUTE - 1000, n: 3 },
		]);
		expect(alreadySeen(next, read[0].id, overlapMs)).toBe(true);
		expect(alreadySeen(next, read[3].id, overlapMs)).toBe(true);
		// A late event inside the young span is new.
		expect(alreadySeen(next, ev(T + 4 * MINUTE).id, overlapMs)).toBe(false);
		expect(frontier(next)).toBe(read[4].id);
	});

	test('an event created exactly at the threshold does not make its stretch final', () => {
		const read = [ev(T), ev(T + 5 * MINUTE)];
		const next = poll(emptyCursorState(null), null, read, T + 5 * MINUTE);
		expect(next.after).toBeNull();
		expect(Object.keys(next.seen)).toHaveLength(2);
	});

	test('the time comes from the API clock, not from the events: an old burst read now is final at once, whatever its size', () => {
		const burst = Array.from({ length: 1000 }, (_, n) => ev(T + n * 10, n));
		const next = poll(emptyCursorState(null), null, burst, T + 20 * MINUTE);
		expect(next.after).toBe(burst[999].id);
		expect(next.seen).toEqual({});
		expect(next.spans).toEqual([]);
	});

	test('never moves backwards: an older read time does not undo a newer one', () => {
		const first = poll(emptyCursorState(null), null, [ev(T), ev(T + 10 * MINUTE)], T + 10 * MINUTE);
		expect(first.after).toBe(ev(T).id);
		const second = poll(first, first.after, [ev(T + 2 * MINUTE)], T + 3 * MINUTE);
		expect(compareAfter(second, first)).toBeGreaterThanOrEqual(0);
		expect(second.horizonMs).toBe(T + 10 * MINUTE);
	});

	test('events without a readable date are remembered until a later final event passes them, never chosen as after', () => {
		const odd = { id: ev(T + MINUTE).id, createdOnMs: NaN };
		const state = poll(
			emptyCursorState(null),
			null,
			[ev(T), odd, ev(T + 10 * MINUTE)],
			T + 10 * MINUTE,
		);
		expect(state.after).toBe(ev(T).id);
		expect(alreadySeen(state, odd.id, overlapMs)).toBe(true);
		const later = poll(
			state,
			state.after,
			[odd, ev(T + 2 * MINUTE), ev(T + 10 * MINUTE), ev(T + 20 * MINUTE)],
			T + 20 * MINUTE,
		);
		expect(later.after).toBe(ev(T + 10 * MINUTE).id);
		expect(later.seen[odd.id]).toBeUndefined();
	});
});

function compareAfter(a: EventCursorState, b: EventCursorState): number {
	return (a.after ?? '') < (b.after ?? '') ? -1 : (a.after ?? '') > (b.after ?? '') ? 1 : 0;
}

describe('a burst larger than one poll can read', () => {
	// 3,000 events created within one minute; each poll reads 1,000; overlap 5 minutes; polls a minute apart.
	const burst = Array.from({ length: 3000 }, (_, n) => ev(T + n * 20, n));
	const chunk = (index: number) => burst.slice(index * 1000, index * 1000 + 1000);

	test('reads from the frontier continue where the last poll stopped; stretches read once old enough are final and forgotten', () => {
		let state = poll(emptyCursorState(null), null, chunk(0), T + MINUTE);
		expect(frontier(state)).toBe(chunk(0)[999].id);
		expect(Object.keys(state.seen)).toHaveLength(1000);
		// Read 5 minutes later: everything in that chunk is older than (read time − overlap).
		state = poll(state, frontier(state), chunk(1), T + 6 * MINUTE + 1);
		expect(Object.keys(state.seen)).toHaveLength(1000); // only the first, young chunk's ids
		expect(state.spans!.map((span) => isFinal(span, overlapMs))).toEqual([false, true]);
		// Reads from `after` skip the final stretch: it jumps from the end of the young one to the end of the final one.
		expect(skipFinal(state, chunk(0)[999].id, overlapMs)).toBe(chunk(1)[999].id);
		state = poll(state, frontier(state), chunk(2), T + 7 * MINUTE);
		// Re-reading the young stretch, now old: after moves over everything, nothing is remembered.
		state = poll(state, state.after, chunk(0), T + 8 * MINUTE);
		expect(state.after).toBe(chunk(2)[999].id);
		expect(state.seen).toEqual({});
		expect(state.spans).toEqual([]);
	});

	test('a partial re-read overwrites only what it covered', () => {
		let state = poll(emptyCursorState(null), null, chunk(0), T + MINUTE);
		state = poll(state, state.after, chunk(0).slice(0, 400), T + 2 * MINUTE);
		expect(state.spans).toHaveLength(2);
		expect(state.spans![0]).toEqual({
			to: chunk(0)[399].id,
			toCreatedOnMs: chunk(0)[399].createdOnMs,
			readAtMs: T + 2 * MINUTE,
			n: 400,
		});
		expect(state.spans![1].readAtMs).toBe(T + MINUTE);
		// The rest of the old span: how many events it holds is no longer known, so no count can stand for reading it.
		expect(state.spans![1].n).toBeNaN();
		expect(knownAfter(state, state.after)).toBeNaN();
		expect(Object.keys(state.seen)).toHaveLength(1000);
	});
});

describe('static data', () => {
	test('round-trips, and anything else counts as no state (a first activation)', () => {
		const data: Record<string, unknown> = {};
		expect(loadCursorState(data)).toBeUndefined();
		const state = poll(emptyCursorState(null), null, [ev(1), ev(10 * MINUTE)], 10 * MINUTE);
		state.behind = { sinceMs: 5, remaining: 7 };
		storeCursorState(data, state);
		expect(loadCursorState(data)).toEqual(state);
		// A private copy: changing it does not change the static data.
		loadCursorState(data)!.seen.x = 1;
		expect(loadCursorState(data)).toEqual(state);
		expect(loadCursorState({ [CURSOR_KEY]: { v: 2 } })).toBeUndefined();
		expect(loadCursorState({ [CURSOR_KEY]: 'junk' })).toBeUndefined();
	});

	test('a state saved before spans existed becomes one young span over its remembered ids', () => {
		const old = {
			v: 1,
			after: ev(T).id,
			afterCreatedOnMs: T,
			horizonMs: T + 6 * MINUTE,
			seen: { [ev(T + 2 * MINUTE).id]: T + 2 * MINUTE, [ev(T + 4 * MINUTE).id]: T + 4 * MINUTE },
		};
		const state = loadCursorState({ [CURSOR_KEY]: old })!;
		expect(state.spans).toEqual([
			{
				to: ev(T + 4 * MINUTE).id,
				toCreatedOnMs: T + 4 * MINUTE,
				readAtMs: T + 6 * MINUTE,
				n: NaN,
			},
		]);
		expect(alreadySeen(state, ev(T + 2 * MINUTE).id, overlapMs)).toBe(true);
		expect(alreadySeen(state, ev(T + 3 * MINUTE).id, overlapMs)).toBe(false);
	});
});

describe('counts and the copy by node id', () => {
	test("knownAfter sums the spans' counts from a boundary; verifyRead takes a matching count for a read of those spans at that time", () => {
		let state = poll(
			emptyCursorState(null),
			null,
			[ev(T), ev(T + MINUTE), ev(T + 2 * MINUTE)],
			T + 2 * MINUTE + 1000,
		);
		state = poll(
			state,
			frontier(state),
			[ev(T + 3 * MINUTE), ev(T + 4 * MINUTE)],
			T + 4 * MINUTE + 1000,
		);
		expect(knownAfter(state, state.after)).toBe(5);
		expect(knownAfter(state, state.spans![0].to)).toBe(2);
		// Not a boundary: no count can stand for it.
		expect(knownAfter(state, ev(T + MINUTE / 2).id)).toBeNaN();
		// Verified 6 minutes after the newest event: every span is final at once, and settles away.
		const verified = settle(verifyRead(state, state.after, T + 10 * MINUTE), overlapMs);
		expect(verified.spans).toEqual([]);
		expect(verified.after).toBe(ev(T + 4 * MINUTE).id);
		expect(verified.seen).toEqual({});
		// An earlier time never lowers what a span's read already established.
		expect(verifyRead(state, state.after, T).spans).toEqual(state.spans);
	});

	test('of two copies of one state, the one that has read further wins, and keeps the ids the other emitted', () => {
		const early = poll(emptyCursorState(null), null, [ev(T), ev(T + MINUTE)], T + MINUTE);
		const later = poll(early, frontier(early), [ev(T + 2 * MINUTE)], T + 2 * MINUTE);
		expect(mergeCursors(early, later)).toEqual(later);
		expect(mergeCursors(later, early)).toEqual(later);
		expect(mergeCursors(undefined, early)).toEqual(early);
		expect(mergeCursors(early, undefined)).toEqual(early);
		// Another process emitted a late event the further copy never read: it stays emitted.
		const late = ev(T + MINUTE / 2);
		const other = remember(early, [late]);
		const merged = mergeCursors(later, other)!;
		expect(frontier(merged)).toBe(frontier(later));
		expect(alreadySeen(merged, late.id, overlapMs)).toBe(true);
		expect(alreadySeen(later, late.id, overlapMs)).toBe(false);
	});

	test("a saved state's progress is read without loading its ids, and equals the loaded state's", () => {
		let state = poll(emptyCursorState(null), null, [ev(T), ev(T + MINUTE)], T + MINUTE);
		state = poll(state, frontier(state), [ev(T + 2 * MINUTE)], T + 8 * MINUTE);
		const saved: Record<string, unknown> = {};
		storeCursorState(saved, state);
		expect(peekProgress(saved[CURSOR_KEY])).toEqual(progressOf(loadCursorState(saved)!));
		// A state saved before spans existed: its newest remembered id is its frontier.
		const legacy = {
			v: 1,
			after: null,
			horizonMs: T,
			seen: { [ev(T).id]: T, [ev(T + MINUTE).id]: T + MINUTE },
		};
		expect(peekProgress(legacy)).toEqual(progressOf(loadCursorState({ [CURSOR_KEY]: legacy })!));
		expect(peekProgress({ v: 2 })).toBeUndefined();
		expect(peekProgress(undefined)).toBeUndefined();
	});
});
