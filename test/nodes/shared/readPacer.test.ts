/**
 * The read pacer on its own (nodes/shared/transport/readPacer.ts), on a virtual clock: how
 * many reads it lets through when, and what it learns from a 429.
 */
import {
	BACK_OFF,
	GROWTH_AFTER_MS,
	LIMIT_TRUSTED_MS,
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

	it('reads that never wait end a stretch of being held back: a read now and then never grows the rate', () => {
		const pacer = new ReadPacer();
		for (let t = 1000; t < 10_000; t += 100) {
			// Now and then a few reads at once: two go (an interval unused since is spent), the third waits one.
			expect([pacer.trySend(t), pacer.trySend(t), pacer.trySend(t)]).toEqual([true, true, false]);
			expect(pacer.trySend(t + 1000 / START_RATE)).toBe(true);
		}
		expect(pacer.readsPerSecond).toBe(START_RATE);
	});

	it('after a 429 stays just under what the API let through, instead of running into the limit again', () => {
		const pacer = new ReadPacer();
		for (let i = 0; i < 50; i++) pacer.answered(1000 + i * 10);
		pacer.rateLimited(1500);
		expect(pacer.readsPerSecond).toBe(50 * BACK_OFF);
		// Held back for 10 s: it grows by SLOW_GROWTH a second, but not past a step under the 50 let through.
		holdBack(pacer, 1600, 11_600);
		expect(pacer.readsPerSecond).toBeCloseTo(50 * (1 - SLOW_GROWTH));
		// Once the limit is no longer trusted (it may have risen), slow growth goes on past it.
		holdBack(pacer, 11_601, 1500 + LIMIT_TRUSTED_MS + 5000);
		expect(pacer.readsPerSecond).toBeGreaterThan(50);
	});

	it('grows slowly after a 429: by SLOW_GROWTH after a second held back, not twice as fast', () => {
		const pacer = new ReadPacer();
		for (let i = 0; i < 10; i++) pacer.answered(i * 10); // more than a second before the 429: not counted
		for (let i = 0; i < 50; i++) pacer.answered(1000 + i * 10);
		pacer.rateLimited(1500);
		holdBack(pacer, 1600, 2598);
		expect(pacer.readsPerSecond).toBe(50 * BACK_OFF);
		holdBack(pacer, 2599, 2605);
		expect(pacer.readsPerSecond).toBeCloseTo(50 * BACK_OFF * (1 + SLOW_GROWTH));
	});

	it('a second 429 soon after the first lowers the limit it remembers, never raises it', () => {
		const pacer = new ReadPacer();
		// The first second spanned two of the API's windows: 70 got through.
		for (let i = 0; i < 70; i++) pacer.answered(1000 + i * 10);
		pacer.rateLimited(1700);
		expect(pacer.readsPerSecond).toBe(70 * BACK_OFF);
		// In the next window only 50 get through: the rate drops under that and stays there.
		for (let i = 0; i < 50; i++) pacer.answered(2800 + i * 19);
		pacer.rateLimited(3800);
		expect(pacer.readsPerSecond).toBe(50 * BACK_OFF);
		holdBack(pacer, 3900, 12_000);
		expect(pacer.readsPerSecond).toBeCloseTo(50 * (1 - SLOW_GROWTH));
		// A later 429 that saw more get through does not raise the remembered limit.
		for (let i = 0; i < 80; i++) pacer.answered(12_100 + i * 10);
		pacer.rateLimited(12_950);
		holdBack(pacer, 13_000, 20_000);
		expect(pacer.readsPerSecond).toBeCloseTo(50 * (1 - SLOW_GROWTH));
	});

	it(`learns nothing from a 429 whose Retry-After is longer than ${LIMIT_TRUSTED_MS} ms: that limit is not counted per second`, () => {
		const pacer = new ReadPacer();
		for (let i = 0; i < 3; i++) pacer.answered(1000 + i * 10);
		pacer.rateLimited(1100, 120_000);
		expect(pacer.readsPerSecond).toBe(START_RATE);
		pacer.rateLimited(1200, 1000);
		expect(pacer.readsPerSecond).toBeLessThan(START_RATE);
	});
});

describe('readPacerFor', () => {
	it('gives every read of one API key the same pacer, and another key its own', () => {
		expect(readPacerFor('https://api.test|aaaa')).toBe(readPacerFor('https://api.test|aaaa'));
		expect(readPacerFor('https://api.test|bbbb')).not.toBe(readPacerFor('https://api.test|aaaa'));
	});
});
