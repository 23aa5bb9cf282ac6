/**
 * The queue-mode row under one read limit as a history of the simulator (simulator.ts): what
 * bench/queue-model.bench.ts reports on, and what trace.slow.test.ts replays to see that no decision of
 * the policy changed. Each seed is one history, the same every run.
 */
import type { Figures } from './simulator';
import { Simulation } from './simulator';

/** The real row's shape and bounds (scripts/bench/queue-limited.js takes the same). */
export const QUEUE_ROW = require('../../../../scripts/bench/queue-row') as Record<string, number>;
const { EXECUTIONS, RUN_MS, READ_LIMIT, ARRIVAL_GAP_MS } = QUEUE_ROW;
export const SEEDS = 20;
/** How the real row's queue gave executions out (its request logs, ten runs): see `bullBlocks`. */
const EARLY = 100;

/** A small seeded generator, so that each seed is the same history every run. */
function random(seed: number): () => number {
	let state = seed >>> 0;
	return () => (state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

/**
 * Which worker runs the n-th execution. In the real row's logs the first hundred or so went to
 * the two workers in short stretches (1 to 8 in a row) and the rest in two or three long ones
 * (30 to 70): Bull hands a waiting job to whichever worker asks first.
 */
function bullBlocks(seed: number): (n: number) => number {
	const next = random(seed);
	const worker: number[] = [];
	let current = next() < 0.5 ? 0 : 1;
	while (worker.length < EXECUTIONS) {
		const stretch =
			worker.length < EARLY ? 1 + Math.floor(next() * 8) : 30 + Math.floor(next() * 41);
		for (let i = 0; i < stretch; i++) worker.push(current);
		current = 1 - current;
	}
	return (n) => worker[n];
}

/** One seed's history: both workers each with its own pacer, or behind one; event loops that stop or not. */
export function queueModelRun(seed: number, onePacer: boolean, stalls: boolean): Figures {
	const sim = new Simulation({
		readLimit: READ_LIMIT,
		processes: 2,
		onePacer,
		// A local API: a few ms a round trip, as the sandbox beside n8n on one machine.
		latencyMs: 6,
		jitter: 0.5,
		seed,
		processOf: bullBlocks(seed),
		// Five n8n processes and PostgreSQL on two cores: each event loop stops now and then.
		stalls: stalls ? { everyMs: 1700 + seed * 37, ms: 150 + (seed % 5) * 60 } : undefined,
	});
	return sim.run({
		alive: EXECUTIONS,
		total: EXECUTIONS,
		lengthOf: () => RUN_MS,
		arrivalGapMs: ARRIVAL_GAP_MS,
		settings: { includeOutput: true },
	});
}
