/**
 * The waiting policy's rules one at a time (the pure functions of
 * nodes/DocumentWorkflow/waiting/policy.ts), on plain runs made here: what each decides, in the
 * words of docs/waiting.md ("The rules in the code"). policy.test.ts replays them together.
 */
import { DEFAULT_WAIT_SETTINGS } from '../../../../nodes/DocumentWorkflow/actions/waitOptions';
import type { Run, Wait } from '../../../../nodes/DocumentWorkflow/waiting/policy';
import {
	ANSWER_MS,
	COLD_SHARE,
	LIST_MISSES,
	LIST_SHARE,
	LOOK_FACTOR,
	PROBES,
	PROBE_SHARE,
	RUN_SHARE,
	apiAheadAfter,
	coldLook,
	deadlineOf,
	eventsTell,
	firstCheckOf,
	gap,
	latestOwnRead,
	lengthSeen,
	listPaused,
	listYields,
	lookBasis,
	probeInTurn,
	probeShare,
	probesOf,
	scheduledAt,
	sweepAges,
} from '../../../../nodes/DocumentWorkflow/waiting/policy';

const settings = {
	...DEFAULT_WAIT_SETTINGS,
	initialPollIntervalMs: 1000,
	maxPollIntervalMs: 20_000,
	notFoundGraceMs: 30_000,
	maxWaitMs: 0,
};
const newWait = (): Wait => ({ runs: [], settings, beganAt: 0, probes: [], inFlight: 0 });
/** A pending run of `wait`, submitted at `bornAt`. */
function runOf(wait: Wait, fields: Partial<Run> = {}): Run {
	const itemIndex = wait.runs.length;
	const run: Run = {
		...{ wait, target: { itemIndex, runId: `run-${itemIndex}`, submittedAt: fields.bornAt ?? 0 } },
		...{ runId: `run-${itemIndex}`, bornAt: 0, firstAge: 1000, cold: false, role: 'later' },
		...{ checking: false, named: false, ...fields },
	};
	wait.runs.push(run);
	return run;
}
const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

describe('what runs taught', () => {
	it('a first check past the longest run where runs are of one length (or one is known), else past the shortest; never before the First Check Interval', () => {
		expect(firstCheckOf(settings)).toEqual({ firstAge: 1000, expectedAge: undefined });
		const one = firstCheckOf(settings, { shortest: 5000, longest: 5900, runs: 2 });
		expect(one).toEqual({ firstAge: 5900 + ANSWER_MS, expectedAge: 5900 + ANSWER_MS });
		expect(firstCheckOf(settings, { shortest: 5000, longest: 9000, runs: 2 }).firstAge).toBe(
			5000 + ANSWER_MS,
		);
		expect(firstCheckOf(settings, { shortest: 7000, longest: 7000, runs: 1 })).toEqual({
			firstAge: 7000 + ANSWER_MS,
			expectedAge: undefined,
		});
		expect(firstCheckOf(settings, { shortest: 100, longest: 100, runs: 3 }).firstAge).toBe(1000);
	});

	it("a run's length counts from its submission to completedOn on the API's clock; by id from startedOn", () => {
		const wait = newWait();
		const submitted = runOf(wait, { bornAt: Date.UTC(2026, 0, 1) + 1000 });
		submitted.lastAnswer = { startedOn: at(3000), completedOn: at(9000) };
		// Kept on the API's clock (500 ms ahead of ours; lengthsOf takes it off): from its submission
		// at 1,000 to completedOn at 9,000.
		expect(lengthSeen(submitted, 500, 0)).toBe(8000);
		const byId = runOf(wait, { target: { itemIndex: 1, runId: 'by-id' }, bornAt: 0 });
		byId.lastAnswer = { startedOn: at(3000), completedOn: at(9000) };
		// From startedOn (3,000 on the API's clock, 2,500 on ours) to completedOn.
		expect(lengthSeen(byId, 500, 0)).toBe(6500);
		// No completedOn: the age it was seen final at, on the API's clock.
		byId.lastAnswer = {};
		expect(lengthSeen(byId, 500, 4000)).toBe(4500);
	});

	it("the API's clock is as far ahead as the latest of its timestamps was seen past ours", () => {
		const answer = { startedOn: at(1000), completedOn: at(4000) };
		expect(apiAheadAfter(answer, Date.UTC(2026, 0, 1) + 3000)).toBe(1000);
		expect(apiAheadAfter(answer, Date.UTC(2026, 0, 1) + 3000, 2000)).toBe(2000);
		expect(apiAheadAfter({ startedOn: null }, 0)).toBeUndefined();
	});
});

describe('when a run is read next', () => {
	it('a share of the age less the answers after it, at least a fifth of the First Check Interval and an answer, at most the Longest Check Interval', () => {
		expect(gap(settings, 10_000, RUN_SHARE)).toBe(RUN_SHARE * 10_000 - ANSWER_MS);
		expect(gap(settings, 10_000, RUN_SHARE, 2)).toBe(RUN_SHARE * 10_000 - 2 * ANSWER_MS);
		expect(gap(settings, 100, RUN_SHARE)).toBe(RUN_SHARE * 1000 + ANSWER_MS);
		expect(gap(settings, 10_000_000, RUN_SHARE)).toBe(20_000);
	});

	it("a one-run wait's run is read a RUN_SHARE of its age apart; in a batch, or near where its workflow's runs end, a PROBE_SHARE", () => {
		const alone = runOf(newWait(), { expectedAge: 5000 });
		expect(probeShare(alone, 10_000)).toBe(RUN_SHARE);
		expect(probeShare(alone, 5000)).toBe(PROBE_SHARE);
		const batch = newWait();
		runOf(batch);
		expect(probeShare(runOf(batch), 10_000)).toBe(PROBE_SHARE);
	});

	it('a run is due at once, else on its round; the probe in turn at the rotation, never before its first check', () => {
		const wait = newWait();
		const run = runOf(wait, { dueAt: 9000, firstAge: 1000 });
		expect(scheduledAt(run, false, 0)).toBe(9000);
		run.soonAt = 500;
		expect(scheduledAt(run, false, 0)).toBe(500);
		run.soonAt = undefined;
		wait.rotationAt = 4000;
		expect(scheduledAt(run, true, 0)).toBe(4000);
		wait.rotationAt = 200;
		expect(scheduledAt(run, true, 0)).toBe(1000);
		expect(scheduledAt(runOf(wait), false, 0)).toBeUndefined();
	});

	it('of reads due together the youngest run goes first; a read at Max Wait Time by its time', () => {
		const wait = newWait();
		const [old, young] = [runOf(wait, { bornAt: 0 }), runOf(wait, { bornAt: 15_000 })];
		expect(deadlineOf(young, 20_000)).toBeLessThan(deadlineOf(old, 20_000));
		expect(deadlineOf(old, 20_000)).toBe(20_000 + RUN_SHARE * 20_000);
		const limited = { ...wait, settings: { ...settings, maxWaitMs: 10_000 } };
		expect(deadlineOf(runOf(limited), 20_000)).toBe(20_000);
	});
});

describe('a batch', () => {
	it(`its probes are the middles of ${PROBES} equal parts of its runs (all, if few)`, () => {
		const wait = newWait();
		const runs = Array.from({ length: 80 }, (_, n) => runOf(wait, { bornAt: n }));
		expect(probesOf(runs).map((run) => run.bornAt)).toEqual([5, 15, 25, 35, 45, 55, 65, 75]);
		expect(probesOf(runs.slice(0, 3))).toEqual(runs.slice(0, 3));
	});

	it('in turn: every other turn the oldest free probe, else the probe read longest ago', () => {
		const wait = newWait();
		const [a, b, c] = [0, 10, 20].map((bornAt) => runOf(wait, { bornAt }));
		wait.probes = [a, b, c];
		a.readAge = 5000;
		b.readAge = 1000;
		c.checking = true;
		expect(probeInTurn(wait)).toBe(b);
		wait.oldestTurn = true;
		expect(probeInTurn(wait)).toBe(a);
	});

	it('the others are swept at the longest age the probes submitted no later than them were seen done, none past a probe still pending', () => {
		const wait = newWait();
		const [p1, p2, p3] = [0, 20, 40].map((bornAt) => runOf(wait, { bornAt, role: 'probe' }));
		const waiting = [10, 30, 50].map((bornAt) => runOf(wait, { bornAt, role: 'waiting' }));
		p1.doneAge = 5000;
		p2.doneAge = 5500;
		const swept = sweepAges([p1, p2, p3], waiting);
		expect(swept.map(({ run, age }) => [run.bornAt, age])).toEqual([
			[10, 5000],
			[30, 5500],
		]);
		// Ended more than one length apart: every probe counts, so none is swept while p3 runs.
		p2.doneAge = 9000;
		expect(sweepAges([p1, p2, p3], waiting)).toEqual([]);
	});
});

describe('the event list', () => {
	it('a run event tells the end of each known run it names anywhere in its data, the ids it names of no known run, and counts as unnamed when it names none known', () => {
		const [ours, other] = [
			'00000000-0000-4000-8000-000000000001',
			'00000000-0000-4000-8000-000000000002',
		];
		const events = [
			{ id: 'e1', type: 'run.completed', data: { run: { id: ours.toUpperCase() } } },
			{ id: 'e2', type: 'run.failed', data: { runId: other } },
			{ id: 'e3', type: 'document.received', data: { runId: ours } },
			{ id: 'e4', type: 'run.cancelled', data: { workflowId: 'w' } },
		];
		expect(eventsTell(events, new Set([ours]))).toEqual({
			ends: [{ id: ours, completed: true }],
			unknownIds: [other],
			unnamed: 2,
		});
	});

	it(`looks at a run a LIST_SHARE of its age apart; a run added knowing nothing keeps to the oldest such run's schedule at COLD_SHARE, until older than one length past its workflow's longest run`, () => {
		const wait = newWait();
		const warm = runOf(wait, { bornAt: 5000 });
		expect(lookBasis(warm, 9000, 1000)).toEqual({
			bornAt: 5000,
			earliest: 1000,
			share: LIST_SHARE,
		});
		const cold = runOf(wait, { bornAt: 5000, cold: true });
		const known = { shortest: 2000, longest: 3000, runs: 2 };
		expect(lookBasis(cold, 8000, 1000, known)).toEqual({
			...{ bornAt: 1000, earliest: 2000, share: COLD_SHARE },
		});
		expect(coldLook(cold, 5000 + 3500, known)).toBe(true);
		expect(coldLook(cold, 5000 + 3700, known)).toBe(false);
	});

	it(`a run it looks at is read by itself at the latest ${LOOK_FACTOR} times as old as at its last own read (never read: the longer of the grace period and the longest run)`, () => {
		const wait = newWait();
		expect(latestOwnRead(runOf(wait, { bornAt: 100, readAge: 3000 }))).toBe(
			100 + LOOK_FACTOR * 3000,
		);
		expect(latestOwnRead(runOf(wait, { bornAt: 100 }), 50_000)).toBe(100 + LOOK_FACTOR * 50_000);
		expect(latestOwnRead(runOf(wait, { bornAt: 100 }))).toBe(100 + LOOK_FACTOR * 30_000);
	});

	it('a read due while checks are in flight waits for them, for at most its own gap; the first read goes when due', () => {
		expect(listYields(10_000, 8000, 0, 10_000)).toBe(true);
		expect(listYields(10_000, 8000, 2, 11_999)).toBe(false);
		expect(listYields(10_000, 8000, 2, 12_000)).toBe(true);
		expect(listYields(-Infinity, -Infinity, 2, 0)).toBe(true);
	});

	it(`rests after ${LIST_MISSES} failed reads in a row, a Longest Check Interval, twice as long after each further failure, up to ${2 ** LIST_MISSES} times as long`, () => {
		expect(listPaused(LIST_MISSES - 1, 0, 20_000, 1)).toBe(false);
		expect(listPaused(LIST_MISSES, 0, 20_000, 19_999)).toBe(true);
		expect(listPaused(LIST_MISSES, 0, 20_000, 20_000)).toBe(false);
		expect(listPaused(LIST_MISSES + 1, 0, 20_000, 39_999)).toBe(true);
		expect(listPaused(LIST_MISSES + 10, 0, 20_000, 8 * 20_000)).toBe(false);
	});
});
