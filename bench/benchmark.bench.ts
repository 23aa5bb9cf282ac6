/**
 * The benchmark of the action node (`npm run bench`): waiting on batches of runs, and files.
 * It runs against the in-process sandbox through the n8n-core harness (the same one the
 * tests use) and writes `.bench-results/benchmark.json`; `scripts/bench/report.js` renders it
 * into docs/benchmarks.md with the other suites.
 *
 * Short rows are run REPEATS times (default 3) and report the median; long rows (runs of
 * 60 s, 5 to 120 s, 5 minutes) run once. No row is extrapolated.
 */
import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import { closeSync, createReadStream, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startSandbox } from '../sandbox/src';
import type { Sandbox } from '../sandbox/src';
import type { RequestLogEntry } from '../sandbox/src/types';
import type { DocumentWorkflowCredentials, InputItem, NodeRunResult } from '../test/harness/n8n';
import { runActionNode, useBinaryMode } from '../test/harness/n8n';
import type { Chart, Goal, Section } from './results';
import { median, round, writeSuiteResults } from './results';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const BATCH = Number(process.env.BENCH_BATCH ?? 200);
/** The sandbox's read limit in the rate-limited row (requests a second). */
const READ_LIMIT = 50;
/** Run lengths multiplied by this, for a quick trial of the benchmark itself (1 in the report). */
const TIME_SCALE = Number(process.env.BENCH_TIME_SCALE ?? 1);
/** Only some rows, e.g. BENCH_ROWS=short (every row runs by default). */
const ROWS = process.env.BENCH_ROWS ?? 'all';

let sb: Sandbox;
let credentials: DocumentWorkflowCredentials;
const sections: Section[] = [];
const goals: Goal[] = [];

beforeAll(async () => {
	sb = await startSandbox();
	credentials = { baseUrl: sb.baseUrl, apiKey: sb.apiKey };
});
afterAll(async () => {
	await sb.stop();
	writeSuiteResults({
		suite: 'benchmark',
		title: 'Document Workflow node: waiting on runs, and files',
		sections,
		goals,
	});
});

/**
 * A key of its own for each batch (after a reset): the action node's watcher keeps what it
 * learned per key for the n8n process, so a batch on a used key would start from what the
 * rows before it taught; each row is measured from nothing, as a new user's first batch.
 */
async function freshKey(): Promise<void> {
	credentials = {
		baseUrl: sb.baseUrl,
		apiKey: (await sb.control.createKey({ name: 'bench' })).key,
	};
}

const MB = 1024 * 1024;
const pauseMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Sampled<T> {
	value: T;
	ms: number;
	peakRssMb: number;
	rssGrowthMb: number;
	peakHeapMb: number;
	/** Peak of V8 heap + external memory (Buffers) minus its value before the step. */
	allocGrowthMb: number;
}

/** Runs `fn` while sampling the process's RSS and heap every 10 ms. */
async function sampled<T>(fn: () => Promise<T>): Promise<Sampled<T>> {
	global.gc?.();
	const base = process.memoryUsage();
	let peakRss = base.rss;
	let peakHeap = base.heapUsed;
	const baseAlloc = base.heapUsed + base.external;
	let peakAlloc = baseAlloc;
	const sample = () => {
		const m = process.memoryUsage();
		if (m.rss > peakRss) peakRss = m.rss;
		if (m.heapUsed > peakHeap) peakHeap = m.heapUsed;
		if (m.heapUsed + m.external > peakAlloc) peakAlloc = m.heapUsed + m.external;
	};
	const timer = setInterval(sample, 10);
	const started = Date.now();
	try {
		const value = await fn();
		sample();
		return {
			value,
			ms: Date.now() - started,
			peakRssMb: peakRss / MB,
			rssGrowthMb: (peakRss - base.rss) / MB,
			peakHeapMb: peakHeap / MB,
			allocGrowthMb: (peakAlloc - baseAlloc) / MB,
		};
	} finally {
		clearInterval(timer);
	}
}

function expectOk(result: NodeRunResult): NodeRunResult {
	if (result.error) throw new Error(`node failed: ${result.error.message}`);
	return result;
}

const items = (count: number, offset = 0): InputItem[] =>
	Array.from({ length: count }, (_, i) => ({
		json: { index: offset + i },
		binary: {
			data: {
				data: Buffer.from(`%PDF-1.4\n% small document ${offset + i}\n%%EOF\n`),
				fileName: `doc-${offset + i}.pdf`,
				mimeType: 'application/pdf',
			},
		},
	}));

// ---- waiting on a batch ---------------------------------------------------------------------

/** The wait options of every batch: each run's output read with it. */
const WAIT_OPTIONS = { includeOutput: true };

/** The fewest requests a document can take: its upload, a read of its run and, with Include Output on, a read of its output. */
const FLOOR_REQUESTS = 2 + (WAIT_OPTIONS.includeOutput ? 1 : 0);
const FLOOR_TEXT = `an upload, a read of its run${WAIT_OPTIONS.includeOutput ? ' and a read of its output (Include Output on)' : ''}`;

/** How a batch is waited on: submitted and waited by one node, or submitted first and then waited on by run id. */
type Way = 'submit' | 'runWait';

interface BatchFigures {
	/** From the first upload's start to the end of the node that waited (Run → Wait: the second node). */
	ms: number;
	floorMs: number;
	requests: number;
	rateLimited: number;
	documents: number;
	/** For each document: from its run's completedOn to the first successful read of its output (sandbox clock). */
	lateMs: number[];
	/** The same, as a share of the run's length (completedOn − startedOn). */
	lateShare: number[];
}

const seconds = (ms: number) => `${round(ms / 1000, 1)} s`;

/** Median and worst output lateness of the repeats: each repeat's median and worst over its documents, then the median of those. */
const lateness = (runs: BatchFigures[]): [string, string] => {
	const cell = (ms: number, share: number) =>
		`${round(ms / 1000, 2)} s (${round(share * 100, 1)}%)`;
	return [
		cell(median(runs.map((r) => median(r.lateMs))), median(runs.map((r) => median(r.lateShare)))),
		cell(
			median(runs.map((r) => Math.max(...r.lateMs))),
			median(runs.map((r) => Math.max(...r.lateShare))),
		),
	];
};

/** Gives each of the next documents of the workflow its own run length. */
async function scriptRuns(workflowId: string, lengths: number[]): Promise<void> {
	await sb.control.clearNextScripts(workflowId);
	for (const ms of lengths)
		await sb.control.setNextScripts(
			workflowId,
			[{ status: 'running', ms: ms * TIME_SCALE }, { status: 'completed' }],
			1,
		);
}

const belongsTo = (entry: RequestLogEntry, workflowId: string, runIds: Set<string>) => {
	const path = entry.path.split('?')[0];
	if (path.startsWith(`/workflows/${workflowId}/`)) return true;
	const runId = /^\/runs\/([^/]+)/.exec(path)?.[1];
	return runId !== undefined && runIds.has(runId);
};

/**
 * One batch, waited on the given way with default settings and Include Output on. The floor is
 * the time from the first upload's start to the moment the slowest run became final, both on
 * the sandbox's clock; with `readLimit`, the later of that and the first run's end plus two
 * reads per document (its run, its output) at the limit. Run → Wait: the uploads (a Submit
 * Document node without waiting) are part of the batch, its time and its requests.
 */
async function runBatch(
	way: Way,
	workflowId: string,
	lengths: number[],
	readLimit?: number,
	eventShare = 1,
): Promise<BatchFigures> {
	await scriptRuns(workflowId, lengths);
	const documents = lengths.length;
	const submitOnly = {
		resource: 'workflow',
		operation: 'trigger',
		workflowId,
		binaryPropertyName: 'data',
		options: {},
	};
	const startedAt = Date.now();
	let result: NodeRunResult;
	if (way === 'submit') {
		result = expectOk(
			await runActionNode({
				parameters: { ...submitOnly, waitForCompletion: true, options: WAIT_OPTIONS },
				items: items(documents),
				credentials,
			}),
		);
	} else {
		const submitted = expectOk(
			await runActionNode({ parameters: submitOnly, items: items(documents), credentials }),
		);
		result = expectOk(
			await runActionNode({
				parameters: {
					resource: 'run',
					operation: 'wait',
					runId: '={{ $json.runId }}',
					options: WAIT_OPTIONS,
				},
				items: submitted.items.map((item) => ({ json: { runId: item.json.runId } })),
				credentials,
			}),
		);
	}
	const endReal = Date.now();
	if (
		result.items.some(
			(item) =>
				item.json.waitOutcome !== 'completed' ||
				item.json.output === undefined ||
				item.json.output === null,
		)
	) {
		throw new Error('a run did not complete with its output');
	}
	return await figures(
		workflowId,
		new Set(result.items.map((item) => String(item.json.runId))),
		endReal,
		documents,
		startedAt,
		readLimit,
		eventShare,
	);
}

/**
 * `eventShare`: the part of the event-list reads made while the batch waited that is the
 * batch's (1 alone; 0.5 when two equal batches wait side by side and share the reads).
 */
async function figures(
	workflowId: string,
	runIds: Set<string>,
	endReal: number,
	documents: number,
	since: number,
	readLimit?: number,
	eventShare = 1,
): Promise<BatchFigures> {
	const all = (await sb.control.getRequests({ origin: 'api' })).filter(
		(entry) => entry.realTimeMs >= since && entry.realTimeMs <= endReal,
	);
	const log = all.filter((entry) => belongsTo(entry, workflowId, runIds));
	const eventReads = all.filter((entry) => entry.path.startsWith('/events'));
	const firstUpload = log
		.filter((entry) => entry.method === 'POST')
		.sort((a, b) => a.realTimeMs - b.realTimeMs)[0];
	// The sandbox's clock and this process's clock differ by the sandbox's offset (0 unless advanced).
	const startSandbox = Date.parse(firstUpload.time);
	const runs = (await sb.control.listRuns({ workflowId })).filter((run) => runIds.has(run.id));
	const ends = runs.map((run) => Date.parse(String(run.completedOn)));
	let floorEnd = Math.max(...ends);
	if (readLimit)
		floorEnd = Math.max(floorEnd, Math.min(...ends) + ((2 * documents) / readLimit) * 1000);
	const late = outputLateness(log, runs);
	return {
		ms: endReal - firstUpload.realTimeMs,
		floorMs: floorEnd - startSandbox,
		requests: log.length + eventShare * eventReads.length,
		rateLimited:
			log.filter((entry) => entry.status === 429).length +
			eventShare * eventReads.filter((entry) => entry.status === 429).length,
		documents,
		...late,
	};
}

/** For each run: from its completedOn to the first successful read of its output, in ms and as a share of the run's length. */
function outputLateness(
	log: RequestLogEntry[],
	runs: Array<{
		id: string;
		completedOn: string | null;
		startedOn: string | null;
		visibleOn: string;
	}>,
): { lateMs: number[]; lateShare: number[] } {
	const firstRead = new Map<string, number>();
	for (const entry of log) {
		const runId = /^\/runs\/([^/]+)\/output$/.exec(entry.path.split('?')[0])?.[1];
		if (entry.method === 'GET' && runId && entry.status === 200 && !firstRead.has(runId))
			firstRead.set(runId, Date.parse(entry.time));
	}
	const lateMs: number[] = [];
	const lateShare: number[] = [];
	for (const run of runs) {
		const readAt = firstRead.get(run.id);
		if (readAt === undefined) throw new Error(`the output of run ${run.id} was never read`);
		const end = Date.parse(String(run.completedOn));
		lateMs.push(readAt - end);
		lateShare.push((readAt - end) / (end - Date.parse(run.startedOn ?? run.visibleOn)));
	}
	return { lateMs, lateShare };
}

interface Row {
	name: string;
	lengths: () => number[];
	/** Runs once (long) or REPEATS times (short). */
	long: boolean;
	maxRatio: number;
	readLimit?: number;
}

const same = (ms: number) => () => new Array<number>(BATCH).fill(ms);
/** Evenly from 5 s to 120 s, shuffled so that upload order says nothing about length. */
const spread = () =>
	Array.from({ length: BATCH }, (_, i) => 5000 + ((i * 7919) % BATCH) * (115_000 / (BATCH - 1)));

/**
 * Time goals of issue 18's goals table, which states these rows with Include Output on: every
 * batch within 1.15× of its floor (issue 12 had asked 1.1× of the 60 s row and 1.05× of the
 * 5-minute row with Include Output off, before every output read was counted), and the read
 * limit row's own 1.25×.
 */
const ROW_LIST: Row[] = [
	{ name: `${BATCH} documents, every run 5 s`, lengths: same(5000), long: false, maxRatio: 1.15 },
	{
		name: `${BATCH} documents, every run 5 s, read limit ${READ_LIMIT}/s`,
		lengths: same(5000),
		long: false,
		maxRatio: 1.25,
		readLimit: READ_LIMIT,
	},
	{ name: `${BATCH} documents, every run 60 s`, lengths: same(60_000), long: true, maxRatio: 1.15 },
	{
		name: `${BATCH} documents, runs spread from 5 s to 120 s`,
		lengths: spread,
		long: true,
		maxRatio: 1.15,
	},
	{
		name: `${BATCH} documents, every run 5 minutes`,
		lengths: same(300_000),
		long: true,
		maxRatio: 1.15,
	},
];
const MAX_REQUESTS_PER_DOCUMENT = 3.5;
const MAX_429_SHARE = 0.01;
/**
 * One document alone has nothing to learn from: the goals of a workflow's first execution
 * ever (issue 18's goals table): at most 30 requests, its output read at worst 20% of the run
 * after the run completed.
 */
const ONE_DOCUMENT_MAX_REQUESTS = 30;
const ONE_DOCUMENT_MAX_LATE_SHARE = 0.2;

const wayName: Record<Way, string> = {
	submit: 'Submit Document, Wait for Completion',
	runWait: 'Run → Wait for Completion (by run id)',
};

describe('waiting on a batch', () => {
	const table: string[][] = [];
	/** The rows whose runs all have one length and no read limit, for the charts against run length. */
	const byLength: Array<{
		lengthS: number;
		way: Way;
		repeats: number;
		perDocument: number;
		lateMedianShare: number;
		lateWorstShare: number;
	}> = [];

	afterAll(() => {
		sections.unshift({
			heading: 'Waiting on a batch of runs (default settings, Include Output on)',
			text: [
				'Each row is one batch through n8n-core against the in-process sandbox, every option at its default but Include Output, which is on; each batch (each repeat) uses an API key of its own, so it starts from nothing the rows before it taught (the two batches of a long row share one key, as two workflows of one user would).',
				'Run → Wait for Completion: a Submit Document node without waiting uploads the batch, then a Run → Wait for Completion node waits on the run ids; both are part of the row (time, requests).',
				"The floor is the time from the first upload's start to the moment the slowest run became final, on the sandbox's clock; nothing else is added to it.",
				`With a read limit, the floor is the later of that and the first run's end plus two reads per document (its run, its output) at the limit (2 × documents ÷ ${READ_LIMIT} seconds).`,
				"The time runs from the first upload's start to the waiting node's end, when n8n gets every item. Requests per document count every API request of the batch from the sandbox's request log: uploads, checks, event-list reads (shared by the two batches of a long row: half each), output reads, 429 answers.",
				"\"Output read late\": for each document, from its run's completedOn to the first successful read of its output, on the sandbox's clock; the share is of the run's length.",
				`Short rows: median of ${REPEATS} (each figure is the median over the repeats; the lateness of one repeat is over all its documents). Long rows (60 s, 5 to 120 s, 5 minutes) run once, the two ways at the same time on two workflows of the sandbox.`,
			].join(' '),
			table: {
				columns: [
					'batch',
					'how',
					'time',
					'floor',
					'time vs floor',
					'requests per document',
					'429 answers',
					'output read late: median',
					'worst',
					'runs',
				],
				rows: table,
			},
			charts: runLengthCharts(),
		});
	});

	/**
	 * Requests per document and output lateness against run length, each way of waiting beside
	 * the floor: one point a row whose runs all have one length and no read limit.
	 */
	const runLengthCharts = (): Chart[] => {
		const ways = (['submit', 'runWait'] as Way[]).filter((way) =>
			byLength.some((p) => p.way === way),
		);
		const points = (way: Way, figure: (p: (typeof byLength)[number]) => number) =>
			byLength
				.filter((p) => p.way === way)
				.map((p): [number, number] => [p.lengthS, round(figure(p), 4)]);
		const rows = [
			...new Set(
				byLength.map(
					(p) => `${p.lengthS} s (${p.repeats === 1 ? 'once' : `median of ${p.repeats}`})`,
				),
			),
		].join(', ');
		const what = `Rows of ${BATCH} documents whose runs all have one length, no read limit: ${rows}.`;
		return [
			{
				id: 'requests-by-run-length',
				title: 'Waiting on a batch: requests per document against run length',
				caption: `${what} Floor: ${FLOOR_REQUESTS} requests a document, ${FLOOR_TEXT}.`,
				x: { label: 'run length (s), logarithmic', scale: 'log' },
				y: { label: 'requests per document' },
				series: [
					...ways.map((way) => ({
						label: wayName[way],
						points: points(way, (p) => p.perDocument),
					})),
					{ label: `floor: ${FLOOR_REQUESTS} (${FLOOR_TEXT})`, reference: true, y: FLOOR_REQUESTS },
				],
			},
			{
				id: 'lateness-by-run-length',
				title: 'Waiting on a batch: output read late, as a share of its run, against run length',
				caption: `${what} How late outputs were read after their run completed, as a share of the run: the median (line) and the worst (dashed) of a batch. Floor: 0, each output read the moment its run completed.`,
				x: { label: 'run length (s), logarithmic', scale: 'log' },
				y: { label: 'output read late (share of the run)', format: 'percent' },
				series: [
					...ways.flatMap((way) => [
						{
							label: `${wayName[way]}: median`,
							group: way,
							points: points(way, (p) => p.lateMedianShare),
						},
						{
							label: `${wayName[way]}: worst`,
							group: way,
							dashed: true,
							points: points(way, (p) => p.lateWorstShare),
						},
					]),
					{ label: 'floor: 0 (read as its run completed)', reference: true, y: 0 },
				],
			},
		];
	};

	const record = (row: Row, way: Way, runs: BatchFigures[]) => {
		const ratio = median(runs.map((r) => r.ms / r.floorMs));
		const perDocument = median(runs.map((r) => r.requests / r.documents));
		const share = median(runs.map((r) => r.rateLimited / r.requests));
		table.push([
			row.name,
			wayName[way],
			seconds(median(runs.map((r) => r.ms))),
			seconds(median(runs.map((r) => r.floorMs))),
			`${round(ratio, 2)}×`,
			`${round(perDocument, 2)}`,
			`${round(share * 100, 2)}%`,
			...lateness(runs),
			String(runs.length),
		]);
		const lengths = new Set(row.lengths());
		if (lengths.size === 1 && !row.readLimit)
			byLength.push({
				lengthS: (row.lengths()[0] * TIME_SCALE) / 1000,
				way,
				repeats: runs.length,
				perDocument,
				lateMedianShare: median(runs.map((r) => median(r.lateShare))),
				lateWorstShare: median(runs.map((r) => Math.max(...r.lateShare))),
			});
		goals.push({
			goal: `${row.name}, ${wayName[way]}: within ${row.maxRatio}× of the floor`,
			figure: `${round(ratio, 2)}×`,
			met: ratio <= row.maxRatio,
		});
		goals.push({
			goal: `${row.name}, ${wayName[way]}: at most ${MAX_REQUESTS_PER_DOCUMENT} API requests per document`,
			figure: `${round(perDocument, 2)}`,
			met: perDocument <= MAX_REQUESTS_PER_DOCUMENT,
		});
		if (row.readLimit)
			goals.push({
				goal: `${row.name}, ${wayName[way]}: under 1% of requests answered 429`,
				figure: `${round(share * 100, 2)}%`,
				met: share < MAX_429_SHARE,
			});
	};

	for (const row of ROW_LIST) {
		const skip = (ROWS === 'short' && row.long) || (ROWS === 'long' && !row.long);
		(skip ? test.skip : test)(row.name, async () => {
			await sb.control.reset();
			await freshKey();
			if (row.readLimit)
				await sb.control.setRateLimits({ reads: { limit: row.readLimit, windowMs: 1000 } });
			if (row.long) {
				// Once, the two ways side by side on two workflows.
				const other = await sb.control.createWorkflow({
					name: 'bench (Run → Wait)',
					triggerFormats: ['pdf'],
				});
				const [submitted, byId] = await Promise.all([
					runBatch('submit', sb.defaultWorkflowId, row.lengths(), row.readLimit, 0.5),
					runBatch('runWait', other.id, row.lengths(), row.readLimit, 0.5),
				]);
				record(row, 'submit', [submitted]);
				record(row, 'runWait', [byId]);
				return;
			}
			for (const way of ['submit', 'runWait'] as Way[]) {
				const runs: BatchFigures[] = [];
				for (let repeat = 0; repeat < REPEATS; repeat++) {
					await sb.control.reset();
					await freshKey();
					if (row.readLimit)
						await sb.control.setRateLimits({ reads: { limit: row.readLimit, windowMs: 1000 } });
					// Let the previous batch's rate-limit window pass.
					await pauseMs(1500);
					runs.push(await runBatch(way, sb.defaultWorkflowId, row.lengths(), row.readLimit));
				}
				record(row, way, runs);
			}
		});
	}

	(ROWS === 'long' ? test.skip : test)('one document, a 5 s run', async () => {
		const runs: BatchFigures[] = [];
		for (let repeat = 0; repeat < REPEATS; repeat++) {
			await sb.control.reset();
			await freshKey();
			runs.push(await runBatch('submit', sb.defaultWorkflowId, [5000]));
		}
		const over = median(runs.map((r) => r.ms - r.floorMs));
		const requests = median(runs.map((r) => r.requests));
		const share = median(runs.map((r) => r.rateLimited / r.requests));
		const worstLate = median(runs.map((r) => Math.max(...r.lateShare)));
		table.push([
			'1 document, a 5 s run',
			wayName.submit,
			seconds(median(runs.map((r) => r.ms))),
			seconds(median(runs.map((r) => r.floorMs))),
			`${round(median(runs.map((r) => r.ms / r.floorMs)), 2)}×`,
			`${round(requests, 2)}`,
			`${round(share * 100, 2)}%`,
			...lateness(runs),
			String(runs.length),
		]);
		goals.push({
			goal: 'one document with a 5 s run: seen final within 1.5 s of the floor',
			figure: `${round(over / 1000, 2)} s after`,
			met: over <= 1500,
		});
		goals.push({
			goal: `one document with a 5 s run: at most ${ONE_DOCUMENT_MAX_REQUESTS} API requests`,
			figure: `${round(requests, 2)}`,
			met: requests <= ONE_DOCUMENT_MAX_REQUESTS,
		});
		goals.push({
			goal: `one document with a 5 s run: output read at worst ${ONE_DOCUMENT_MAX_LATE_SHARE * 100}% of the run after it completed`,
			figure: `${round(worstLate * 100, 1)}%`,
			met: worstLate <= ONE_DOCUMENT_MAX_LATE_SHARE,
		});
	});
});

// ---- files ----------------------------------------------------------------------------------

(ROWS === 'all' ? describe : describe.skip)('files', () => {
	test('uploading 200 MB in filesystem mode, and reading a 10 MB binary output', async () => {
		await useBinaryMode('filesystem');
		const dir = mkdtempSync(join(tmpdir(), 'dw-bench-'));
		const file = join(dir, 'big.pdf');
		const size = 200 * MB;
		const fd = openSync(file, 'w');
		writeSync(fd, Buffer.from('%PDF-1.4\n'));
		const chunk = Buffer.alloc(MB, 7);
		for (let written = 9; written < size; written += chunk.length)
			writeSync(fd, chunk, 0, Math.min(chunk.length, size - written));
		closeSync(fd);
		const upload: Sampled<number>[] = [];
		const output: Sampled<number>[] = [];
		try {
			for (let repeat = 0; repeat < REPEATS; repeat++) {
				await sb.control.reset();
				await freshKey();
				// The input node stores the file through n8n's binary helpers from a stream, as a
				// Read Files node does in filesystem mode, so the file is never held in memory before the upload.
				upload.push(
					await sampled(async () => {
						const result = expectOk(
							await runActionNode({
								parameters: {
									resource: 'workflow',
									operation: 'trigger',
									workflowId: sb.defaultWorkflowId,
									binaryPropertyName: 'data',
									options: {},
								},
								items: [
									{
										json: {},
										binary: {
											data: {
												data: createReadStream(file) as unknown as Buffer,
												fileName: 'big.pdf',
												mimeType: 'application/pdf',
											},
										},
									},
								],
								credentials,
							}),
						);
						const doc = await sb.control.getDocument(result.items[0].json.documentId as string);
						if (doc.sizeBytes !== size) throw new Error(`uploaded ${doc.sizeBytes} bytes`);
						return doc.sizeBytes;
					}),
				);

				await sb.control.updateWorkflow(sb.defaultWorkflowId, {
					script: [{ status: 'completed' }],
					outputs: [
						{
							nodeId: 'scan',
							kind: 'binary',
							contentType: 'application/pdf',
							filename: 'scan.pdf',
							sizeBytes: 10 * MB,
						},
					],
				});
				const submitted = expectOk(
					await runActionNode({
						parameters: {
							resource: 'workflow',
							operation: 'trigger',
							workflowId: sb.defaultWorkflowId,
							binaryPropertyName: 'data',
							options: {},
						},
						items: items(1),
						credentials,
					}),
				);
				const runId = submitted.items[0].json.runId as string;
				await pauseMs(200);
				output.push(
					await sampled(async () => {
						const result = expectOk(
							await runActionNode({
								parameters: {
									resource: 'run',
									operation: 'getOutput',
									runId,
									binaryPropertyName: 'data',
								},
								credentials,
							}),
						);
						const content = await Container.get(BinaryDataService).getAsBuffer(
							result.items[0].binary!.data,
						);
						if (content.length !== 10 * MB) throw new Error(`output of ${content.length} bytes`);
						return content.length;
					}),
				);
			}
		} finally {
			rmSync(dir, { recursive: true, force: true });
			await useBinaryMode('default');
		}
		const mb = (values: number[]) => `${round(median(values))} MB`;
		sections.push({
			heading: 'Files (filesystem binary mode)',
			text: `A 200 MB upload, the file stored by n8n's binary helpers from a stream (as the Read Files node does in filesystem mode) and streamed by the node to the API as multipart; and a 10 MB binary output read with Run → Get Output (the API returns outputs inline as base64 JSON, so reading one holds the JSON text, its string and the decoded bytes at once). Median of ${REPEATS}; RSS does not shrink once grown, so heap + external (Buffers) growth is given too.`,
			table: {
				columns: ['measure', '200 MB upload', '10 MB output read'],
				rows: [
					[
						'time',
						`${round(median(upload.map((r) => r.ms)) / 1000, 2)} s`,
						`${round(median(output.map((r) => r.ms)) / 1000, 2)} s`,
					],
					[
						'RSS growth',
						mb(upload.map((r) => r.rssGrowthMb)),
						mb(output.map((r) => r.rssGrowthMb)),
					],
					[
						'heap + external growth',
						mb(upload.map((r) => r.allocGrowthMb)),
						mb(output.map((r) => r.allocGrowthMb)),
					],
					['peak RSS', mb(upload.map((r) => r.peakRssMb)), mb(output.map((r) => r.peakRssMb))],
				],
			},
		});
		const growth = Math.max(
			median(upload.map((r) => r.rssGrowthMb)),
			median(upload.map((r) => r.allocGrowthMb)),
		);
		goals.push({
			goal: '200 MB upload (filesystem mode): memory grows far less than the file (≤ 20% of it, 40 MB; the larger of RSS and heap+external growth)',
			figure: `${round(growth)} MB`,
			met: growth <= 40,
		});
	});
});
