/**
 * Waiting's decisions, pure (no I/O; the caller passes `now`): when each run is checked, when
 * the event list is read and what a read tells, and what earlier runs taught. One `Policy` per API
 * key in the n8n process holds every wait's runs. Its tuning constants are here (the pacer's are
 * in readPacer.ts); what each trades and why the rules are so: docs/waiting.md.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { LruMap } from '../../shared/lruMap';
import { KEYS_KEPT } from '../../shared/transport/rateLimits';
import { LOOKBACK_MS, newListWindow, takeListRead } from './listWindow';

export const PROBE_SHARE = 0.08;
export const RUN_SHARE = 0.2;
export const LIST_SHARE = 0.18;
export const PROBES = 8;
export const LOOK_FACTOR = 4;
export const LIST_MISSES = 3;
export const LIST_LAG_MS = 2000;
export const ANSWER_MS = 50;
export const MAX_WAIT_ANSWER_MS = 2000;
export const BUSY_SLICE_MS = 5;
export const TURN_SHARE = 0.2;
/** Derived: runs that end within a run's share of one another are of one length. */
export const ONE_LENGTH = 1 + RUN_SHARE;
/** Derived: cold candidates are looked at on the oldest one's age, so each at least half as old
 * is still looked at within a LIST_SHARE of its own age. */
export const COLD_SHARE = LIST_SHARE / 2;

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

/** A run to wait on: `documentId` explains one that never starts, `base` is kept in its item,
 * `submittedAt` is unknown for runs waited on by id. */
export interface WaitTarget {
	itemIndex: number;
	runId: string;
	documentId?: string;
	workflowId?: string;
	base?: IDataObject;
	submittedAt?: number;
}

export type WaitOutcome =
	| { itemIndex: number; item: INodeExecutionData; error?: undefined }
	| { itemIndex: number; error: Error; item?: undefined };

/** What a check found: the run pending (`run` undefined: 404), under another id, or done. */
export type Answer =
	| { kind: 'pending'; run?: IDataObject }
	| { kind: 'replaced'; runId: string }
	| { kind: 'done'; outcome: WaitOutcome; run?: IDataObject };

/** The only final statuses; every other status, known or not, keeps the run waiting. */
export const FINAL_STATUSES = ['completed', 'failed', 'cancelled'];

/**
 * One run of a wait, from its target to its outcome; ages from `bornAt` (local time). `firstAge`:
 * its first check; `oneLength`: its workflow's runs are of one length, ending by `firstAge` (known
 * as its wait began, or learnt while the list looked for it); `cold`: nothing known then. `role`
 * in its wait's rounds: a probe, waiting for the sweep, swept, or pending after it. `soonAt` comes
 * before the rounds (a 404, an event naming it, a run read at once). `readAge`: at its last
 * pending read.
 */
export interface Run {
	readonly wait: Wait;
	readonly target: WaitTarget;
	runId: string;
	triggerRunId?: string;
	bornAt: number;
	firstAge: number;
	oneLength: boolean;
	cold: boolean;
	lastAnswer?: IDataObject;
	notFoundSince?: number;
	startedOn?: number;
	outcome?: WaitOutcome;
	role: 'probe' | 'waiting' | 'swept' | 'later';
	dueAt?: number;
	soonAt?: number;
	checking: boolean;
	readAge?: number;
	linedUpAge?: number;
	doneAge?: number;
	named: boolean;
	/** An event listed it completed: its output is read beside its status, not after it. */
	completedListed?: boolean;
	/** An event named it while a check was out, which may have left before its end: read again. */
	namedInFlight?: boolean;
	/** When the read at its Max Wait Time was sent. */
	maxWaitCheckAt?: number;
}

/** One execution's wait; its round's `probes` (done too) are checked in turn when `rotating`. */
export interface Wait {
	readonly runs: Run[];
	readonly settings: WaitSettings;
	readonly beganAt: number;
	probes: Run[];
	rotating?: boolean;
	rotationAt?: number;
	/** Every other turn goes to the oldest pending probe: the sweep waits for it. */
	oldestTurn?: boolean;
	inFlight: number;
}

type Lengths = { shortest: number; longest: number; runs: number };
/** Two runs or more, within a run's share of one another: read at one's length, all are on time. */
const ofOneLength = (k?: Lengths) => !!k && k.runs > 1 && k.longest <= k.shortest * ONE_LENGTH;
/** A run's first check: past where its workflow's runs end, from the First Check Interval on. */
const firstAgeOf = (settings: WaitSettings, learned = 0) =>
	Math.max(settings.initialPollIntervalMs, learned + ANSWER_MS);

/** When a run's Max Wait Time ends: that long after its submission (by id: the wait's start). */
export const maxWaitEnd = ({ target, wait }: Run): number =>
	(target.submittedAt ?? wait.beganAt) + (wait.settings.maxWaitMs || Infinity);

/** At its Max Wait Time a run is read once more (a check in flight anew); that read may answer
 * within MAX_WAIT_ANSWER_MS (at most the First Check Interval), then the run ends with its last
 * answer (`maxWaitPassed`). */
export function maxWaitReached(run: Run, now: number): 'no' | 'reached' | 'passed' {
	if (now < maxWaitEnd(run)) return 'no';
	const answerMs = Math.min(MAX_WAIT_ANSWER_MS, run.wait.settings.initialPollIntervalMs);
	return now < (run.maxWaitCheckAt ?? Infinity) + answerMs ? 'reached' : 'passed';
}

const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
/** The UUIDs anywhere in an event's `data` (the spec does not show what it holds). */
const idsIn = (data: unknown) => (JSON.stringify(data ?? null).match(UUIDS) ?? []).map(lower);
const lower = (text: unknown) => String(text ?? '').toLowerCase();
const timeOf = (value: unknown): number => Date.parse(String(value));
const isRunEvent = (event: IDataObject) => /^run\./.test(String(event.type));
const pendingRuns = (wait: Wait): Run[] => wait.runs.filter((run) => !run.outcome);
const byAge = (a: Run, b: Run) => a.bornAt - b.bornAt || a.target.itemIndex - b.target.itemIndex;
const workflowOf = (run: Run) => lower(run.lastAnswer?.workflowId ?? run.target.workflowId).trim();
/** When the run was last read pending (-Infinity: never). */
const lastReadAt = (run: Run) => run.bornAt + (run.readAge ?? -Infinity);

export class Policy {
	readonly waits = new Set<Wait>();
	/** Whether the API's run events name their run: unknown until seen. */
	namesRuns: boolean | undefined;
	private readonly lengths = new LruMap<string, Lengths>(KEYS_KEPT);
	/** The most the API's clock was seen ahead of ours: none of its timestamps is in its future. */
	private apiAhead?: number;
	private misses = 0;
	private failures = 0;
	private failedAt = -Infinity;
	/** Runs seen final by their own read while naming is unknown, and when. */
	private evidence: Array<{ runId: string; seenAt: number }> = [];
	/** Where the next read of the list starts, and the ids seen since (`listWindow.ts`). */
	readonly list = newListWindow();
	/** Ids named by run events the list brought before any wait had them, and when: a run can end
	 * before the node adds it (its upload's answer waits for a busy process), and the list brings
	 * each event once. Kept as long as the list looks back. */
	private readonly endsListed = new Map<string, number>();
	/** The read in flight: when it began, and when it left (its first request passed the pacer). */
	private reading?: { since: number; sentAt?: number };
	/** When the last read that succeeded began, and the last with no end to place. */
	private readFrom = -Infinity;
	private lookedFrom = -Infinity;
	/** When the oldest run waited on as nothing was known of its workflow was submitted. */
	private coldSince = Infinity;

	begin(targets: WaitTarget[], settings: WaitSettings, now: number): Wait {
		const wait: Wait = { runs: [], settings, beganAt: now, probes: [], inFlight: 0 };
		this.waits.add(wait);
		return this.add(wait, targets, now);
	}

	/** More runs for a wait (their documents uploaded since): a round going on is not changed,
	 * they are the next round's. */
	add(wait: Wait, targets: WaitTarget[], now: number): Wait {
		for (const target of targets) {
			const known = this.lengthsOf(target.workflowId);
			const oneLength = ofOneLength(known);
			const learned = known && (oneLength || known.runs === 1 ? known.longest : known.shortest);
			const firstAge = firstAgeOf(wait.settings, learned);
			const run = { wait, target, runId: target.runId, bornAt: target.submittedAt ?? now };
			// Its end listed already: read at once, as a run the list names.
			const named = this.endsListed.has(lower(target.runId));
			const soonAt = named ? now : undefined;
			const state = { cold: !known, role: 'later' as const, checking: false, named, soonAt };
			wait.runs.push({ ...run, firstAge, oneLength, ...state });
		}
		this.nextRound(wait, now);
		// Runs waited on by id began at unknown times: probes are read at once, their starts place all.
		for (const run of wait.probes) if (run.target.submittedAt === undefined) run.soonAt ??= now;
		return wait;
	}

	/** What to do at `now`: the checks to send, a read of the list (its deadline), the next wake. */
	next(now: number): { checks: Run[]; readListUntil?: number; wakeAt: number } {
		const candidates = this.listCandidates();
		const cold = candidates.filter((run) => this.lookBasis(run, now).share === COLD_SHARE);
		this.coldSince = Math.min(...cold.map((run) => run.bornAt));
		// A read is worth it for two runs, or for one where events are known to name their run.
		const enough = candidates.length >= (this.namesRuns ? 1 : 2);
		const covering = this.namesRuns !== false && !this.listPaused(now) && enough;
		const listAt = covering && !this.reading ? this.listDueAt(candidates, now) : Infinity;
		const waits = [...this.waits];
		const limit = Math.max(1, ...waits.map((wait) => Math.floor(wait.settings.concurrency)));
		const checking = waits.reduce((sum, wait) => sum + wait.inFlight, 0);
		// Checks go first: the list waits for those in flight, unless due for as long as its gap
		// (the first read has no gap: it goes when due). A read in flight leaves `listAt` Infinity.
		const gap = listAt - this.readFrom;
		const yielded = checking === 0 || !Number.isFinite(gap) || now - listAt >= gap;
		const readList = listAt <= now && checking < limit && yielded;
		if (readList) this.reading = { since: now };
		let inFlight = checking + (this.reading ? 1 : 0);
		// From the first read on (it looks too, though it only finds where the list ends).
		const looking = covering && (this.list.anchored || this.reading !== undefined);
		const cover = new Set(looking ? candidates : []);
		const runs = waits.flatMap(pendingRuns);
		const turns = new Map(waits.map((wait) => [wait, wait.rotating && this.nextInRotation(wait)]));
		const due = runs.map((run) => ({ run, at: this.dueOf(run, cover, now, turns.get(run.wait)) }));
		const checks: Run[] = [];
		// Earliest deadline first: a run's end is late by a share of its age, so younger ones go
		// first; a read at a run's Max Wait Time is due at that time.
		const deadline = ({ run, at }: { run: Run; at: number }) =>
			at >= maxWaitEnd(run) ? at : at + RUN_SHARE * (at - run.bornAt);
		const ready = due.filter(({ at }) => at <= now);
		for (const { run } of ready.sort((a, b) => deadline(a) - deadline(b))) {
			if (inFlight >= limit) break;
			if (run.wait.inFlight >= run.wait.settings.concurrency) continue;
			run.checking = true;
			run.wait.inFlight++;
			if (run.wait.rotating && run.role === 'probe') {
				run.wait.rotationAt = now + this.gap(run.wait, now - run.bornAt, PROBE_SHARE);
				run.wait.oldestTurn = !run.wait.oldestTurn;
			}
			if (maxWaitReached(run, now) !== 'no') run.maxWaitCheckAt ??= now;
			checks.push(run);
			inFlight++;
		}
		const later = due.filter(({ run }) => !run.checking).map(({ at }) => at);
		// A hint older than the Longest Check Interval is of no use to any wait.
		const readListUntil = readList ? now + this.longestInterval() : undefined;
		return { checks, readListUntil, wakeAt: Math.min(readList ? Infinity : listAt, ...later) };
	}

	/** A check's answer. */
	answered(run: Run, answer: Answer, now: number): void {
		this.released(run);
		const { namedInFlight } = run;
		run.namedInFlight = undefined;
		if (answer.kind === 'replaced') {
			run.triggerRunId ??= run.runId;
			run.runId = answer.runId;
			run.notFoundSince = undefined;
			run.soonAt = now;
			return;
		}
		for (const at of [answer.run?.startedOn, answer.run?.completedOn].map(timeOf))
			if (Number.isFinite(at)) this.apiAhead = Math.max(this.apiAhead ?? -Infinity, at - now);
		run.lastAnswer = answer.run ?? run.lastAnswer;
		if (answer.kind === 'done') {
			run.outcome = answer.outcome;
			const final = FINAL_STATUSES.includes(String(answer.run?.status));
			if (final) this.learn(run, now);
			this.finished(run, now, final);
		} else if (!answer.run) {
			run.notFoundSince ??= now;
			run.soonAt = now + run.wait.settings.initialPollIntervalMs;
		} else {
			run.notFoundSince = undefined;
			run.soonAt = undefined;
			this.placeByStart(run);
			this.pending(run, now);
			// An event listed its end while this check was out: its pending answer is older than that.
			if (namedInFlight) run.soonAt = now;
			else run.completedListed = false;
		}
	}

	/** A run's Max Wait Time passed with no answer to its last read: done, as if so answered. */
	maxWaitPassed(run: Run, outcome: WaitOutcome, now: number): void {
		run.outcome = outcome;
		this.finished(run, now, false);
	}

	/** The read of the list in flight left now, past the read pacer. */
	listSent(now: number): void {
		if (this.reading) this.reading.sentAt ??= now;
	}

	/** A check ended without an answer (its wait ended, or it was cut off at its Max Wait Time). */
	released(run: Run): void {
		run.checking = false;
		run.wait.inFlight--;
	}

	/** What a read of the event list returned (undefined: nothing; `failed`: the list's fault). */
	listRead(events: IDataObject[] | undefined, now: number, failed = !events): void {
		const startedAt = this.reading?.since ?? now;
		this.reading = undefined;
		this.failures = failed ? this.failures + 1 : 0;
		if (failed) this.failedAt = now;
		if (!events) return;
		// The first read only finds where the list ends; each after it goes minutes back. It looks
		// too: an event on its pages (the list's first and last) naming a run of ours is that run's
		// end; its other events are of the past. (One on a page between is not seen: that run is read
		// by itself, as late as a run the list looks at.)
		const anchoring = !this.list.anchored;
		const fresh = takeListRead(this.list, events);
		// Each id's runs: executions may wait on one run (Run → Wait for Completion) at once.
		const pending = new Map<string, Run[]>();
		for (const run of [...this.waits].flatMap(pendingRuns)) {
			const id = lower(run.runId);
			pending.set(id, [...(pending.get(id) ?? []), run]);
		}
		const runsOf = (ids: string[]) => ids.flatMap((id) => pending.get(id) ?? []);
		const known = new Set([...pending.keys(), ...this.evidence.map((entry) => entry.runId)]);
		let unnamed = 0;
		for (const [id, at] of this.endsListed) if (at < now - LOOKBACK_MS) this.endsListed.delete(id);
		for (const event of (anchoring ? events : fresh).filter(isRunEvent)) {
			const ids = idsIn(event.data);
			const ours = ids.filter((id) => known.has(id));
			if (!anchoring) for (const id of ids) if (!known.has(id)) this.endsListed.set(id, now);
			if (ours.length > 0) {
				this.namesRuns = true;
				this.evidence = [];
			} else if (!anchoring) unnamed++;
			for (const run of runsOf(ours)) this.nameRun(run, event, now);
		}
		// A read with no end it cannot place is a look at every run. Run events that name no run of
		// ours, while naming is unknown, are that many ended runs: tried oldest first.
		if (this.namesRuns !== undefined || unnamed === 0) this.lookedFrom = startedAt;
		else {
			const idle = this.listCandidates().filter((run) => !run.checking);
			for (const run of idle.sort(byAge).slice(0, unnamed)) run.soonAt = now;
		}
		// A run seen final is a miss once reads start past a read begun after it (none shows it), and
		// LIST_LAG_MS after it: an event may be listed a little after its run ends.
		const missedBefore = Math.min(this.readFrom, startedAt - LIST_LAG_MS);
		const missed = this.evidence.filter((entry) => entry.seenAt < missedBefore).length;
		this.evidence = this.evidence.slice(missed);
		this.misses += missed;
		if (this.misses >= LIST_MISSES && this.namesRuns === undefined) {
			this.namesRuns = false;
			this.evidence = [];
		}
		this.readFrom = startedAt;
	}

	/** An event named the run, its end: it is read at once, or again once its check out answers. */
	private nameRun(run: Run, event: IDataObject, now: number): void {
		run.named = true;
		if (run.checking) run.namedInFlight = true;
		else run.soonAt = now;
		run.completedListed ||= event.type === 'run.completed';
	}

	/** After LIST_MISSES failed reads in a row the list rests a Longest Check Interval, twice as
	 * long after each further failure (up to LIST_MISSES times): a lost scope may come back. */
	private listPaused(now: number): boolean {
		if (this.failures < LIST_MISSES) return false;
		const doublings = Math.min(this.failures - LIST_MISSES, LIST_MISSES);
		return now < this.failedAt + this.longestInterval() * 2 ** doublings;
	}

	/** The longest Longest Check Interval of the waits. */
	private longestInterval(): number {
		return Math.max(0, ...[...this.waits].map((wait) => wait.settings.maxPollIntervalMs));
	}

	/** What this process learned of a workflow's run lengths, on our clock. */
	lengthsOf(workflowId: unknown): Lengths | undefined {
		const kept = this.lengths.get(lower(workflowId).trim());
		const local = (ms = 0) => Math.max(0, ms - (this.apiAhead ?? 0));
		return kept && { ...kept, shortest: local(kept.shortest), longest: local(kept.longest) };
	}

	/** The gap after a look at this age: its share less the answers after it, within intervals. */
	private gap(wait: Wait, age: number, share: number, answers = 1): number {
		const { initialPollIntervalMs, maxPollIntervalMs } = wait.settings;
		// Never closer than a one-run wait's first gap, and the time its answer takes.
		const shortest = RUN_SHARE * initialPollIntervalMs + ANSWER_MS;
		return Math.min(maxPollIntervalMs, Math.max(shortest, share * age - answers * ANSWER_MS));
	}

	/** Runs of one-run waits the list may stand in for: not named, not 404, of no known length. */
	private listCandidates(): Run[] {
		const lookable = ({ named, notFoundSince, oneLength, soonAt }: Run) =>
			!named && notFoundSince === undefined && !oneLength && soonAt === undefined;
		const alone = [...this.waits].filter((wait) => wait.runs.length < 2);
		return alone.flatMap(pendingRuns).filter(lookable);
	}

	/** How a run's looks are measured: from its workflow's shortest run seen on, at its share of
	 * the age. Runs waited on as nothing was known of their workflow share the schedule of the
	 * oldest of them (nothing says a younger one ends sooner), until older than every run seen. */
	private lookBasis(run: Run, now: number): { bornAt: number; earliest: number; share: number } {
		const known = this.lengthsOf(workflowOf(run));
		const earliest = known?.shortest ?? run.wait.settings.initialPollIntervalMs;
		if (!run.cold || (known && now - run.bornAt > ONE_LENGTH * known.longest))
			return { bornAt: run.bornAt, earliest, share: LIST_SHARE };
		return { bornAt: Math.min(run.bornAt, this.coldSince), earliest, share: COLD_SHARE };
	}

	/** When the list is due: each run looked at within its share of its age at the last read. */
	private listDueAt(candidates: Run[], now: number): number {
		if (!this.list.anchored) return -Infinity;
		const dueFor = (run: Run) => {
			const { bornAt, earliest, share } = this.lookBasis(run, now);
			// A look through the list: its own answer, then the run's.
			const gap = this.gap(run.wait, Math.max(earliest, this.readFrom - bornAt), share, 2);
			return Math.max(bornAt + earliest, this.readFrom + gap);
		};
		return Math.min(...candidates.map(dueFor));
	}

	/** When the run's check is due (Infinity while it is checked or waits for its round's sweep). */
	private dueOf(run: Run, cover: Set<Run>, now: number, inTurn?: Run | false): number {
		if (run.checking) return Infinity;
		let due = run.soonAt ?? run.dueAt;
		// The probe read longest ago goes next, at the rotation's time, unless lined up earlier.
		const turn = Math.max(run.wait.rotationAt ?? now, run.bornAt + run.firstAge);
		if (inTurn === run) due = Math.min(due ?? Infinity, turn);
		if (due !== undefined && cover.has(run)) due = this.coveredDue(run, due, now);
		return Math.min(due ?? Infinity, maxWaitEnd(run));
	}

	/** A run the list looks at is read by itself a gap past the last look, or once much older. */
	private coveredDue(run: Run, due: number, now: number): number {
		const { bornAt, earliest } = this.lookBasis(run, now);
		const longest = this.lengthsOf(workflowOf(run))?.longest ?? 0;
		const grace = run.wait.settings.notFoundGraceMs;
		const unread = Math.max(LOOK_FACTOR * Math.max(grace, longest), run.firstAge);
		const sparse = run.bornAt + (run.readAge === undefined ? unread : LOOK_FACTOR * run.readAge);
		// Where events name their run only a slow read of the list lets a run's own reads through:
		// slow from when it left, since a read waiting for the pace has the reads after it waiting too.
		if (this.namesRuns && this.reading?.sentAt === undefined) return sparse;
		// Measured as the list measures its next read, so that the list comes first. A read that had
		// ends to place still looked at runs too young to have ended.
		const young = this.readFrom - bornAt < earliest;
		const lookFrom =
			this.reading?.sentAt ?? this.reading?.since ?? (young ? this.readFrom : this.lookedFrom);
		const lookedAge = Math.max(earliest, lookFrom - bornAt);
		return Math.min(sparse, Math.max(due, lookFrom + this.gap(run.wait, lookedAge, RUN_SHARE)));
	}

	/** The probe read longest ago, the oldest first. */
	private nextInRotation(wait: Wait): Run | undefined {
		const isFree = (run: Run) => !run.outcome && !run.checking && run.soonAt === undefined;
		const free = wait.probes.filter(isFree);
		if (wait.oldestTurn) return free.sort(byAge)[0];
		return free.sort((a, b) => lastReadAt(a) - lastReadAt(b) || byAge(a, b))[0];
	}

	/** A read found the run not final. */
	private pending(run: Run, now: number): void {
		run.readAge = now - run.bornAt;
		run.linedUpAge = undefined;
		if (run.role === 'swept') {
			run.role = 'later';
			run.dueAt = undefined;
		}
		if (run.role === 'probe' && run.dueAt !== undefined && run.dueAt <= now) run.dueAt = undefined;
		if (run.role === 'probe' && !run.wait.rotating) {
			// Just past where its workflow's runs end, the closer share of a probe.
			const nearEnd = run.oneLength && run.readAge < run.firstAge * ONE_LENGTH;
			const share = nearEnd || run.wait.runs.length > 1 ? PROBE_SHARE : RUN_SHARE;
			const gap = this.gap(run.wait, run.readAge, share);
			run.dueAt = Math.max(now + gap, run.bornAt + run.firstAge);
		}
		this.nextRound(run.wait, now);
	}

	/** The wait for this run is over. */
	private finished(run: Run, now: number, seenFinal: boolean): void {
		const { wait } = run;
		const doneAge = Math.min(now - run.bornAt, run.linedUpAge ?? Infinity);
		if (run.role === 'probe') run.doneAge = doneAge;
		// The oldest probe not read at that age yet is read at it; seen final, it lines up the next.
		const behind = (other: Run) =>
			other.role === 'probe' && !other.checking && !(other.readAge! >= doneAge);
		const [next] = pendingRuns(wait).filter(behind).sort(byAge);
		if (next && seenFinal && run.role === 'probe') {
			next.linedUpAge = doneAge;
			next.dueAt = Math.min(next.dueAt ?? Infinity, next.bornAt + doneAge);
		}
		// Seen final by its own read, a run no event named yet may show that events name no run.
		const unnamed = seenFinal && !run.named && wait.runs.length === 1 && this.list.anchored;
		if (unnamed && this.namesRuns === undefined)
			this.evidence.push({ runId: lower(run.runId), seenAt: now });
		this.evidence.splice(0, this.evidence.length - LIST_MISSES);
		this.sweep(wait, now);
		this.nextRound(wait, now);
	}

	/** Once nothing of a round is left to check, the runs still pending start the next: its probes
	 * the middles of equal parts of them (all, if few), checked in turn if more than PROBES. */
	private nextRound(wait: Wait, now: number): void {
		const pool = pendingRuns(wait).sort(byAge);
		if (pool.length === 0 || pool.some((run) => run.role !== 'later')) return;
		for (const run of pool) run.role = 'waiting';
		wait.rotating = pool.length > PROBES;
		wait.rotationAt = now;
		const count = Math.min(PROBES, pool.length);
		const middle = (part: number) => Math.floor(((2 * part + 1) * pool.length) / (2 * count));
		const picks = new Set(Array.from({ length: count }, (_, part) => middle(part)));
		wait.probes = pool.filter((_, index) => picks.has(index));
		for (const run of wait.probes) {
			const again = lastReadAt(run) + this.gap(wait, now - run.bornAt, PROBE_SHARE);
			run.role = 'probe';
			run.dueAt = wait.rotating ? undefined : Math.max(now, run.bornAt + run.firstAge, again);
		}
	}

	/** Sweeps the other runs, oldest first, at the longest age a probe submitted before was done. */
	private sweep(wait: Wait, now: number): void {
		const doneAges = wait.probes.flatMap((probe) => probe.doneAge ?? []);
		// Once probes ended more than one length apart, every probe counts, not only the older ones.
		const varied = Math.max(...doneAges) > Math.min(...doneAges) * ONE_LENGTH;
		const [oldest] = [...wait.probes].sort(byAge);
		const waiting = pendingRuns(wait).filter((other) => other.role === 'waiting');
		for (const run of waiting.sort(byAge)) {
			const counts = (probe: Run) => varied || probe === oldest || probe.bornAt <= run.bornAt;
			const older = wait.probes.filter(counts);
			if (older.some((probe) => probe.doneAge === undefined)) break;
			const age = Math.max(run.firstAge, ...older.map((probe) => probe.doneAge!));
			run.role = 'swept';
			run.dueAt = Math.max(now, run.bornAt + age);
		}
	}

	/** By id: a run's `startedOn` places it and the unread runs before it, from the latest. */
	private placeByStart(run: Run): void {
		const started = timeOf(run.lastAnswer?.startedOn);
		const byId = run.target.submittedAt === undefined && run.startedOn === undefined;
		if (!byId || !Number.isFinite(started)) return;
		run.startedOn = started;
		const { runs, beganAt } = run.wait;
		const latest = Math.max(...runs.map((other) => other.startedOn ?? -Infinity));
		let nextKnown = latest;
		for (const other of [...runs].reverse()) {
			nextKnown = other.startedOn ?? nextKnown;
			if (other.target.submittedAt === undefined && !other.outcome && other.role !== 'swept')
				other.bornAt = beganAt - (latest - nextKnown);
		}
	}

	/** A run's length from its submission (`startedOn`, by id) to its end, on the API's clock. */
	private learn(run: Run, now: number): void {
		const ahead = this.apiAhead ?? 0;
		const startedAt = timeOf(run.lastAnswer?.startedOn) - ahead;
		const submitted = run.target.submittedAt === undefined ? startedAt : run.bornAt;
		const kept = timeOf(run.lastAnswer?.completedOn) - submitted;
		const seen = Number.isFinite(kept) && kept >= ahead ? kept : now - run.bornAt + ahead;
		const key = workflowOf(run);
		const known = this.lengths.get(key);
		const shortest = Math.min(known?.shortest ?? seen, seen);
		const longest = Math.max(known?.longest ?? seen, seen);
		this.lengths.set(key, { shortest, longest, runs: (known?.runs ?? 0) + 1 });
		// Its runs now of one length, each run the list looks for is read where it should end instead.
		const taught = this.lengthsOf(key);
		if (!ofOneLength(taught)) return;
		for (const other of this.listCandidates().filter((c) => workflowOf(c) === key && !c.checking)) {
			const firstAge = firstAgeOf(other.wait.settings, taught!.longest);
			if (now - other.bornAt < firstAge)
				Object.assign(other, { firstAge, oneLength: true, dueAt: other.bornAt + firstAge });
		}
	}
}
