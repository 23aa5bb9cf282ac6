/**
 * Queue mode under one read limit, modelled: the `queue-limited` row of `npm run bench:queue`
 * (scripts/bench/queue-limited.js) on the waiting simulator (test/nodes/DocumentWorkflow/waiting/
 * simulator.ts), which drives the real Policy and ReadPacer on a simulated clock. It runs many
 * seeds in a second where the real row runs five clusters in ten minutes, and it runs what no
 * n8n can: both workers behind one pacer. That way is the bound of what sharing what each
 * pacer learns could do, so a goal it misses is one no pacer of its own can be sure to meet.
 *
 * Part of `npm run bench:queue` (docs/benchmarks-queue.md); alone:
 * `BENCH_SUITES=queue-model npx jest -c bench/jest.bench.config.js`.
 */
import { QUEUE_ROW, SEEDS, queueModelRun } from '../test/nodes/DocumentWorkflow/waiting/queueModel';
import type { Section } from './results';
import { median, round, writeSuiteResults } from './results';

const {
	EXECUTIONS,
	RUN_MS,
	READ_LIMIT,
	ARRIVAL_GAP_MS,
	FAIR_FACTOR,
	FAIR_SLACK_MS,
	MAX_429_SHARE,
} = QUEUE_ROW;

interface Outcome {
	seed: number;
	worst: [number, number];
	fair: boolean;
	share429: number;
	perDocument: number;
}

function simulate(seed: number, onePacer: boolean, stalls: boolean): Outcome {
	const figures = queueModelRun(seed, onePacer, stalls);
	const worstOf = (worker: number) =>
		Math.max(
			...figures.late.filter((_, n) => figures.processOf[n] === worker).map((l) => l * RUN_MS),
		);
	const worst: [number, number] = [worstOf(0), worstOf(1)];
	const [low, high] = [Math.min(...worst), Math.max(...worst)];
	return {
		seed,
		worst,
		fair: high <= Math.max(low * FAIR_FACTOR, low + FAIR_SLACK_MS),
		share429: figures.rateLimited / figures.requests,
		perDocument: figures.perDocument,
	};
}

const s = (ms: number) => `${round(ms / 1000, 1)} s`;
/** Two decimals: the bound is 0.5%, and a share that rounds to it may be under or over. */
const pct = (share: number) => `${round(share * 100, 2)}%`;

describe('queue mode under one read limit, modelled', () => {
	it(`${SEEDS} seeds, each worker its own pacer and both behind one`, () => {
		const ways = [
			{ label: 'each worker its own pacer (the package)', onePacer: false, stalls: true },
			{ label: 'both workers behind one pacer (no n8n has it)', onePacer: true, stalls: true },
			{ label: 'each its own pacer, event loops that never stop', onePacer: false, stalls: false },
			{ label: 'one pacer, event loops that never stop', onePacer: true, stalls: false },
		].map((way) => ({
			...way,
			outcomes: Array.from({ length: SEEDS }, (_, i) => simulate(i + 1, way.onePacer, way.stalls)),
		}));
		const summary = ways.map(({ label, outcomes }) => [
			label,
			`${outcomes.filter((o) => o.fair).length} of ${SEEDS}`,
			`${outcomes.filter((o) => o.share429 < MAX_429_SHARE).length} of ${SEEDS}`,
			`${outcomes.filter((o) => o.fair && o.share429 < MAX_429_SHARE).length} of ${SEEDS}`,
			pct(median(outcomes.map((o) => o.share429))),
			s(Math.max(...outcomes.flatMap((o) => o.worst))),
			String(round(median(outcomes.map((o) => o.perDocument)), 2)),
		]);
		const perSeed = ways[0].outcomes.map((own, i) => {
			const one = ways[1].outcomes[i];
			const cell = (o: Outcome) =>
				`${s(o.worst[0])} / ${s(o.worst[1])}${o.fair ? '' : ' (not fair)'}, ${pct(o.share429)}`;
			return [String(own.seed), cell(own), cell(one)];
		});
		const sections: Section[] = [
			{
				heading: `The queue-mode row modelled: ${SEEDS} histories`,
				text: [
					`A model, not n8n: the waiting simulator drives the real waiting policy and read pacer of each worker on a simulated clock, for the row above (${EXECUTIONS} one-document executions ${ARRIVAL_GAP_MS} ms apart, runs of ${s(RUN_MS)}, Include Output, events naming their run, two workers, a read limit of ${READ_LIMIT} a second in a fixed window, 429 with Retry-After).`,
					`What it adds to the simulator's defaults, from the real row: round trips of 6 ms ± 50%; each worker's event loop stops for 150 to 390 ms every 1.7 to 2.4 s (reads it let go meanwhile go on the wire together after it); and executions given out as the real row's queue gave them (its request logs, ten runs: the first hundred or so to the two workers in stretches of 1 to 8, the rest in two or three stretches of 30 to 70, so that the last ones all wait on one worker).`,
					`Each seed is one such history, the same for both ways. "Fair" and "under 0.5%" are the real row's bounds: each worker's worst output read late within ${FAIR_FACTOR}× of the other's or within ${s(FAIR_SLACK_MS)} of it; under ${pct(MAX_429_SHARE)} of requests answered 429.`,
					`The second way puts both workers behind one pacer and one rate-limit gate, as if each knew at once what the other learned and sent: no two n8n processes share memory, so no node can do it. It is the bound of what sharing could buy: where it misses a bound, that bound depends on the history more than on any pacer. The last two ways are the first two with event loops that never stop: what the stops cost.`,
				].join(' '),
				table: {
					columns: [
						'way',
						'fair',
						'under 0.5% refused',
						'both',
						'429 answers (median)',
						'worst output read late (any seed)',
						'requests per document (median)',
					],
					rows: summary,
				},
			},
			{
				heading:
					'Each seed (event loops that stop): each worker’s worst output read late, and the share answered 429',
				table: {
					columns: ['seed', 'each worker its own pacer', 'both behind one pacer'],
					rows: perSeed,
				},
			},
		];
		writeSuiteResults({
			suite: 'queue-model',
			title: 'Queue mode under one read limit, modelled',
			sections,
			goals: [],
		});
	});
});
