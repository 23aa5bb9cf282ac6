/**
 * The bench report's charts (scripts/bench/charts.js, drawn by scripts/bench/report.js): a
 * results folder rendered into a temporary docs folder gives one well-formed SVG a chart with
 * data, its series named and its points where their values put them, linked from the markdown
 * under its table; a chart without a measured series gives neither file nor link. And the
 * per-run-length figures the real-n8n benchmark charts (measure.js byRunLength).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Box {
	left: number;
	right: number;
	top: number;
	bottom: number;
}
const { PLOT, drawable, renderChart } = require('../../scripts/bench/charts') as {
	PLOT: Box;
	drawable(chart: unknown): boolean;
	renderChart(chart: unknown): string;
};
const { byRunLength } = require('../../scripts/bench/measure') as {
	byRunLength(
		entries: Array<{ method: string; path: string; status: number; time: string }>,
		runs: Array<{ id: string; startedOn: string; completedOn: string }>,
		groups?: number,
	): Array<{
		lengthMs: number;
		documents: number;
		requestsPerDocument: number;
		unread: number;
		lateMedianShare: number;
		late90Share: number;
		lateWorstShare: number;
	}>;
};

const REPORT = join(__dirname, '..', '..', 'scripts', 'bench', 'report.js');

/** Tags open and close in order, attributes are quoted, and text holds no bare `<` or `&`. */
function wellFormed(xml: string): string | null {
	const stack: string[] = [];
	const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
	let last = 0;
	for (let match = tag.exec(xml); match; match = tag.exec(xml)) {
		const text = xml.slice(last, match.index);
		if (/[<>]|&(?!(amp|lt|gt|quot|apos|#\d+);)/.test(text)) return `bad text: ${text}`;
		last = tag.lastIndex;
		const [, closing, name, , selfClosing] = match;
		if (closing) {
			if (stack.pop() !== name) return `</${name}> closes nothing open`;
		} else if (!selfClosing) stack.push(name);
	}
	if (xml.slice(last).trim() !== '') return `text after the last tag: ${xml.slice(last)}`;
	if (stack.length > 0) return `unclosed: ${stack.join(', ')}`;
	return null;
}

/** Where charts.js puts a value on a linear or logarithmic axis over `domain`, in pixels (one decimal). */
const at = (
	value: number,
	[from, to]: [number, number],
	low: number,
	high: number,
	log = false,
) => {
	const f = log
		? (Math.log10(value) - Math.log10(from)) / (Math.log10(to) - Math.log10(from))
		: (value - from) / (to - from);
	return Math.round((low + f * (high - low)) * 10) / 10;
};
const xAt = (value: number, domain: [number, number], log = false) =>
	at(value, domain, PLOT.left, PLOT.right, log);
const yAt = (value: number, domain: [number, number]) => at(value, domain, PLOT.bottom, PLOT.top);

const section = (heading: string, charts: unknown[]) => ({
	heading,
	table: { columns: ['figure', 'value'], rows: [['a', '1']] },
	charts,
});

/** A results folder as the benchmarks write it, with charts of known values and two with nothing measured. */
const RESULTS = [
	{
		suite: 'benchmark',
		title: 'Waiting on batches',
		goals: [{ goal: 'a goal', figure: '1', met: true }],
		sections: [
			section('Waiting on a batch', [
				{
					id: 'requests-by-run-length',
					title: 'Requests per document against run length',
					caption: 'Floor: 3 requests a document, an upload, a read of its run and its output.',
					x: { label: 'run length (s)', scale: 'log' },
					y: { label: 'requests per document' },
					series: [
						{
							label: 'Submit & wait',
							points: [
								[5, 3.5],
								[60, 3.25],
								[300, 3],
							],
						},
						{
							label: 'Run → Wait',
							points: [
								[5, 3.75],
								[60, Number.NaN],
							],
						},
						{ label: 'floor: 3 <requests>', reference: true, y: 3 },
					],
				},
				{
					id: 'lateness-by-run-length',
					title: 'Output read late against run length',
					x: { label: 'run length (s)', scale: 'log' },
					y: { label: 'share of the run', format: 'percent' },
					// The way's figures are missing (e.g. the rows did not run): only the floor.
					series: [
						{ label: 'Submit & wait: median', points: [] },
						{ label: 'floor: 0', reference: true, y: 0 },
					],
				},
			]),
		],
	},
	{
		suite: 'n8n-executions',
		title: 'Real n8n',
		goals: [],
		sections: [
			section('Steady stream', [
				{
					id: 'stream-lateness-by-rate',
					title: 'Stream: output read late against arrival rate',
					x: { label: 'arrivals a second' },
					y: { label: 'share of the run', format: 'percent' },
					series: [
						{
							label: 'median',
							points: [
								[9, 0.1],
								[9.5, 0.15],
							],
						},
						{
							label: 'worst',
							dashed: true,
							points: [
								[9, 0.5],
								[9.5, 0.75],
							],
						},
						{ label: 'floor: 0', reference: true, y: 0 },
						{ label: 'the most any waiting can carry: 10 a second', reference: true, x: 10 },
					],
				},
				{
					id: 'stream-requests-by-rate',
					title: 'Stream: requests per document against arrival rate',
					x: { label: 'arrivals a second' },
					y: { label: 'requests per document' },
					series: [{ label: 'node', points: [[9, Number.NaN]] }],
				},
			]),
		],
	},
];

let dir: string;
let out: string;
let markdown: string;
let report: ReturnType<typeof spawnSync>;
const chartsDir = () => join(dir, 'docs', 'images', 'bench', 'benchmarks-test');
const chart = (name: string) => join(chartsDir(), name);
const svg = (name: string) => readFileSync(chart(name), 'utf8');

describe('the bench report draws its charts beside the tables', () => {
	beforeAll(() => {
		dir = mkdtempSync(join(tmpdir(), 'dw-bench-charts-'));
		mkdirSync(join(dir, 'results'));
		for (const suite of RESULTS)
			writeFileSync(join(dir, 'results', `${suite.suite}.json`), JSON.stringify(suite));
		// A chart an earlier report drew, whose data the results no longer hold.
		mkdirSync(chartsDir(), { recursive: true });
		writeFileSync(chart('benchmark-stale.svg'), '<svg/>');
		out = join(dir, 'docs', 'benchmarks-test.md');
		report = spawnSync('node', [REPORT, '--results', join(dir, 'results'), '--out', out], {
			encoding: 'utf8',
		});
		markdown = existsSync(out) ? readFileSync(out, 'utf8') : '';
	});
	afterAll(() => rmSync(dir, { recursive: true, force: true }));

	test('the report is written, one SVG a chart with data, and none left from before', () => {
		expect(report.stderr).toBe('');
		expect(report.status).toBe(0);
		expect(existsSync(chart('benchmark-requests-by-run-length.svg'))).toBe(true);
		expect(existsSync(chart('n8n-executions-stream-lateness-by-rate.svg'))).toBe(true);
		expect(existsSync(chart('benchmark-stale.svg'))).toBe(false);
	});

	test('each SVG is well-formed, on a white background, with its title and labels', () => {
		for (const name of [
			'benchmark-requests-by-run-length.svg',
			'n8n-executions-stream-lateness-by-rate.svg',
		]) {
			const text = svg(name);
			expect(wellFormed(text)).toBeNull();
			expect(text).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
			expect(text).toContain('fill="#ffffff"');
		}
		const requests = svg('benchmark-requests-by-run-length.svg');
		for (const label of [
			'Requests per document against run length',
			'Submit &amp; wait',
			'Run → Wait',
			'floor: 3 &lt;requests&gt;',
			'run length (s)',
			'requests per document',
		])
			expect(requests).toContain(`>${label}<`);
		const stream = svg('n8n-executions-stream-lateness-by-rate.svg');
		for (const label of [
			'median',
			'worst',
			'floor: 0',
			'the most any waiting can carry: 10 a second',
		])
			expect(stream).toContain(`>${label}<`);
		// Percent ticks on the share axis.
		expect(stream).toContain('>80%<');
	});

	test('points sit where their values put them (log and linear x, y from 0)', () => {
		// x: 5 to 300 on whole decades, 1 to 1000; y: 0 to 4 (3.75 at most, steps of 1).
		const requests = svg('benchmark-requests-by-run-length.svg');
		for (const [x, y] of [
			[5, 3.5],
			[60, 3.25],
			[300, 3],
			[5, 3.75],
		])
			expect(requests).toContain(`cx="${xAt(x, [1, 1000], true)}" cy="${yAt(y, [0, 4])}"`);
		// The point that could not be measured is left out: Run → Wait has one point, so no line.
		expect(requests.match(/class="point"/g)).toHaveLength(4);
		expect(requests.match(/class="series"/g)).toHaveLength(1);
		// The floor: a horizontal line at 3 across the plot.
		expect(requests).toContain(
			`x1="${PLOT.left}" y1="${yAt(3, [0, 4])}" x2="${PLOT.right}" y2="${yAt(3, [0, 4])}"`,
		);

		// x: 9 to 10 (the vertical reference at 10 included), steps of 0.2; y: 0 to 0.8 by 0.2.
		const stream = svg('n8n-executions-stream-lateness-by-rate.svg');
		expect(stream).toContain(`cx="${xAt(9.5, [9, 10])}" cy="${yAt(0.15, [0, 0.8])}"`);
		expect(stream).toContain(
			`<polyline class="series" points="${xAt(9, [9, 10])},${yAt(0.5, [0, 0.8])} ${xAt(9.5, [9, 10])},${yAt(0.75, [0, 0.8])}"`,
		);
		expect(stream).toContain(
			`x1="${PLOT.right}" y1="${PLOT.bottom}" x2="${PLOT.right}" y2="${PLOT.top}"`,
		);
	});

	test('the markdown links each drawn chart under its table, with its caption', () => {
		const link =
			'![Requests per document against run length](images/bench/benchmarks-test/benchmark-requests-by-run-length.svg)';
		expect(markdown).toContain(link);
		expect(markdown).toContain(
			'*Floor: 3 requests a document, an upload, a read of its run and its output.*',
		);
		expect(markdown.indexOf(link)).toBeGreaterThan(markdown.indexOf('### Waiting on a batch'));
		expect(markdown.indexOf(link)).toBeGreaterThan(markdown.indexOf('| a | 1 |'));
		expect(markdown).toContain(
			'](images/bench/benchmarks-test/n8n-executions-stream-lateness-by-rate.svg)',
		);
	});

	test('a chart whose measured series are missing draws no file and no link', () => {
		expect(existsSync(chart('benchmark-lateness-by-run-length.svg'))).toBe(false);
		expect(existsSync(chart('n8n-executions-stream-requests-by-rate.svg'))).toBe(false);
		expect(markdown).not.toContain('lateness-by-run-length');
		expect(markdown).not.toContain('stream-requests-by-rate');
		expect(drawable({ series: [{ label: 'floor', reference: true, y: 3 }] })).toBe(false);
		expect(drawable({ series: [] })).toBe(false);
		expect(drawable(undefined)).toBe(false);
	});

	test('--clean with --out removes that output’s charts, and leaves other outputs’ alone', () => {
		const other = join(dir, 'docs', 'images', 'bench', 'other', 'kept.svg');
		mkdirSync(join(other, '..'), { recursive: true });
		writeFileSync(other, '<svg/>');
		const clean = spawnSync(
			'node',
			[REPORT, '--clean', '--results', join(dir, 'results'), '--out', out],
			{
				encoding: 'utf8',
			},
		);
		expect(clean.status).toBe(0);
		expect(existsSync(chart('benchmark-requests-by-run-length.svg'))).toBe(false);
		expect(existsSync(chartsDir())).toBe(false);
		expect(existsSync(other)).toBe(true);
	});
});

describe('charts.js alone', () => {
	test('one point draws a marker and no line; a single x value still gets an axis', () => {
		const text = renderChart({
			title: 'one',
			x: { label: 'x' },
			y: { label: 'y' },
			series: [{ label: 'only', points: [[20, 2]] }],
		});
		expect(wellFormed(text)).toBeNull();
		expect(text.match(/class="point"/g)).toHaveLength(1);
		expect(text).not.toContain('class="series"');
		expect(text).not.toMatch(/NaN|Infinity/);
	});
});

describe('byRunLength: per-run-length figures of one way', () => {
	const t = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString();
	// Four runs: 10 s, 20 s, 40 s, 80 s, all started at 0; read 1, 2, 4 and (never) after their end.
	const runs = [10, 20, 40, 80].map((length, i) => ({
		id: `r${i}`,
		startedOn: t(0),
		completedOn: t(length),
	}));
	const entries = [
		...runs.map((_, i) => ({ method: 'POST', path: '/workflows/w/runs', status: 201, time: t(0) })),
		{ method: 'GET', path: '/events?after=0', status: 200, time: t(5) },
		{ method: 'GET', path: '/events?after=1', status: 200, time: t(15) },
		{ method: 'GET', path: '/runs/r0', status: 200, time: t(11) },
		{ method: 'GET', path: '/runs/r0/output', status: 200, time: t(11) },
		{ method: 'GET', path: '/runs/r1', status: 429, time: t(21) },
		{ method: 'GET', path: '/runs/r1', status: 200, time: t(22) },
		{ method: 'GET', path: '/runs/r1/output', status: 200, time: t(22) },
		{ method: 'GET', path: '/runs/r2', status: 200, time: t(44) },
		{ method: 'GET', path: '/runs/r2/output', status: 200, time: t(44) },
		{ method: 'GET', path: '/runs/r3', status: 200, time: t(81) },
	];

	test('groups by length; a run’s own reads plus an equal share of the rest; lateness as a share', () => {
		const groups = byRunLength(entries, runs, 2);
		expect(groups.map((g) => [g.lengthMs, g.documents])).toEqual([
			[15_000, 2],
			[60_000, 2],
		]);
		// Shared: 4 uploads + 2 event reads over 4 runs = 1.5 each. Own: 2, 3, 2, 1.
		expect(groups.map((g) => g.requestsPerDocument)).toEqual([4, 3]);
		// Every request counted once over the groups.
		expect(groups.reduce((sum, g) => sum + g.requestsPerDocument * g.documents, 0)).toBe(
			entries.length,
		);
		expect(groups[0]).toMatchObject({ unread: 0, lateMedianShare: 0.1, lateWorstShare: 0.1 });
		// r2 read 4 s after a 40 s run (0.1), r3 never: no worst, and 90% of 2 not reached.
		expect(groups[1]).toMatchObject({
			unread: 1,
			lateMedianShare: 0.1,
			lateWorstShare: Infinity,
			late90Share: Infinity,
		});
	});

	test('fewer runs than groups: one group a run', () => {
		expect(byRunLength(entries, runs.slice(0, 1), 6)).toHaveLength(1);
		expect(byRunLength([], [], 6)).toEqual([]);
	});
});
