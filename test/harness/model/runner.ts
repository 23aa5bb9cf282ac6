/**
 * Running histories with fast-check, the same way for both triggers: a world (the API, n8n, the
 * node) made from a generated setup, the generated commands run against it (`fc.commands`,
 * `fc.asyncModelRun`), the world's end, and one property checked after every command and at the
 * end. A failure prints the shrunk history (each command's `toString`), the seed and the path to
 * replay it (`MODEL_SEED`, fast-check's `path`), and the world's report. `MODEL_TRACE=<file>` appends
 * each history to that file as it starts (to find one that does not end).
 */
import fc from 'fast-check';
import { appendFileSync } from 'node:fs';

import type { Fault } from './api';
import { flush } from './clock';
import type { PropertyName } from './ledger';

/** The real clock and its timer (this module loads before the fake clock is installed). */
const realSetTimeout = globalThis.setTimeout;
const realNow = Date.now;
const realClearTimeout = globalThis.clearTimeout;
/** A history that takes longer than this in real time is a failure of its own (a hang), reported with it. */
const HISTORY_WALL_MS = Number(process.env.MODEL_HISTORY_WALL_MS ?? 60_000);

/** What a history runs against. */
export interface World {
	begin(): Promise<void>;
	finish(): Promise<void>;
	check(property: PropertyName, final: boolean): void;
	dispose(): void;
	/** One line of counts for `MODEL_STATS`. */
	counts(): Record<string, number>;
}

export type Model = { setup: unknown };

/** A step of a history: acts on the world, then the property is checked. */
export abstract class Step<W extends World> implements fc.AsyncCommand<Model, W, false> {
	abstract toString(): string;
	abstract act(world: W): Promise<void>;
	check(_model: Readonly<Model>): boolean {
		return true;
	}
	async run(_model: Model, world: W): Promise<void> {
		await this.act(world);
		world.check(running.property, false);
	}
}

/** The property the running test asserts. */
const running: { property: PropertyName } = { property: 'once' };

export const faultArb: fc.Arbitrary<Fault> = fc.oneof(
	fc.constant<Fault>({ kind: '500' }),
	fc.constant<Fault>({ kind: 'reset' }),
	fc.record({
		kind: fc.constant('429' as const),
		retryAfterS: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 30, max: 150 })),
		asDate: fc.boolean(),
	}),
);

/** `MODEL_WITHOUT=a,b` leaves the commands of those names out (to look past a known defect for others). */
export function pick<W extends World>(
	commands: Record<string, fc.Arbitrary<Step<W>>>,
): Array<fc.Arbitrary<Step<W>>> {
	const left = new Set((process.env.MODEL_WITHOUT ?? '').split(',').filter(Boolean));
	return Object.entries(commands)
		.filter(([name]) => !left.has(name))
		.map(([, arb]) => arb);
}

export interface ModelRunOptions {
	runs: number;
	maxCommands: number;
	seed?: number;
	/** Starts no new history after this long (ms); a failure found before is still shrunk and reported. */
	timeLimitMs?: number;
}

/**
 * The histories every run of the suite checks, the same on every machine (a failure in CI is a
 * change of the code, never the draw): `MODEL_SEED` replays another seed, `MODEL_RANDOM=1` draws
 * new histories (exploring; what it finds goes in as a test or a named gap).
 */
export const SUITE_SEED = 20261129;

/** The options every model test reads from the environment: `MODEL_RUNS` scales, `MODEL_SEED` replays. */
export function modelOptions(runs: number, maxCommands: number): ModelRunOptions {
	const scale = Number(process.env.MODEL_RUNS_SCALE ?? 1);
	return {
		runs: process.env.MODEL_RUNS
			? Number(process.env.MODEL_RUNS)
			: Math.max(1, Math.round(runs * scale)),
		maxCommands,
		seed:
			process.env.MODEL_SEED !== undefined
				? Number(process.env.MODEL_SEED)
				: process.env.MODEL_RANDOM === '1'
					? undefined
					: SUITE_SEED,
	};
}

/** Runs histories of `setup` and `commands` and asserts `property` on each; returns how many ran. */
export async function checkProperty<S, W extends World>(
	property: PropertyName,
	setup: fc.Arbitrary<S>,
	commands: Array<fc.Arbitrary<Step<W>>>,
	makeWorld: (setup: S) => W,
	describeSetup: (setup: S) => string,
	options: ModelRunOptions,
): Promise<number> {
	const arbitrary = fc.tuple(setup, fc.commands(commands, { maxCommands: options.maxCommands }));
	return await checkHistories(property, arbitrary, makeWorld, describeSetup, options);
}

/**
 * Asserts `property` on one history written out (one the model found, kept as a test): the same
 * run as a generated one, its report the same on failure.
 */
export async function checkHistory<S, W extends World>(
	property: PropertyName,
	setup: S,
	steps: Array<Step<W>>,
	makeWorld: (setup: S) => W,
	describeSetup: (setup: S) => string,
): Promise<void> {
	const history = fc.constant<[S, Iterable<fc.AsyncCommand<Model, W, boolean>>]>([setup, steps]);
	await checkHistories(property, history, makeWorld, describeSetup, { runs: 1, maxCommands: 0 });
}

async function checkHistories<S, W extends World>(
	property: PropertyName,
	arbitrary: fc.Arbitrary<[S, Iterable<fc.AsyncCommand<Model, W, boolean>>]>,
	makeWorld: (setup: S) => W,
	describeSetup: (setup: S) => string,
	options: ModelRunOptions,
): Promise<number> {
	running.property = property;
	// A history the last property's time limit abandoned may still run on real promises and set
	// timers: let it run into the cleared clock before this property counts timers of its own.
	for (let round = 0; round < 3; round++) {
		jest.clearAllTimers();
		await flush();
	}
	let histories = 0;
	const totals: Record<string, number> = {};
	const started = performance.now();
	await fc.assert(
		fc.asyncProperty(arbitrary, async ([initial, steps]) => {
			histories++;
			const began = performance.now();
			if (process.env.MODEL_TRACE)
				appendFileSync(
					process.env.MODEL_TRACE,
					`${new Date(realNow()).toISOString()} ${property} history ${histories}: ${describeSetup(initial)}; ${[...steps].map(String).join(', ')}\n`,
				);
			const world = makeWorld(initial);
			let timer: ReturnType<typeof setTimeout> | undefined;
			try {
				const history = async () => {
					await world.begin();
					world.check(property, false);
					await fc.asyncModelRun(() => ({ model: { setup: initial }, real: world }), steps);
					await world.finish();
					world.check(property, true);
				};
				const hung = new Promise<never>((_, reject) => {
					timer = realSetTimeout(
						() =>
							reject(
								new Error(
									`the history did not end within ${HISTORY_WALL_MS / 1000} s of real time`,
								),
							),
						HISTORY_WALL_MS,
					);
				});
				await Promise.race([history(), hung]);
			} finally {
				realClearTimeout(timer);
				for (const [key, value] of Object.entries(world.counts()))
					totals[key] = (totals[key] ?? 0) + value;
				world.dispose();
				const ms = performance.now() - began;
				if (process.env.MODEL_PROFILE && ms > Number(process.env.MODEL_PROFILE))
					console.log(
						`${ms.toFixed(0)} ms: ${describeSetup(initial)}; ${[...steps].map(String).join(', ')}`,
					);
			}
		}),
		{
			numRuns: options.runs,
			seed: options.seed,
			...(process.env.MODEL_PATH ? { path: process.env.MODEL_PATH } : {}),
			verbose: Number(process.env.MODEL_VERBOSE ?? 0),
			...(options.timeLimitMs ? { interruptAfterTimeLimit: options.timeLimitMs } : {}),
		},
	);
	if (process.env.MODEL_STATS) {
		const per = Object.entries(totals)
			.map(([key, value]) => `${(value / histories).toFixed(1)} ${key}`)
			.join(', ');
		console.log(
			`${property}: ${histories} histories in ${((performance.now() - started) / 1000).toFixed(1)} s; per history ${per}`,
		);
	}
	return histories;
}

/** How a model test file asks for its histories: runs per property and the longest history. */
export interface ModelSuite<P extends string> {
	runs: Record<P, number>;
	maxCommands: number;
	/**
	 * Each property stops starting histories, and stops shrinking a failure (reporting the history
	 * shrunk so far), after this long: keeps the fast tier's time bounded on a failing branch.
	 * Default: just under jest's timeout.
	 */
	limitMs?: number;
}

/**
 * Registers the fake clock for the file and one jest test per property, named by its title, each
 * running `check` with `MODEL_RUNS`/`MODEL_SEED` applied. A test stops starting histories (and
 * shrinking) well before jest's timeout, so a failure is reported with its history, not as a
 * timeout.
 */
export function describeModel<P extends PropertyName>(
	suite: ModelSuite<P>,
	titles: Record<P, string>,
	useClock: () => () => void,
	check: (property: P, options: ModelRunOptions) => Promise<number>,
): void {
	let restore = () => {};
	beforeAll(() => {
		restore = useClock();
	});
	afterAll(() => restore());
	const slow = suite.maxCommands > 15;
	const timeoutMs = slow ? 4 * 60 * 60_000 : 110_000;
	for (const property of Object.keys(titles) as P[])
		test(
			titles[property],
			async () => {
				const options = modelOptions(suite.runs[property], suite.maxCommands);
				await check(property, { ...options, timeLimitMs: suite.limitMs ?? timeoutMs - 20_000 });
			},
			timeoutMs,
		);
}
