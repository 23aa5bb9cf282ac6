/**
 * Which run of one wait to check when (pure: no I/O, the caller passes `now`): a few probes
 * learn how long the runs take, every other run is checked about once, when it is likely
 * done, and runs longer than every probe form the next round. Why, in README.md.
 */

/** Relative precision of a batch: a probe is checked again after about this share of its age (why 8%, in README.md). */
export const PRECISION = 0.08;
/** Relative precision of a wait on one run: each check is for that run alone, and its item waits on it. */
export const SINGLE_RUN_PRECISION = 0.2;
/** Just past the age at which runs of its workflow were seen to end (up to `EXPECTED_END_WINDOW` times it), a run is about to end. */
const EXPECTED_END_PRECISION = 0.05;
const EXPECTED_END_WINDOW = 1.2;
/** Runs whose lengths are within this factor of each other (a fifth) count as runs of one length. */
export const ONE_LENGTH = 1.2;
/** Taken off each gap: the check and the output read after it take this long too, but at most this share of the age (young runs' gaps cannot spare it). */
const ANSWER_MARGIN_MS = 50;
const ANSWER_MARGIN_SHARE = 0.01;
/** Looks at the event list stand in for a run's own read until it is this many times as old as at its last read. */
const LOOKS_STAND_IN_UP_TO = 4;
/** How many runs of a round are probes (all of them when the round is smaller). */
export const PROBES = 8;

export interface SchedulerSettings {
	/** No run is checked before it is this old; a quarter of it is the shortest gap between probe checks. */
	firstCheckMs: number;
	/** No probe goes longer than this between checks. */
	longestIntervalMs: number;
	/** Share of its age after which a probe is checked again (default `PRECISION`). */
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
	/** Age of the last check that found the run not final. */
	lastPendingAge?: number;
	/** Age of the last read of the run itself that found it not final (a look at the event list aside). */
	readAge?: number;
	lastCheckedAt?: number;
	/** The age it is lined up to be checked at (a probe of its round was seen final then); a pending answer clears it. */
	linedUpAge?: number;
	checking: boolean;
}

export class RunScheduler {
	private readonly runs = new Map<number, Tracked>();
	private round = 0;
	/** The current round's probes in submission order, with the age at which each was seen done. */
	private roundProbes: Array<{ key: number; submittedAt: number; doneAge?: number }> = [];
	/** When the next probe check of the current round's rotation is due. */
	private rotationAt = 0;
	/** Probes of the current round are checked in turn (true) or each on its own gap (false). */
	private rotating = false;

	constructor(
		runs: Array<{ key: number; submittedAt: number; firstCheckAge?: number; expectedAge?: number }>,
		private readonly settings: SchedulerSettings,
	) {
		for (const run of runs) {
			const firstCheckAge = Math.max(settings.firstCheckMs, run.firstCheckAge ?? 0);
			this.runs.set(run.key, { key: run.key, submittedAt: run.submittedAt, firstCheckAge, expectedAge: run.expectedAge, role: 'waiting', round: 0, checking: false });
		}
		this.startRound(0);
	}

	get pendingCount(): number {
		return this.runs.size;
	}

	/** The runs whose check is due at `now`, at most `slots` of them, earliest first; they count as being checked until reported. */
	takeDue(now: number, slots: number, held: (key: number) => boolean = () => false): number[] {
		if (slots <= 0) return [];
		const due: Array<{ key: number; at: number }> = [];
		for (const run of this.runs.values()) {
			const at = run.checking || held(run.key) ? undefined : this.dueTimeOf(run);
			if (at !== undefined && at <= now) due.push({ key: run.key, at });
		}
		return this.take(due.sort((a, b) => a.at - b.at).slice(0, slots).map((entry) => entry.key), now);
	}

	/** These runs are being looked at from `now` until reported (pending or done). */
	take(keys: number[], now: number): number[] {
		for (const key of keys) this.runs.get(key)!.checking = true;
		const probe = keys.map((key) => this.runs.get(key)!).find((run) => run.role === 'probe');
		// One rotation step was used: the next probe waits one gap.
		if (this.rotating && probe) this.rotationAt = now + this.gap(now - probe.submittedAt);
		return keys;
	}

	/** The earliest moment a check becomes due, `held` runs aside (undefined: nothing is scheduled). */
	nextDueAt(held: (key: number) => boolean = () => false): number | undefined {
		let earliest: number | undefined;
		for (const run of this.runs.values()) {
			const at = run.checking || held(run.key) ? undefined : this.dueTimeOf(run);
			if (at !== undefined && (earliest === undefined || at < earliest)) earliest = at;
		}
		return earliest;
	}

	/**
	 * A check found the run not final (or the caller will pin its next check). With `looked`, it
	 * was a look at the event list that showed no end: it stands in for a read, but never puts
	 * the run's own read off past `LOOKS_STAND_IN_UP_TO` times the age of its last, so an end the
	 * list shows too late for the hint is still seen.
	 */
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
			// Longer than every probe of its round: it joins the next round.
			run.role = 'waiting';
			run.round = this.round + 1;
			run.dueAt = undefined;
			this.maybeNextRound(now);
		} else if (run.role === 'probe') this.scheduleProbe(run, now);
		if (looked && run.readAge !== undefined && run.dueAt !== undefined) run.dueAt = Math.min(run.dueAt, run.submittedAt + LOOKS_STAND_IN_UP_TO * run.readAge);
	}

	/** The wait for this run is over (final, stopped early, failed, or ended by the caller). */
	reportDone(key: number, now: number, seenFinal: boolean): void {
		const run = this.runs.get(key);
		if (!run) return;
		this.runs.delete(key);
		const age = now - run.submittedAt;
		const probe = run.role === 'probe' && run.round === this.round ? this.roundProbes.find((p) => p.key === key) : undefined;
		if (probe) {
			// Seen final by the check it was lined up for, it was done at that age (the check came later only when that age had passed).
			probe.doneAge = Math.min(age, run.linedUpAge ?? age);
			if (seenFinal) this.lineUpNext(probe.doneAge);
		}
		this.maybeSweep(now);
		this.maybeNextRound(now);
	}

	/** The run's age counts from `submittedAt` from now on (runs waited on by id: learned since). Only for a run not yet swept. */
	restart(key: number, submittedAt: number): void {
		const run = this.runs.get(key);
		if (!run) return;
		run.submittedAt = submittedAt;
		const probe = this.roundProbes.find((candidate) => candidate.key === key);
		if (probe && probe.doneAge === undefined) probe.submittedAt = submittedAt;
	}

	/** The caller decides this run's next check (e.g. 404 within the grace period). */
	pin(key: number, at: number): void {
		const run = this.runs.get(key);
		if (!run) return;
		run.checking = false;
		run.pinnedAt = at;
	}

	/** The run is checked at `at` at the latest, unless a check of it is under way (an event named it as ended). */
	checkBy(key: number, at: number): void {
		const run = this.runs.get(key);
		if (run && !run.checking) run.pinnedAt = Math.min(run.pinnedAt ?? Infinity, at);
	}

	/** Makes sure the run is checked no later than `at` (e.g. its time limit). */
	notLaterThan(key: number, at: number): void {
		const run = this.runs.get(key);
		if (run) run.limitAt = Math.min(run.limitAt ?? Infinity, at);
	}

	/** A look at the run told nothing: it is scheduled as before. */
	release(key: number): void {
		const run = this.runs.get(key);
		if (run) run.checking = false;
	}

	isProbe(key: number): boolean {
		return this.runs.get(key)?.role === 'probe';
	}

	/** Still waited on and not swept yet (its age may still be corrected with `restart`). */
	isWaiting(key: number): boolean {
		const role = this.runs.get(key)?.role;
		return role !== undefined && role !== 'swept';
	}

	/** Whether the caller decided the run's next check (`pin`, `checkBy`): a look does not replace it. */
	isPinned(key: number): boolean {
		return this.runs.get(key)?.pinnedAt !== undefined;
	}

	/** When the run's check is due (undefined while it is being checked or waits for a sweep). */
	dueAt(key: number): number | undefined {
		const run = this.runs.get(key);
		return run && !run.checking ? this.dueTimeOf(run) : undefined;
	}

	idleKeys(): number[] {
		return [...this.runs.values()].filter((run) => !run.checking).map((run) => run.key);
	}

	/** How old the run is at `now`, as the schedule counts its age. */
	ageOf(key: number, now: number): number {
		return now - (this.runs.get(key)?.submittedAt ?? now);
	}

	/** The gap between probe checks at a given age (closer just past `expectedAge`). */
	private gap(ageMs: number, expectedAge?: number): number {
		const shortest = Math.max(10, this.settings.firstCheckMs / 4);
		let precision = this.settings.precision ?? PRECISION;
		if (expectedAge !== undefined && ageMs < expectedAge * EXPECTED_END_WINDOW) precision = Math.min(precision, EXPECTED_END_PRECISION);
		return Math.min(this.settings.longestIntervalMs, Math.max(shortest, ageMs * precision - Math.min(ANSWER_MARGIN_MS, ageMs * ANSWER_MARGIN_SHARE)));
	}

	private dueTimeOf(run: Tracked): number | undefined {
		let due = run.pinnedAt ?? run.dueAt;
		if (run.pinnedAt === undefined && run.role === 'probe' && this.rotating && run.round === this.round) {
			// In rotation, the probe checked longest ago (or never) goes next, at the rotation's time, unless lined up earlier.
			const rotationDue = this.nextInRotation() === run ? Math.max(this.rotationAt, run.submittedAt + run.firstCheckAge) : undefined;
			if (run.dueAt === undefined || (rotationDue !== undefined && rotationDue <= run.dueAt)) due = rotationDue;
		}
		return run.limitAt === undefined ? due : Math.min(due ?? Infinity, run.limitAt);
	}

	private nextInRotation(): Tracked | undefined {
		let best: Tracked | undefined;
		for (const run of this.runs.values()) {
			if (run.role !== 'probe' || run.round !== this.round || run.checking || run.pinnedAt !== undefined) continue;
			const [checked, bestChecked] = [run.lastCheckedAt ?? -Infinity, best?.lastCheckedAt ?? -Infinity];
			if (!best || checked < bestChecked || (checked === bestChecked && run.submittedAt < best.submittedAt)) best = run;
		}
		return best;
	}

	/** The oldest probe still pending (not seen pending at `age` or later) is checked when it is `age` old; seen final, it lines up the next. */
	private lineUpNext(age: number): void {
		let next: Tracked | undefined;
		for (const other of this.runs.values()) {
			if (other.role !== 'probe' || other.round !== this.round || other.checking || (other.lastPendingAge ?? -1) >= age) continue;
			if (!next || other.submittedAt < next.submittedAt) next = other;
		}
		if (!next) return;
		next.linedUpAge = age;
		next.dueAt = Math.min(next.dueAt ?? Infinity, next.submittedAt + age);
	}

	private scheduleProbe(run: Tracked, now: number): void {
		// A lined-up check already passed; the rotation (or the run's own gap) takes over.
		if (run.dueAt !== undefined && run.dueAt <= now) run.dueAt = undefined;
		if (!this.rotating) run.dueAt = Math.max(now + this.gap(now - run.submittedAt, run.expectedAge), run.submittedAt + run.firstCheckAge);
	}

	private startRound(now: number): void {
		const pool = [...this.runs.values()].filter((run) => run.role === 'waiting' && run.round === this.round).sort((a, b) => a.submittedAt - b.submittedAt || a.key - b.key);
		if (pool.length === 0) return;
		this.rotating = pool.length > PROBES;
		this.rotationAt = now;
		// Probes spread evenly over the round (by submission), so they see its run lengths.
		const count = Math.min(PROBES, pool.length);
		const probeIndexes = new Set(Array.from({ length: count }, (_, i) => Math.floor(((i + 0.5) * pool.length) / count)));
		this.roundProbes = [];
		pool.forEach((run, index) => {
			if (!probeIndexes.has(index)) return;
			run.role = 'probe';
			this.roundProbes.push({ key: run.key, submittedAt: run.submittedAt });
			run.dueAt = this.rotating ? undefined : Math.max(now, run.submittedAt + run.firstCheckAge, (run.lastCheckedAt ?? -Infinity) + this.gap(now - run.submittedAt));
		});
	}

	/**
	 * Sweeps the round's other runs, oldest first, as far as the probes allow: a run is
	 * checked once, at the longest age a probe submitted before it was seen done, when all
	 * those probes (and the first one) are done; every probe, once two ended more than a fifth
	 * apart (the lengths vary, so a sweep before the longest would find many still pending).
	 */
	private maybeSweep(now: number): void {
		const waiting = [...this.runs.values()].filter((run) => run.role === 'waiting' && run.round === this.round).sort((a, b) => a.submittedAt - b.submittedAt);
		const oldest = this.roundProbes.reduce<(typeof this.roundProbes)[number] | undefined>((a, b) => (a === undefined || b.submittedAt < a.submittedAt ? b : a), undefined);
		const doneAges = this.roundProbes.flatMap((probe) => (probe.doneAge === undefined ? [] : [probe.doneAge]));
		const varied = Math.max(...doneAges) > Math.min(...doneAges) * ONE_LENGTH;
		for (const run of waiting) {
			const older = this.roundProbes.filter((probe) => varied || probe === oldest || probe.submittedAt <= run.submittedAt);
			if (older.some((probe) => probe.doneAge === undefined)) break;
			run.role = 'swept';
			run.dueAt = Math.max(now, run.submittedAt + Math.max(...older.map((probe) => probe.doneAge!), run.firstCheckAge));
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
