/**
 * The wait's decisions on their own (nodes/DocumentWorkflow/helpers/runScheduler.ts): a
 * simulated batch on a virtual clock, so what is asserted is which run is
 * checked when, not how fast anything ran.
 */
import type { SchedulerSettings } from '../../../nodes/DocumentWorkflow/helpers/runScheduler';
import {
	PRECISION,
	PROBES,
	RunScheduler,
	SINGLE_RUN_PRECISION,
} from '../../../nodes/DocumentWorkflow/helpers/runScheduler';

const DEFAULTS: SchedulerSettings = { firstCheckMs: 1000, longestIntervalMs: 20_000 };

interface Simulated {
	/** Virtual time the last run was seen final. */
	seenAt: number;
	/** The slowest run's final moment. */
	floor: number;
	checks: number[];
	/** Ages at which each run was checked. */
	checkAges: number[][];
}

/** Takes the runs due at `now`, at most `slots`, one at a time and earliest first, as the watcher does. */
function takeDue(scheduler: RunScheduler, now: number, slots: number): number[] {
	const taken: number[] = [];
	for (
		let due = scheduler.nextDue();
		due && due.at <= now && taken.length < slots;
		due = scheduler.nextDue()
	) {
		scheduler.take(due.key, now);
		taken.push(due.key);
	}
	return taken;
}

/** Runs a batch whose run `i` is final `lengths[i]` ms after its submission; submissions spread over `spanMs`; each check answers after `latency` ms. */
function simulate(
	lengths: number[],
	spanMs = 1500,
	settings = DEFAULTS,
	latency = 10,
	concurrency = 10,
	startLearnedLater = false,
): Simulated {
	const submitted = lengths.map((_, i) =>
		lengths.length > 1 ? (i * spanMs) / (lengths.length - 1) : 0,
	);
	const scheduler = new RunScheduler(
		submitted.map((submittedAt, key) => ({
			key,
			submittedAt: startLearnedLater ? spanMs : submittedAt,
		})),
		settings,
	);
	if (startLearnedLater)
		submitted.forEach((submittedAt, key) => scheduler.restart(key, submittedAt));
	const checks = lengths.map(() => 0);
	const checkAges: number[][] = lengths.map(() => []);
	const inFlight: Array<{ key: number; at: number }> = [];
	let now = 0;
	let seenAt = 0;
	while (scheduler.pendingCount > 0) {
		for (const key of takeDue(scheduler, now, concurrency - inFlight.length)) {
			inFlight.push({ key, at: now + latency });
			checks[key]++;
			checkAges[key].push(now - submitted[key]);
		}
		inFlight.sort((a, b) => a.at - b.at);
		const next = Math.min(
			inFlight[0]?.at ?? Infinity,
			Math.max(scheduler.nextDue()?.at ?? Infinity, now + 1),
		);
		if (next === Infinity)
			throw new Error(`nothing scheduled at ${now} with ${scheduler.pendingCount} runs pending`);
		now = next;
		while (inFlight.length > 0 && inFlight[0].at <= now) {
			const { key } = inFlight.shift()!;
			// The server answered halfway through the check.
			if (submitted[key] + lengths[key] <= now - latency / 2) {
				scheduler.reportDone(key, now, true);
				seenAt = now;
			} else scheduler.reportPending(key, now);
		}
	}
	return {
		seenAt,
		floor: Math.max(...lengths.map((length, i) => submitted[i] + length)),
		checks,
		checkAges,
	};
}

const same = (count: number, ms: number) => new Array<number>(count).fill(ms);
/** Lengths spread evenly from `from` to `to`, in a shuffled order. */
const spread = (count: number, from: number, to: number) =>
	Array.from(
		{ length: count },
		(_, i) => from + ((i * 7919) % count) * ((to - from) / (count - 1)),
	);
const total = (sim: Simulated) => sim.checks.reduce((a, b) => a + b, 0);

describe('RunScheduler', () => {
	it('runs of one length: a few probes learn it, every other run is checked exactly once', () => {
		for (const length of [5000, 60_000, 300_000]) {
			const sim = simulate(same(200, length));
			expect(sim.checks.filter((count) => count === 1).length).toBeGreaterThanOrEqual(200 - PROBES);
			expect(total(sim) / 200).toBeLessThanOrEqual(1.4);
			expect(sim.seenAt / sim.floor).toBeLessThanOrEqual(1.1);
		}
	});

	it('run lengths spread from 5 s to 2 min: the sweep waits for the longest probe, so the last run is seen soon after it ends for under 1.4 checks a run', () => {
		const sim = simulate(spread(200, 5000, 120_000));
		expect(sim.seenAt / sim.floor).toBeLessThanOrEqual(1.1);
		expect(total(sim) / 200).toBeLessThanOrEqual(1.4);
	});

	it('runs of one length uploaded over 1.5 s: a probe lined up at the age the first was seen final counts as done then, so the sweep is not held back by how late its check came', () => {
		const sim = simulate(same(200, 6000), 1500);
		expect(sim.seenAt / sim.floor).toBeLessThanOrEqual(1.05);
		expect(total(sim) / 200).toBeLessThanOrEqual(1.15);
	});

	it('runs longer than every probe (half the batch 5 s, half 2 min) are found by the sweep and watched as a new round', () => {
		const lengths = Array.from({ length: 200 }, (_, i) => (i % 2 ? 5000 : 120_000));
		const sim = simulate(lengths);
		expect(sim.seenAt / sim.floor).toBeLessThanOrEqual(1.1);
		expect(total(sim) / 200).toBeLessThanOrEqual(1.5);
	});

	it('runs whose start is learned after the wait began (waited on by id) are swept in the order they started', () => {
		// Checks answered in 50 ms, 10 at a time: a sweep of the whole batch at one moment would take a second.
		const learned = simulate(same(200, 5000), 1500, DEFAULTS, 50, 10, true);
		expect(learned.checks.filter((count) => count === 1).length).toBeGreaterThanOrEqual(
			200 - PROBES,
		);
		expect(learned.seenAt / learned.floor).toBeLessThanOrEqual(1.1);
	});

	it('checks no run before the first check interval', () => {
		const sim = simulate(same(50, 100));
		expect(Math.min(...sim.checkAges.flat())).toBeGreaterThanOrEqual(1000);
	});

	it('a probe is checked every quarter of the first interval while young, then after PRECISION of its age', () => {
		const sim = simulate([5000], 0);
		const ages = sim.checkAges[0];
		ages
			.slice(1)
			.forEach((age, i) =>
				expect(age - ages[i]).toBeLessThanOrEqual(Math.max(260, ages[i] * PRECISION + 10)),
			);
		expect(sim.seenAt - sim.floor).toBeLessThanOrEqual(5000 * PRECISION + 10);
	});

	it('a probe is never left unchecked longer than the longest interval', () => {
		const sim = simulate([600_000], 0, { firstCheckMs: 1000, longestIntervalMs: 5000 });
		const ages = sim.checkAges[0];
		expect(Math.max(...ages.slice(1).map((age, i) => age - ages[i]))).toBeLessThanOrEqual(
			5010 + 1e-6,
		);
	});

	it("a wait on one run whose length nothing tells (a workflow's first execution) reaches a run of 130 s in the fewest checks a fifth of its age allows", () => {
		// Checks a fifth of the age apart from 1 s (at most the longest interval, 20 s): 1.2^27 ≈ 134 s, so the 28th check is the first that can see a run of 130 s.
		const sim = simulate([130_000], 0, { ...DEFAULTS, precision: SINGLE_RUN_PRECISION });
		expect(sim.checks[0]).toBeLessThanOrEqual(28);
		expect(sim.seenAt - sim.floor).toBeLessThanOrEqual(130_000 * SINGLE_RUN_PRECISION);
	});

	it('a pinned check (a run id still 404) and a time limit come before the sweep', () => {
		const notProbe = 0; // probes are spread over the batch: 1, 3, 5, …
		const scheduler = new RunScheduler(
			Array.from({ length: 20 }, (_, key) => ({
				key,
				submittedAt: 0,
				limitAt: key === notProbe ? 3000 : undefined,
			})),
			DEFAULTS,
		);
		expect(takeDue(scheduler, 1000, 20)).not.toContain(notProbe);
		scheduler.pin(notProbe, 1500);
		expect(scheduler.nextDue()?.at).toBeLessThanOrEqual(1500);
		expect(takeDue(scheduler, 1500, 20)).toContain(notProbe);
		scheduler.reportPending(notProbe, 1510);
		expect(takeDue(scheduler, 3000, 20)).toContain(notProbe);
	});

	it('a run reported done leaves the batch; the wait ends with the last', () => {
		const scheduler = new RunScheduler(
			[
				{ key: 0, submittedAt: 0 },
				{ key: 1, submittedAt: 0 },
			],
			DEFAULTS,
		);
		expect(takeDue(scheduler, 1000, 10).sort()).toEqual([0, 1]);
		scheduler.reportDone(0, 1010, true);
		scheduler.reportDone(1, 1010, false);
		expect(scheduler.pendingCount).toBe(0);
		expect(scheduler.nextDue()?.at).toBeUndefined();
	});
});
