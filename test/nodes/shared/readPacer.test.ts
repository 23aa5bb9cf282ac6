/**
 * The read pacer on its own (nodes/shared/transport/readPacer.ts), on a virtual clock: how
 * many reads it lets through when, and what it learns from a 429.
 */
import {
	BACK_OFF,
	GROWTH_AFTER_MS,
	LIMIT_TRUSTED_MS,
	LOWER_AFTER_MS,
	ReadPacer,
	SLOW_GROWTH,
	START_RATE,
	readPacerFor,
} from '../../../nodes/shared/transport/readPacer';

/** Reads always waiting from `from` to `to`: every read the pacer lets through goes, each ms. */
function holdBack(pacer: ReadPacer, from: number, to: number): number {
	let sent = 0;
	for (let t = from; t <= to; t++) while (pacer.trySend(t)) sent++;
	return sent;
}

/** `count` reads went at the pace over the second before `at`, and one more waits for its turn. */
function heldOver(pacer: ReadPacer, at: number, count: number): void {
	pacer.readsPerSecond = count;
	for (let i = 0; i < count; i++) expect(pacer.trySend(at - 1000 + (i * 1000) / count)).toBe(true);
	pacer.nextSendAt = at;
	expect(pacer.trySend(at - 1)).toBe(false);
}

/** A 429 at `at` for a read that waited while `count` reads went in the second before it. */
function refusedAfter(pacer: ReadPacer, at: number, count: number): void {
	heldOver(pacer, at, count);
	pacer.rateLimited(at);
}

describe('ReadPacer', () => {
	it(`starts at ${START_RATE} reads a second and doubles after ${GROWTH_AFTER_MS} ms of reads held back`, () => {
		const pacer = new ReadPacer();
		expect(holdBack(pacer, 0, GROWTH_AFTER_MS - 2)).toBeLessThanOrEqual(
			2 + (START_RATE * GROWTH_AFTER_MS) / 1000,
		);
		expect(pacer.readsPerSecond).toBe(START_RATE);
		holdBack(pacer, GROWTH_AFTER_MS - 1, GROWTH_AFTER_MS + 5);
		expect(pacer.readsPerSecond).toBe(2 * START_RATE);
	});

	it('reads with a ticket go in the order they first asked: one asking again right after its answer waits its turn', () => {
		const pacer = new ReadPacer();
		pacer.readsPerSecond = 1;
		const [a, b, c] = [{}, {}, {}];
		expect(pacer.trySend(0, a)).toBe(true);
		// b and c wait; a, answered, asks again before either: the next slot is b's, then c's.
		expect([pacer.trySend(500, b), pacer.trySend(600, c), pacer.trySend(700, a)]).toEqual([
			false,
			false,
			false,
		]);
		expect([pacer.trySend(1000, a), pacer.trySend(1000, c), pacer.trySend(1000, b)]).toEqual([
			false,
			false,
			true,
		]);
		expect([pacer.trySend(2000, a), pacer.trySend(2000, c)]).toEqual([false, true]);
		// A read that gives up its place (cancelled) lets the next go.
		const d = {};
		expect(pacer.trySend(2500, d)).toBe(false);
		pacer.leave(a);
		expect(pacer.trySend(3000, d)).toBe(true);
	});

	it('reads that never wait end a stretch of being held back: a few reads now and then never grow the rate', () => {
		const pacer = new ReadPacer();
		for (let t = 1000; t < 10_000; t += 100) {
			// A few reads at once: two go (an interval unused since is spent), the third waits one.
			expect([pacer.trySend(t), pacer.trySend(t), pacer.trySend(t)]).toEqual([true, true, false]);
			expect(pacer.trySend(t + 1000 / START_RATE)).toBe(true);
		}
		expect(pacer.readsPerSecond).toBe(START_RATE);
	});

	it('after a 429 stays just under what it sent in the second before, instead of running into the limit again', () => {
		const pacer = new ReadPacer();
		refusedAfter(pacer, 1500, 50);
		expect(pacer.readsPerSecond).toBe(50 * BACK_OFF);
		// Held back for 10 s: it grows by SLOW_GROWTH a second, but not past a step under the 50 sent.
		holdBack(pacer, 1600, 11_600);
		expect(pacer.readsPerSecond).toBeCloseTo(50 * (1 - SLOW_GROWTH));
		// Once the limit is no longer trusted (it may have risen), slow growth goes on past it.
		holdBack(pacer, 11_601, 1500 + LIMIT_TRUSTED_MS + 5000);
		expect(pacer.readsPerSecond).toBeGreaterThan(50);
	});

	it('learns from what it sent, not from what came back: answers that come late under load do not sink the rate', () => {
		const pacer = new ReadPacer();
		// 60 reads went in the last second, of which (say) only 5 came back yet: the limit is about
		// what went, and the pace stays near it, not at a few reads a second.
		refusedAfter(pacer, 2000, 60);
		expect(pacer.readsPerSecond).toBeCloseTo(60 * BACK_OFF, 0);
	});

	it('learns from what it sent before the refused read: reads that left while its 429 came back (the limit was full) do not count', () => {
		const pacer = new ReadPacer();
		// 50 went in the second before the refused read left at 2000; 8 more left in the 40 ms its
		// 429 took to come back (another process had filled the rest of the limit meanwhile).
		heldOver(pacer, 2000, 50);
		pacer.readsPerSecond = START_RATE;
		for (let t = 2000; t < 2040; t += 5) expect(pacer.trySend(t)).toBe(true);
		pacer.rateLimited(2040, 1000, 2000);
		expect(pacer.readsPerSecond).toBeCloseTo(50 * BACK_OFF);
	});

	it('after a 429 grows back to a step under the limit after a second held back; past it, once no longer trusted, by SLOW_GROWTH a second', () => {
		const pacer = new ReadPacer();
		refusedAfter(pacer, 1500, 50);
		holdBack(pacer, 1600, 2598);
		expect(pacer.readsPerSecond).toBe(50 * BACK_OFF);
		holdBack(pacer, 2599, 2605);
		expect(pacer.readsPerSecond).toBeCloseTo(50 * (1 - SLOW_GROWTH));
		holdBack(pacer, 2606, 1500 + LIMIT_TRUSTED_MS);
		expect(pacer.readsPerSecond).toBeCloseTo(50 * (1 - SLOW_GROWTH));
		holdBack(pacer, 1501 + LIMIT_TRUSTED_MS, 2600 + LIMIT_TRUSTED_MS);
		expect(pacer.readsPerSecond).toBeCloseTo(50 * (1 - SLOW_GROWTH) * (1 + SLOW_GROWTH) ** 2);
	});

	it('after a 429, reads that come in bursts (held back within each second, the pace idle between) grow it back to just under the limit', () => {
		const pacer = new ReadPacer();
		refusedAfter(pacer, 1500, 20);
		// Each 400 ms: reads held back for 300 ms, then none for 100 ms (a read of the list).
		for (let t = 1600; t < 1600 + 40_000; t += 400) holdBack(pacer, t, t + 300);
		expect(pacer.readsPerSecond).toBeCloseTo(20 * (1 - SLOW_GROWTH));
	});

	it('under a trusted limit no second (and a step) holds more reads than the pace, however the reads come', () => {
		const pacer = new ReadPacer();
		refusedAfter(pacer, 1500, 20);
		holdBack(pacer, 1600, 12_000);
		expect(pacer.readsPerSecond).toBeCloseTo(20 * (1 - SLOW_GROWTH));
		const sent: number[] = [];
		const send = (t: number) => {
			while (pacer.trySend(t)) sent.push(t);
		};
		// Reads in bursts (a pause, then many at once, as answers come back together), then held
		// back all along: in every second at most the pace, rounded up, go.
		for (let t = 12_500; t < 30_000; t += 1) if (t < 20_000 ? t % 700 < 5 : true) send(t);
		// Counted over a second and a step (SLOW_GROWTH of it): reads that start one of the API's
		// windows together leave its last place free, so a read's jitter does not make one too many.
		const span = 1000 * (1 + SLOW_GROWTH);
		const most = Math.max(...sent.map((at) => sent.filter((x) => x >= at && x < at + span).length));
		expect(most).toBeLessThanOrEqual(Math.ceil(pacer.readsPerSecond * (1 + SLOW_GROWTH)));
		// And the pace is kept: held back for 10 s, about the pace a second went.
		expect(sent.filter((t) => t >= 20_000).length).toBeGreaterThanOrEqual(10 * 19);
	});

	it('under a trusted limit of 100, held back, the pace of 98 a second goes through: the longer count costs no reads', () => {
		const pacer = new ReadPacer();
		refusedAfter(pacer, 1500, 100);
		holdBack(pacer, 1600, 6000);
		expect(pacer.readsPerSecond).toBeCloseTo(100 * (1 - SLOW_GROWTH));
		// Counted over a second and a step, at most the pace over that step: 98 a second still go.
		expect(holdBack(pacer, 6001, 16_000)).toBeGreaterThanOrEqual(10 * 97);
	});

	it(`one 429 under the limit it trusts is a burst and slows nothing; a second within ${LOWER_AFTER_MS} ms lowers it, never raises it`, () => {
		const pacer = new ReadPacer();
		refusedAfter(pacer, 1500, 20);
		holdBack(pacer, 1600, 12_000);
		// n8n's event loop stalled and sent reads late, together: the API refused one although only
		// 18 went in the second before. The limit stays 20, the pace too, and it grows on to under it.
		heldOver(pacer, 13_500, 18);
		const pace = pacer.readsPerSecond;
		pacer.rateLimited(13_500);
		expect(pacer.readsPerSecond).toBe(pace);
		holdBack(pacer, 13_600, 28_000);
		expect(pacer.readsPerSecond).toBeCloseTo(20 * (1 - SLOW_GROWTH));
		// Another 429 under it well after the first: a burst again, the limit stays.
		refusedAfter(pacer, 31_500, 17);
		holdBack(pacer, 31_600, 52_000);
		expect(pacer.readsPerSecond).toBeCloseTo(20 * (1 - SLOW_GROWTH));
		// Two within LOWER_AFTER_MS (another process took a share): the higher of the two is the limit.
		refusedAfter(pacer, 54_500, 12);
		refusedAfter(pacer, 56_000, 11);
		holdBack(pacer, 56_100, 76_000);
		expect(pacer.readsPerSecond).toBeCloseTo(12 * (1 - SLOW_GROWTH));
		// A later 429 with more sent (the cap was not kept) never raises the remembered limit.
		refusedAfter(pacer, 78_500, 30);
		holdBack(pacer, 78_600, 96_000);
		expect(pacer.readsPerSecond).toBeCloseTo(12 * (1 - SLOW_GROWTH));
	});

	it(`a 429 for a read sent alone (nothing else in the second before) slows nothing: others filled the window; a second within ${LOWER_AFTER_MS} ms is a limit`, () => {
		const pacer = new ReadPacer();
		// Another process (or client) of the key had used the window: this read says nothing of how
		// fast this process may read. It waits out Retry-After (the caller) and keeps its pace.
		expect(pacer.trySend(1000)).toBe(true);
		pacer.rateLimited(1040, 1000, 1000);
		expect(pacer.readsPerSecond).toBe(START_RATE);
		expect(holdBack(pacer, 2040, 3040)).toBeGreaterThan(START_RATE / 2);
		// Refused alone again soon after: the key's window is full whatever this process sends.
		expect(pacer.trySend(9000)).toBe(true);
		pacer.rateLimited(9040, 1000, 9000);
		expect(pacer.readsPerSecond).toBe(BACK_OFF);
	});

	it('under a trusted limit of 1 no second holds 2 reads: the pace backs off and grows to a step under 1 a second', () => {
		const pacer = new ReadPacer();
		refusedAfter(pacer, 1500, 1);
		const backedOff = pacer.readsPerSecond;
		const sent: number[] = [];
		const send = (t: number) => {
			while (pacer.trySend(t)) sent.push(t);
		};
		// Reads after pauses (several at once, as answers come back together), then held back all along.
		for (let t = 1600; t < 30_000; t += 1) if (t < 15_000 ? t % 2500 < 5 : true) send(t);
		// The API's window is a second from its first read: none may hold a second read.
		const most = Math.max(...sent.map((at) => sent.filter((x) => x >= at && x < at + 1000).length));
		expect(most).toBe(1);
		expect([backedOff, pacer.readsPerSecond]).toEqual([BACK_OFF, 1 - SLOW_GROWTH]);
		expect(sent.filter((t) => t >= 15_000).length).toBeGreaterThanOrEqual(14);
	});

	it(`learns nothing from a 429 whose Retry-After is longer than ${LIMIT_TRUSTED_MS} ms: that limit is not counted per second`, () => {
		const pacer = new ReadPacer();
		heldOver(pacer, 1100, 3);
		pacer.rateLimited(1100, 120_000);
		expect(pacer.readsPerSecond).toBe(3);
		heldOver(pacer, 2200, 3);
		pacer.rateLimited(2200, 1000);
		expect(pacer.readsPerSecond).toBeLessThan(3);
	});
});

describe('readPacerFor', () => {
	it('gives every read of one API key the same pacer, and another key its own', () => {
		expect(readPacerFor('https://api.test|aaaa')).toBe(readPacerFor('https://api.test|aaaa'));
		expect(readPacerFor('https://api.test|bbbb')).not.toBe(readPacerFor('https://api.test|aaaa'));
	});
});
