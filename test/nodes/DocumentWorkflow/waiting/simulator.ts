/**
 * A simulated n8n and API for the waiting policy (nodes/DocumentWorkflow/waiting/policy.ts):
 * simulated time, executions arriving and ending, runs of given lengths, events that name their
 * run or not, a read limit, one or more n8n processes (queue mode). It drives the real Policy
 * and ReadPacer the way the loop does, and counts requests and lateness, in milliseconds of CPU.
 */
import type { IDataObject } from 'n8n-workflow';
import type { Run, Wait, WaitSettings } from '../../../../nodes/DocumentWorkflow/waiting/policy';
import {
	BUSY_SLICE_MS,
	FINAL_STATUSES,
	Policy,
} from '../../../../nodes/DocumentWorkflow/waiting/policy';
import { DEFAULT_WAIT_SETTINGS } from '../../../../nodes/DocumentWorkflow/actions/waitOptions';
import { ReadPacer } from '../../../../nodes/shared/transport/readPacer';
import { PAUSE_SLICE_MS } from '../../../../nodes/shared/transport/cancellation';

export interface Pattern {
	/** One-document executions in flight at once, and in all (a new one starts as one ends). */
	alive: number;
	total: number;
	/** Run length of the n-th execution (ms), from its submission. */
	lengthOf: (n: number) => number;
	/** Whether run events name their run. */
	named: boolean;
	/** Documents per execution (a batch: one execution, `total` 1). */
	batch?: number;
	/** Waited on by id: ages unknown to the wait (Run → Wait for Completion after a Submit). */
	byId?: boolean;
	/** The API's read limit, a fixed window of a second. */
	readLimit?: number;
	/** n8n processes sharing the API key (queue mode: each its own policy and pacer); executions go round robin. */
	processes?: number;
	/** Round trip of a request (ms). */
	latencyMs?: number;
	/** Between one execution's end and the next one's start in the same lane (n8n's own work). */
	restartMs?: number;
	arrivalGapMs?: number;
	/** n8n starts executions one at a time at most this often (a real n8n took 7 to 14 s for 40). */
	startSpacingMs?: number;
	settings?: Partial<WaitSettings>;
	/** Other clients' run events a second, which name no run of ours. */
	foreignEventsPerSecond?: number;
	/** Told of every request as it reaches the API. */
	trace?: (at: number, kind: string, detail: string) => void;
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
	/** When the last execution ended, and when the slowest run ended (ms). */
	endedAt: number;
	floor: number;
}

interface SimRun {
	id: string;
	createdAt: number;
	length: number;
	workflowId: string;
	outputReadAt?: number;
}

const uuid = (n: number, kind = 4) =>
	`00000000-0000-${kind}000-8000-${n.toString(16).padStart(12, '0')}`;

/** Runs a pattern to its end; every request counted. */
export function simulate(pattern: Pattern): Figures {
	const latency = pattern.latencyMs ?? 20;
	const restart = pattern.restartMs ?? 30;
	const settings: WaitSettings = {
		...DEFAULT_WAIT_SETTINGS,
		includeOutput: true,
		...pattern.settings,
	};
	// A binary heap of timed callbacks, earliest first (ties in the order they were set).
	const queue: Array<{ at: number; seq: number; fn: () => void }> = [];
	const before = (a: (typeof queue)[number], b: (typeof queue)[number]) =>
		a.at < b.at || (a.at === b.at && a.seq < b.seq);
	let now = 0;
	let seq = 0;
	const at = (time: number, fn: () => void) => {
		queue.push({ at: time, seq: seq++, fn });
		for (let i = queue.length - 1; i > 0; ) {
			const parent = (i - 1) >> 1;
			if (!before(queue[i], queue[parent])) break;
			[queue[i], queue[parent]] = [queue[parent], queue[i]];
			i = parent;
		}
	};
	const pop = () => {
		const top = queue[0];
		const last = queue.pop()!;
		if (queue.length > 0) {
			queue[0] = last;
			for (let i = 0; ; ) {
				const [l, r] = [2 * i + 1, 2 * i + 2];
				let best = i;
				if (l < queue.length && before(queue[l], queue[best])) best = l;
				if (r < queue.length && before(queue[r], queue[best])) best = r;
				if (best === i) break;
				[queue[i], queue[best]] = [queue[best], queue[i]];
				i = best;
			}
		}
		return top;
	};
	const counts = { uploads: 0, status: 0, events: 0, outputs: 0, rateLimited: 0 };
	const runs = new Map<string, SimRun>();
	const events: Array<{ id: string; createdAt: number; type: string; data: IDataObject }> = [];
	let window = { start: -Infinity, count: 0 };
	const workflowId = uuid(0, 5);

	// The API: answers at the middle of the round trip.
	const limited = (serverAt: number): number | undefined => {
		if (!pattern.readLimit) return undefined;
		if (serverAt >= window.start + 1000) window = { start: serverAt, count: 0 };
		if (window.count >= pattern.readLimit)
			return Math.max(1, Math.ceil((window.start + 1000 - serverAt) / 1000)) * 1000;
		window.count++;
		return undefined;
	};
	const runBody = (run: SimRun, serverAt: number): IDataObject => {
		const done = serverAt >= run.createdAt + run.length;
		return {
			id: run.id,
			workflowId: run.workflowId,
			status: done ? 'completed' : 'running',
			startedOn: new Date(run.createdAt).toISOString(),
			completedOn: done ? new Date(run.createdAt + run.length).toISOString() : null,
		};
	};
	// Event ids reflect creation time, as the API's do.
	let eventSeq = 0;
	const emit = (createdAt: number, type: string, data: IDataObject) =>
		events.push({
			id: uuid(Math.round(createdAt * 1000) * 1000 + (++eventSeq % 1000), 1),
			createdAt,
			type,
			data,
		});
	const listPage = (serverAt: number, after: string | undefined, page: number | 'last') => {
		const visible = events
			.filter((event) => event.createdAt <= serverAt && (!after || event.id > after))
			.sort((a, b) => (a.id < b.id ? -1 : 1));
		const pages = Math.max(1, Math.ceil(visible.length / 100));
		const index = page === 'last' ? pages : page;
		return { pages, events: visible.slice((index - 1) * 100, index * 100) };
	};
	if (pattern.foreignEventsPerSecond)
		for (let t = 0; t < 3_600_000; t += 1000 / pattern.foreignEventsPerSecond)
			emit(t, 'run.completed', pattern.named ? { runId: uuid(1e9 + t, 4) } : {});

	class Process {
		readonly policy = new Policy();
		readonly pacer = new ReadPacer();
		gateUntil = 0;
		running = false;
		readonly executions = new Map<Wait, () => void>();
		private inFlight = 0;

		/** A read through the pacer and the rate-limit gate, retried after a 429; `answer` runs at the server. */
		read<T>(
			answer: (serverAt: number) => T,
			done: (value: T) => void,
			kind: keyof typeof counts,
			label = '',
		) {
			const attempt = () => {
				if (this.gateUntil > now) return at(this.gateUntil, attempt);
				if (!this.pacer.trySend(now))
					return at(Math.max(now + 1, this.pacer.nextSendAt), attempt);
				counts[kind]++;
				pattern.trace?.(now, kind, label);
				const serverAt = now + latency / 2;
				const retryAfter = limited(serverAt);
				const value = retryAfter === undefined ? answer(serverAt) : undefined;
				at(now + latency, () => {
					if (retryAfter !== undefined) {
						counts.rateLimited++;
						if (this.gateUntil <= now) this.pacer.rateLimited(now, retryAfter);
						this.gateUntil = Math.max(this.gateUntil, now + retryAfter);
						return attempt();
					}
					this.pacer.answered(now);
					done(value as T);
				});
			};
			attempt();
		}

		check(run: Run) {
			this.inFlight++;
			const sim = runs.get(run.runId)!;
			this.read(
				(serverAt) => runBody(sim, serverAt),
				(body) => {
					const answered = (kind: 'pending' | 'done') => {
						this.inFlight--;
						const item = { json: body };
						this.policy.answered(
							run,
							kind === 'done'
								? { kind, run: body, outcome: { itemIndex: run.target.itemIndex, item } }
								: { kind, run: body },
							now,
						);
					};
					pattern.trace?.(
						now,
						'answer',
						`${run.target.itemIndex} age ${Math.round(now - sim.createdAt)} ${String(body.status)} ${run.named ? 'named' : ''}`,
					);
					if (!FINAL_STATUSES.includes(String(body.status))) return answered('pending');
					if (!settings.includeOutput) return answered('done');
					this.read(
						(serverAt) => (sim.outputReadAt ??= serverAt),
						() => answered('done'),
						'outputs',
					);
				},
				'status',
				`${run.target.itemIndex}`,
			);
		}

		readList() {
			this.inFlight++;
			const after = this.policy.listAfter;
			this.read(
				(serverAt) => listPage(serverAt, after, 1),
				(first) => {
					const finish = (last?: { events: IDataObject[] }) => {
						this.inFlight--;
						this.policy.listRead([...first.events, ...(last?.events ?? [])], now);
					};
					if (first.pages <= 1) return finish();
					this.read((serverAt) => listPage(serverAt, after, 'last'), finish, 'events');
				},
				'events',
			);
		}

		/** One turn of the loop: waits end right after a sleep, then the policy says what to send. */
		turn() {
			for (const [wait, ended] of this.executions)
				if (wait.runs.every((run) => run.outcome) && wait.inFlight === 0) {
					this.policy.waits.delete(wait);
					this.executions.delete(wait);
					ended();
				}
			if (this.executions.size === 0) return void (this.running = false);
			const { checks, readList, wakeAt } = this.policy.next(now);
			if (readList) this.readList();
			for (const run of checks) this.check(run);
			const sleep =
				this.inFlight > 0
					? BUSY_SLICE_MS
					: Math.min(PAUSE_SLICE_MS, Math.max(BUSY_SLICE_MS, wakeAt - now));
			at(now + sleep, () => this.turn());
		}

		wait(targets: Parameters<Policy['begin']>[0], ended: () => void) {
			const wait = this.policy.begin(targets, settings, now);
			this.executions.set(wait, ended);
			if (!this.running) [this.running] = [true, this.turn()];
		}
	}

	const processes = Array.from({ length: pattern.processes ?? 1 }, () => new Process());
	let started = 0;
	let endedAt = 0;
	const batch = pattern.batch ?? 1;
	let nextStartAt = 0;
	const execution = (): void => {
		if (started >= pattern.total) return;
		if (now < nextStartAt) return at(nextStartAt, execution);
		nextStartAt = now + (pattern.startSpacingMs ?? 0);
		const n = started++;
		const process = processes[n % processes.length];
		const made: SimRun[] = [];
		for (let i = 0; i < batch; i++) {
			const index = n * batch + i;
			const run: SimRun = {
				id: uuid(index + 1),
				createdAt: now + (i * latency) / 2 + latency / 2,
				length: pattern.lengthOf(index),
				workflowId,
			};
			runs.set(run.id, run);
			made.push(run);
			emit(run.createdAt, 'document.received', { documentId: uuid(index + 1, 3) });
			emit(
				run.createdAt + run.length,
				'run.completed',
				pattern.named ? { runId: run.id } : { workflowId },
			);
		}
		counts.uploads += batch;
		// Uploads one after another at the round trip (a batch's are spread as the node sends them, concurrency aside).
		at(now + (batch * latency) / 2 + latency / 2, () =>
			process.wait(
				made.map((run, itemIndex) => ({
					itemIndex,
					runId: run.id,
					workflowId: pattern.byId ? undefined : workflowId,
					submittedAt: pattern.byId ? undefined : run.createdAt + latency / 2,
				})),
				() => {
					endedAt = now;
					at(now + restart, execution);
				},
			),
		);
	};
	for (let lane = 0; lane < Math.min(pattern.alive, pattern.total); lane++)
		at(lane * (pattern.arrivalGapMs ?? 25), execution);

	while (queue.length > 0) {
		const next = pop();
		now = next.at;
		next.fn();
		if (now > 24 * 3_600_000) throw new Error('the simulation did not end');
	}
	const all = [...runs.values()];
	const documents = all.length;
	const requests = counts.uploads + counts.status + counts.events + counts.outputs;
	return {
		documents,
		requests,
		perDocument: requests / documents,
		...counts,
		late: all.map(
			(run) => ((run.outputReadAt ?? Infinity) - (run.createdAt + run.length)) / run.length,
		),
		endedAt,
		floor: Math.max(...all.map((run) => run.createdAt + run.length)),
	};
}

/** The share below which `fraction` of the values lie. */
export function quantile(values: number[], fraction: number): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}
