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
/** Runs within this factor of one another are of one length: read at one's length, all are on time. */
export const ONE_LENGTH = 1 + RUN_SHARE;
export const LIST_SHARE = 0.18;
export const COLD_SHARE = 0.09;
export const PROBES = 8;
export const LOOK_FACTOR = 4;
export const LIST_MISSES = 3;
export const ANSWER_MS = 50;
export const LAST_ANSWER_MS = 2000;
export const BUSY_SLICE_MS = 5;
export const TURN_SHARE = 0.2;

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

/** One run of a wait, from its target to its outcome. Ages count from `bornAt` (local time). */
export interface Run {
	readonly wait: Wait;
	readonly target: WaitTarget;
	/** What it is: its id now (`triggerRunId`: the one it was submitted under), its last answer. */
	runId: string;
	triggerRunId?: string;
	bornAt: number;
	lastAnswer?: IDataObject;
	notFoundSince?: number;
	/** By id: its `startedOn`, once read (it places the runs before it). */
	startedOn?: number;
	outcome?: WaitOutcome;
	checking: boolean;
	/** When an own read is due: `soonAt` before all else (a 404, an event naming it, read at once),
	 * else `dueAt` (its round's schedule); `firstAge`: its first check. `readAge`: at its last
	 * pending read. `lastCheckAt`: when the read at its Max Wait Time was sent. */
	soonAt?: number;
	dueAt?: number;
	firstAge: number;
	readAge?: number;
	lastCheckAt?: number;
	/** What it was known by: `expectedAge`, where its workflow's runs end, if of one length (known
	 * as its wait began, or learnt while the list looked for it); `cold`: nothing known then. */
	expectedAge?: number;
	cold: boolean;
	/** An event named it (`completedListed`: completed; its output is read beside its status;
	 * `namedInFlight`: while a check was out, which may have left before the end: read again). */
	named: boolean;
	namedInFlight?: boolean;
	completedListed?: boolean;
	/** Its part in its wait's rounds: a probe, waiting for the sweep, swept, or pending after it;
	 * a probe's age when seen done, or lined up to be read (`finished`). */
	role: 'probe' | 'waiting' | 'swept' | 'later';
	doneAge?: number;
	linedUpAge?: number;
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

/** What runs of a workflow taught: the shortest and longest seen, and how many. */
export type Lengths = { shortest: number; longest: number; runs: number };

/** How a run's looks through the list are measured: from `bornAt`, from age `earliest` on, a
 * `share` of the age apart. */
export type LookBasis = { bornAt: number; earliest: number; share: number };

/** When a run's wait ends at the latest: Max Wait Time after its submission (by id: the wait's start). */
export const maxWaitEnd = ({ target, wait }: Run): number =>
	(target.submittedAt ?? wait.beganAt) + (wait.settings.maxWaitMs || Infinity);

/** At its Max Wait Time a run is read once more (a check in flight anew); that read may answer
 * within LAST_ANSWER_MS (at most the First Check Interval), then the run ends with its last answer. */
export function maxWaitReached(run: Run, now: number): 'no' | 'reached' | 'passed' {
	if (now < maxWaitEnd(run)) return 'no';
	const lastAnswerMs = Math.min(LAST_ANSWER_MS, run.wait.settings.initialPollIntervalMs);
	return now < (run.lastCheckAt ?? Infinity) + lastAnswerMs ? 'reached' : 'passed';
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

// ---- What runs taught ----

/** Two runs or more, within ONE_LENGTH of one another. */
export const ofOneLength = (k?: Lengths) =>
	!!k && k.runs > 1 && k.longest <= k.shortest * ONE_LENGTH;

/** A run's first check: past where its workflow's runs end, never before the First Check Interval. */
const firstAgeOf = (settings: WaitSettings, learned = 0) =>
	Math.max(settings.initialPollIntervalMs, learned + ANSWER_MS);

/** A new run's first check: past the longest where its workflow's runs are of one length or one
 * is known (then `expectedAge` too, if of one length), else past the shortest. */
export function firstCheckOf(settings: WaitSettings, known?: Lengths) {
	const oneLength = ofOneLength(known);
	const learned = known && (oneLength || known.runs === 1 ? known.longest : known.shortest);
	const firstAge = firstAgeOf(settings, learned);
	return { firstAge, expectedAge: oneLength ? firstAge : undefined };
}

/** A run's length from its submission (by id: its `startedOn`) to its `completedOn`, on the API's
 * clock (`ahead`: how far that is ahead of ours); without both, the age it was seen final at. */
export function lengthSeen(run: Run, ahead: number, now: number): number {
	const answer = run.lastAnswer ?? {};
	const started = timeOf(answer.startedOn);
	const completed = timeOf(answer.completedOn);
	const submitted = run.target.submittedAt === undefined ? started - ahead : run.bornAt;
	const length = completed - submitted;
	return Number.isFinite(length) && length >= ahead ? length : now - run.bornAt + ahead;
}

/** The most the API's clock was seen ahead of ours: none of its timestamps is in its future. */
export function apiAheadAfter(answer: IDataObject | undefined, now: number, ahead?: number) {
	for (const at of [answer?.startedOn, answer?.completedOn].map(timeOf))
		if (Number.isFinite(at)) ahead = Math.max(ahead ?? -Infinity, at - now);
	return ahead;
}

// ---- When a run is read next ----

/** The gap after a read at this age: its share less the answers after it, within the intervals;
 * never closer than a one-run wait's first gap and the time its answer takes. */
export function gap(settings: WaitSettings, age: number, share: number, answers = 1): number {
	const { initialPollIntervalMs, maxPollIntervalMs } = settings;
	const shortest = RUN_SHARE * initialPollIntervalMs + ANSWER_MS;
	return Math.min(maxPollIntervalMs, Math.max(shortest, share * age - answers * ANSWER_MS));
}

/** The share of a probe's age to its next read: a one-run wait's run a RUN_SHARE, but just past
 * where its workflow's runs end, and in a batch, the closer PROBE_SHARE. */
export function probeShare(run: Run, age: number): number {
	const nearEnd = age < (run.expectedAge ?? -Infinity) * ONE_LENGTH;
	return nearEnd || run.wait.runs.length > 1 ? PROBE_SHARE : RUN_SHARE;
}

/** When a run's own read is due by its schedule (undefined: it waits for its round's sweep): at
 * once (`soonAt`), else its round's `dueAt`; the probe in turn at the rotation's time at the
 * latest, but never before its first check. */
export function scheduledAt(run: Run, inTurn: boolean, now: number): number | undefined {
	const due = run.soonAt ?? run.dueAt;
	if (!inTurn) return due;
	const turnAt = Math.max(run.wait.rotationAt ?? now, run.bornAt + run.firstAge);
	return Math.min(due ?? Infinity, turnAt);
}

/** A read at a run's Max Wait Time is due at that time; else a run's end is late by a share of its
 * age, so the younger of two runs due together has the nearer deadline. */
export const deadlineOf = (run: Run, at: number) =>
	at >= maxWaitEnd(run) ? at : at + RUN_SHARE * (at - run.bornAt);

/** The probe of a rotating wait whose turn is next: every other turn the oldest, else the one
 * read longest ago (the oldest first). */
export function probeInTurn(wait: Wait): Run | undefined {
	const isFree = (run: Run) => !run.outcome && !run.checking && run.soonAt === undefined;
	const readAt = (run: Run) => (run.readAge ?? -Infinity) + run.bornAt;
	const free = wait.probes.filter(isFree);
	if (wait.oldestTurn) return free.sort(byAge)[0];
	return free.sort((a, b) => readAt(a) - readAt(b) || byAge(a, b))[0];
}

/** A round's probes among its runs (oldest first): the middles of PROBES equal parts (all, if few). */
export function probesOf(pool: Run[]): Run[] {
	const count = Math.min(PROBES, pool.length);
	const middle = (part: number) => Math.floor(((2 * part + 1) * pool.length) / (2 * count));
	const picks = new Set(Array.from({ length: count }, (_, part) => middle(part)));
	return pool.filter((_, index) => picks.has(index));
}

/** At what age each waiting run is swept, oldest first: the longest age at which the oldest probe
 * and the probes submitted no later than it were seen done (every probe, once two ended more than
 * ONE_LENGTH apart); none from the first with a probe that counts still pending. */
export function sweepAges(probes: Run[], waiting: Run[]): Array<{ run: Run; age: number }> {
	const doneAges = probes.flatMap((probe) => probe.doneAge ?? []);
	const varied = Math.max(...doneAges) > Math.min(...doneAges) * ONE_LENGTH;
	const [oldest] = [...probes].sort(byAge);
	const swept = [];
	for (const run of waiting.sort(byAge)) {
		const counts = (probe: Run) => varied || probe === oldest || probe.bornAt <= run.bornAt;
		const older = probes.filter(counts);
		if (older.some((probe) => probe.doneAge === undefined)) break;
		swept.push({ run, age: Math.max(run.firstAge, ...older.map((probe) => probe.doneAge!)) });
	}
	return swept;
}

// ---- The event list ----

/** How a run's looks are measured: from its workflow's shortest run seen on, at LIST_SHARE of its
 * age. Runs waited on as nothing was known of their workflow (`coldLook`) keep to the schedule of
 * the oldest of them (`coldSince`) at COLD_SHARE: nothing says a younger one ends sooner. */
export function lookBasis(run: Run, now: number, coldSince: number, known?: Lengths): LookBasis {
	const earliest = known?.shortest ?? run.wait.settings.initialPollIntervalMs;
	if (!coldLook(run, now, known)) return { bornAt: run.bornAt, earliest, share: LIST_SHARE };
	return { bornAt: Math.min(run.bornAt, coldSince), earliest, share: COLD_SHARE };
}

/** Cold until older than ONE_LENGTH times the longest run of its workflow since seen. */
export const coldLook = (run: Run, now: number, known?: Lengths) =>
	run.cold && !(known && now - run.bornAt > ONE_LENGTH * known.longest);

/** When a run the list looks at is read by itself at the latest, for an event listed later than the
 * reads look back: LOOK_FACTOR times as old as at its last own read (never read: as the longer of
 * the Not Found Grace Period and its workflow's longest run seen). */
export function latestOwnRead(run: Run, longest = 0): number {
	if (run.readAge !== undefined) return run.bornAt + LOOK_FACTOR * run.readAge;
	const grace = run.wait.settings.notFoundGraceMs;
	return run.bornAt + Math.max(LOOK_FACTOR * Math.max(grace, longest), run.firstAge);
}

/** Checks go first: a read of the list due while checks are in flight waits for them, for at most
 * its own gap past its due time (the first read has no gap: it goes when due). */
export function listYields(listAt: number, readFrom: number, checking: number, now: number) {
	const listGap = listAt - readFrom;
	return checking === 0 || !Number.isFinite(listGap) || now - listAt >= listGap;
}

/** After LIST_MISSES failed reads in a row the list rests a Longest Check Interval, twice as long
 * after each further failure (up to LIST_MISSES times): a lost scope may come back. */
export function listPaused(failures: number, failedAt: number, longest: number, now: number) {
	if (failures < LIST_MISSES) return false;
	return now < failedAt + longest * 2 ** Math.min(failures - LIST_MISSES, LIST_MISSES);
}

/** A run's end an event listed (`completed`: as `run.completed`). */
type ListedEnd = { id: string; completed: boolean };

/** What a read's run events tell of the run ids `known`: the ends of those they name, the ids
 * they name of no run known (a run added later may have one), and how many named none known. */
export function eventsTell(events: IDataObject[], known: Set<string>) {
	const ends: ListedEnd[] = [];
	const unknownIds: string[] = [];
	let unnamed = 0;
	for (const event of events.filter(isRunEvent)) {
		const ids = idsIn(event.data);
		const ours = ids.filter((id) => known.has(id));
		const completed = event.type === 'run.completed';
		ends.push(...ours.map((id) => ({ id, completed })));
		unknownIds.push(...ids.filter((id) => !known.has(id)));
		if (ours.length === 0) unnamed++;
	}
	return { ends, unknownIds, unnamed };
}

export class Policy {
	readonly waits = new Set<Wait>();
	/** Whether the API's run events name their run: unknown until seen. */
	namesRuns: boolean | undefined;
	private readonly lengths = new LruMap<string, Lengths>(KEYS_KEPT);
	private apiAhead?: number;
	/** Runs seen final by their own read while naming is unknown, and when; how many no read showed. */
	private evidence: Array<{ runId: string; seenAt: number }> = [];
	private misses = 0;
	/** Failed reads of the list in a row, and when the last failed. */
	private failures = 0;
	private failedAt = -Infinity;
	/** Where the next read of the list starts, and the ids seen since (`listWindow.ts`). */
	readonly list = newListWindow();
	/** Ids named by run events the list brought before any wait had them, and when: a run can end
	 * before the node adds it (its upload's answer waits for a busy process), and the list brings
	 * each event once. Kept as long as the list looks back. */
	private readonly endsListed = new Map<string, number>();
	/** When the read in flight began, the last that succeeded, the last with no end to place. */
	private readingSince?: number;
	private readFrom = -Infinity;
	private lookedFrom = -Infinity;
	/** When the read in flight left (its first request passed the read pacer). */
	private readSentAt?: number;

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
			// Its end listed already: read at once, as a run the list names.
			const listed = this.endsListed.delete(lower(target.runId));
			wait.runs.push({
				...{ wait, target, runId: target.runId, bornAt: target.submittedAt ?? now },
				...firstCheckOf(wait.settings, known),
				...{ cold: !known, role: 'later', checking: false, named: listed },
				soonAt: listed ? now : undefined,
			});
		}
		this.nextRound(wait, now);
		// Runs waited on by id began at unknown times: probes are read at once, their starts place all.
		for (const run of wait.probes) if (run.target.submittedAt === undefined) run.soonAt ??= now;
		return wait;
	}

	/** What to do at `now`: the checks to send, a read of the list (its deadline), the next wake. */
	next(now: number): { checks: Run[]; readListUntil?: number; wakeAt: number } {
		const waits = [...this.waits];
		const { candidates, basisOf, covering, listAt } = this.listPlan(now);
		const limit = Math.max(1, ...waits.map((wait) => Math.floor(wait.settings.concurrency)));
		const checking = waits.reduce((sum, wait) => sum + wait.inFlight, 0);
		let inFlight = checking + (this.readingSince === undefined ? 0 : 1);
		const readList =
			listAt <= now && inFlight < limit && listYields(listAt, this.readFrom, checking, now);
		if (readList) {
			this.readingSince = now;
			inFlight++;
		}
		// From the first read on (it looks too, though it only finds where the list ends).
		const looking = covering && (this.list.anchored || this.readingSince !== undefined);
		const cover = new Set(looking ? candidates : []);
		const inTurn = new Map(waits.map((wait) => [wait, wait.rotating && probeInTurn(wait)]));
		const dueOf = (run: Run) => {
			if (run.checking) return Infinity;
			const due = scheduledAt(run, inTurn.get(run.wait) === run, now);
			if (due === undefined) return maxWaitEnd(run);
			const looked = cover.has(run) ? this.coveredDue(run, due, basisOf(run)) : due;
			return Math.min(looked, maxWaitEnd(run));
		};
		const due = waits.flatMap(pendingRuns).map((run) => ({ run, at: dueOf(run) }));
		const ready = due.filter(({ at }) => at <= now);
		ready.sort((a, b) => deadlineOf(a.run, a.at) - deadlineOf(b.run, b.at));
		const checks: Run[] = [];
		for (const { run } of ready) {
			if (inFlight >= limit) break;
			if (run.wait.inFlight >= run.wait.settings.concurrency) continue;
			this.sending(run, now);
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
		const namedInFlight = run.namedInFlight;
		run.namedInFlight = undefined;
		if (answer.kind === 'replaced') {
			run.triggerRunId ??= run.runId;
			run.runId = answer.runId;
			run.notFoundSince = undefined;
			run.soonAt = now;
			return;
		}
		this.apiAhead = apiAheadAfter(answer.run, now, this.apiAhead);
		run.lastAnswer = answer.run ?? run.lastAnswer;
		if (answer.kind === 'done') {
			run.outcome = answer.outcome;
			const final = FINAL_STATUSES.includes(String(answer.run?.status));
			if (final) this.learn(run, now);
			this.finished(run, now, final);
		} else if (!answer.run) {
			// 404: again a First Check Interval later (past the grace period check.ts explains it).
			run.notFoundSince ??= now;
			run.soonAt = now + run.wait.settings.initialPollIntervalMs;
		} else {
			const completedListed = run.completedListed;
			run.notFoundSince = undefined;
			run.soonAt = undefined;
			this.placeByStart(run);
			this.pending(run, now);
			// An event listed its end while this check was out: its pending answer is older than that.
			if (namedInFlight) {
				run.soonAt = now;
				run.completedListed = completedListed;
			}
		}
	}

	/** The read of the list in flight left now, past the read pacer. */
	listSent(now: number): void {
		if (this.readingSince !== undefined) this.readSentAt ??= now;
	}

	/** A check ended without an answer (its wait ended, or it was cut off at its Max Wait Time). */
	released(run: Run): void {
		run.checking = false;
		run.wait.inFlight--;
	}

	/** What a read of the event list returned (undefined: nothing; `failed`: the list's fault). */
	listRead(events: IDataObject[] | undefined, now: number, failed = !events): void {
		const startedAt = this.readingSince ?? now;
		const previousRead = this.readFrom;
		this.readingSince = undefined;
		this.readSentAt = undefined;
		this.failures = failed ? this.failures + 1 : 0;
		if (failed) this.failedAt = now;
		if (!events) return;
		// The first read only finds where the list ends; each after it goes minutes back.
		const firstLook = !this.list.anchored;
		const fresh = takeListRead(this.list, events);
		this.readFrom = startedAt;
		const runs = [...this.waits].flatMap(pendingRuns);
		const pending = new Map(runs.map((run) => [lower(run.runId), run]));
		if (firstLook) {
			// It looks too: an event on its pages (the list's first and last) naming a run of ours is
			// that run's end. (One on a page between is not seen: that run is read by itself, as late
			// as a run the list looks at.)
			this.lookedFrom = startedAt;
			this.endsTold(eventsTell(events, new Set(pending.keys())).ends, pending, now);
			return;
		}
		const known = new Set([...pending.keys(), ...this.evidence.map((entry) => entry.runId)]);
		const { ends, unknownIds, unnamed } = eventsTell(fresh, known);
		for (const [id, at] of this.endsListed) if (at < now - LOOKBACK_MS) this.endsListed.delete(id);
		for (const id of unknownIds) this.endsListed.set(id, now);
		this.endsTold(ends, pending, now);
		// A read with no end it cannot place is a look at every run. Run events that name no run of
		// ours, while naming is unknown, are that many ended runs: tried oldest first.
		if (this.namesRuns !== undefined || unnamed === 0) this.lookedFrom = startedAt;
		else {
			const idle = this.listCandidates().filter((run) => !run.checking);
			for (const run of idle.sort(byAge).slice(0, unnamed)) run.soonAt = now;
		}
		// A run seen final is a miss once reads start past a read begun after it (none shows it).
		const missed = this.evidence.filter((entry) => entry.seenAt < previousRead).length;
		this.evidence = this.evidence.slice(missed);
		this.misses += missed;
		if (this.misses >= LIST_MISSES && this.namesRuns === undefined) this.learnNaming(false);
	}

	/** What this process learned of a workflow's run lengths, on our clock. */
	private lengthsOf(workflowId: unknown): Lengths | undefined {
		const kept = this.lengths.get(lower(workflowId).trim());
		const local = (ms = 0) => Math.max(0, ms - (this.apiAhead ?? 0));
		return kept && { ...kept, shortest: local(kept.shortest), longest: local(kept.longest) };
	}

	/** The runs the list stands in for and how each is looked at; whether the list is read for them
	 * (`covering`), and when it is due. */
	private listPlan(now: number) {
		const candidates = this.listCandidates();
		const known = (run: Run) => this.lengthsOf(workflowOf(run));
		const cold = candidates.filter((run) => coldLook(run, now, known(run)));
		const coldSince = Math.min(...cold.map((run) => run.bornAt));
		const basisOf = (run: Run) => lookBasis(run, now, coldSince, known(run));
		// A read is worth it for two runs, or for one where events are known to name their run.
		const enough = candidates.length >= (this.namesRuns ? 1 : 2);
		const resting = listPaused(this.failures, this.failedAt, this.longestInterval(), now);
		const covering = this.namesRuns !== false && !resting && enough;
		const reading = this.readingSince !== undefined;
		const listAt = covering && !reading ? this.listDueAt(candidates, basisOf) : Infinity;
		return { candidates, basisOf, covering, listAt };
	}

	/** The longest Longest Check Interval of the waits. */
	private longestInterval(): number {
		return Math.max(0, ...[...this.waits].map((wait) => wait.settings.maxPollIntervalMs));
	}

	/** A check of the run is sent now. */
	private sending(run: Run, now: number): void {
		const { wait } = run;
		run.checking = true;
		wait.inFlight++;
		if (wait.rotating && run.role === 'probe') {
			wait.rotationAt = now + gap(wait.settings, now - run.bornAt, PROBE_SHARE);
			wait.oldestTurn = !wait.oldestTurn;
		}
		if (maxWaitReached(run, now) !== 'no') run.lastCheckAt ??= now;
	}

	/** Whether events name their run, now known: no evidence is needed any more. */
	private learnNaming(names: boolean): void {
		this.namesRuns = names;
		this.evidence = [];
	}

	/** Ends the list named: events name their run, and each run named is read at once (one being
	 * read, again once that read answers pending; one listed completed, with its output). */
	private endsTold(ends: ListedEnd[], pending: Map<string, Run>, now: number): void {
		if (ends.length > 0) this.learnNaming(true);
		for (const { id, completed } of ends) {
			const run = pending.get(id);
			if (!run) continue;
			run.named = true;
			if (run.checking) run.namedInFlight = true;
			else run.soonAt = now;
			run.completedListed ||= completed;
		}
	}

	/** Runs of one-run waits the list may stand in for: not named, not 404, of no known length. */
	private listCandidates(): Run[] {
		const lookable = ({ named, notFoundSince, expectedAge, soonAt }: Run) =>
			!named && notFoundSince === undefined && expectedAge === undefined && soonAt === undefined;
		return [...this.waits].flatMap((wait) =>
			wait.runs.length > 1 ? [] : pendingRuns(wait).filter(lookable),
		);
	}

	/** When the list is due: each run looked at within its share of its age at the last read. */
	private listDueAt(candidates: Run[], basisOf: (run: Run) => LookBasis): number {
		if (!this.list.anchored) return -Infinity;
		const dueOf = (run: Run) => {
			const { bornAt, earliest, share } = basisOf(run);
			// A look through the list: its own answer, then the run's.
			const lookGap = gap(run.wait.settings, Math.max(earliest, this.readFrom - bornAt), share, 2);
			return Math.max(bornAt + earliest, this.readFrom + lookGap);
		};
		return Math.min(...candidates.map(dueOf));
	}

	/** A run the list looks at is read by itself a RUN_SHARE gap past the last look, or once much older. */
	private coveredDue(run: Run, due: number, { bornAt, earliest }: LookBasis): number {
		const latest = latestOwnRead(run, this.lengthsOf(workflowOf(run))?.longest);
		// Where events name their run only a slow read of the list lets a run's own reads through:
		// slow from when it left, since a read waiting for the pace has the reads after it waiting too.
		if (this.namesRuns && this.readSentAt === undefined) return latest;
		// Measured as the list measures its next read, so that the list comes first. A read that had
		// ends to place still looked at runs too young to have ended.
		const young = this.readFrom - bornAt < earliest;
		const lookFrom =
			this.readSentAt ?? this.readingSince ?? (young ? this.readFrom : this.lookedFrom);
		const lookedAge = Math.max(earliest, lookFrom - bornAt);
		return Math.min(latest, Math.max(due, lookFrom + gap(run.wait.settings, lookedAge, RUN_SHARE)));
	}

	/** A read found the run not final. */
	private pending(run: Run, now: number): void {
		const age = now - run.bornAt;
		run.readAge = age;
		run.linedUpAge = undefined;
		run.completedListed = false;
		if (run.role === 'swept') {
			run.role = 'later';
			run.dueAt = undefined;
		}
		if (run.role === 'probe' && !run.wait.rotating) {
			const probeGap = gap(run.wait.settings, age, probeShare(run, age));
			run.dueAt = Math.max(now + probeGap, run.bornAt + run.firstAge);
		} else if (run.role === 'probe' && (run.dueAt ?? Infinity) <= now) run.dueAt = undefined;
		this.nextRound(run.wait, now);
	}

	/** The wait for this run is over. */
	private finished(run: Run, now: number, seenFinal: boolean): void {
		const { wait } = run;
		const doneAge = Math.min(now - run.bornAt, run.linedUpAge ?? Infinity);
		if (run.role === 'probe') run.doneAge = doneAge;
		// The oldest probe not read at that age yet is read at it; seen final, it lines up the next.
		const behind = (other: Run) =>
			other.role === 'probe' && !other.checking && (other.readAge ?? -Infinity) < doneAge;
		const [next] = pendingRuns(wait).filter(behind).sort(byAge);
		if (next && seenFinal && run.role === 'probe') {
			next.linedUpAge = doneAge;
			next.dueAt = Math.min(next.dueAt ?? Infinity, next.bornAt + doneAge);
		}
		// Seen final by its own read, a run no event named yet may show that events name no run.
		const unnamed = seenFinal && !run.named && wait.runs.length === 1 && this.list.anchored;
		if (unnamed && this.namesRuns === undefined)
			this.evidence.push({ runId: lower(run.runId), seenAt: now });
		this.evidence = this.evidence.slice(-LIST_MISSES);
		const waiting = pendingRuns(wait).filter((other) => other.role === 'waiting');
		for (const { run: swept, age } of sweepAges(wait.probes, waiting)) {
			swept.role = 'swept';
			swept.dueAt = Math.max(now, swept.bornAt + age);
		}
		this.nextRound(wait, now);
	}

	/** Once nothing of a round is left to check, the runs still pending start the next: its probes
	 * read in turn if more than PROBES, else each on its own schedule. */
	private nextRound(wait: Wait, now: number): void {
		const pool = pendingRuns(wait).sort(byAge);
		if (pool.length === 0 || pool.some((run) => run.role !== 'later')) return;
		for (const run of pool) run.role = 'waiting';
		wait.rotating = pool.length > PROBES;
		wait.rotationAt = now;
		wait.probes = probesOf(pool);
		for (const run of wait.probes) {
			const readAt = run.readAge === undefined ? -Infinity : run.bornAt + run.readAge;
			const again = readAt + gap(wait.settings, now - run.bornAt, PROBE_SHARE);
			run.role = 'probe';
			run.dueAt = wait.rotating ? undefined : Math.max(now, run.bornAt + run.firstAge, again);
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

	/** A final run's length, kept for its workflow; once its runs are of one length, each run the
	 * list looks for is read where it should end instead (if not past it yet). */
	private learn(run: Run, now: number): void {
		const seen = lengthSeen(run, this.apiAhead ?? 0, now);
		const key = workflowOf(run);
		const kept = this.lengths.get(key);
		const shortest = Math.min(kept?.shortest ?? seen, seen);
		const longest = Math.max(kept?.longest ?? seen, seen);
		this.lengths.set(key, { shortest, longest, runs: (kept?.runs ?? 0) + 1 });
		const taught = this.lengthsOf(key);
		if (!taught || !ofOneLength(taught)) return;
		for (const other of this.listCandidates().filter((c) => workflowOf(c) === key && !c.checking)) {
			const firstAge = firstAgeOf(other.wait.settings, taught.longest);
			if (now - other.bornAt >= firstAge) continue;
			other.firstAge = firstAge;
			other.expectedAge = firstAge;
			other.dueAt = other.bornAt + firstAge;
		}
	}
}
