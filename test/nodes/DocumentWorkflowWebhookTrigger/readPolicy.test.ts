/**
 * The webhook trigger's timing rules on plain data (`readPolicy.ts`): when a read is due, when it
 * goes over what was read before, and which deliveries wait after a read. The reads themselves are
 * tested through n8n-core in the other files of this folder.
 */
import type { ReadTiming } from '../../../nodes/DocumentWorkflowWebhookTrigger/readPolicy';
import {
	FAST_GAP_MS,
	HOLD_MS,
	MAX_HOLD_MS,
	READ_MS,
	RULE_MS,
	SLOW_GAP_MS,
	afterRead,
	firstTiming,
	nextReadAt,
	rechecks,
	waitsUntil,
} from '../../../nodes/DocumentWorkflowWebhookTrigger/readPolicy';

const T = 1_000_000;
const after = (timing: Partial<ReadTiming>): ReadTiming => ({
	...firstTiming(),
	lastReadAt: T,
	checkedAt: T,
	...timing,
});

describe('nextReadAt', () => {
	test("a process's first delivery reads at once, even with nothing new (it goes over what was read before)", () => {
		expect(nextReadAt(firstTiming(), 0)).toBe(-Infinity);
	});

	test('nothing rang, nothing owed, nothing more listed: no read', () => {
		expect(nextReadAt(after({}), 0)).toBeUndefined();
	});

	test('ids that rang are read for at once, but FAST_GAP_MS after the last read while rung ids were listed', () => {
		expect(nextReadAt(after({ rungAt: T + 500 }), 1)).toBe(T + 500);
		expect(nextReadAt(after({ rungAt: T + 10 }), 1)).toBe(T + FAST_GAP_MS);
	});

	test('after a read that did not list its rung ids: a second per request it made, at most three', () => {
		expect(nextReadAt(after({ rungAt: T + 10, listedAll: false, lastRequests: 2 }), 1)).toBe(
			T + 2 * SLOW_GAP_MS,
		);
		expect(nextReadAt(after({ rungAt: T + 10, listedAll: false, lastRequests: 9 }), 1)).toBe(
			T + 3 * SLOW_GAP_MS,
		);
	});

	test('owed ids are looked for again a second after the last read; more listed is read at the gap', () => {
		expect(nextReadAt(after({}), 2)).toBe(T + SLOW_GAP_MS);
		expect(nextReadAt(after({ more: true }), 0)).toBe(T + FAST_GAP_MS);
	});
});

test('rechecks: a second after the last recheck, or for an owed id behind the frontier', () => {
	const cursor = { after: 'b', afterCreatedOnMs: null, listed: { d: null } };
	expect(rechecks(after({}), T + SLOW_GAP_MS - 1, [])).toBe(false);
	expect(rechecks(after({}), T + SLOW_GAP_MS, [])).toBe(true);
	expect(rechecks(after({}), T + 1, ['c'], cursor)).toBe(true);
	expect(rechecks(after({}), T + 1, ['e'], cursor)).toBe(false);
	expect(rechecks(after({}), T + 1, ['c'])).toBe(false);
	expect(rechecks(firstTiming(), T, [])).toBe(true);
});

describe('afterRead', () => {
	// The read started at T is the trigger's first: a delivery that came after its start saw none begun.
	const d = (arrivedAt: number, state = 'joined', readsBefore = arrivedAt > T ? 1 : 0) => ({
		arrivedAt,
		readsBefore,
		state,
	});
	const read = { index: 1, failed: false, found: false, owed: 0, more: false };

	test('the earliest arrival carries what was found; the others whose ids were looked for go', () => {
		const [a, b, c] = [d(T - 300), d(T - 200), d(T - 100)];
		expect(afterRead([c, a, b], { ...read, found: true }, T + 50)).toEqual({
			carrier: a,
			staying: new Map(),
		});
	});

	test('while ids are owed, the latest arrival stays as the holder; a delivery that came during the read waits for the next', () => {
		const [a, b, late] = [d(T - 300), d(T - 200), d(T + 20)];
		expect([...afterRead([a, b, late], { ...read, owed: 1 }, T + 50).staying.keys()]).toEqual([
			late,
		]);
		expect([...afterRead([a, b], { ...read, owed: 1 }, T + 50).staying.keys()]).toEqual([b]);
	});

	test('after a failed read every delivery stays, but none past HOLD_MS after it arrived', () => {
		const [a, b] = [d(T - HOLD_MS - 1), d(T - 100)];
		expect(afterRead([a, b], { ...read, failed: true }, T)).toEqual({
			staying: new Map([[b, b.arrivedAt + HOLD_MS]]),
		});
	});

	test('a delivery that came during a read outlasting its hold stays for a read of its own ids, until RULE_MS after it arrived', () => {
		const [a, b] = [d(T + 100), d(T + 200)];
		expect([...afterRead([a, b], read, T + 100 + HOLD_MS).staying.keys()]).toEqual([a, b]);
		expect([...afterRead([a, b], read, T + 100 + RULE_MS).staying.keys()]).toEqual([b]);
	});

	test('one that came in the same millisecond as the read started, but after it, came during it', () => {
		const [starter, joiner] = [d(T, 'reading', 0), d(T, 'joined', 1)];
		expect([...afterRead([starter, joiner], read, T + HOLD_MS + 1).staying.keys()]).toEqual([
			joiner,
		]);
	});

	test('after a read that stopped at READ_MS with more listed, the holder stays for the next, the rule time after it', () => {
		const [a, b] = [d(T - 100), d(T)];
		const stopped = { ...read, more: true };
		expect([...afterRead([a, b], stopped, T + READ_MS + RULE_MS - 1).staying.keys()]).toEqual([b]);
		expect([...afterRead([a, b], stopped, T + READ_MS + RULE_MS).staying.keys()]).toEqual([]);
		// The loop holds it that long too, not HOLD_MS (model.found.test.ts: the holder left early).
		expect(afterRead([a, b], stopped, T + HOLD_MS + 1).staying.get(b)).toBe(T + READ_MS + RULE_MS);
	});

	test('a delivery asleep until its next read carries nothing (it would notice only when it wakes): the earliest awake one does', () => {
		const [asleep, starter] = [d(T - 300, 'asleep'), d(T - 100, 'reading')];
		expect(afterRead([asleep, starter], { ...read, found: true }, T + 50)).toEqual({
			carrier: starter,
			staying: new Map(),
		});
	});
});

describe('waitsUntil', () => {
	const held = { arrivedAt: T, readsBefore: 0, state: 'asleep' };

	test('asleep: until its next read, within HOLD_MS of its arrival or as a read kept it', () => {
		expect(waitsUntil(held, T + 1000, false)).toBe(T + 1000);
		expect(waitsUntil(held, Infinity, false)).toBe(T + HOLD_MS);
		expect(waitsUntil({ ...held, holdUntil: T + RULE_MS }, Infinity, false)).toBe(T + RULE_MS);
	});

	test('waiting for a read in flight: until MAX_HOLD_MS after its arrival, the longest hold afterRead gives, whatever its hold or next read', () => {
		expect(MAX_HOLD_MS).toBe(READ_MS + RULE_MS);
		expect(waitsUntil(held, -Infinity, true)).toBe(T + MAX_HOLD_MS);
		expect(waitsUntil({ ...held, holdUntil: T + HOLD_MS }, T + 1000, true)).toBe(T + MAX_HOLD_MS);
	});
});
