/**
 * Which run of one wait to check when (pure: no I/O, the caller passes `now`): a few probes
 * learn how long the runs take, every other run is checked about once, when it is likely
 * done, and runs longer than every probe form the next round. Why, in README.md.
 */

/** What each value sets: README.md, "The values, and why". */
export const PRECISION = 0.08;
export const SINGLE_RUN_PRECISION = 0.2;
const EXPECTED_END_PRECISION = 0.05;
const EXPECTED_END_WINDOW = 1.2;
export const ONE_LENGTH = 1.2;
const ANSWER_MARGIN_MS = 50;
const ANSWER_MARGIN_SHARE = 0.01;
const LOOKS_STAND_IN_UP_TO = 4;
export const PROBES = 8;

export interface SchedulerSettings {
	/** No run is checked before it is this old; a quarter of it is the shortest gap between probe checks. */
	firstCheckMs: number;
	longestIntervalMs: number;
	/** Default `PRECISION`. */
	precision?: number;
}

interface Tracked {
	key: number;
	submittedAt: number;
	/** No check before this age: the first check interval, or how long such runs took before. */
	firstCheckAge: number;
	/** The age at which runs of its workflow end, when they all take about as long. */
	expectedAge?: number;
	role: 'probe' | 'waiting' | 'swept';
	round: number;
	/** When the next check is due; undefined while the run waits for its round's sweep. */
	dueAt?: number;
	/** Due time set by the caller, outside the rounds. */
	pinnedAt?: number;
	/** Checked no later than this, whatever the rounds say (the run's time limit). */
	limitAt?: number;
	lastPendingAge?: number;
	/** Age of the last read of the run itself that found it not final (looks at the event list aside). */
	readAge?: number;
	lastCheckedAt?: number;
	/** The age it is lined up to be checked at (a probe of its round was seen final then). */
	linedUpAge?: number;
	/** A probe's age when its wait ended (seen final, or lined up earlier). */
	doneAge?: number;
	checking: boolean;
}

export class RunScheduler {
	private readonly runs = new Map<number, Tracked>();
	private round = 0;
	/** The current round's probes in submission order, those whose wait ended too. */
	private roundProbes: Tracked[] = [];
	private rotationAt = 0;
	/** Probes of the current round are checked in turn (true) or each on its own gap (false). */
	private rotating = false;

	constructor(
		runs: Array<{
			key: number;
			submittedAt: number;
			firstCheckAge?: number;
			expectedAge?: number;
			limitAt?: number;
		}>,
		private readonly settings: SchedulerSettings,
	) {
		for (const run of runs) {
			const firstCheckAge = Math.max(settings.firstCheckMs, run.firstCheckAge ?? 0);
			this.runs.set(run.key, { ...run, firstCheckAge, role: 'waiting', round: 0, checking: false });
		}
		this.startRound(0);
	}

	get pendingCount(): number {
		return this.runs.size;
	}

	/** The run whose check is due first, and when, `held` runs aside (undefined: nothing is scheduled). */
	nextDue(held: (key: number) => boolean = () => false): { key: number; at: number } | undefined {
		let earliest: { key: number; at: number } | undefined;
		for (const run of this.runs.values()) {
			const at = this.dueTimeOf(run, held);
			if (at !== undefined && (!earliest || at < earliest.at)) earliest = { key: run.key, at };
		}
		return earliest;
	}

	/** The run is being looked at from `now` until reported (pending or done). */
	take(key: number, now: number): void {
		const run = this.runs.get(key)!;
		run.checking = true;
		if (this.rotating && run.role === 'probe')
			this.rotationAt = now + this.gap(now - run.submittedAt);
	}

	/** A check found the run not final (or the caller will pin its next check); `looked`: a look at the event list showed no end. */
	reportPending(key: number, now: number, looked = false): void {
		const run = this.runs.get(key);
		if (!run) return;
		run.checking = false;
		run.pinnedAt = undefined;
		run.lastCheckedAt = now;
		run.lastPendingAge = now - run.submittedAt;
		run.linedUpAge = undefined;
		if (!looked) run.readAge = run.lastPendingAge;
		if (run.role === 'swept') {
			run.role = 'waiting';
			run.round = this.round + 1;
			run.dueAt = undefined;
			this.maybeNextRound(now);
		} else if (run.role === 'probe') this.scheduleProbe(run, now);
		if (looked && run.readAge !== undefined && run.dueAt !== undefined)
			run.dueAt = Math.min(run.dueAt, run.submittedAt + LOOKS_STAND_IN_UP_TO * run.readAge);
	}

	/** The wait for this run is over (final, stopped early, failed, or ended by the caller). */
	reportDone(key: number, now: number, seenFinal: boolean): void {
		const run = this.runs.get(key);
		if (!run) return;
		this.runs.delete(key);
		const age = now - run.submittedAt;
		if (run.role === 'probe' && run.round === this.round) {
			run.doneAge = Math.min(age, run.linedUpAge ?? age);
			if (seenFinal) this.lineUpNext(run.doneAge);
		}
		this.maybeSweep(now);
		this.maybeNextRound(now);
	}

	/** The run's age counts from `submittedAt` from now on (runs waited on by id: learned since). Only for a run not yet swept. */
	restart(key: number, submittedAt: number): void {
		const run = this.runs.get(key);
		if (run) run.submittedAt = submittedAt;
	}

	/** The caller decides this run's next check (e.g. 404 within the grace period). */
	pin(key: number, at: number): void {
		const run = this.runs.get(key);
		if (!run) return;
		run.checking = false;
		run.pinnedAt = at;
	}

	/** The run is checked at `at` at the latest, unless a check of it is under way. */
	checkBy(key: number, at: number): void {
		const run = this.runs.get(key);
		if (run && !run.checking) run.pinnedAt = Math.min(run.pinnedAt ?? Infinity, at);
	}

	/** A look at the run told nothing: it is scheduled as before. */
	release(key: number): void {
		const run = this.runs.get(key);
		if (run) run.checking = false;
	}

	/** Where the run stands (undefined once its wait is over): `pinnedAt` is set while the caller decides its next check. */
	stateOf(
		key: number,
	): Readonly<Pick<Tracked, 'role' | 'submittedAt' | 'pinnedAt' | 'checking'>> | undefined {
		return this.runs.get(key);
	}

	dueAt(key: number): number | undefined {
		const run = this.runs.get(key);
		return run && this.dueTimeOf(run);
	}

	/** The gap between probe checks at a given age (closer just past `expectedAge`). */
	private gap(ageMs: number, expectedAge?: number): number {
		const shortest = Math.max(10, this.settings.firstCheckMs / 4);
		let precision = this.settings.precision ?? PRECISION;
		if (expectedAge !== undefined && ageMs < expectedAge * EXPECTED_END_WINDOW)
			precision = Math.min(precision, EXPECTED_END_PRECISION);
		return Math.min(
			this.settings.longestIntervalMs,
			Math.max(
				shortest,
				ageMs * precision - Math.min(ANSWER_MARGIN_MS, ageMs * ANSWER_MARGIN_SHARE),
			),
		);
	}

	/** When the run's check is due: undefined while it is being checked, `held`, or waits for a sweep. */
	private dueTimeOf(
		run: Tracked,
		held: (key: number) => boolean = () => false,
	): number | undefined {
		if (run.checking || held(run.key)) return undefined;
		let due = run.pinnedAt ?? run.dueAt;
		if (
			run.pinnedAt === undefined &&
			run.role === 'probe' &&
			this.rotating &&
			run.round === this.round
		) {
			// The probe checked longest ago (or never) goes next, at the rotation's time, unless lined up earlier.
			const rotationDue =
				this.nextInRotation() === run
					? Math.max(this.rotationAt, run.submittedAt + run.firstCheckAge)
					: undefined;
			if (run.dueAt === undefined || (rotationDue !== undefined && rotationDue <= run.dueAt))
				due = rotationDue;
		}
		return run.limitAt === undefined ? due : Math.min(due ?? Infinity, run.limitAt);
	}

	private nextInRotation(): Tracked | undefined {
		let best: Tracked | undefined;
		for (const run of this.runs.values()) {
			if (
				run.role !== 'probe' ||
				run.round !== this.round ||
				run.checking ||
				run.pinnedAt !== undefined
			)
				continue;
			const [checked, bestChecked] = [
				run.lastCheckedAt ?? -Infinity,
				best?.lastCheckedAt ?? -Infinity,
			];
			if (
				!best ||
				checked < bestChecked ||
				(checked === bestChecked && run.submittedAt < best.submittedAt)
			)
				best = run;
		}
		return best;
	}

	/** The oldest probe still pending (not seen pending at `age` or later) is checked when it is `age` old; seen final, it lines up the next. */
	private lineUpNext(age: number): void {
		let next: Tracked | undefined;
		for (const other of this.runs.values()) {
			if (
				other.role !== 'probe' ||
				other.round !== this.round ||
				other.checking ||
				(other.lastPendingAge ?? -1) >= age
			)
				continue;
			if (!next || other.submittedAt < next.submittedAt) next = other;
		}
		if (!next) return;
		next.linedUpAge = age;
		next.dueAt = Math.min(next.dueAt ?? Infinity, next.submittedAt + age);
	}

	private scheduleProbe(run: Tracked, now: number): void {
		if (run.dueAt !== undefined && run.dueAt <= now) run.dueAt = undefined;
		if (!this.rotating)
			run.dueAt = Math.max(
				now + this.gap(now - run.submittedAt, run.expectedAge),
				run.submittedAt + run.firstCheckAge,
			);
	}

	private startRound(now: number): void {
		const pool = [...this.runs.values()]
			.filter((run) => run.role === 'waiting' && run.round === this.round)
			.sort((a, b) => a.submittedAt - b.submittedAt || a.key - b.key);
		if (pool.length === 0) return;
		this.rotating = pool.length > PROBES;
		this.rotationAt = now;
		const count = Math.min(PROBES, pool.length);
		const probeIndexes = new Set(
			Array.from({ length: count }, (_, i) => Math.floor(((i + 0.5) * pool.length) / count)),
		);
		this.roundProbes = [];
		pool.forEach((run, index) => {
			if (!probeIndexes.has(index)) return;
			run.role = 'probe';
			this.roundProbes.push(run);
			run.dueAt = this.rotating
				? undefined
				: Math.max(
						now,
						run.submittedAt + run.firstCheckAge,
						(run.lastCheckedAt ?? -Infinity) + this.gap(now - run.submittedAt),
					);
		});
	}

	/** Sweeps the round's other runs, oldest first, as far as its probes allow (README.md, "One sweep"). */
	private maybeSweep(now: number): void {
		const waiting = [...this.runs.values()]
			.filter((run) => run.role === 'waiting' && run.round === this.round)
			.sort((a, b) => a.submittedAt - b.submittedAt);
		const oldest = this.roundProbes.reduce<Tracked | undefined>(
			(a, b) => (a === undefined || b.submittedAt < a.submittedAt ? b : a),
			undefined,
		);
		const doneAges = this.roundProbes.flatMap((probe) =>
			probe.doneAge === undefined ? [] : [probe.doneAge],
		);
		const varied = Math.max(...doneAges) > Math.min(...doneAges) * ONE_LENGTH;
		for (const run of waiting) {
			const older = this.roundProbes.filter(
				(probe) => varied || probe === oldest || probe.submittedAt <= run.submittedAt,
			);
			if (older.some((probe) => probe.doneAge === undefined)) break;
			run.role = 'swept';
			run.dueAt = Math.max(
				now,
				run.submittedAt + Math.max(...older.map((probe) => probe.doneAge!), run.firstCheckAge),
			);
		}
	}

	/** When nothing of the current round is left to check, the runs still pending start the next one. */
	private maybeNextRound(now: number): void {
		const runs = [...this.runs.values()];
		if (runs.length === 0 || runs.some((run) => run.round === this.round)) return;
		this.round++;
		this.startRound(now);
	}
}
