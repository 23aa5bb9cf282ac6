/** The cursor rule itself (nodes/DocumentWorkflowTrigger/eventCursor.ts), without the API. */
import { CURSOR_KEY, advanceCursor, alreadySeen, emptyCursorState, loadCursorState, storeCursorState } from '../../../nodes/DocumentWorkflowTrigger/eventCursor';
import type { CursorEvent } from '../../../nodes/DocumentWorkflowTrigger/eventCursor';

const MINUTE = 60_000;
/** Time-ordered ids like the API's: the creation time in hex first. */
const ev = (ms: number, n = 0): CursorEvent => ({ id: `${ms.toString(16).padStart(12, '0').slice(0, 8)}-${ms.toString(16).padStart(12, '0').slice(8)}-7000-8000-${n.toString(16).padStart(12, '0')}`, createdOnMs: ms });

describe('advanceCursor', () => {
	const T = 1_700_000_000_000;
	const overlapMs = 5 * MINUTE;

	test('the cursor is the newest id created strictly before (newest - reading time - overlap); newer ids are remembered', () => {
		const read = [ev(T), ev(T + MINUTE), ev(T + 3 * MINUTE), ev(T + 6 * MINUTE), ev(T + 8 * MINUTE)];
		const next = advanceCursor(emptyCursorState(null), { read, emitted: read, overlapMs, elapsedMs: 1000 });
		// threshold = T + 8 min - 1 s - 5 min = T + 2:59 → T + 1 min is the newest before it.
		expect(next.after).toBe(read[1].id);
		expect(Object.keys(next.seen).sort()).toEqual([read[2].id, read[3].id, read[4].id].sort());
		expect(next.horizonMs).toBe(T + 8 * MINUTE - 1000);
		expect(alreadySeen(next, read[0].id)).toBe(true);
		expect(alreadySeen(next, read[3].id)).toBe(true);
		expect(alreadySeen(next, ev(T + 2 * MINUTE).id)).toBe(false);
	});

	test('an event created exactly at the threshold is not a cursor candidate', () => {
		const read = [ev(T), ev(T + 5 * MINUTE)];
		const next = advanceCursor(emptyCursorState(null), { read, emitted: read, overlapMs, elapsedMs: 0 });
		expect(next.after).toBeNull();
		expect(Object.keys(next.seen)).toHaveLength(2);
	});

	test('never moves backwards, and an older horizon is kept when a poll read less', () => {
		const first = advanceCursor(emptyCursorState(null), { read: [ev(T), ev(T + 10 * MINUTE)], emitted: [ev(T), ev(T + 10 * MINUTE)], overlapMs, elapsedMs: 0 });
		expect(first.after).toBe(ev(T).id);
		const second = advanceCursor(first, { read: [ev(T + 2 * MINUTE)], emitted: [ev(T + 2 * MINUTE)], overlapMs, elapsedMs: 0 });
		expect(second.horizonMs).toBe(T + 10 * MINUTE);
		expect(second.after).toBe(ev(T + 2 * MINUTE).id);
		const third = advanceCursor(second, { read: [], emitted: [], overlapMs, elapsedMs: 0 });
		expect(third.after).toBe(second.after);
	});

	test('events without a readable date are remembered until the cursor passes them, never chosen as the cursor', () => {
		const odd = { id: ev(T + MINUTE).id, createdOnMs: NaN };
		const state = advanceCursor(emptyCursorState(null), { read: [ev(T), odd, ev(T + 10 * MINUTE)], emitted: [odd], overlapMs, elapsedMs: 0 });
		expect(state.after).toBe(ev(T).id);
		expect(alreadySeen(state, odd.id)).toBe(true);
		const later = advanceCursor(state, { read: [ev(T + 2 * MINUTE), ev(T + 20 * MINUTE)], emitted: [], overlapMs, elapsedMs: 0 });
		expect(later.after).toBe(ev(T + 2 * MINUTE).id);
		expect(later.seen[odd.id]).toBeUndefined();
	});
});

describe('static data', () => {
	test('round-trips, and anything else counts as no state (a first activation)', () => {
		const data: Record<string, unknown> = {};
		expect(loadCursorState(data)).toBeUndefined();
		const state = advanceCursor(emptyCursorState(null), { read: [ev(1), ev(10 * MINUTE)], emitted: [ev(10 * MINUTE)], overlapMs: MINUTE, elapsedMs: 0 });
		storeCursorState(data, state);
		expect(loadCursorState(data)).toEqual(state);
		// A private copy: changing it does not change the static data.
		loadCursorState(data)!.seen.x = 1;
		expect(loadCursorState(data)).toEqual(state);
		expect(loadCursorState({ [CURSOR_KEY]: { v: 2 } })).toBeUndefined();
		expect(loadCursorState({ [CURSOR_KEY]: 'junk' })).toBeUndefined();
	});
});
