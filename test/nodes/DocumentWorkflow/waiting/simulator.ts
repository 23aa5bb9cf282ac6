/**
 * A simulated n8n and API for the waiting policy (nodes/DocumentWorkflow/waiting/policy.ts):
 * simulated time, one-document executions (or batches) arriving and ending, runs of given
 * lengths, run events that name their run or not, a read limit, one or more n8n processes
 * (queue mode). It drives the real Policy and ReadPacer as the loop does (loop.ts: waits end
 * after a sleep, a busy slice while anything is in flight) and counts every request.
 */
import type { IDataObject } from 'n8n-workflow';
import { DEFAULT_WAIT_SETTINGS } from '../../../../nodes/DocumentWorkflow/actions/waitOptions';
import { uploadParts } from '../../../../nodes/DocumentWorkflow/actions/workflow/trigger.operation';
import type { Run, Wait, WaitSettings } from '../../../../nodes/DocumentWorkflow/waiting/policy';
import {
	BUSY_SLICE_MS,
	FINAL_STATUSES,
	Policy,
	maxWaitEnd,
	maxWaitReached,
} from '../../../../nodes/DocumentWorkflow/waiting/policy';
import { PAUSE_SLICE_MS } from '../../../../nodes/shared/transport/cancellation';
import { ReadPacer } from '../../../../nodes/shared/transport/readPacer';
import { firstListPage, nextListPage } from '../../../../nodes/DocumentWorkflow/waiting/listWindow';

export interface Pattern {
	/** One-document executions in flight at once, and in all (a new one starts as one ends). */
	alive: number;
	total: number;
	/** Run length of the n-th run of this pattern (ms, from its submission). */
	lengthOf: (n: number) => number;
	/** How long the n-th run sits `queued` before it starts (part of its length). */
	queuedOf?: (n: number) => number;
	/** Documents per execution (a batch). */
	batch?: number;
	/** Waited on by id (Run → Wait for Completion after a Submit): ages unknown to the wait. */
	byId?: boolean;
	/** The API workflow of the pattern's runs (default one for the whole simulation). */
	workflowId?: string;
	/** n8n starts executions one at a time at most this often (a real n8n took 7 to 14 s for 40). */
	startSpacingMs?: number;
	arrivalGapMs?: number;
	settings?: Partial<WaitSettings>;
	/** The n-th run's run.completed event is listed this long after it was created (committed late). */
	eventDelayOf?: (n: number) => number;
	/** Also list a run.completed event for the n-th run this long after its submission (too early). */
	earlyEventOf?: (n: number) => number | undefined;
}

export interface SimulationOptions {
	/** Whether run events name their run. */
	named?: boolean;
	/** The API's read limit, a fixed window of a second starting at the first read after the last. */
	readLimit?: number;
	/** n8n processes sharing the API key (queue mode: each its own policy and pacer). */
	processes?: number;
	/** Round trip of a request (ms). */
	latencyMs?: number;
	/** Between one execution's end and the next one's start in the same lane (n8n's own work). */
	restartMs?: number;
	/** Whether the key may read the event list (`events:read`). */
	eventsReadable?: boolean;
	/** Round trips vary by up to this share of `latencyMs` either way (seeded: the same each run). */
	jitter?: number;
	seed?: number;
	/** Which process runs the n-th execution (default: each in turn). */
	processOf?: (n: number) => number;
	/**
	 * n8n's event loop stalls: for `ms` of every `everyMs` (each process at its own phase) nothing
	 * of the process runs, and reads it let go before are put on the wire only after.
	 */
	stalls?: { everyMs: number; ms: number };
	/** The processes share one read pacer (and its rate-limit gate): what no two n8n processes have. */
	onePacer?: boolean;
}

export interface Figures {
	documents: number;
	requests: number;
	perDocument: number;
	uploads: number;
	status: number;
	events: number;
	outputs: number;
	rateLimited: number;
	/** Per document: from its run's end to its output read, as a share of its run. */
	late: number[];
	/** Per document: the process that waited for it. */
	processOf: number[];
	/** Per document: its age at each read of its status, and when it was created. */
	readAges: number[][];
	createdAt: number[];
	/** When the pattern's last execution ended, and when its slowest run ended (ms, simulated). */
	endedAt: number;
	floor: number;
	startedAt: number;
	/** Per execution: when it ended. */
	executionEnds: number[];
}

interface SimRun {
	id: string;
	createdAt: number;
	length: number;
	queued: number;
	workflowId: string;
	/** When its output was read (or, without Include Output, its run seen final). */
	outputReadAt?: number;
	readAges: number[];
	process?: number;
}

interface SimEvent extends IDataObject {
	id: string;
	createdAt: number;
	visibleAt: number;
	type: string;
	data: IDataObject;
}

export const uuid = (n: number, kind = 4) =>
	`00000000-0000-${kind}000-8000-${Math.round(n).toString(16).padStart(12, '0')}`;

type Timed = { at: number; seq: number; fn: () => void };

/**
 * Where every simulation writes what happened, when set (trace.slow.test.ts hashes it): each turn of a
 * loop and what the policy said, each request put on the wire and its answer, each check's answer
 * to the policy, each execution's end. One line each, times in simulated ms.
 */
export const trace: { write?: (line: string) => void } = {};

/** One simulated n8n (or several, in queue mode) and the API, on one simulated clock. */
export class Simulation {
	now = 0;
	readonly processes: SimProcess[];
	readonly runs = new Map<string, SimRun>();
	readonly events: SimEvent[] = [];
	readonly counts = { uploads: 0, status: 0, events: 0, outputs: 0, rateLimited: 0 };
	private readonly queue: Timed[] = [];
	private seq = 0;
	private window = { start: -Infinity, count: 0 };
	private runSeq = 0;
	private eventSeq = 0;

	constructor(readonly options: SimulationOptions = {}) {
		trace.write?.('simulation');
		const shared = options.onePacer ? { pacer: new ReadPacer(), gateUntil: 0 } : undefined;
		this.processes = Array.from(
			{ length: options.processes ?? 1 },
			(_, index) => new SimProcess(this, index, shared),
		);
	}

	private random = 0;

	/** A round trip: `latencyMs`, varied by `jitter` (a small linear congruential generator). */
	get latency(): number {
		const base = this.options.latencyMs ?? 20;
		if (!this.options.jitter) return base;
		this.random = (this.random * 1103515245 + 12345 + (this.options.seed ?? 1)) % 2147483648;
		return base * (1 + this.options.jitter * ((2 * this.random) / 2147483648 - 1));
	}

	at(time: number, fn: () => void): void {
		const queue = this.queue;
		queue.push({ at: time, seq: this.seq++, fn });
		for (let i = queue.length - 1; i > 0; ) {
			const parent = (i - 1) >> 1;
			if (!before(queue[i], queue[parent])) break;
			[queue[i], queue[parent]] = [queue[parent], queue[i]];
			i = parent;
		}
	}

	/** Runs a pattern to its end (time goes on from where the last ended); its figures. */
	run(pattern: Pattern): Figures {
		const startedAt = this.now;
		const counts = { ...this.counts };
		const made: SimRun[] = [];
		const executionEnds: number[] = [];
		const settings: WaitSettings = { ...DEFAULT_WAIT_SETTINGS, ...pattern.settings };
		const batch = pattern.batch ?? 1;
		const workflowId = pattern.workflowId ?? uuid(0, 5);
		let [started, nextStartAt] = [0, startedAt];
		const execution = (): void => {
			if (started >= pattern.total) return;
			if (this.now < nextStartAt) return this.at(nextStartAt, execution);
			nextStartAt = this.now + (pattern.startSpacingMs ?? 0);
			const n = started++;
			const index = this.options.processOf?.(n) ?? n % this.processes.length;
			const process = this.processes[index];
			const runs = Array.from({ length: batch }, (_, i) =>
				this.createRun(pattern, n * batch + i, this.now + ((i + 1) * this.latency) / 2, workflowId),
			);
			for (const run of runs) run.process = index;
			made.push(...runs);
			this.counts.uploads += batch;
			// A batch's uploads one after another at half the round trip. As the node does, the runs
			// of each part are waited on once its last upload is answered (by id: all at once, after
			// every upload), in one wait.
			const parts = pattern.byId
				? [[0, batch] as const]
				: uploadParts(batch, settings.concurrency, true);
			const targets = (from: number, to: number) =>
				runs.slice(from, to).map((run, offset) => ({
					itemIndex: from + offset,
					runId: run.id,
					workflowId: pattern.byId ? undefined : workflowId,
					submittedAt: pattern.byId ? undefined : run.createdAt + this.latency / 2,
				}));
			let wait: Wait | undefined;
			for (const [index, [from, to]] of parts.entries())
				this.at(this.now + ((to + 1) * this.latency) / 2, () => {
					const open = index < parts.length - 1;
					if (!wait)
						wait = process.wait(targets(from, to), settings, open, () => {
							trace.write?.(`${this.now} ended execution ${n}`);
							executionEnds.push(this.now);
							this.at(this.now + (this.options.restartMs ?? 30), execution);
						});
					else process.add(wait, targets(from, to), open);
				});
		};
		for (let lane = 0; lane < Math.min(pattern.alive, pattern.total); lane++)
			this.at(startedAt + lane * (pattern.arrivalGapMs ?? 25), execution);
		while (this.queue.length > 0) {
			const next = pop(this.queue);
			this.now = next.at;
			next.fn();
			if (this.now > startedAt + 24 * 3_600_000) throw new Error('the simulation did not end');
		}
		const used = Object.fromEntries(
			Object.entries(this.counts).map(([kind, count]) => [
				kind,
				count - counts[kind as keyof typeof counts],
			]),
		) as typeof counts;
		const requests = used.uploads + used.status + used.events + used.outputs;
		return {
			documents: made.length,
			requests,
			perDocument: requests / made.length,
			...used,
			late: made.map(
				(run) => ((run.outputReadAt ?? Infinity) - (run.createdAt + run.length)) / run.length,
			),
			processOf: made.map((run) => run.process ?? 0),
			readAges: made.map((run) => run.readAges),
			createdAt: made.map((run) => run.createdAt),
			endedAt: Math.max(...executionEnds),
			floor: Math.max(...made.map((run) => run.createdAt + run.length)),
			startedAt,
			executionEnds,
		};
	}

	/** A read at the API: answered, or refused by the read limit (its `Retry-After` in ms). */
	limited(serverAt: number): number | undefined {
		const limit = this.options.readLimit;
		if (!limit) return undefined;
		if (serverAt >= this.window.start + 1000) this.window = { start: serverAt, count: 0 };
		if (this.window.count >= limit)
			return Math.max(1, Math.ceil((this.window.start + 1000 - serverAt) / 1000)) * 1000;
		this.window.count++;
		return undefined;
	}

	runBody(run: SimRun, serverAt: number): IDataObject {
		const done = serverAt >= run.createdAt + run.length;
		const started = serverAt >= run.createdAt + run.queued;
		return {
			id: run.id,
			workflowId: run.workflowId,
			status: done ? 'completed' : started ? 'running' : 'queued',
			startedOn: started ? new Date(run.createdAt + run.queued).toISOString() : null,
			completedOn: done ? new Date(run.createdAt + run.length).toISOString() : null,
		};
	}

	/** A page of the list after `after`, as the API lists it at `serverAt` (oldest first by id). */
	listPage(serverAt: number, after: string | undefined, page: number) {
		const visible = this.events
			.filter((event) => event.visibleAt <= serverAt && (!after || event.id > after))
			.sort((a, b) => (a.id < b.id ? -1 : 1));
		const pages = Math.max(1, Math.ceil(visible.length / 100));
		const events = visible.slice((page - 1) * 100, page * 100).map((event) => ({
			...event,
			createdOn: new Date(event.createdAt).toISOString(),
		}));
		return { pages, count: visible.length, events };
	}

	/** An event; its id reflects its creation time, as the API's do. */
	emit(createdAt: number, type: string, data: IDataObject, delay = 0): void {
		const id = uuid(Math.round(createdAt * 1000) * 1000 + (++this.eventSeq % 1000), 1);
		this.events.push({ id, createdAt, visibleAt: createdAt + delay, type, data });
	}

	private createRun(pattern: Pattern, n: number, createdAt: number, workflowId: string): SimRun {
		const run: SimRun = {
			id: uuid(++this.runSeq),
			createdAt,
			length: pattern.lengthOf(n),
			queued: pattern.queuedOf?.(n) ?? 0,
			workflowId,
			readAges: [],
		};
		this.runs.set(run.id, run);
		const names = (this.options.named ?? true) ? { runId: run.id } : { workflowId };
		this.emit(createdAt, 'document.received', { documentId: uuid(this.runSeq, 3) });
		this.emit(createdAt + run.length, 'run.completed', names, pattern.eventDelayOf?.(n));
		const early = pattern.earlyEventOf?.(n);
		if (early !== undefined) this.emit(createdAt + early, 'run.completed', names);
		return run;
	}
}

/** One n8n process: its policy, its pacer and rate-limit gate, and its loop. */
export class SimProcess {
	readonly policy = new Policy();
	readonly pacer: ReadPacer;
	/** Until when a 429 closes reads, and the send time of the read it refused. */
	private readonly gate: { gateUntil: number; refusedSentAt?: number };
	private running = false;
	private inFlight = 0;
	private readonly executions = new Map<Wait, () => void>();
	private readonly open = new Set<Wait>();

	constructor(
		private readonly sim: Simulation,
		private readonly index = 0,
		shared?: { pacer: ReadPacer; gateUntil: number },
	) {
		this.pacer = shared?.pacer ?? new ReadPacer();
		this.gate = shared ?? { gateUntil: 0 };
	}

	/** When this process is awake again at `time` (the end of a stall it falls in). */
	private awake(time: number): number {
		const stalls = this.sim.options.stalls;
		if (!stalls) return time;
		const phase = (this.index * stalls.everyMs) / 2.7;
		const into = (time + phase) % stalls.everyMs;
		return into < stalls.ms ? time + stalls.ms - into : time;
	}

	private at(time: number, fn: () => void): void {
		this.sim.at(this.awake(time), fn);
	}

	/** Begins a wait (`open`: more runs are added to it later, it does not end before). */
	wait(
		targets: Parameters<Policy['begin']>[0],
		settings: WaitSettings,
		open: boolean,
		ended: () => void,
	): Wait {
		const wait = this.policy.begin(targets, settings, this.sim.now);
		this.executions.set(wait, ended);
		if (open) this.open.add(wait);
		if (!this.running) [this.running] = [true, this.turn()];
		return wait;
	}

	add(wait: Wait, targets: Parameters<Policy['begin']>[0], open: boolean): void {
		this.policy.add(wait, targets, this.sim.now);
		if (!open) this.open.delete(wait);
	}

	/** A read through the pacer and the rate-limit gate, sent again after a 429; `answer` runs at the API. */
	private read<T>(
		answer: (serverAt: number) => T,
		done: (value: T) => void,
		kind: 'status' | 'events' | 'outputs',
		what: string,
	) {
		const { sim } = this;
		const attempt = (): void => {
			if (this.gate.gateUntil > sim.now) return this.at(this.gate.gateUntil, attempt);
			if (!this.pacer.trySend(sim.now))
				return this.at(Math.max(sim.now + 1, this.pacer.nextSendAt), attempt);
			const sentAt = sim.now;
			if (kind === 'events') this.policy.listSent(sentAt);
			this.at(sim.now, () => {
				// As the transport: a read not yet on the wire when a 429 came for one sent before it is held back.
				if (this.gate.gateUntil > sim.now && sentAt >= (this.gate.refusedSentAt ?? Infinity))
					return attempt();
				sim.counts[kind]++;
				trace.write?.(`${sim.now} p${this.index} sent ${kind} ${what}`);
				const roundTrip = sim.latency;
				sim.at(sim.now + roundTrip / 2, () => arrive(sentAt, roundTrip));
			});
		};
		const arrive = (sentAt: number, roundTrip: number): void => {
			const serverAt = sim.now;
			const retryAfter = sim.limited(serverAt);
			const value = retryAfter === undefined ? answer(serverAt) : undefined;
			trace.write?.(`${serverAt} p${this.index} ${kind} ${what}: ${retryAfter ? 429 : 200}`);
			this.at(sim.now + roundTrip / 2, () => {
				if (retryAfter === undefined) return done(value as T);
				sim.counts.rateLimited++;
				if (this.gate.gateUntil <= sim.now) {
					this.pacer.rateLimited(sim.now, retryAfter, sentAt);
					this.gate.refusedSentAt = sentAt;
				}
				this.gate.gateUntil = Math.max(this.gate.gateUntil, sim.now + retryAfter);
				attempt();
			});
		};
		attempt();
	}

	private check(run: Run): void {
		const sim = this.sim.runs.get(run.runId)!;
		this.inFlight++;
		const answered = (body: IDataObject, kind: 'pending' | 'done') => {
			this.inFlight--;
			trace.write?.(`${this.sim.now} p${this.index} answer ${run.runId} ${kind} ${body.status}`);
			const outcome = { itemIndex: run.target.itemIndex, item: { json: body } };
			this.policy.answered(
				run,
				kind === 'done' ? { kind, run: body, outcome } : { kind, run: body },
				this.sim.now,
			);
		};
		this.read(
			(serverAt) =>
				[
					sim.readAges.push(serverAt - sim.createdAt),
					this.sim.runBody(sim, serverAt),
				][1] as IDataObject,
			(body) => {
				// As check.ts: not final is pending, unless its Max Wait Time has come.
				const passed = this.sim.now >= maxWaitEnd(run);
				if (!FINAL_STATUSES.includes(String(body.status)))
					return answered(body, passed ? 'done' : 'pending');
				if (!run.wait.settings.includeOutput) {
					sim.outputReadAt ??= this.sim.now - this.sim.latency / 2;
					return answered(body, 'done');
				}
				this.read(
					(serverAt) => (sim.outputReadAt ??= serverAt),
					() => answered(body, 'done'),
					'outputs',
					run.runId,
				);
			},
			'status',
			run.runId,
		);
	}

	private readList(): void {
		this.inFlight++;
		const { list } = this.policy;
		const [after, first] = [list.after, firstListPage(list)];
		const finish = (events: IDataObject[] | undefined) => {
			this.inFlight--;
			this.policy.listRead(events, this.sim.now);
		};
		if (this.sim.options.eventsReadable === false) {
			this.sim.counts.events++;
			trace.write?.(`${this.sim.now} p${this.index} events: 403`);
			return void this.sim.at(this.sim.now + this.sim.latency, () => finish(undefined));
		}
		// As loop.ts: page after page as the list window says.
		const read: IDataObject[] = [];
		const step = (page: number): void =>
			this.read(
				(serverAt) => this.sim.listPage(serverAt, after, page),
				(answer) => {
					read.push(...answer.events);
					const next = nextListPage(list, first, page, answer, read);
					if (next === undefined) finish(read);
					else step(next);
				},
				'events',
				`after ${after} page ${page}`,
			);
		step(first);
	}

	/** One turn of the loop: waits end right after a sleep, then the policy says what to send. */
	private turn(): void {
		const { sim } = this;
		for (const [wait, ended] of this.executions) {
			for (const run of wait.runs)
				if (maxWaitReached(run, sim.now) === 'passed' && !run.outcome)
					this.policy.maxWaitPassed(run, { itemIndex: 0, item: { json: {} } }, sim.now);
			if (this.open.has(wait) || wait.runs.some((run) => !run.outcome) || wait.inFlight > 0)
				continue;
			this.policy.waits.delete(wait);
			this.executions.delete(wait);
			ended();
		}
		if (this.executions.size === 0) return void (this.running = false);
		const { checks, readListUntil, wakeAt } = this.policy.next(sim.now);
		const sent = checks.map((run) => run.runId).join(' ');
		trace.write?.(`${sim.now} p${this.index} turn: ${sent}; list ${readListUntil}; wake ${wakeAt}`);
		if (readListUntil !== undefined) this.readList();
		for (const run of checks) this.check(run);
		const idle = Math.min(PAUSE_SLICE_MS, Math.max(BUSY_SLICE_MS, wakeAt - sim.now));
		this.at(sim.now + (this.inFlight > 0 ? BUSY_SLICE_MS : idle), () => this.turn());
	}
}

const before = (a: Timed, b: Timed) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/** Takes the earliest callback off a binary heap. */
function pop(queue: Timed[]): Timed {
	const top = queue[0];
	const last = queue.pop()!;
	if (queue.length === 0) return top;
	queue[0] = last;
	for (let i = 0; ; ) {
		const [l, r] = [2 * i + 1, 2 * i + 2];
		let best = i;
		if (l < queue.length && before(queue[l], queue[best])) best = l;
		if (r < queue.length && before(queue[r], queue[best])) best = r;
		if (best === i) return top;
		[queue[i], queue[best]] = [queue[best], queue[i]];
		i = best;
	}
}

/** The share below which `fraction` of the values lie. */
export function quantile(values: number[], fraction: number): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

/** Run lengths evenly from 5 s to 120 s, in the order the benchmark's executions get them. */
export const spread = (count: number) => (n: number) =>
	5000 + ((n * 7919) % count) * (115_000 / Math.max(1, count - 1));
