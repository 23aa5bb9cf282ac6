/**
 * Which run of a batch to check when: the decisions of the wait, with no I/O and no clock of
 * its own (the caller passes `now`), so they can be tested on their own.
 *
 * Why a batch scheduler and not a timer per run: the node hands n8n every item at once, when
 * the last run is final. What counts is how soon the *last* run is seen final and how many
 * requests the whole batch costs, not how soon each single run is seen. So:
 *
 * 1. **Probes learn the batch's run length.** A few runs spread over the batch (`PROBES`) are
 *    checked, in turn, at one check per `gap(age)`: about `PRECISION` of the runs' age (at
 *    least a quarter of the first check interval, at most the longest interval), so their
 *    cost grows with the logarithm of the run length, not with the batch size. The other
 *    runs are not checked at all yet.
 * 2. **Ages line up.** When a probe is seen final at age `f`, every other probe still pending
 *    is checked when it reaches age `f` too (runs of a batch were submitted at different
 *    moments; ages, not clock times, compare them).
 * 3. **One sweep.** The longest age at which a probe was seen final is the batch's likely run
 *    length: every other run is checked once, when it reaches that age. The sweep follows the
 *    probes in submission order: a run is swept once every probe submitted before it (and the
 *    oldest probe) is final, so it neither waits for the youngest probe nor trusts a single
 *    one when older probes still run. Runs of equal length are all seen final with one check
 *    each, close to the moment each one ends.
 * 4. **The tail is a new round.** Runs still pending at the sweep are longer than every probe:
 *    they form the next round (new probes among them, then a sweep), until none is left. When
 *    a round has no more runs than probes, each is checked every `gap(age)`: one of them is
 *    the last run, and the batch ends when it is seen.
 *
 * The caller may pin a run's next check (a run id that answers 404 for a while, a run id
 * replaced by another, the time limit); a pinned check is outside the rounds.
 */

/** Relative precision: a probe is checked again after about this share of its age. */
export const PRECISION = 0.04;
/** How many runs of a round are probes (all of them when the round is smaller). */
export const PROBES = 8;

export interface SchedulerSettings {
	/** No run is checked before it is this old; a quarter of it is the shortest gap between probe checks. */
	firstCheckMs: number;
	/** No probe goes longer than this between checks. */
	longestIntervalMs: number;
}

type Role = 'probe' | 'waiting' | 'swept';

interface Tracked {
	key: number;
	submittedAt: number;
	role: Role;
	round: number;
	/** When the next check is due; undefined while the run waits for its round's sweep. */
	dueAt?: number;
	/** Due time set by the caller, outside the rounds. */
	pinnedAt?: number;
	/** Checked no later than this, whatever the rounds say (the run's time limit). */
	limitAt?: number;
	/** Age of the last check that found the run not final. */
	lastPendingAge?: number;
	lastCheckedAt?: number;
	checking: boolean;
}

export class RunScheduler {
	private readonly runs = new Map<number, Tracked>();
	private round = 0;
	/** The longest age at which a probe of the current round was seen final. */
	private roundFinalAge = 0;
	/** The current round's probes in submission order, with the age at which each was seen done. */
	private roundProbes: Array<{ key: number; submittedAt: number; doneAge?: number }> = [];
	/** When the next probe check of the current round's rotation is due. */
	private rotationAt = 0;
	/** Probes of the current round are checked in turn (true) or each on its own gap (false). */
	private rotating = false;
	/** The run lengths seen so far (age at which a run was seen final), for the caller's records. */
	readonly finalAges: number[] = [];

	constructor(
		runs: Array<{ key: number; submittedAt: number }>,
		private readonly settings: SchedulerSettings,
	) {
		for (const run of runs) this.runs.set(run.key, { key: run.key, submittedAt: run.submittedAt, role: 'waiting', round: 0, checking: false });
		this.startRound(0);
	}

	/** The gap between probe checks at a given age. */
	gap(ageMs: number): number {
		const shortest = Math.max(10, this.settings.firstCheckMs / 4);
		return Math.min(this.settings.longestIntervalMs, Math.max(shortest, ageMs * PRECISION));
	}

	get pendingCount(): number {
		return this.runs.size;
	}

	/** The runs whose check is due at `now`, at most `slots` of them, earliest first; they count as being checked until reported. */
	takeDue(now: number, slots: number): number[] {
		const taken: number[] = [];
		if (slots <= 0) return taken;
		const due = [...this.runs.values()]
			.filter((run) => !run.checking && this.dueTimeOf(run) !== undefined && this.dueTimeOf(run)! <= now)
			.sort((a, b) => this.dueTimeOf(a)! - this.dueTimeOf(b)!);
		for (const run of due.slice(0, slots)) {
			run.checking = true;
			taken.push(run.key);
		}
		if (this.rotating && taken.some((key) => this.runs.get(key)!.role === 'probe')) {
			// One rotation step was used: the next probe waits one gap.
			const probe = this.runs.get(taken.find((key) => this.runs.get(key)!.role === 'probe')!)!;
			this.rotationAt = now + this.gap(now - probe.submittedAt);
		}
		return taken;
	}

	/** The earliest moment a check becomes due (undefined: nothing is scheduled). */
	nextDueAt(): number | undefined {
		let earliest: number | undefined;
		for (const run of this.runs.values()) {
			if (run.checking) continue;
			const at = this.dueTimeOf(run);
			if (at !== undefined && (earliest === undefined || at < earliest)) earliest = at;
		}
		return earliest;
	}

	/** A check found the run not final (or the caller will pin its next check). */
	reportPending(key: number, now: number): void {
		const run = this.runs.get(key);
		if (!run) return;
		run.checking = false;
		run.pinnedAt = undefined;
		run.lastCheckedAt = now;
		run.lastPendingAge = now - run.submittedAt;
		if (run.role === 'swept') {
			// Longer than every probe of its round: it joins the next round.
			run.role = 'waiting';
			run.round = this.round + 1;
			run.dueAt = undefined;
			this.maybeNextRound(now);
			return;
		}
		if (run.role === 'probe') this.scheduleProbe(run, now);
	}

	/** The wait for this run is over (final, stopped early, failed, or ended by the caller). */
	reportDone(key: number, now: number, seenFinal: boolean): void {
		const run = this.runs.get(key);
		if (!run) return;
		this.runs.delete(key);
		const age = now - run.submittedAt;
		if (seenFinal) this.finalAges.push(age);
		const probe = run.role === 'probe' && run.round === this.round ? this.roundProbes.find((p) => p.key === key) : undefined;
		if (probe) probe.doneAge = age;
		if (probe && seenFinal) {
			this.roundFinalAge = Math.max(this.roundFinalAge, age);
			// Line the other probes up at this age: one that is as old and still pending is longer.
			for (const other of this.runs.values()) {
				if (other.role !== 'probe' || other.round !== this.round) continue;
				if ((other.lastPendingAge ?? -1) < age) other.dueAt = Math.min(other.dueAt ?? Infinity, other.submittedAt + age);
			}
		}
		this.maybeSweep(now);
		this.maybeNextRound(now);
	}

	/**
	 * The run's age counts from `submittedAt` from now on: when it started was not known at
	 * first (runs waited on by id) and has been learned since. Only for a run not yet swept.
	 */
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

	/** Makes sure the run is checked no later than `at` (e.g. its time limit). */
	notLaterThan(key: number, at: number): void {
		const run = this.runs.get(key);
		if (run) run.limitAt = Math.min(run.limitAt ?? Infinity, at);
	}

	private dueTimeOf(run: Tracked): number | undefined {
		const due = this.plannedTimeOf(run);
		if (run.limitAt === undefined) return due;
		return Math.min(due ?? Infinity, run.limitAt);
	}

	private plannedTimeOf(run: Tracked): number | undefined {
		if (run.pinnedAt !== undefined) return run.pinnedAt;
		if (run.role === 'probe' && this.rotating && run.round === this.round) {
			// In rotation, the probe checked longest ago (or never) goes next, at the rotation's time,
			// unless lined up earlier.
			const next = this.nextInRotation();
			const rotationDue = next === run ? Math.max(this.rotationAt, run.submittedAt + this.settings.firstCheckMs) : undefined;
			if (run.dueAt !== undefined && (rotationDue === undefined || run.dueAt < rotationDue)) return run.dueAt;
			return rotationDue;
		}
		return run.dueAt;
	}

	private nextInRotation(): Tracked | undefined {
		let best: Tracked | undefined;
		for (const run of this.runs.values()) {
			if (run.role !== 'probe' || run.round !== this.round || run.checking || run.pinnedAt !== undefined) continue;
			if (!best || (run.lastCheckedAt ?? -Infinity) < (best.lastCheckedAt ?? -Infinity) || ((run.lastCheckedAt ?? -Infinity) === (best.lastCheckedAt ?? -Infinity) && run.submittedAt < best.submittedAt)) best = run;
		}
		return best;
	}

	private scheduleProbe(run: Tracked, now: number): void {
		// A lined-up check already passed; the rotation (or the run's own gap) takes over.
		if (run.dueAt !== undefined && run.dueAt <= now) run.dueAt = undefined;
		if (!this.rotating) run.dueAt = Math.max(now + this.gap(now - run.submittedAt), run.submittedAt + this.settings.firstCheckMs);
	}

	private startRound(now: number): void {
		const pool = [...this.runs.values()].filter((run) => run.role === 'waiting' && run.round === this.round).sort((a, b) => a.submittedAt - b.submittedAt || a.key - b.key);
		if (pool.length === 0) return;
		this.roundFinalAge = 0;
		this.rotating = pool.length > PROBES;
		this.rotationAt = now;
		// Probes spread evenly over the round (by submission), so they see its run lengths.
		const probeIndexes = new Set<number>();
		const count = Math.min(PROBES, pool.length);
		for (let i = 0; i < count; i++) probeIndexes.add(Math.floor(((i + 0.5) * pool.length) / count));
		this.roundProbes = [];
		pool.forEach((run, index) => {
			if (!probeIndexes.has(index)) return;
			run.role = 'probe';
			this.roundProbes.push({ key: run.key, submittedAt: run.submittedAt });
			run.dueAt = this.rotating ? undefined : Math.max(now, run.submittedAt + this.settings.firstCheckMs, (run.lastCheckedAt ?? -Infinity) + this.gap(now - run.submittedAt));
		});
	}

	/**
	 * Sweeps the round's other runs, oldest first, as far as the probes allow: a run is
	 * checked once, at the longest age a probe submitted before it was seen done, when all
	 * those probes (and the first one) are done.
	 */
	private maybeSweep(now: number): void {
		const waiting = [...this.runs.values()].filter((run) => run.role === 'waiting' && run.round === this.round).sort((a, b) => a.submittedAt - b.submittedAt);
		const oldest = this.roundProbes.reduce<(typeof this.roundProbes)[number] | undefined>((a, b) => (a === undefined || b.submittedAt < a.submittedAt ? b : a), undefined);
		for (const run of waiting) {
			const older = this.roundProbes.filter((probe) => probe === oldest || probe.submittedAt <= run.submittedAt);
			if (older.some((probe) => probe.doneAge === undefined)) break;
			const age = Math.max(...older.map((probe) => probe.doneAge!));
			run.role = 'swept';
			run.dueAt = Math.max(now, run.submittedAt + Math.max(age, this.settings.firstCheckMs));
		}
	}

	/** When nothing of the current round is left to check, the runs still pending start the next one. */
	private maybeNextRound(now: number): void {
		const current = [...this.runs.values()].some((run) => run.round === this.round && run.role !== 'waiting');
		const unswept = [...this.runs.values()].some((run) => run.round === this.round && run.role === 'waiting');
		if (current || unswept) return;
		if (this.runs.size === 0) return;
		this.round++;
		this.startRound(now);
	}
}
