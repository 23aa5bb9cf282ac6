/**
 * The read pacer on its own (nodes/shared/transport/readPacer.ts), on a virtual clock: how
 * many reads it allows when, and what it learns from a 429.
 */
import {
	BURST_MS,
	MAX_RATE,
	ReadPacer,
	START_RATE,
	readPacerFor,
} from '../../../nodes/shared/transport/readPacer';

describe('ReadPacer', () => {
	it(`starts at ${START_RATE} reads a second and doubles while it holds checks back`, () => {
		const pacer = new ReadPacer();
		pacer.sent(0);
		expect(pacer.nextSendAt()).toBe(1000 / START_RATE);
		pacer.heldBack(0);
		pacer.heldBack(250);
		expect(pacer.readsPerSecond).toBe(2 * START_RATE);
		// Held back again only after a pause: a new stretch, no growth yet.
		pacer.heldBack(600);
		expect(pacer.readsPerSecond).toBe(2 * START_RATE);
	});

	/** Sends every read the pacer lets through at `now`; how many that was. */
	const sendAll = (pacer: ReadPacer, now: number): number => {
		let sent = 0;
		for (; pacer.nextSendAt() <= now; sent++) pacer.sent(now);
		return sent;
	};

	it('lets through every read the rate gives since the last send at once, not one read per look', () => {
		const pacer = new ReadPacer();
		const t0 = 10_000;
		// Fresh, it may spend BURST_MS of its rate at once.
		expect(sendAll(pacer, t0)).toBe(1 + Math.floor((BURST_MS * START_RATE) / 1000));
		expect(pacer.nextSendAt()).toBeGreaterThan(t0);
		// 5 ms later (one sleep slice of the wait) the rate has earned exactly one more read.
		expect(sendAll(pacer, t0 + 5)).toBe(1);
		// At a high rate one look lets many through: one, and 6,400 a second for the 15 ms since the next send was due.
		for (let t = t0; t <= t0 + 1250; t += 250) pacer.heldBack(t);
		expect(pacer.readsPerSecond).toBe(START_RATE * 32);
		expect(pacer.nextSendAt()).toBe(t0 + 10);
		expect(sendAll(pacer, t0 + 25)).toBe(1 + (15 * START_RATE * 32) / 1000);
		// Unused rate is not hoarded beyond BURST_MS.
		expect(sendAll(pacer, t0 + 60_000)).toBe(
			1 + Math.floor((BURST_MS * pacer.readsPerSecond) / 1000),
		);
	});

	it(`never grows past ${MAX_RATE} reads a second`, () => {
		const pacer = new ReadPacer();
		for (let t = 0; t <= 10_000; t += 100) pacer.heldBack(t);
		expect(pacer.readsPerSecond).toBe(MAX_RATE);
	});

	it('after a 429 stays just under what the API let through, instead of running into the limit again', () => {
		const pacer = new ReadPacer();
		for (let i = 0; i < 50; i++) pacer.answered(1000 + i * 10);
		pacer.rateLimited(1500);
		expect(pacer.readsPerSecond).toBe(42.5);
		// Held back for 10 s: it grows 5% a second, but not past 95% of the 50 let through.
		for (let t = 1600; t <= 11_600; t += 100) pacer.heldBack(t);
		expect(pacer.readsPerSecond).toBe(47.5);
		// After 15 s without a 429 the limit may have risen: slow growth goes on.
		for (let t = 11_700; t <= 20_000; t += 100) pacer.heldBack(t);
		expect(pacer.readsPerSecond).toBeGreaterThan(50);
	});

	it('a second 429 soon after the first lowers the limit it remembers, never raises it', () => {
		const pacer = new ReadPacer();
		// The first second spanned two of the API's windows: 70 got through.
		for (let i = 0; i < 70; i++) pacer.answered(1000 + i * 10);
		pacer.rateLimited(1700);
		expect(pacer.readsPerSecond).toBe(59.5);
		// In the next window only 50 get through: the rate drops under that and stays there.
		for (let i = 0; i < 50; i++) pacer.answered(2800 + i * 19);
		pacer.rateLimited(3800);
		expect(pacer.readsPerSecond).toBe(42.5);
		for (let t = 3900; t <= 12_000; t += 100) pacer.heldBack(t);
		expect(pacer.readsPerSecond).toBe(47.5);
		// A later 429 that saw more get through does not raise the remembered limit.
		for (let i = 0; i < 80; i++) pacer.answered(12_100 + i * 10);
		pacer.rateLimited(12_950);
		for (let t = 13_000; t <= 20_000; t += 100) pacer.heldBack(t);
		expect(pacer.readsPerSecond).toBe(47.5);
	});

	it('after a 429 sends a little slower than the API answered in the last second, then grows slowly', () => {
		const pacer = new ReadPacer();
		for (let i = 0; i < 10; i++) pacer.answered(i * 10); // more than a second before the 429: not counted
		for (let i = 0; i < 50; i++) pacer.answered(1000 + i * 10);
		pacer.rateLimited(1500);
		expect(pacer.readsPerSecond).toBe(42.5);
		// Near the limit it grows slowly: 5% after a second held back, not twice as fast.
		for (let t = 1600; t <= 2500; t += 100) pacer.heldBack(t);
		expect(pacer.readsPerSecond).toBe(42.5);
		pacer.heldBack(2600);
		expect(pacer.readsPerSecond).toBeCloseTo(44.625);
	});
});

describe('readPacerFor', () => {
	it('gives every read of one API key the same pacer, and another key its own', () => {
		expect(readPacerFor('https://api.test|aaaa')).toBe(readPacerFor('https://api.test|aaaa'));
		expect(readPacerFor('https://api.test|bbbb')).not.toBe(readPacerFor('https://api.test|aaaa'));
	});
});

describe('ReadPacer and long windows', () => {
	it('learns nothing from a 429 whose Retry-After is minutes: that limit is not counted per second', () => {
		const pacer = new ReadPacer();
		for (let i = 0; i < 3; i++) pacer.answered(1000 + i * 10);
		pacer.rateLimited(1100, 120_000);
		expect(pacer.readsPerSecond).toBe(START_RATE);
		pacer.rateLimited(1200, 1000);
		expect(pacer.readsPerSecond).toBeLessThan(START_RATE);
	});
});
