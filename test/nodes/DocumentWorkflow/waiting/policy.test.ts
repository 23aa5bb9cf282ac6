/**
 * The waiting policy (nodes/DocumentWorkflow/waiting/policy.ts) replayed on a simulated clock
 * against a simulated API (simulator.ts): which run is read when, what a read of the event list
 * stands in for, what one run teaches the next. No I/O: what is asserted is the policy's
 * decisions, and each test runs in well under a second.
 */
import {
	ANSWER_MS,
	COLD_SHARE,
	LIST_MISSES,
	LOOK_FACTOR,
	PROBES,
	Policy,
	RUN_SHARE,
} from '../../../../nodes/DocumentWorkflow/waiting/policy';
import { DEFAULT_WAIT_SETTINGS } from '../../../../nodes/DocumentWorkflow/actions/waitOptions';
import type { Figures, Pattern, SimulationOptions } from './simulator';
import { Simulation, quantile, spread, uuid } from './simulator';

const same = (ms: number) => () => ms;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const lengths = (list: number[]) => (n: number) => list[n];
const total = (figures: Figures) => figures.readAges.reduce((sum, ages) => sum + ages.length, 0);
/** A batch of 200 documents in one execution, uploaded over 1.5 s (a round trip of 15 ms). */
const batch = (lengthOf: Pattern['lengthOf'], extra: Partial<Pattern> = {}) =>
	new Simulation({ latencyMs: 15 }).run({ alive: 1, total: 1, batch: 200, lengthOf, ...extra });
const ratio = (figures: Figures) =>
	(figures.endedAt - figures.startedAt) / (figures.floor - figures.startedAt);

describe('a batch: probes, a sweep, rounds', () => {
	it.each([5000, 60_000, 300_000])(
		'runs of one length (%i ms): a few probes learn it, every other run is read exactly once',
		(ms) => {
			const figures = batch(same(ms));
			const once = figures.readAges.filter((ages) => ages.length === 1).length;
			expect(once).toBeGreaterThanOrEqual(200 - PROBES);
			expect(total(figures) / 200).toBeLessThanOrEqual(1.4);
			expect(ratio(figures)).toBeLessThanOrEqual(1.1);
		},
	);

	it('run lengths spread from 5 s to 2 min: the sweep waits for the longest probe, so the last run is seen soon after it ends for under 1.4 reads a run', () => {
		const figures = batch(spread(200));
		expect(ratio(figures)).toBeLessThanOrEqual(1.1);
		expect(total(figures) / 200).toBeLessThanOrEqual(1.4);
	});

	it('runs of one length uploaded over 1.5 s: a probe lined up at the age the first was seen final counts as done then, so the sweep is not held back by how late its read came', () => {
		// Without the line-up the last run is seen 1.5 times its floor; the probes take turns, so
		// the first end is seen when an ended probe's turn comes (this simulation's phase: 1.2).
		const figures = batch(same(6000));
		expect(ratio(figures)).toBeLessThanOrEqual(1.25);
		expect(total(figures) / 200).toBeLessThanOrEqual(1.15);
	});

	it('runs longer than every probe (half the batch 5 s, half 2 min) are found by the sweep and watched as a new round', () => {
		const figures = batch((n) => (n % 2 ? 5000 : 120_000));
		expect(ratio(figures)).toBeLessThanOrEqual(1.1);
		expect(total(figures) / 200).toBeLessThanOrEqual(1.5);
	});

	it.each([5000, 8000, 12_000])(
		'runs of one length (%i ms) uploaded at round trips of 20 to 45 ms: the oldest pending probe, which the sweep waits for, has every other turn, so the batch ends within 1.15× of its floor at each',
		(ms) => {
			// Read in turn only, the oldest probe's end could be seen up to PROBES turns late: 1.2-1.3×.
			const over = [20, 25, 30, 35, 40, 45].flatMap((latencyMs) => {
				const sim = new Simulation({ latencyMs });
				const figures = sim.run({ alive: 1, total: 1, batch: 200, lengthOf: same(ms) });
				return ratio(figures) > 1.15 ? [{ latencyMs, ratio: ratio(figures) }] : [];
			});
			expect(over).toEqual([]);
		},
	);

	it('runs waited on by id: the probes are read at once, their starts place the others, which are read once', () => {
		const figures = batch(same(5000), { byId: true });
		const once = figures.readAges.filter((ages) => ages.length === 1).length;
		expect(once).toBeGreaterThanOrEqual(200 - PROBES);
		// The batch goal (the probes take turns: how soon an ended one's turn comes is a matter of phase).
		expect(ratio(figures)).toBeLessThanOrEqual(1.15);
	});

	it('at its Max Wait Time, from its submission, each run of the batch is read once more, whatever its sweep would say', () => {
		const figures = batch(same(60_000), { settings: { maxWaitMs: 3000 } });
		// The wait began once the last upload was answered; a run whose limit came before is read then.
		const waitBegan = Math.max(...figures.createdAt) + 15;
		const limits = figures.createdAt.map((createdAt) => createdAt + 3000);
		figures.readAges.forEach((ages, i) => {
			const at = ages.map((age) => figures.createdAt[i] + age);
			// Ten at a time (Concurrent Checks), within the First Check Interval after its limit.
			const due = Math.max(limits[i], waitBegan);
			expect(at.some((time) => time >= limits[i] && time <= due + 1000)).toBe(true);
		});
		expect(figures.endedAt).toBeLessThanOrEqual(Math.max(...limits, waitBegan) + 1000);
	});

	it('no run is read before the First Check Interval', () => {
		const figures = batch(same(100));
		expect(Math.min(...figures.readAges.flat())).toBeGreaterThanOrEqual(1000);
	});
});

describe('what runs taught, applied to runs already waiting', () => {
	it('a run already waiting is not read before the First Check Interval, though two runs seen since took less', () => {
		const policy = new Policy();
		const settings = { ...DEFAULT_WAIT_SETTINGS, initialPollIntervalMs: 1000 };
		const at = (ms: number) => new Date(T0 + ms).toISOString();
		const wait = (n: number, ms: number, submittedAt?: number) =>
			policy.begin([{ itemIndex: 0, runId: uuid(n), workflowId: 'w', submittedAt }], settings, ms)
				.runs[0];
		// The event list fails; two runs submitted at T0, a third waited on by id from T0 + 0.9 s.
		for (let read = 0; read < LIST_MISSES; read++) policy.listRead(undefined, T0);
		const [first, second] = [wait(1, T0, T0), wait(2, T0, T0)];
		const third = wait(3, T0 + 900);
		expect(policy.next(T0 + 900).checks).toEqual([third]);
		const running = { status: 'running', workflowId: 'w', startedOn: at(895) };
		policy.answered(third, { kind: 'pending', run: running }, T0 + 905);
		expect(policy.next(T0 + 1000).checks).toEqual([first, second]);
		// Both took 0.5 s: the workflow's runs take one length, which the third is taught.
		const completed = { ...running, status: 'completed', startedOn: at(0), completedOn: at(500) };
		const outcome = { itemIndex: 0, item: { json: {} } };
		for (const run of [first, second])
			policy.answered(run, { kind: 'done', outcome, run: completed }, T0 + 1010);
		expect(third.oneLength).toBe(true);
		expect(policy.next(T0 + 1899).checks).toEqual([]);
		expect(policy.next(third.dueAt!).checks).toEqual([third]);
	});
});

describe('which read goes first when reads are scarce', () => {
	let eventSeq = 0;
	const completed = (runId: string) => ({
		...{ id: uuid(++eventSeq, 1), type: 'run.completed', createdOn: new Date(T0).toISOString() },
		data: { runId },
	});
	/** A policy, and `begin(n, at)`: a one-run wait on run n submitted at `at`, as an execution starts one. */
	const onePolicy = (concurrency: number) => {
		const policy = new Policy();
		const settings = { ...DEFAULT_WAIT_SETTINGS, initialPollIntervalMs: 1000, concurrency };
		const begin = (n: number, at: number) =>
			policy.begin([{ itemIndex: 0, runId: uuid(n), submittedAt: at }], settings, at).runs[0];
		return { policy, begin };
	};
	/** One-run waits submitted at these times, the list anchored at T0 + 100 ms. */
	const waiting = (submitted: number[], concurrency = 1) => {
		const { policy, begin } = onePolicy(concurrency);
		const runs = submitted.map((ms, n) => begin(n + 1, T0 + ms));
		policy.listRead([], T0 + 100);
		return { policy, runs };
	};
	/** Two one-run waits, the list's first read (it only finds where the list ends) back at 200 ms. */
	const twoWaitsListAnchored = () => {
		const { policy, begin } = onePolicy(5);
		begin(1, T0);
		begin(2, T0 + 10);
		expect(policy.next(T0 + 100).readListUntil).toBeDefined();
		policy.listRead([], T0 + 200);
		return { policy, begin };
	};
	/** The first time from `from` on, stepping as a waiting loop does, at which `wanted` holds of the step. */
	const firstStepWhere = (
		policy: Policy,
		from: number,
		wanted: (step: ReturnType<Policy['next']>) => boolean,
	) => {
		for (let now = from; now < from + 200_000; ) {
			const step = policy.next(now);
			if (wanted(step)) return now;
			now = Math.max(now + 1, Math.min(step.wakeAt, now + 1000));
		}
		return undefined;
	};

	it('runs an event named at once are read youngest first: lateness is a share of a run, so the youngest run has the nearest deadline', () => {
		const { policy, runs } = waiting([0, 20_000]);
		policy.listRead(
			runs.map((run) => completed(run.runId)),
			T0 + 25_000,
		);
		expect(runs.every((run) => run.named)).toBe(true);
		// One read at a time (Concurrent Checks 1): the run of 5 s before the run of 25 s.
		expect(policy.next(T0 + 25_000).checks).toEqual([runs[1]]);
	});

	it('a run an event names while its check is out is read again once that check answers pending: the check may have left before the end, and the run is no longer one the list looks at', () => {
		const { policy, runs } = waiting([0, 10], 3);
		const [run] = runs;
		// Its own check goes, and waits for its answer (at the pacer, say) while the list names it.
		const sent = firstStepWhere(policy, T0 + 1000, ({ checks }) => checks.includes(run))!;
		policy.listRead([completed(run.runId)], sent + 100);
		expect(run.named).toBe(true);
		policy.answered(run, { kind: 'pending', run: { status: 'running' } }, sent + 200);
		expect(policy.next(sent + 200).checks).toContain(run);
		// Its output is read beside its status: an event listed it completed.
		expect(run.completedListed).toBe(true);
		// Once: a second pending answer puts it back on its own schedule.
		policy.answered(run, { kind: 'pending', run: { status: 'running' } }, sent + 300);
		expect(policy.next(sent + 300).checks).not.toContain(run);
	});

	it("a read at a run's Max Wait Time goes first: the wait is to end at that time, however old its run", () => {
		const policy = new Policy();
		const settings = { ...DEFAULT_WAIT_SETTINGS, initialPollIntervalMs: 1000, concurrency: 1 };
		const target = (n: number, ms: number) => ({
			itemIndex: 0,
			runId: uuid(n),
			submittedAt: T0 + ms,
		});
		const [old] = policy.begin([target(1, 0)], { ...settings, maxWaitMs: 20_000 }, T0).runs;
		const [young] = policy.begin([target(2, 19_000)], settings, T0 + 19_000).runs;
		policy.listRead([], T0 + 19_100);
		policy.listRead([completed(young.runId)], T0 + 20_000);
		expect(policy.next(T0 + 20_000).checks).toEqual([old]);
	});

	it('the list waits for the checks in flight, for at most its own gap: reads the checks need are not pushed back by a read of the list', () => {
		const { policy, runs } = waiting([0, 10, 20, 30], 2);
		const [named] = runs;
		policy.listRead([completed(named.runId)], T0 + 10_000);
		// The named run's check is in flight while the list comes due again.
		expect(policy.next(T0 + 10_000)).toMatchObject({ checks: [named], readListUntil: undefined });
		const due = policy.next(T0 + 10_001).wakeAt;
		expect(due).toBeGreaterThan(T0 + 10_001);
		expect(policy.next(due).readListUntil).toBeUndefined();
		const overdue = due + (due - (T0 + 10_000));
		expect(policy.next(overdue - 1).readListUntil).toBeUndefined();
		expect(policy.next(overdue).readListUntil).toBeDefined();
	});

	it('where events name their run, a read of the list waiting for its turn at the pacer lets no run read itself: those reads would wait behind it', () => {
		const { policy, runs } = waiting([0, 10], 5);
		policy.namesRuns = true;
		const readAt = firstStepWhere(policy, T0 + 200, (step) => step.readListUntil !== undefined)!;
		// 20 s with the read asked for but not sent (a backlog at the pacer): no run reads itself.
		for (let now = readAt; now < readAt + 20_000; now += 50)
			expect(policy.next(now).checks).toEqual([]);
		// Sent, and slow to answer: the runs read themselves, a share of their age after it left.
		const sentAt = readAt + 20_000;
		policy.listSent(sentAt);
		const ownAt = firstStepWhere(policy, sentAt, (step) => step.checks.length > 0);
		expect(ownAt).toBeGreaterThan(sentAt);
		expect(runs.every((run) => run.checking)).toBe(true);
	});

	it('the first read of the list looks too: an event on its pages naming a run of ours is read at once', () => {
		const { policy, begin } = onePolicy(5);
		const a = begin(1, T0);
		begin(2, T0 + 10);
		// The first read comes late (reads were scarce): run a had ended by then.
		const event = (n: number, type: string, data: object, ms: number) => ({
			id: uuid(1000 + n, 2),
			type,
			createdOn: new Date(T0 + ms).toISOString(),
			data,
		});
		const one = [event(1, 'run.completed', { runId: a.runId }, 5000)];
		expect(policy.next(T0 + 6000).readListUntil).toBeDefined();
		policy.listRead(one, T0 + 6100);
		expect(a.named).toBe(true);
		expect(policy.next(T0 + 6100).checks).toContain(a);
	});

	it('a run whose end the list brought before the node added it (a busy process) is read at once when added', () => {
		const { policy, begin } = twoWaitsListAnchored();
		// Run 3 was uploaded at 1 s and ended at 5 s; the list brings its end at 6 s, before the
		// node, its process busy, adds it at 7 s.
		expect(policy.next(T0 + 6000).readListUntil).toBeDefined();
		policy.listRead([completed(uuid(3))], T0 + 6100);
		const late = begin(3, T0 + 1000);
		expect(late.named).toBe(true);
		const readAt = firstStepWhere(policy, T0 + 7000, (step) => step.checks.includes(late));
		expect(readAt! - T0).toBeLessThan(8000);
	});

	it('a run whose end the list brought before two waits added it (Run → Wait for Completion in two executions) is read at once for each', () => {
		const { policy, begin } = twoWaitsListAnchored();
		policy.listRead([completed(uuid(3))], T0 + 6100);
		const twice = [begin(3, T0 + 7000), begin(3, T0 + 7000)];
		expect(twice.map((run) => run.named)).toEqual([true, true]);
		expect(policy.next(T0 + 7000).checks).toEqual(expect.arrayContaining(twice));
	});

	it('the first read of the list is not held back by checks in flight: before it there is no gap to wait out', () => {
		const { policy, begin } = onePolicy(5);
		// One wait alone: no read of the list (one run is not worth it); its first check goes and
		// is never answered, so a check is in flight from then on.
		const first = begin(1, T0);
		expect(policy.next(T0 + 1000)).toMatchObject({ checks: [first], readListUntil: undefined });
		// A second wait: the list is worth a read now, with the check still in flight.
		begin(2, T0 + 1500);
		const firstList = firstStepWhere(policy, T0 + 1500, (step) => step.readListUntil !== undefined);
		expect(first.checking).toBe(true);
		expect(firstList).toBeDefined();
		expect(firstList! - T0).toBeLessThan(5000);
	});
});

describe('one run: its own reads, a share of its age apart', () => {
	const alone = (ms: number, settings: Pattern['settings'] = {}) =>
		new Simulation({ named: false }).run({ alive: 1, total: 1, lengthOf: same(ms), settings });

	it("a workflow's first execution reaches a run of 130 s in the fewest reads a fifth of its age allows, and sees it within a fifth", () => {
		// A fifth of the age apart from 1 s: 1.2^27 ≈ 137 s, so about the 28th read is the first that can see it.
		const figures = alone(130_000);
		expect(figures.status).toBeLessThanOrEqual(28);
		expect(figures.late[0]).toBeLessThanOrEqual(RUN_SHARE);
		// A fifth of its age apart, or the shortest gap while young: a fifth of the First Check Interval and an answer.
		const ages = figures.readAges[0];
		const shortest = RUN_SHARE * 1000 + ANSWER_MS + 20;
		ages
			.slice(1)
			.forEach((age, i) =>
				expect(age - ages[i]).toBeLessThanOrEqual(Math.max(RUN_SHARE * ages[i], shortest)),
			);
	});

	it('never longer apart than the Longest Check Interval', () => {
		const ages = alone(600_000, { maxPollIntervalMs: 5000 }).readAges[0];
		const gaps = ages.slice(1).map((age, i) => age - ages[i]);
		expect(Math.max(...gaps)).toBeLessThanOrEqual(5000 + 30);
	});
});

describe('what one execution taught the next (one process, one API key)', () => {
	it('a run as long as the last is read once, where it ends', () => {
		const sim = new Simulation();
		const first = sim.run({ alive: 1, total: 1, lengthOf: same(1500) });
		const second = sim.run({ alive: 1, total: 1, lengthOf: same(1500) });
		expect(first.status).toBeGreaterThanOrEqual(3);
		expect(second.status).toBe(1);
	});

	it('runs that are queued before they start: what the next execution waits for counts the queue too', () => {
		// From startedOn to completedOn 1.5 s, from the submission 3 s: counted from startedOn, the
		// second run would be read at 1.5 s, still queued, and again and again after.
		const sim = new Simulation();
		const pattern = { alive: 1, total: 1, lengthOf: same(3000), queuedOf: same(1500) };
		sim.run(pattern);
		expect(sim.run(pattern).status).toBe(1);
	});

	it("one run seen final is no length its workflow's runs share: where events name their run, a later, longer run is read once, when the list names it", () => {
		const sim = new Simulation();
		sim.run({ alive: 3, total: 3, lengthOf: same(500), workflowId: 'taught-naming' });
		sim.run({ alive: 1, total: 1, lengthOf: same(1000) });
		expect(sim.run({ alive: 1, total: 1, lengthOf: same(6000) }).status).toBe(1);
	});
});

describe('the event list, read for many one-run waits at once', () => {
	/** Three executions at once teach the process that this key's run events name their run. */
	const taught = (options: SimulationOptions = {}) => {
		const sim = new Simulation(options);
		sim.run({ alive: 3, total: 3, lengthOf: same(500), workflowId: 'taught-naming' });
		expect(sim.processes[0].policy.namesRuns).toBe(true);
		return sim;
	};

	it('where events name their run, one execution waiting alone is found by the list, not by reads of its own, though its workflow had far longer runs', () => {
		const sim = taught();
		sim.run({ alive: 4, total: 4, lengthOf: lengths([3000, 3200, 3400, 8000]) });
		const alone = sim.run({ alive: 1, total: 1, lengthOf: same(3000) });
		expect(alone.status).toBe(1);
		expect(alone.late[0]).toBeLessThanOrEqual(RUN_SHARE);
		// A plain poller, a fifth of the run's age apart and never reading the list, reads it
		// several times to be as soon: the bound alone would prove nothing about the list.
		const poller = new Simulation({ eventsReadable: false }).run({
			...{ alive: 1, total: 1, lengthOf: same(3000) },
		});
		expect(poller.late[0]).toBeLessThanOrEqual(RUN_SHARE);
		expect(poller.status).toBeGreaterThan(1);
	});

	it('where events name their run and run lengths vary, each run is read once, when the list names it, though it runs past the not-found grace period', () => {
		const sim = taught();
		const figures = sim.run({
			alive: 11,
			total: 11,
			lengthOf: (n) => 1000 + 500 * n,
			settings: { notFoundGraceMs: 3000 },
		});
		expect(figures.readAges.map((ages) => ages.length)).toEqual(new Array(11).fill(1));
	});

	it("an event listed too late for the list does not hold its run up for ever: reads of the list that show nothing stand in for its own reads only until LOOK_FACTOR times the longer of the grace period and its workflow's longest run", () => {
		const sim = taught();
		sim.run({ alive: 3, total: 3, lengthOf: lengths([1000, 1500, 2500]) });
		const settings = { notFoundGraceMs: 2000 };
		// Runs of 3 s and 5 s; the first one's run.completed is listed only 8 s after it was created,
		// under an id older than those the list was read past.
		const figures = sim.run({
			...{ alive: 2, total: 2, arrivalGapMs: 300, settings },
			lengthOf: lengths([3000, 5000]),
			eventDelayOf: (n) => (n === 0 ? 8000 : 0),
		});
		const [reads, other] = figures.readAges;
		// Looks stood in for its own reads (a fifth of its age apart would read it several times) ...
		expect(reads).toHaveLength(1);
		expect(other).toHaveLength(1);
		// ... until LOOK_FACTOR times the longer of the grace period and the longest run seen (the
		// other one's, 5 s, by then).
		expect(reads[0]).toBeGreaterThan(8000);
		expect(reads[0]).toBeLessThanOrEqual(LOOK_FACTOR * 5000 + 300);
	});

	it('a run the list looks at that was read before (waited on by id, read at once) is read by itself again once it is LOOK_FACTOR times as old as at that read', () => {
		const sim = taught();
		sim.run({ alive: 3, total: 3, lengthOf: lengths([1000, 1500, 2500]) });
		const figures = sim.run({
			...{ alive: 2, total: 2, byId: true, lengthOf: lengths([3000, 5000]) },
			eventDelayOf: (n) => (n === 0 ? 60_000 : 0),
		});
		const ages = figures.readAges[0];
		ages.slice(1).forEach((age, i) => expect(age).toBeLessThanOrEqual(LOOK_FACTOR * ages[i] + 300));
		expect(figures.late[0]).toBeLessThanOrEqual(LOOK_FACTOR - 1);
	});

	it('a run an event named as ended before its read showed it final is read at once, then on its own schedule, not left to reads of the list', () => {
		const run = (early: boolean) =>
			new Simulation().run({
				alive: 5,
				total: 5,
				lengthOf: (n) => (n === 0 ? 2500 : 6000),
				earlyEventOf: (n) => (early && n === 0 ? 600 : undefined),
			});
		const named = run(true).readAges[0];
		// The event caused a read (without it, none comes so soon) ...
		expect(named.some((age) => age >= 600 && age < 1200)).toBe(true);
		expect(run(false).readAges[0].some((age) => age < 1200)).toBe(false);
		// ... and its later reads are its own, a fifth of its age apart: it is seen within that.
		const [last, seen] = named.slice(-2);
		expect(seen - last).toBeLessThanOrEqual(RUN_SHARE * last + 50);
	});

	it("a run older than one length past its workflow's longest run seen is looked at at a known run's share, though its wait began knowing no run of it", () => {
		const sim = taught();
		const readsOfList = () => sim.counts.events;
		const before = readsOfList();
		const figures = sim.run({ alive: 4, total: 4, lengthOf: lengths([1000, 8000, 8000, 8000]) });
		// From 1.2 s to 8 s at a tenth of their age: 20 reads or so; at a fifth, 10 or so.
		const looks = readsOfList() - before;
		expect(looks).toBeLessThanOrEqual(Math.log(8 / 1.2) / Math.log(1 + RUN_SHARE) + 6);
		expect(figures.status).toBe(4);
	});

	it.each([
		['name their run', true],
		['name no run', false],
	])(
		'runs of 3 s for 20 executions at once complete with few status reads when run events %s',
		(_label, named) => {
			const figures = new Simulation({ named }).run({ alive: 20, total: 20, lengthOf: same(3000) });
			expect(figures.status / 20).toBeLessThanOrEqual(named ? 1.1 : 1.5);
		},
	);

	it(`run events that name no run: ${LIST_MISSES} runs seen final that no event named say so, and the list is no longer read`, () => {
		const sim = new Simulation({ named: false });
		sim.run({ alive: 5, total: 20, lengthOf: (n) => 2000 + 700 * (n % 5) });
		expect(sim.processes[0].policy.namesRuns).toBe(false);
		const before = sim.counts.events;
		sim.run({ alive: 10, total: 10, lengthOf: (n) => 2000 + 300 * n });
		expect(sim.counts.events).toBe(before);
	});

	it(`runs whose events are listed 1.5 s after their own reads saw them final are no misses: ${LIST_MISSES} of them still teach that events name their run`, () => {
		const policy = new Policy();
		const settings = { ...DEFAULT_WAIT_SETTINGS, initialPollIntervalMs: 1000, concurrency: 5 };
		const runs = [1, 2, 3, 4].map(
			(n) =>
				policy.begin([{ itemIndex: 0, runId: uuid(n), submittedAt: T0 }], settings, T0).runs[0],
		);
		policy.listRead([], T0 + 100);
		const event = (n: number, runId: string) => ({
			...{ id: uuid(2000 + n, 2), type: 'run.completed', createdOn: new Date(T0).toISOString() },
			data: { runId },
		});
		for (const [n, run] of runs.slice(0, LIST_MISSES).entries()) {
			const seenAt = T0 + 5000 * (n + 1);
			const item = { json: {} };
			const done = { kind: 'done' as const, run: { status: 'completed' } };
			policy.answered(run, { ...done, outcome: { itemIndex: 0, item } }, seenAt);
			// Reads 0.3 s apart; the API lists the run's event 1.5 s after its end.
			policy.listRead([], seenAt + 300);
			policy.listRead([], seenAt + 600);
			policy.listRead([event(n, run.runId)], seenAt + 1500);
		}
		// Before, each counted as a miss at the second read after it: the list was given up for good.
		expect(policy.namesRuns).toBe(true);
	});

	it(`a list that cannot be read (no events:read) is left alone after ${LIST_MISSES} reads, and every run is still seen within its share`, () => {
		const figures = new Simulation({ eventsReadable: false }).run({
			alive: 10,
			total: 10,
			lengthOf: (n) => 2000 + 500 * n,
		});
		expect(figures.events).toBe(LIST_MISSES);
		expect(Math.max(...figures.late)).toBeLessThanOrEqual(RUN_SHARE);
	});

	it('runs seen final while the list is not read (batches) are no evidence about naming: a later read still learns that events name their run', () => {
		const sim = new Simulation();
		// Ten thousand runs seen final in batches, which never read the list.
		for (let i = 0; i < 50; i++) sim.run({ alive: 1, total: 1, batch: 200, lengthOf: same(1500) });
		const figures = sim.run({ alive: 5, total: 5, lengthOf: same(4000), workflowId: 'new' });
		expect(sim.processes[0].policy.namesRuns).toBe(true);
		expect(figures.status).toBe(5);
	});
});

describe("the benchmark's patterns, simulated (a round trip of 20 ms; n8n starts executions 200 ms apart)", () => {
	const pattern = (alive: number, total: number, lengthOf: Pattern['lengthOf']): Pattern => ({
		...{ alive, total, lengthOf, startSpacingMs: 200 },
		settings: { includeOutput: true },
	});
	const within = (figures: Figures, share: number) =>
		figures.late.filter((late) => late <= share).length / figures.late.length;

	it.each([
		['runs of 20 s, events name their run', true, 4],
		['runs of 20 s, events name no run', false, 6],
	])(
		'the first 40 executions of a process that learned nothing, %s: at most %i requests a document, 90% within a tenth, all within a fifth',
		(_label, named, most) => {
			const figures = new Simulation({ named }).run(pattern(40, 40, same(20_000)));
			expect(figures.perDocument).toBeLessThanOrEqual(most);
			expect(within(figures, COLD_SHARE)).toBeGreaterThanOrEqual(0.9);
			expect(within(figures, RUN_SHARE)).toBe(1);
		},
	);

	it('runs of one length that n8n started over 12 s, nothing known: once two are seen final, each later run is read once, where it should end, and no run is read twice', () => {
		const figures = new Simulation().run({ ...pattern(40, 40, same(20_000)), startSpacingMs: 300 });
		const learntBy = figures.createdAt[0] + 20_000 * (1 + COLD_SHARE) + 1000;
		const later = figures.late.filter((_, n) => figures.createdAt[n] + 20_000 > learntBy);
		expect(later.length).toBeGreaterThanOrEqual(20);
		// An answer's time and a few round trips: a read of the list a COLD_SHARE of the oldest
		// run's age apart would leave them up to a tenth of their run late.
		expect(Math.max(...later)).toBeLessThanOrEqual(0.01);
		expect(figures.readAges.every((ages) => ages.length === 1)).toBe(true);
	});

	it('the first 40 executions, runs of 5 to 120 s: at most 5 requests a document, all within a fifth', () => {
		const figures = new Simulation().run(pattern(40, 40, spread(80)));
		expect(figures.perDocument).toBeLessThanOrEqual(5);
		expect(within(figures, RUN_SHARE)).toBe(1);
	});

	it.each([
		['runs of 20 s, events name their run', true, same(20_000), 120, 4, 0.1],
		['runs of 20 s, events name no run', false, same(20_000), 120, 6, 0.1],
		['runs of 5 to 120 s, events name their run', true, spread(80), 80, 5, 0.2],
		['runs of 5 to 120 s, events name no run', false, spread(80), 80, 16, 0.2],
	])(
		'40 executions alive at once, %s: the goals of the benchmark row',
		(_label, named, lengthOf, count, most, worst) => {
			const figures = new Simulation({ named }).run(pattern(40, count, lengthOf));
			expect(figures.perDocument).toBeLessThanOrEqual(most);
			expect(Math.max(...figures.late)).toBeLessThanOrEqual(worst);
		},
	);

	it('200 executions alive at once on two processes (queue mode) under a read limit of 50 a second: under 1% answered 429, at most 4 requests a document', () => {
		const sim = new Simulation({ readLimit: 50, processes: 2 });
		const figures = sim.run(pattern(200, 200, same(5000)));
		expect(figures.rateLimited / figures.requests).toBeLessThan(0.01);
		expect(figures.perDocument).toBeLessThanOrEqual(4);
		expect(quantile(figures.late, 1)).toBeLessThan(1);
	});
});
