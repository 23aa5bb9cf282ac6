/**
 * The benchmark: runs against the in-process sandbox through the n8n-core harness (the same
 * one the tests use) and writes its figures to docs/benchmarks.md.
 *
 * Run with `npx jest --config bench/jest.bench.config.js` (the `bench` script). Every figure is
 * the median of BENCH_REPEATS runs (default 3). The one-at-a-time way is measured on a sample of
 * BENCH_DIY_SAMPLE documents (default 10) and extrapolated linearly to 200.
 */
import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import { execSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, openSync, closeSync, readFileSync, writeSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, tmpdir, type as osType, release } from 'node:os';
import { join } from 'node:path';

import { startSandbox } from '../sandbox/src';
import type { EventInput, Sandbox } from '../sandbox/src';
import type { DocumentWorkflowCredentials, InputItem, NodeRunResult } from '../test/harness/n8n';
import { runActionNode, useBinaryMode } from '../test/harness/n8n';
import { MINUTE, TriggerHost } from '../test/harness/triggerHost';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const BATCH = 200;
const DIY_SAMPLE = Number(process.env.BENCH_DIY_SAMPLE ?? 10);
const RUN_MS = 3000;
/** The node's default first check interval; the do-it-yourself loop polls at this fixed interval. */
const POLL_MS = 1000;

let sb: Sandbox;
let credentials: DocumentWorkflowCredentials;

beforeAll(async () => {
	sb = await startSandbox();
	credentials = { baseUrl: sb.baseUrl, apiKey: sb.apiKey };
});
afterAll(async () => {
	await sb.stop();
});

// ---- measuring ------------------------------------------------------------------------------

const MB = 1024 * 1024;

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

const median = (values: number[]): number => {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function apiRequestCount(): Promise<number> {
	return (await sb.control.getRequests({ origin: 'api' })).length;
}

function expectOk(result: NodeRunResult): NodeRunResult {
	if (result.error) throw new Error(`node failed: ${result.error.message}`);
	return result;
}

const items = (count: number, offset = 0): InputItem[] =>
	Array.from({ length: count }, (_, i) => ({
		json: { index: offset + i },
		binary: { data: { data: Buffer.from(`%PDF-1.4\n% small document ${offset + i}\n%%EOF\n`), fileName: `doc-${offset + i}.pdf`, mimeType: 'application/pdf' } },
	}));

async function resetForBatch(): Promise<void> {
	await sb.control.reset();
	await sb.control.updateWorkflow(sb.defaultWorkflowId, {
		script: [{ status: 'running', ms: RUN_MS }, { status: 'completed' }],
		outputs: [{ nodeId: 'result', kind: 'json', contentType: 'application/json', filename: 'result.json', value: { total: 42, currency: 'EUR' } }],
	});
}

/** The slowest run of the batch, from its creation to completion, on the sandbox clock. */
async function slowestRunMs(): Promise<number> {
	const runs = await sb.control.listRuns({ workflowId: sb.defaultWorkflowId });
	const documents = new Map((await sb.control.listDocuments({ workflowId: sb.defaultWorkflowId })).map((d) => [d.id, d]));
	let slowest = 0;
	for (const run of runs) {
		const created = Date.parse(String(documents.get(run.documentId)?.createdOn ?? run.startedOn));
		const done = Date.parse(String(run.completedOn));
		if (Number.isFinite(created) && Number.isFinite(done)) slowest = Math.max(slowest, done - created);
	}
	return slowest;
}

// ---- results --------------------------------------------------------------------------------

const results: Record<string, unknown> = {};
const goals: Array<{ goal: string; figure: string; met: boolean }> = [];

// ---- 3. files -------------------------------------------------------------------------------

describe('files', () => {
	test('uploading 200 MB in filesystem mode, and reading a 10 MB binary output', async () => {
		await useBinaryMode('filesystem');
		const dir = mkdtempSync(join(tmpdir(), 'dw-bench-'));
		const file = join(dir, 'big.pdf');
		const size = 200 * MB;
		const fd = openSync(file, 'w');
		writeSync(fd, Buffer.from('%PDF-1.4\n'));
		const chunk = Buffer.alloc(MB, 7);
		for (let written = 9; written < size; written += chunk.length) writeSync(fd, chunk, 0, Math.min(chunk.length, size - written));
		closeSync(fd);
		const upload: Sampled<number>[] = [];
		const output: Sampled<number>[] = [];
		try {
			for (let repeat = 0; repeat < REPEATS; repeat++) {
				await sb.control.reset();
				// The input node stores the file through n8n's binary helpers from a stream, as a
				// Read Files node does in filesystem mode, so the file is never held in memory before the upload.
				upload.push(
					await sampled(async () => {
						const result = expectOk(
							await runActionNode({
								parameters: { resource: 'workflow', operation: 'trigger', workflowId: sb.defaultWorkflowId, binaryPropertyName: 'data', options: {} },
								items: [{ json: {}, binary: { data: { data: createReadStream(file) as unknown as Buffer, fileName: 'big.pdf', mimeType: 'application/pdf' } } }],
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
					outputs: [{ nodeId: 'scan', kind: 'binary', contentType: 'application/pdf', filename: 'scan.pdf', sizeBytes: 10 * MB }],
				});
				const submitted = expectOk(
					await runActionNode({
						parameters: { resource: 'workflow', operation: 'trigger', workflowId: sb.defaultWorkflowId, binaryPropertyName: 'data', options: {} },
						items: items(1),
						credentials,
					}),
				);
				const runId = submitted.items[0].json.runId as string;
				await sleep(200);
				output.push(
					await sampled(async () => {
						const result = expectOk(await runActionNode({ parameters: { resource: 'run', operation: 'getOutput', runId, binaryPropertyName: 'data' }, credentials }));
						const content = await Container.get(BinaryDataService).getAsBuffer(result.items[0].binary!.data);
						if (content.length !== 10 * MB) throw new Error(`output of ${content.length} bytes`);
						return content.length;
					}),
				);
			}
		} finally {
			rmSync(dir, { recursive: true, force: true });
			await useBinaryMode('default');
		}
		results.files = {
			uploadMs: median(upload.map((r) => r.ms)),
			uploadRssGrowth: median(upload.map((r) => r.rssGrowthMb)),
			uploadPeakRss: median(upload.map((r) => r.peakRssMb)),
			uploadPeakHeap: median(upload.map((r) => r.peakHeapMb)),
			uploadAllocGrowth: median(upload.map((r) => r.allocGrowthMb)),
			outputAllocGrowth: median(output.map((r) => r.allocGrowthMb)),
			outputMs: median(output.map((r) => r.ms)),
			outputRssGrowth: median(output.map((r) => r.rssGrowthMb)),
			outputPeakRss: median(output.map((r) => r.peakRssMb)),
		};
		const growth = Math.max(median(upload.map((r) => r.rssGrowthMb)), median(upload.map((r) => r.allocGrowthMb)));
		goals.push({ goal: '200 MB upload (filesystem mode): memory grows far less than the file (≤ 20% of it, 40 MB; the larger of RSS and heap+external growth)', figure: `${round(growth)} MB`, met: growth <= 40 });
	});
});

// ---- 1. batch submit-and-wait ---------------------------------------------------------------

describe('batch submit-and-wait', () => {
	test('this node, the one-at-a-time way, and the floor', async () => {
		const node = { default: [] as Sampled<number>[], withOutput: [] as Sampled<number>[] };
		const nodeRequests = { default: [] as number[], withOutput: [] as number[] };
		const floors: number[] = [];
		for (let repeat = 0; repeat < REPEATS; repeat++) {
			for (const variant of ['default', 'withOutput'] as const) {
				await resetForBatch();
				const run = await sampled(async () => {
					const result = expectOk(
						await runActionNode({
							parameters: {
								resource: 'workflow',
								operation: 'trigger',
								workflowId: sb.defaultWorkflowId,
								binaryPropertyName: 'data',
								waitForCompletion: true,
								options: variant === 'withOutput' ? { includeOutput: true } : {},
							},
							items: items(BATCH),
							credentials,
						}),
					);
					if (result.items.length !== BATCH || result.items.some((item) => item.json.status !== 'completed')) throw new Error('not all completed');
					return result.items.length;
				});
				node[variant].push(run);
				nodeRequests[variant].push((await apiRequestCount()) / BATCH);
				if (variant === 'default') floors.push((await slowestRunMs()) + POLL_MS);
			}
		}

		// The do-it-yourself way: what an HTTP Request node plus a Wait/IF loop does, one item at
		// a time: submit, wait one interval, read the run until it is final, then read the output.
		// Each step is one execution of this package's own operations through the same harness
		// (workflow:trigger without waiting, run:get, run:getOutput), at a fixed 1 s interval.
		const diy: Sampled<number>[] = [];
		const diyRequests: number[] = [];
		for (let repeat = 0; repeat < REPEATS; repeat++) {
			await resetForBatch();
			diy.push(
				await sampled(async () => {
					for (const item of items(DIY_SAMPLE)) {
						const submitted = expectOk(
							await runActionNode({
								parameters: { resource: 'workflow', operation: 'trigger', workflowId: sb.defaultWorkflowId, binaryPropertyName: 'data', options: {} },
								items: [item],
								credentials,
							}),
						);
						const runId = submitted.items[0].json.runId as string;
						for (;;) {
							await sleep(POLL_MS);
							const got = await runActionNode({ parameters: { resource: 'run', operation: 'get', runId }, credentials });
							if (got.error && got.error.httpCode === '404') continue;
							const status = expectOk(got).items[0].json.status;
							if (status === 'completed' || status === 'failed' || status === 'cancelled') break;
						}
						expectOk(await runActionNode({ parameters: { resource: 'run', operation: 'getOutput', runId, binaryPropertyName: 'data' }, credentials }));
					}
					return DIY_SAMPLE;
				}),
			);
			diyRequests.push((await apiRequestCount()) / DIY_SAMPLE);
		}

		const floorMs = median(floors);
		const nodeMs = median(node.default.map((r) => r.ms));
		const nodeOutMs = median(node.withOutput.map((r) => r.ms));
		const diySampleMs = median(diy.map((r) => r.ms));
		const diyMs = (diySampleMs / DIY_SAMPLE) * BATCH;
		results.batch = {
			floorMs,
			nodeMs,
			nodeOutMs,
			diySampleMs,
			diyMs,
			nodeRequests: median(nodeRequests.default),
			nodeOutRequests: median(nodeRequests.withOutput),
			diyRequests: median(diyRequests),
			nodePeakRss: median(node.default.map((r) => r.peakRssMb)),
			nodeRssGrowth: median(node.default.map((r) => r.rssGrowthMb)),
			nodePeakHeap: median(node.default.map((r) => r.peakHeapMb)),
			nodeOutPeakRss: median(node.withOutput.map((r) => r.peakRssMb)),
			nodeOutRssGrowth: median(node.withOutput.map((r) => r.rssGrowthMb)),
			diyPeakRss: median(diy.map((r) => r.peakRssMb)),
			diyRssGrowth: median(diy.map((r) => r.rssGrowthMb)),
			raw: { node: node.default.map((r) => r.ms), nodeOut: node.withOutput.map((r) => r.ms), diySample: diy.map((r) => r.ms), floors },
		};
		goals.push({ goal: 'batch within 1.5× of the floor (default settings)', figure: `${round(nodeMs / floorMs, 2)}×`, met: nodeMs / floorMs <= 1.5 });
		goals.push({ goal: 'batch within 1.5× of the floor (with Include Output)', figure: `${round(nodeOutMs / floorMs, 2)}×`, met: nodeOutMs / floorMs <= 1.5 });
		goals.push({ goal: 'at most 5 API requests per document (default settings)', figure: `${round(median(nodeRequests.default), 2)}`, met: median(nodeRequests.default) <= 5 });
		goals.push({ goal: 'at most 5 API requests per document (with Include Output)', figure: `${round(median(nodeRequests.withOutput), 2)}`, met: median(nodeRequests.withOutput) <= 5 });
	});
});

// ---- 2. trigger -----------------------------------------------------------------------------

describe('trigger', () => {
	test('idle poll, a poll with 1,000 new events, first activation over 50,000, static data after a long run', async () => {
		const idle: number[] = [];
		const thousandRequests: number[] = [];
		const thousandMs: number[] = [];
		const activation: number[] = [];
		const activationMs: number[] = [];
		for (let repeat = 0; repeat < REPEATS; repeat++) {
			// First activation over a history of 50,000 events.
			await sb.control.reset();
			const now = (await sb.control.getClock()).nowMs;
			const history: EventInput[] = Array.from({ length: 50_000 }, (_, i) => ({ type: 'run.completed', createdOn: new Date(now - 6 * 24 * 60 * MINUTE + i * 10_000).toISOString(), data: { i } }));
			for (let i = 0; i < history.length; i += 10_000) await sb.control.createEvents(history.slice(i, i + 10_000));
			const host = new TriggerHost(sb, {});
			await sb.control.clearRequests();
			let started = Date.now();
			const activated = await host.activate();
			if (activated.error) throw activated.error;
			activationMs.push(Date.now() - started);
			activation.push((await sb.control.getRequests({ pathPrefix: '/events' })).length);

			// Idle polls.
			await sb.control.advanceClock(MINUTE);
			await host.poll();
			await sb.control.clearRequests();
			for (let i = 0; i < 5; i++) {
				await sb.control.advanceClock(MINUTE);
				await host.poll();
			}
			idle.push((await sb.control.getRequests({ pathPrefix: '/events' })).length / 5);

			// A poll with 1,000 new events.
			const at = (await sb.control.getClock()).nowMs;
			await sb.control.createEvents(Array.from({ length: 1000 }, (_, i) => ({ type: 'run.completed', createdOn: new Date(at + i * 50).toISOString(), data: { n: i } })));
			await sb.control.advanceClock(MINUTE);
			await sb.control.clearRequests();
			const before = host.delivered.length;
			started = Date.now();
			await host.poll();
			thousandMs.push(Date.now() - started);
			if (host.delivered.length - before !== 1000) throw new Error(`expected 1000 events, got ${host.delivered.length - before}`);
			thousandRequests.push((await sb.control.getRequests({ pathPrefix: '/events' })).length);
		}

		// A long run: 24 hours of polls once a minute, 100 events a minute.
		await sb.control.reset();
		const host = new TriggerHost(sb, {});
		await host.activate();
		let maxBytes = 0;
		for (let minute = 0; minute < 24 * 60; minute++) {
			const at = (await sb.control.getClock()).nowMs;
			await sb.control.createEvents(Array.from({ length: 100 }, (_, i) => ({ type: 'run.completed', createdOn: new Date(at + i * 600).toISOString(), data: { minute, i } })));
			await sb.control.advanceClock(MINUTE);
			await host.poll();
			maxBytes = Math.max(maxBytes, host.memory().bytes);
		}
		results.trigger = {
			idle: median(idle),
			thousandRequests: median(thousandRequests),
			thousandMs: median(thousandMs),
			activation: median(activation),
			activationMs: median(activationMs),
			longRunEvents: host.delivered.length,
			staticBytes: host.memory().bytes,
			staticIds: host.memory().ids,
			staticMaxBytes: maxBytes,
		};
		goals.push({ goal: 'exactly 1 request per idle poll', figure: `${median(idle)}`, met: median(idle) === 1 });
		goals.push({ goal: 'first activation over 50,000 events: at most 2 requests', figure: `${median(activation)}`, met: median(activation) <= 2 });
	});
});

// ---- the report -----------------------------------------------------------------------------

afterAll(() => {
	const b = results.batch as Record<string, number>;
	const t = results.trigger as Record<string, number>;
	const f = results.files as Record<string, number>;
	if (!b || !t || !f) {
		// A partial run (jest -t) prints its figures but leaves docs/benchmarks.md alone.
		process.stdout.write(`partial benchmark run: ${JSON.stringify({ results, goals }, null, 1)}\n`);
		return;
	}
	const s = (ms: number) => `${round(ms / 1000, 2)} s`;
	const version = (name: string) => (require(`${name}/package.json`) as { version: string }).version;
	let git = '';
	try {
		git = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
	} catch {
		git = 'unknown';
	}
	const lines = [
		'# Benchmarks',
		'',
		'Written by `npm run bench` (`bench/benchmark.bench.ts`); do not edit by hand. Everything runs in one',
		'process: the sandbox (the local fake of the API) and the nodes, executed by n8n-core through the',
		'test harness (`test/harness/n8n.ts`), over real HTTP on 127.0.0.1. Each figure is the median of',
		`${REPEATS} runs. Memory is the process's RSS (and V8 heap) sampled every 10 ms; "growth" is the`,
		'peak minus the RSS just before the measured step. The sandbox shares the process, so its own',
		'memory is included.',
		'',
		`- Date: ${new Date().toISOString()}`,
		`- Machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${round(totalmem() / 1024 ** 3)} GB RAM, ${osType()} ${release()}`,
		`- Node.js ${process.version}; n8n-core ${version('n8n-core')}, n8n-workflow ${version('n8n-workflow')}; package at commit ${git} (with uncommitted changes of this work)`,
		'',
		'## Goals',
		'',
		'| goal | figure | result |',
		'|---|---|---|',
		...goals.map((g) => `| ${g.goal} | ${g.figure} | ${g.met ? 'met' : '**missed**'} |`),
		'',
		`## 1. Batch submit-and-wait: ${BATCH} small documents, each run takes ${RUN_MS / 1000} s`,
		'',
		'| way | wall time | × floor | × one-at-a-time | API requests per document | peak RSS (growth) |',
		'|---|---|---|---|---|---|',
		`| floor: slowest single run + one poll interval (${POLL_MS / 1000} s) | ${s(b.floorMs)} | 1 | ${round(b.floorMs / b.diyMs, 3)} | – | – |`,
		`| this node, default settings (no output) | ${s(b.nodeMs)} | ${round(b.nodeMs / b.floorMs, 2)} | ${round(b.nodeMs / b.diyMs, 3)} | ${round(b.nodeRequests, 2)} | ${round(b.nodePeakRss)} MB (+${round(b.nodeRssGrowth)} MB) |`,
		`| this node, default settings + Include Output | ${s(b.nodeOutMs)} | ${round(b.nodeOutMs / b.floorMs, 2)} | ${round(b.nodeOutMs / b.diyMs, 3)} | ${round(b.nodeOutRequests, 2)} | ${round(b.nodeOutPeakRss)} MB (+${round(b.nodeOutRssGrowth)} MB) |`,
		`| one at a time (extrapolated from ${DIY_SAMPLE} documents: ${s(b.diySampleMs)}) | ${s(b.diyMs)} | ${round(b.diyMs / b.floorMs, 1)} | 1 | ${round(b.diyRequests, 2)} | ${round(b.diyPeakRss)} MB (+${round(b.diyRssGrowth)} MB) |`,
		'',
		`- Runs: the sandbox script \`running\` for ${RUN_MS} ms, then \`completed\`; each document is a tiny PDF.`,
		'- This node: Workflow → Submit Document with Wait for Completion on and every other option at its',
		'  default (10 concurrent requests, first check 1 s after submission, then ×1.5 up to 20 s). The second',
		'  row only adds Include Output, since the one-at-a-time way reads the output too.',
		`- One at a time: what an HTTP Request node with a Wait/IF loop does. For each document in turn: submit`,
		`  it (this package's Submit Document without waiting), wait ${POLL_MS / 1000} s, read the run (Run → Get) until its status`,
		'  is final, then read its output (Run → Get Output); each step is its own n8n-core execution through the',
		`  same harness. It was measured on ${DIY_SAMPLE} documents per run and extrapolated linearly to ${BATCH}`,
		'  (its time is a sum of identical per-document loops, so it grows linearly).',
		'- Floor: no client can finish before the slowest run has finished and been seen by one poll.',
		`  Measured slowest run (document received → run completed, sandbox clock) + ${POLL_MS / 1000} s.`,
		`- Raw wall times (ms): node ${JSON.stringify((b as unknown as { raw: { node: number[] } }).raw.node)}, node with output ${JSON.stringify((b as unknown as { raw: { nodeOut: number[] } }).raw.nodeOut)}, one-at-a-time sample ${JSON.stringify((b as unknown as { raw: { diySample: number[] } }).raw.diySample)}.`,
		'',
		'## 2. Trigger',
		'',
		'| measure | figure |',
		'|---|---|',
		`| requests per idle poll (mean of 5 idle polls) | ${t.idle} |`,
		`| a poll with 1,000 new events: requests | ${t.thousandRequests} |`,
		`| a poll with 1,000 new events: time | ${s(t.thousandMs)} |`,
		`| first activation over 50,000 events of history: requests | ${t.activation} |`,
		`| first activation over 50,000 events of history: time | ${s(t.activationMs)} |`,
		`| static data after a long run (24 h of polls once a minute, 100 events a minute, ${t.longRunEvents} events emitted) | ${round(t.staticBytes / 1024)} KB as JSON, ${t.staticIds} ids remembered (largest during the run: ${round(t.staticMaxBytes / 1024)} KB) |`,
		'',
		'The trigger runs through n8n-core\'s PollContext with the static data kept as n8n keeps it',
		'(`test/harness/triggerHost.ts` TriggerHost); requests are counted in the sandbox\'s request log.',
		'',
		'## 3. Files',
		'',
		'| measure | time | peak RSS | RSS growth | heap + external growth |',
		'|---|---|---|---|---|',
		`| upload a 200 MB file, n8n filesystem binary mode | ${s(f.uploadMs)} | ${round(f.uploadPeakRss)} MB | +${round(f.uploadRssGrowth)} MB | +${round(f.uploadAllocGrowth)} MB |`,
		`| read a 10 MB binary output (Run → Get Output, filesystem mode) | ${s(f.outputMs)} | ${round(f.outputPeakRss)} MB | +${round(f.outputRssGrowth)} MB | +${round(f.outputAllocGrowth)} MB |`,
		'',
		'The files are measured first, in a fresh process, so the RSS baseline is not inflated by the other',
		'sections; RSS does not shrink once grown, so heap + external (Buffers) growth is given too.',
		'- The upload goal is judged on the larger of the two growth figures (RSS does not shrink once grown;',
		'  heap + external counts every Buffer allocated and not yet collected).',
		'- History: the first run of this benchmark missed the upload goal (+210.8 MB heap + external, 2.5 s for',
		'  200 MB). The cause was axios\' redirect follower, which buffers a streamed request body whole so it',
		'  could replay it after a redirect. API requests now never follow redirects (which also keeps a 3xx',
		'  from carrying the key to another host), and the upload streams in constant memory.',
		'',
		'- Upload: the input item\'s file is stored by n8n\'s binary helpers from a file stream (as the Read',
		'  Files node does in filesystem mode), so the measured growth covers storing it and the node streaming',
		'  it from disk to the API as multipart; the in-process sandbox streams it to its own disk.',
		'- Output: the API returns an output inline as base64 JSON (at most 10 MB), so reading one holds the',
		'  JSON text, its parsed string and the decoded bytes in memory at once before n8n stores the file;',
		'  the growth is a small multiple of the output size by the API\'s design.',
		'',
	];
	// Queue mode needs Redis, PostgreSQL and real n8n workers: `npm run bench:queue` measures it separately.
	const queueSection = join(__dirname, '..', 'docs', 'benchmarks-queue.md');
	if (existsSync(queueSection)) lines.push('', readFileSync(queueSection, 'utf8'));
	writeFileSync(join(__dirname, '..', 'docs', 'benchmarks.md'), lines.join('\n'));
	process.stdout.write(lines.join('\n') + '\n');
});
