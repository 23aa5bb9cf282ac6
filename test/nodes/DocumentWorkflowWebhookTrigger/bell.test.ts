/** When the webhook trigger reads (nodes/DocumentWorkflowWebhookTrigger/bell.ts), without the API: the clock is passed in. */
import {
	DEFAULT_BELL_TIMING,
	MAX_PENDING_IDS,
	expire,
	newBell,
	nextReadAt,
	readEnds,
	readStarts,
	ring,
} from '../../../nodes/DocumentWorkflowWebhookTrigger/bell';
import type { Bell } from '../../../nodes/DocumentWorkflowWebhookTrigger/bell';

const timing = DEFAULT_BELL_TIMING;
const T = 1_700_000_000_000; // on a whole second

/** One read at `at` that lists the ids in `listed`, to the end of the list, with `requests` requests. */
function read(bell: Bell, at: number, listed: string[] = [], requests = 1): string[] {
	const purpose = readStarts(bell, at);
	return readEnds(
		bell,
		purpose,
		{ complete: true, failed: false, requests, listed: (id) => listed.includes(id) },
		at + 10,
		timing,
	);
}

describe('the bell', () => {
	test('nothing rung: no read is due', () => {
		expect(nextReadAt(newBell(), timing)).toBeUndefined();
	});

	test('a rung id is read for after the gathering delay; listed, it costs nothing more', () => {
		const bell = newBell();
		ring(bell, ['a', 'b'], T, timing);
		expect(nextReadAt(bell, timing)).toBe(T + timing.gatherMs);
		expect(read(bell, T + timing.gatherMs, ['a', 'b'])).toEqual([]);
		expect(bell.pending.size).toBe(0);
		expect(nextReadAt(bell, timing)).toBeUndefined();
		// The next ring: reads stay fast.
		ring(bell, ['c'], T + 200, timing);
		expect(nextReadAt(bell, timing)).toBe(T + timing.gatherMs + timing.fastGapMs);
	});

	test('an id not listed is looked for again 1, 2 and 4 s after its delivery, on whole seconds, then let go', () => {
		const bell = newBell();
		const delivered = T + 300;
		ring(bell, ['x'], delivered, timing);
		const looks: number[] = [];
		let letGo: string[] = [];
		for (let at = nextReadAt(bell, timing); at !== undefined; at = nextReadAt(bell, timing)) {
			looks.push(at - delivered);
			letGo = read(bell, at);
		}
		expect(looks).toEqual([100, 1700, 2700, 4700]);
		expect(letGo).toEqual(['x']);
		expect(bell.pending.size).toBe(0);
	});

	test('reads slow to a second per request while rung ids go unlisted, and speed up once they are listed', () => {
		const bell = newBell();
		ring(bell, ['forged-1'], T, timing);
		read(bell, T + 100, [], 2);
		ring(bell, ['forged-2'], T + 150, timing);
		expect(nextReadAt(bell, timing)).toBe(T + 100 + 2 * timing.slowGapMs);
		read(bell, T + 2100, [], 1);
		ring(bell, ['real'], T + 2200, timing);
		expect(nextReadAt(bell, timing)).toBe(T + 3100);
		read(bell, T + 3100, ['real', 'forged-1', 'forged-2']);
		ring(bell, ['next'], T + 3200, timing);
		expect(nextReadAt(bell, timing)).toBe(T + 3350);
	});

	test('looks again stay a second apart, and do not slow the reads of newly rung ids', () => {
		const bell = newBell();
		ring(bell, ['late'], T, timing);
		read(bell, T + 100);
		// Its first look, a second after the read before it.
		expect(nextReadAt(bell, timing)).toBe(T + 1100);
		read(bell, T + 1100);
		ring(bell, ['real'], T + 1200, timing);
		// The rung id is read for at the fast pace; the next look waits a second after that read.
		expect(nextReadAt(bell, timing)).toBe(T + 1350);
		read(bell, T + 1350, ['real']);
		expect(nextReadAt(bell, timing)).toBe(T + 2350);
	});

	test('a read that stopped early or failed looks for nothing: its rung ids ring again', () => {
		const bell = newBell();
		ring(bell, ['a'], T, timing);
		const purpose = readStarts(bell, T + 100);
		readEnds(
			bell,
			purpose,
			{ complete: false, failed: true, requests: 3, listed: () => false },
			T + 200,
			timing,
		);
		expect(bell.pending.has('a')).toBe(true);
		expect(nextReadAt(bell, timing)).toBe(T + 100 + 3 * timing.slowGapMs);
	});

	test(`at most ${MAX_PENDING_IDS} ids are looked for; the oldest go first, and ids nobody looked for expire`, () => {
		const bell = newBell();
		const ids = Array.from({ length: MAX_PENDING_IDS + 5 }, (_, n) => `id-${n}`);
		expect(ring(bell, ids, T, timing)).toEqual(ids.slice(0, 5));
		expect(bell.pending.size).toBe(MAX_PENDING_IDS);
		expect(expire(bell, T + timing.lookForMs, timing)).toEqual([]);
		expect(expire(bell, T + timing.lookForMs + timing.gridMs, timing)).toHaveLength(
			MAX_PENDING_IDS,
		);
		expect(nextReadAt(bell, timing)).toBeUndefined();
	});
});
