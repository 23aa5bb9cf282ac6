/**
 * Waiting's decisions, pure (no I/O; the caller passes `now`): when each run is checked, when
 * the event list is read and what a read tells, and what earlier runs taught. One `Policy` per
 * API key in the n8n process holds every wait's runs. Every tuning constant of waiting is here;
 * what each one trades, and why the rules are what they are: README.md beside this file.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { LruMap } from '../../shared/lruMap';
import { KEYS_KEPT } from '../../shared/transport/rateLimits';

export const PROBE_SHARE = 0.08;
export const RUN_SHARE = 0.2;
export const COLD_SHARE = 0.1;
export const PROBES = 8;
export const ONE_LENGTH = 1.2;
export const LOOK_FACTOR = 4;
export const LIST_MISSES = 3;
export const ANSWER_MS = 50;
export const BUSY_SLICE_MS = 5;

/** The wait's options as the node reads them (`../actions/waitOptions.ts` describes each). */
export interface WaitSettings {
	maxWaitMs: number;
	stopAt: string[];
	includeOutput: boolean;
	outputNodeId?: string;
	binaryPropertyName: string;
	onFailed: 'error' | 'item';
	onTimeLimit: 'error' | 'item';
	concurrency: number;
	initialPollIntervalMs: number;
	maxPollIntervalMs: number;
	notFoundGraceMs: number;
}

export interface WaitTarget {
	itemIndex: number;
	runId: string;
	/** Known from the trigger result: explains a run that never starts. */
	documentId?: string;
	/** Its API workflow, where known: its earlier runs tell how long this one may take. */
	workflowId?: string;
	/** Fields kept in the output item (the trigger result's). */
	base?: IDataObject;
	/** When it was submitted (ms since epoch); unknown for runs waited on by id. */
	submittedAt?: number;
}

export type WaitOutcome =
	| { itemIndex: number; item: INodeExecutionData; error?: undefined }
	| { itemIndex: number; error: Error; item?: undefined };

/** What one check of a run found: still pending (`run` undefined: 404), under another id, or done. */
export type Answer =
	| { kind: 'pending'; run?: IDataObject }
	| { kind: 'replaced'; runId: string }
	| { kind: 'done'; outcome: WaitOutcome; run?: IDataObject };

/** The only final statuses; every other status, known or not, keeps the run waiting. */
export const FINAL_STATUSES = ['completed', 'failed', 'cancelled'];

/** Everything about one run of a wait, from its target to its outcome. */
export interface Run {
	readonly wait: Wait;
	readonly target: WaitTarget;
	runId: string;
	/** The run id the trigger gave, once the run turned up under another id. */
	triggerRunId?: string;
	/** Local time its age counts from. */
	bornAt: number;
	/** Its first check's age, and where its workflow's runs end if they take one length: as known when its wait began. */
	firstAge: number;
	expectedAge?: number;
	/** Nothing of its workflow was known when its wait began. */
	cold: boolean;
	lastAnswer?: IDataObject;
	notFoundSince?: number;
	/** Runs waited on by id: their `startedOn`, on the API's clock. */
	startedOn?: number;
	outcome?: WaitOutcome;
	role: 'probe' | 'waiting' | 'swept';
	round: number;
	dueAt?: number;
	/** Checked then, whatever the rounds say (a 404, an event naming it, a run read at once). */
	soonAt?: number;
	checking: boolean;
	readAt?: number;
	/** Its age at its last read that found it pending. */
	readAge?: number;
	linedUpAge?: number;
	doneAge?: number;
	/** An event named it as ended. */
	named: boolean;
}

/** One execution's wait: its runs, its settings, and its rounds of probes. */
export interface Wait {
	readonly runs: Run[];
	readonly settings: WaitSettings;
	readonly beganAt: number;
	readonly maxWaitEndsAt?: number;
	readonly share: number;
	round: number;
	probes: Run[];
	rotating: boolean;
	rotationAt: number;
	latestStart: number;
	inFlight: number;
	ended: boolean;
}

interface Lengths {
	shortest: number;
	longest: number;
	runs: number;
}

const RUN_EVENT = /^run\./;
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** The UUIDs anywhere in an event's `data` (the spec does not show what it holds). */
const idsIn = (data: unknown): string[] =>
	(JSON.stringify(data ?? null).match(UUIDS) ?? []).map((id) => id.toLowerCase());

/**
 * Where a wait stands to its Max Wait Time: at it, its runs are read once more (a check in flight
 * is sent afresh); past it by the First Check Interval, the wait ends with its runs' last answers.
 */
export function timeLimitReached(wait: Wait, now: number): 'no' | 'reached' | 'passed' {
	if (wait.maxWaitEndsAt === undefined || now < wait.maxWaitEndsAt) return 'no';
	return now < wait.maxWaitEndsAt + wait.settings.initialPollIntervalMs ? 'reached' : 'passed';
}

const timeOf = (value: unknown): number => Date.parse(String(value));
const keyOf = (workflowId: unknown): string =>
	String(workflowId ?? '')
		.trim()
		.toLowerCase();
const ageOf = (run: Run, now: number): number => now - run.bornAt;
const pendingRuns = (wait: Wait): Run[] => wait.runs.filter((run) => !run.outcome);

export class Policy {
	readonly waits = new Set<Wait>();
	/** Whether the API's run events name their run: unknown until seen. */
	namesRuns: boolean | undefined;
	private readonly lengths = new LruMap<string, Lengths>(KEYS_KEPT);
	/** The most the API's clock was seen ahead of ours: no timestamp it gives is later than its now. */
	private apiAhead = -Infinity;
	private misses = 0;
	private failures = 0;
	private evidence: Array<{ runId: string; seenAt: number }> = [];
	private anchored = false;
	private after?: string;
	private newest?: string;
	private lastIds = new Set<string>();
	private readStartedAt = -Infinity;
	private previousReadAt = -Infinity;
	private readingSince?: number;
	/** When the last read began that succeeded, and the last that told of no end it could not place. */
	private readFrom?: number;
	private lookedFrom?: number;
	/** When the oldest run waited on with nothing known of its workflow was submitted. */
	private coldSince = Infinity;

	begin(targets: WaitTarget[], settings: WaitSettings, now: number): Wait {
		const runs: Run[] = [];
		const wait: Wait = {
			runs,
			settings,
			beganAt: now,
			maxWaitEndsAt: settings.maxWaitMs > 0 ? now + settings.maxWaitMs : undefined,
			share: targets.length === 1 ? RUN_SHARE : PROBE_SHARE,
			round: 0,
			probes: [],
			rotating: false,
			rotationAt: now,
			latestStart: -Infinity,
			inFlight: 0,
			ended: false,
		};
		for (const target of targets) {
			const known = this.lengthsOf(target.workflowId);
			const oneLength = known !== undefined && this.oneLength(known);
			const learned = known && (oneLength || known.runs === 1 ? known.longest : known.shortest);
			const firstAge = Math.max(settings.initialPollIntervalMs, (learned ?? 0) + ANSWER_MS);
			runs.push({
				...{ wait, target, runId: target.runId, bornAt: target.submittedAt ?? now, firstAge },
				...{ expectedAge: oneLength ? firstAge : undefined, cold: known === undefined },
				...{ role: 'waiting', round: 0, checking: false, named: false },
			});
		}
		this.startRound(wait, now);
		// Runs waited on by id: when they began is not known. The probes are read at once; their starts place the others.
		for (const run of wait.probes) if (run.target.submittedAt === undefined) run.soonAt = now;
		this.waits.add(wait);
		return wait;
	}

	/** The wait takes no more checks (done, failed or cancelled). */
	end(wait: Wait): void {
		wait.ended = true;
		this.waits.delete(wait);
	}

	/** What to do at `now`: the checks to send, whether to read the event list, and when to look again. */
	next(now: number): { checks: Run[]; readList: boolean; wakeAt: number } {
		const candidates = this.listCandidates();
		this.coldSince = Math.min(
			...candidates
				.filter((run) => this.lookBasis(run, now).share === COLD_SHARE)
				.map((run) => run.bornAt),
		);
		// A read is worth it for two runs, or for one where events are known to name their run.
		const covering =
			this.namesRuns !== false &&
			this.failures < LIST_MISSES &&
			candidates.length >= (this.namesRuns === true ? 1 : 2);
		const listAt =
			covering && this.readingSince === undefined ? this.listDueAt(candidates, now) : Infinity;
		const waits = [...this.waits];
		const limit = Math.max(1, ...waits.map((wait) => Math.floor(wait.settings.concurrency)));
		let inFlight = waits.reduce((sum, wait) => sum + wait.inFlight, 0);
		if (this.readingSince !== undefined) inFlight++;
		const readList = listAt <= now && inFlight < limit;
		if (readList) {
			[this.readingSince, this.previousReadAt, this.readStartedAt] = [now, this.readStartedAt, now];
			inFlight++;
		}
		const cover = new Set(covering && this.anchored ? candidates : []);
		const due = waits.flatMap((wait) =>
			pendingRuns(wait).map((run) => ({ run, at: this.dueOf(run, cover, now) })),
		);
		const checks: Run[] = [];
		for (const { run } of due.filter(({ at }) => at <= now).sort((a, b) => a.at - b.at)) {
			if (inFlight >= limit) break;
			if (run.wait.inFlight >= run.wait.settings.concurrency) continue;
			this.take(run, now);
			checks.push(run);
			inFlight++;
		}
		const later = due.filter(({ run }) => !run.checking).map(({ at }) => at);
		return { checks, readList, wakeAt: Math.min(readList ? Infinity : listAt, ...later) };
	}

	/** A check's answer. */
	answered(run: Run, answer: Answer, now: number): void {
		this.released(run);
		if (answer.kind === 'replaced') {
			run.triggerRunId ??= run.runId;
			[run.runId, run.notFoundSince, run.soonAt] = [answer.runId, undefined, now];
			return;
		}
		if (answer.run) this.observe(answer.run, now);
		run.lastAnswer = answer.run ?? run.lastAnswer;
		if (answer.kind === 'done') {
			run.outcome = answer.outcome;
			const final = FINAL_STATUSES.includes(String(answer.run?.status));
			if (final) this.learn(run, now);
			return this.finished(run, now, final);
		}
		if (!answer.run) {
			run.notFoundSince ??= now;
			run.soonAt = now + run.wait.settings.initialPollIntervalMs;
			return;
		}
		[run.notFoundSince, run.soonAt] = [undefined, undefined];
		this.placeByStart(run);
		this.pending(run, now);
	}

	/** A check ended without an answer (its wait ended, or it was cut off at the time limit). */
	released(run: Run): void {
		run.checking = false;
		run.wait.inFlight--;
	}

	/** Where the next read of the event list starts: `anchor`, the newest page (the first read only finds where the list ends). */
	listQuery(): { anchor: boolean; after?: string } {
		return { anchor: !this.anchored, after: this.after };
	}

	/** What a read of the event list returned (undefined: it failed or was abandoned). */
	listRead(events: IDataObject[] | undefined, now: number): void {
		const startedAt = this.readingSince ?? now;
		this.readingSince = undefined;
		this.failures = events ? 0 : this.failures + 1;
		if (!events) return;
		const fresh = events.filter((event) => !this.lastIds.has(String(event.id)));
		this.lastIds = new Set(events.map((event) => String(event.id)));
		this.after = this.newest ?? events[0]?.id?.toString();
		this.newest = events[events.length - 1]?.id?.toString() ?? this.newest;
		this.readFrom = startedAt;
		if (!this.anchored) [this.anchored, this.lookedFrom] = [true, startedAt];
		if (this.lookedFrom === startedAt) return;
		const pending = new Map<string, Run>();
		for (const wait of this.waits)
			for (const run of pendingRuns(wait)) pending.set(run.runId.toLowerCase(), run);
		let unnamed = 0;
		for (const event of fresh.filter((candidate) => RUN_EVENT.test(String(candidate.type)))) {
			const ours = idsIn(event.data).filter(
				(id) => pending.has(id) || this.evidence.some((entry) => entry.runId === id),
			);
			if (ours.length === 0) unnamed++;
			else [this.namesRuns, this.evidence] = [true, []];
			for (const run of ours.flatMap((id) => pending.get(id) ?? [])) {
				run.named = true;
				if (!run.checking) run.soonAt = now;
			}
		}
		// A read that tells of no end it cannot place is a look at every run. Run events that name no
		// run of ours, while naming is unknown, are that many ended runs: tried oldest first.
		if (this.namesRuns !== undefined || unnamed === 0) this.lookedFrom = startedAt;
		else
			for (const run of this.listCandidates()
				.filter((candidate) => !candidate.checking)
				.sort((a, b) => a.bornAt - b.bornAt)
				.slice(0, unnamed))
				run.soonAt = now;
		// A run seen final is a miss once no later read can show its event: the next read starts past a read begun after it.
		const missed = this.evidence.filter((entry) => entry.seenAt < this.previousReadAt).length;
		this.evidence = this.evidence.slice(missed);
		this.misses += missed;
		if (this.misses >= LIST_MISSES && this.namesRuns === undefined)
			[this.namesRuns, this.evidence] = [false, []];
	}

	/** What this process learned of a workflow's run lengths, on our clock (undefined before one run). */
	lengthsOf(workflowId: unknown): Lengths | undefined {
		const kept = this.lengths.get(keyOf(workflowId));
		const ahead = Number.isFinite(this.apiAhead) ? this.apiAhead : 0;
		return (
			kept && {
				shortest: Math.max(0, kept.shortest - ahead),
				longest: Math.max(0, kept.longest - ahead),
				runs: kept.runs,
			}
		);
	}

	/** What its workflow's runs seen so far tell of a run: how soon it may end (no sooner than the shortest of them). */
	private seenOf(run: Run): { known?: Lengths; earliest: number } {
		const known = this.lengthsOf(run.lastAnswer?.workflowId ?? run.target.workflowId);
		return { known, earliest: known?.shortest ?? run.wait.settings.initialPollIntervalMs };
	}

	private oneLength(known: Lengths): boolean {
		return known.runs > 1 && known.longest <= known.shortest * ONE_LENGTH;
	}

	/** The gap after a look at a run of this age: its share of the age less an answer's time, within the wait's intervals. */
	private gap(wait: Wait, age: number, share: number): number {
		const { initialPollIntervalMs, maxPollIntervalMs } = wait.settings;
		const shortest = RUN_SHARE * initialPollIntervalMs;
		return Math.min(maxPollIntervalMs, Math.max(shortest, share * age - ANSWER_MS));
	}

	private shareOf(run: Run, age: number): number {
		const nearEnd = run.expectedAge !== undefined && age < run.expectedAge * ONE_LENGTH;
		return nearEnd ? PROBE_SHARE : run.wait.share;
	}

	/** One-run waits whose runs reads of the event list may stand in for: not named, not 404, not of one known length. */
	private listCandidates(): Run[] {
		return [...this.waits].flatMap((wait) =>
			wait.runs.length > 1
				? []
				: pendingRuns(wait).filter(
						(run) =>
							!run.named &&
							run.notFoundSince === undefined &&
							run.expectedAge === undefined &&
							run.soonAt === undefined,
					),
		);
	}

	/**
	 * When the list is due next: each run is looked at within its share of its age at the last
	 * read, from the shortest run of its workflow seen. Runs of a workflow nothing was known of when
	 * their waits began share the schedule of the oldest of them: nothing says a younger one ends sooner.
	 */
	private listDueAt(candidates: Run[], now: number): number {
		if (!this.anchored) return -Infinity;
		let at = Infinity;
		for (const run of candidates) {
			const { bornAt, earliest, share } = this.lookBasis(run, now);
			const ageAtRead = Math.max(earliest, this.readStartedAt - bornAt);
			const gap = this.gap(run.wait, ageAtRead, share);
			at = Math.min(at, Math.max(bornAt + earliest, this.readStartedAt + gap));
		}
		return at;
	}

	/** How a run's looks are measured: from when, from what age on, at what share. */
	private lookBasis(run: Run, now: number): { bornAt: number; earliest: number; share: number } {
		const { known, earliest } = this.seenOf(run);
		const cold = run.cold && !(known && now - run.bornAt > ONE_LENGTH * known.longest);
		return cold
			? { bornAt: Math.min(run.bornAt, this.coldSince), earliest, share: COLD_SHARE }
			: { bornAt: run.bornAt, earliest, share: RUN_SHARE };
	}

	/** When the run's check is due: undefined while it is checked or waits for its round's sweep. */
	private dueOf(run: Run, cover: Set<Run>, now: number): number {
		const { wait } = run;
		if (run.checking) return Infinity;
		let due = run.soonAt ?? run.dueAt;
		if (
			run.soonAt === undefined &&
			wait.rotating &&
			run.role === 'probe' &&
			run.round === wait.round
		) {
			// The probe read longest ago (or never) goes next, at the rotation's time, unless lined up earlier.
			const turn =
				this.nextInRotation(wait) === run
					? Math.max(wait.rotationAt, run.bornAt + run.firstAge)
					: undefined;
			if (due === undefined || (turn !== undefined && turn <= due)) due = turn;
		}
		if (due !== undefined && cover.has(run)) due = this.coveredDue(run, due, now);
		return Math.min(due ?? Infinity, wait.maxWaitEndsAt ?? Infinity);
	}

	/** A run the list looks at: read by itself only after its share past the last look, or once much older than at its last read. */
	private coveredDue(run: Run, due: number, now: number): number {
		const { known } = this.seenOf(run);
		const { bornAt, earliest } = this.lookBasis(run, now);
		const grace = run.wait.settings.notFoundGraceMs;
		const sparse =
			run.readAge === undefined
				? run.bornAt + Math.max(LOOK_FACTOR * Math.max(grace, known?.longest ?? 0), run.firstAge)
				: run.bornAt + LOOK_FACTOR * run.readAge;
		// Measured as the list measures its next read, so that the list always comes first.
		// A read that told of ends it could not place still looked at runs too young to have ended.
		const readFrom = this.readFrom ?? -Infinity;
		const lookFrom =
			this.readingSince ??
			(readFrom - bornAt < earliest ? readFrom : (this.lookedFrom ?? -Infinity));
		const lookedAge = Math.max(earliest, lookFrom - bornAt);
		return Math.min(sparse, Math.max(due, lookFrom + this.gap(run.wait, lookedAge, RUN_SHARE)));
	}

	private nextInRotation(wait: Wait): Run | undefined {
		let best: Run | undefined;
		for (const run of pendingRuns(wait)) {
			if (
				run.role !== 'probe' ||
				run.round !== wait.round ||
				run.checking ||
				run.soonAt !== undefined
			)
				continue;
			const [read, bestRead] = [run.readAt ?? -Infinity, best?.readAt ?? -Infinity];
			if (!best || read < bestRead || (read === bestRead && run.bornAt < best.bornAt)) best = run;
		}
		return best;
	}

	private take(run: Run, now: number): void {
		run.checking = true;
		run.wait.inFlight++;
		if (run.wait.rotating && run.role === 'probe')
			run.wait.rotationAt = now + this.gap(run.wait, ageOf(run, now), run.wait.share);
	}

	/** A read found the run not final. */
	private pending(run: Run, now: number): void {
		const { wait } = run;
		[run.readAt, run.readAge, run.linedUpAge] = [now, ageOf(run, now), undefined];
		if (run.role === 'swept') {
			[run.role, run.round, run.dueAt] = ['waiting', wait.round + 1, undefined];
			this.nextRound(wait, now);
		} else if (run.role === 'probe') {
			if (run.dueAt !== undefined && run.dueAt <= now) run.dueAt = undefined;
			if (!wait.rotating)
				run.dueAt = Math.max(
					now + this.gap(wait, run.readAge, this.shareOf(run, run.readAge)),
					run.bornAt + run.firstAge,
				);
		}
	}

	/** The wait for this run is over. */
	private finished(run: Run, now: number, seenFinal: boolean): void {
		const { wait } = run;
		const age = ageOf(run, now);
		if (run.role === 'probe' && run.round === wait.round) {
			run.doneAge = Math.min(age, run.linedUpAge ?? age);
			if (seenFinal) this.lineUpNext(wait, run.doneAge);
		}
		if (
			seenFinal &&
			this.namesRuns === undefined &&
			this.anchored &&
			wait.runs.length === 1 &&
			!run.named
		)
			this.evidence = [...this.evidence, { runId: run.runId.toLowerCase(), seenAt: now }].slice(
				-LIST_MISSES,
			);
		this.sweep(wait, now);
		this.nextRound(wait, now);
	}

	private startRound(wait: Wait, now: number): void {
		const pool = pendingRuns(wait)
			.filter((run) => run.role === 'waiting' && run.round === wait.round)
			.sort((a, b) => a.bornAt - b.bornAt || a.target.itemIndex - b.target.itemIndex);
		if (pool.length === 0) return;
		[wait.rotating, wait.rotationAt] = [pool.length > PROBES, now];
		const count = Math.min(PROBES, pool.length);
		// Spread over the round: the middle of each of `count` equal parts.
		const picks = new Set(
			Array.from({ length: count }, (_, i) =>
				Math.floor(((2 * i + 1) * pool.length) / (2 * count)),
			),
		);
		wait.probes = pool.filter((_, index) => picks.has(index));
		for (const run of wait.probes) {
			run.role = 'probe';
			run.dueAt = wait.rotating
				? undefined
				: Math.max(
						now,
						run.bornAt + run.firstAge,
						(run.readAt ?? -Infinity) + this.gap(wait, ageOf(run, now), wait.share),
					);
		}
	}

	/** The oldest probe not yet read at `age` or later is read when it is that old; seen final, it lines up the next. */
	private lineUpNext(wait: Wait, age: number): void {
		let next: Run | undefined;
		for (const run of pendingRuns(wait))
			if (
				run.role === 'probe' &&
				run.round === wait.round &&
				!run.checking &&
				(run.readAge ?? -1) < age
			)
				if (!next || run.bornAt < next.bornAt) next = run;
		if (!next) return;
		next.linedUpAge = age;
		next.dueAt = Math.min(next.dueAt ?? Infinity, next.bornAt + age);
	}

	/** Sweeps the round's other runs, oldest first, at the longest age a probe submitted before each was seen done. */
	private sweep(wait: Wait, now: number): void {
		const waiting = pendingRuns(wait)
			.filter((run) => run.role === 'waiting' && run.round === wait.round)
			.sort((a, b) => a.bornAt - b.bornAt);
		const oldest = wait.probes.reduce<Run | undefined>(
			(a, b) => (!a || b.bornAt < a.bornAt ? b : a),
			undefined,
		);
		const doneAges = wait.probes.flatMap((probe) =>
			probe.doneAge === undefined ? [] : [probe.doneAge],
		);
		const varied = Math.max(...doneAges) > Math.min(...doneAges) * ONE_LENGTH;
		for (const run of waiting) {
			const older = wait.probes.filter(
				(probe) => varied || probe === oldest || probe.bornAt <= run.bornAt,
			);
			if (older.some((probe) => probe.doneAge === undefined)) break;
			run.role = 'swept';
			run.dueAt = Math.max(
				now,
				run.bornAt + Math.max(run.firstAge, ...older.map((probe) => probe.doneAge!)),
			);
		}
	}

	/** When nothing of the current round is left to check, the runs still pending start the next one. */
	private nextRound(wait: Wait, now: number): void {
		const pending = pendingRuns(wait);
		if (pending.length === 0 || pending.some((run) => run.round === wait.round)) return;
		wait.round++;
		this.startRound(wait, now);
	}

	/** A run waited on by id: its `startedOn` places it, and the runs not read yet before it, counting back from the latest start. */
	private placeByStart(run: Run): void {
		const started = timeOf(run.lastAnswer?.startedOn);
		const { wait } = run;
		if (
			run.target.submittedAt !== undefined ||
			run.startedOn !== undefined ||
			!Number.isFinite(started)
		)
			return;
		run.startedOn = started;
		wait.latestStart = Math.max(wait.latestStart, started);
		let nextKnown = wait.latestStart;
		for (const other of [...wait.runs].reverse()) {
			nextKnown = other.startedOn ?? nextKnown;
			if (other.target.submittedAt === undefined && !other.outcome && other.role !== 'swept')
				other.bornAt = wait.beganAt - (wait.latestStart - nextKnown);
		}
	}

	/** The API's clock is at least as far ahead of ours as any timestamp it gave. */
	private observe(answer: IDataObject, now: number): void {
		for (const at of [timeOf(answer.startedOn), timeOf(answer.completedOn)])
			if (Number.isFinite(at)) this.apiAhead = Math.max(this.apiAhead, at - now);
	}

	/** A run's length, from its submission (or `startedOn`, waited on by id) to its end, kept on the API's clock. */
	private learn(run: Run, now: number): void {
		const answer = run.lastAnswer ?? {};
		const ahead = Number.isFinite(this.apiAhead) ? this.apiAhead : 0;
		const kept =
			run.target.submittedAt === undefined
				? timeOf(answer.completedOn) - timeOf(answer.startedOn) + ahead
				: timeOf(answer.completedOn) - run.bornAt;
		const seen = Number.isFinite(kept) && kept >= ahead ? kept : ageOf(run, now) + ahead;
		const key = keyOf(answer.workflowId ?? run.target.workflowId);
		const known = this.lengths.get(key) ?? { shortest: seen, longest: seen, runs: 0 };
		this.lengths.set(key, {
			shortest: Math.min(known.shortest, seen),
			longest: Math.max(known.longest, seen),
			runs: known.runs + 1,
		});
	}
}
