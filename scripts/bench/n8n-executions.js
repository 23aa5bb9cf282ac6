#!/usr/bin/env node
'use strict';
/**
 * One document per execution, the way most n8n workflows run, measured in a real n8n
 * (`n8n start`, regular mode, the packed package installed as users install it): executions
 * started by a webhook, a fixed number alive at once (a new one starts as one ends) over several
 * generations, this package's node beside the do-it-yourself loop on the same rows. Writes
 * `.bench-results/n8n-executions.json` for scripts/bench/report.js; `npm run bench` runs it.
 *
 *   node scripts/bench/n8n-executions.js
 *
 * Environment:
 *   BENCH_N8N_ROWS          rows to run, comma-separated ids (default: all): steady, steady-unnamed,
 *                           spread, spread-unnamed, first, limited, cold, cold-unnamed, cold-spread,
 *                           cold-spread-unnamed, backfill, stream
 *   BENCH_STREAM_RATES      the steady stream's arrival rates a second, the first its row, the others
 *                           tried after it while each meets the row's bounds (default 9,9.5,9.8)
 *   BENCH_N8N_SCALE         executions alive and in all multiplied by this (default 1), for a quick trial
 *   BENCH_TIME_SCALE        run lengths multiplied by this (default 1), for a quick trial
 *   BENCH_DIY_WAIT_SECONDS  the do-it-yourself loop's Wait (default 10)
 *   BENCH_N8N_SERIAL=1      the node and the do-it-yourself loop one after the other, never side by side
 *   BENCH_N8N_DIR           n8n's user folder (default .e2e/bench-executions; emptied first)
 *   BENCH_SKIP_BUILD=1      pack the dist/ already built instead of running npm run build
 *
 * Every figure comes from the sandbox: its request log (every request with the row's own API
 * key: uploads, status reads, event-list reads, output reads, 429 answers) and its runs
 * (`completedOn`). Each row and each way (node, do-it-yourself) has its own organisation, key,
 * credential and API workflow, so no row starts from what another taught and each read limit
 * is its own.
 */
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const e2e = require('../e2e/n8n');
const sbx = require('../e2e/sandbox');
const {
	byRunLength,
	outputLateness,
	pathOf,
	round,
	shareReachedBy,
	withinShare,
} = require('./measure');
const { WAIT_OPTIONS, diyLoopWorkflow, nodeWebhookWorkflow } = require('./workflows');

const ROOT = path.join(__dirname, '..', '..');
const ROW_FILTER = (process.env.BENCH_N8N_ROWS ?? 'all')
	.split(',')
	.map((s) => s.trim())
	.filter(Boolean);
const COUNT_SCALE = Number(process.env.BENCH_N8N_SCALE ?? 1);
const TIME_SCALE = Number(process.env.BENCH_TIME_SCALE ?? 1);
const DIY_WAIT_SECONDS = Number(process.env.BENCH_DIY_WAIT_SECONDS ?? 10);
const SERIAL = process.env.BENCH_N8N_SERIAL === '1';
/** Executions of a row start this far apart until the row's count is alive (arrivals, not one burst). */
const ARRIVAL_GAP_MS = 25;
/** After a row's last answer: time for any read still under way to land in the log. */
const SETTLE_MS = 2000;
const READ_LIMIT = 50;
const DIY_PATH = 'dw-bench-diy';
const MAX_429_SHARE = 0.01;
/** Cold rows: the share of outputs that must be read within `mostWithin` of their run (the issue's 90%). */
const MOST_PART = 0.9;

const count = (n) => Math.max(1, Math.round(n * COUNT_SCALE));
/** A run length as the page names it, after BENCH_TIME_SCALE. */
const len = (ms) => `${Math.round(ms * TIME_SCALE) / 1000} s`;
/** Evenly from `from` to `to` (default 5 s to 120 s), shuffled so that arrival order says nothing about length. */
const spread = (n, from = 5000, to = 120_000) =>
	Array.from({ length: n }, (_, i) => from + ((i * 7919) % n) * ((to - from) / Math.max(1, n - 1)));
const STREAM_RATES = (process.env.BENCH_STREAM_RATES ?? '9,9.5,9.8').split(',').map(Number);

/**
 * The rows: `alive` executions in flight, `total` in all (a new one starts as one ends), one
 * document each. `diy` false: the do-it-yourself figures are those of the row named in `diyFrom`
 * (the loop reads no events, so whether events name their run changes nothing for it).
 */
const ROWS = [
	{
		id: 'steady',
		alive: 40,
		total: 120,
		lengths: (n) => new Array(n).fill(20_000),
		named: true,
		maxRequests: 4,
		maxLate: 0.1,
		diy: true,
		label: `runs of ${len(20_000)}, events name their run`,
	},
	{
		id: 'steady-unnamed',
		alive: 40,
		total: 120,
		lengths: (n) => new Array(n).fill(20_000),
		named: false,
		maxRequests: 6,
		maxLate: 0.1,
		diyFrom: 'steady',
		label: `runs of ${len(20_000)}, events name no run`,
	},
	{
		id: 'spread',
		alive: 40,
		total: 80,
		lengths: spread,
		named: true,
		maxRequests: 5,
		maxLate: 0.2,
		diy: true,
		label: `runs spread from ${len(5000)} to ${len(120_000)}, events name their run`,
	},
	{
		id: 'spread-unnamed',
		alive: 40,
		total: 80,
		lengths: spread,
		named: false,
		maxRequests: 16,
		maxLate: 0.2,
		diyFrom: 'spread',
		label: `runs spread from ${len(5000)} to ${len(120_000)}, events name no run`,
	},
	{
		id: 'first',
		alive: 1,
		total: 1,
		fixedCount: true,
		lengths: (n) => new Array(n).fill(120_000),
		named: false,
		maxRequests: 30,
		maxLate: 0.2,
		diy: true,
		label: `a workflow's first execution ever (an API key this n8n process never used), one run of ${len(120_000)}, events name no run`,
	},
	{
		id: 'limited',
		alive: 200,
		total: 400,
		lengths: (n) => new Array(n).fill(5000),
		named: true,
		readLimit: READ_LIMIT,
		diy: true,
		label: `runs of ${len(5000)}, read limit ${READ_LIMIT} a second (429 with Retry-After), events name their run`,
	},
	// Cold rows: n8n is started anew before each (nothing learned in memory, no JIT warmth), and
	// the row's executions are its first ones, all alive at once. Alone in n8n, no do-it-yourself beside.
	{
		id: 'cold',
		alive: 40,
		total: 40,
		cold: true,
		lengths: (n) => new Array(n).fill(20_000),
		named: true,
		maxRequests: 4,
		mostWithin: 0.1,
		maxLate: 0.2,
		label: `runs of ${len(20_000)}, events name their run`,
		catches:
			'waiting that is cheap only once earlier executions taught it a run length: each run checked on its own geometric schedule until then costs about 17 checks for a run of 20 s (over 4 requests a document), where one read of the event list, naming the run, stands for the checks of all 40; and waiting that saves requests by checking sparsely while it knows nothing (more than a tenth of outputs read over a tenth of their run late)',
	},
	{
		id: 'cold-unnamed',
		alive: 40,
		total: 40,
		cold: true,
		lengths: (n) => new Array(n).fill(20_000),
		named: false,
		maxRequests: 6,
		mostWithin: 0.1,
		maxLate: 0.2,
		label: `runs of ${len(20_000)}, events name no run`,
		catches:
			'a plain poller that never reads the event list, or reads it but cannot use events that name no run (its lateness is spread up to a fifth of the run: over a tenth of outputs later than a tenth, and about 17 checks a run); and one that reads every pending run whenever an event says some run ended (dozens of reads a document)',
	},
	{
		id: 'cold-spread',
		alive: 40,
		total: 40,
		cold: true,
		lengths: spread,
		named: true,
		maxRequests: 5,
		mostWithin: 0.2,
		maxLate: 0.2,
		label: `runs spread from ${len(5000)} to ${len(120_000)}, events name their run`,
		catches:
			'waiting that takes the first run lengths it sees for every run: checking each run when the shortest seen would have ended costs the long ones repeated checks (over 5 requests a document), and waiting for the longest seen reads the short ones late (outputs over a fifth of their run late); events name their run here, as in the warm row whose goal is 5 (with lengths this varied and no run named, the event list cannot say which run ended: the warm row allows 16)',
	},
	{
		id: 'cold-spread-unnamed',
		alive: 40,
		total: 40,
		cold: true,
		lengths: spread,
		named: false,
		maxRequests: 16,
		mostWithin: 0.2,
		maxLate: 0.2,
		label: `runs spread from ${len(5000)} to ${len(120_000)}, events name no run`,
		catches:
			"waiting that lets the event list stand in for a run's own reads when the list cannot say which run ended: a run event that names no run is taken for the oldest run, the run that did end is left to the list, and its output is read long after (in a fresh process before, a 10.9 s run was first read at 27.7 s); the warm row with events naming no run allows 16 requests a document",
	},
	// One execution of many documents at the read limit (a backfill), in an n8n started anew.
	{
		id: 'backfill',
		kind: 'backfill',
		alive: 1,
		total: 1,
		fixedCount: true,
		cold: true,
		documents: Math.max(10, Math.round(5000 * COUNT_SCALE)),
		lengths: () => [6000],
		named: true,
		readLimit: 100,
		maxRatio: 1.08,
		maxRequests: 3.05,
		max429Share: 0.005,
		label: `one execution of ${Math.max(10, Math.round(5000 * COUNT_SCALE))} documents, runs of ${len(6000)}, read limit 100 a second (429 with Retry-After), uploads not limited`,
	},
	// One-document executions arriving at a steady rate near the read limit, in an n8n started anew.
	{
		id: 'stream',
		kind: 'stream',
		alive: 1,
		total: 1,
		fixedCount: true,
		cold: true,
		rates: STREAM_RATES,
		seconds: Math.max(10, Math.round(180 * COUNT_SCALE)),
		lengths: (n) => spread(n, 5000, 30_000),
		named: true,
		readLimit: 20,
		mostWithin: 0.2,
		maxLate: 0.5,
		maxRequests: 3.2,
		max429Share: 0.01,
		label: `one-document executions arriving at ${STREAM_RATES[0]} a second for ${Math.max(10, Math.round(180 * COUNT_SCALE))} s, runs spread from ${len(5000)} to ${len(30_000)}, read limit 20 a second (429 with Retry-After), events name their run`,
	},
].map((row) => ({
	...row,
	alive: row.fixedCount ? row.alive : count(row.alive),
	total: row.fixedCount ? row.total : count(row.total),
}));

/** The steady stream's row is its first rate; the others are trials of higher rates, run while each meets its bounds. */
const withTrials = ROWS.flatMap((row) =>
	row.kind === 'stream'
		? row.rates.map((rate, i) => ({
				...row,
				id: i === 0 ? row.id : `${row.id}-${rate}`,
				rate,
				trialOf: i === 0 ? undefined : row.id,
			}))
		: [row],
);
const selected = withTrials.filter(
	(row) =>
		ROW_FILTER.includes('all') || ROW_FILTER.includes(row.id) || ROW_FILTER.includes(row.trialOf),
);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (...args) =>
	process.stderr.write(
		`[n8n-executions ${new Date().toISOString().slice(11, 19)}] ${args.join(' ')}\n`,
	);

/** Documents of a row: one per execution, or the backfill's batch, or the stream's arrivals. */
const documentsOf = (row) =>
	row.kind === 'backfill'
		? row.documents
		: row.kind === 'stream'
			? Math.round(row.rate * row.seconds)
			: row.total;

/** Sandbox setup of one way of one row: its own organisation, key and API workflow. */
async function party(control, row, way, index) {
	const org = await control.createOrg({ name: `bench ${row.id} ${way}` });
	const key = await control.createKey({ orgId: org.id, name: `bench ${row.id} ${way}` });
	const lengths = row.lengths(documentsOf(row)).map((ms) => Math.round(ms * TIME_SCALE));
	const workflow = await control.createWorkflow({
		orgId: org.id,
		name: `bench ${row.id} ${way}`,
		triggerFormats: ['pdf'],
		script: [{ status: 'running', ms: lengths[0] }, { status: 'completed' }],
	});
	// One do-it-yourself workflow serves every row (its key, base URL and API workflow come in the webhook's body).
	const webhookPath = way === 'diy' ? DIY_PATH : `dw-bench-${row.id}`;
	return {
		row,
		way,
		org,
		key,
		workflow,
		lengths,
		webhookPath,
		credentialId: `dwBenchCred${String(index).padStart(5, '0')}`,
	};
}

/**
 * POSTs to the webhook and waits for the execution's answer. Plain node:http, not fetch: fetch
 * gives up on an answer whose headers take over 300 s (undici's headersTimeout), and an
 * execution may take longer; this waits up to 15 minutes.
 */
function post(url, body) {
	return new Promise((resolve, reject) => {
		const data = JSON.stringify(body);
		const req = http.request(
			url,
			{
				method: 'POST',
				headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
				timeout: 15 * 60_000,
			},
			(res) => {
				let text = '';
				res.setEncoding('utf8');
				res.on('data', (chunk) => (text += chunk));
				res.on('end', () => resolve({ status: res.statusCode, text }));
				res.on('error', reject);
			},
		);
		req.on('timeout', () => req.destroy(new Error('no answer in 15 minutes')));
		req.on('error', reject);
		req.end(data);
	});
}

async function callWebhook(n8n, p, body) {
	const { status, text } = await post(`${n8n.baseUrl}/webhook/${p.webhookPath}`, body);
	let json;
	try {
		json = JSON.parse(text);
	} catch {
		json = undefined;
	}
	return { status, json, text: text.slice(0, 300) };
}

/** Whether one execution's answer shows a completed run with its output. */
function answerOk(p, answer) {
	if (answer.status !== 200 || !answer.json) return false;
	const item = Array.isArray(answer.json) ? answer.json[0] : answer.json;
	if (p.way === 'node')
		return item?.waitOutcome === 'completed' && item.output !== undefined && item.output !== null;
	return item?.output !== undefined && item.output !== null;
}

/** Runs one way of one row: `alive` executions in flight until `total` have ended; returns its figures. */
async function runParty(n8n, control, p) {
	const { row } = p;
	if (p.lengths.some((ms) => ms !== p.lengths[0])) {
		await control.clearNextScripts(p.workflow.id);
		for (const ms of p.lengths)
			await control.setNextScripts(
				p.workflow.id,
				[{ status: 'running', ms }, { status: 'completed' }],
				1,
			);
	}
	if (row.readLimit)
		await control.setRateLimits({
			orgId: p.org.id,
			reads: { limit: row.readLimit, windowMs: 1000 },
		});
	if (row.kind === 'backfill') return await runBackfill(n8n, p);
	if (row.kind === 'stream') return await runStream(n8n, p);
	const started = Date.now();
	let next = 0;
	let failed = 0;
	let firstFailure;
	const body = (i) => ({
		reference: `${row.id}-${p.way}-${i}`,
		...(p.way === 'diy'
			? {
					baseUrl: p.baseUrl,
					apiKey: p.key.key,
					workflowId: p.workflow.id,
					waitSeconds: DIY_WAIT_SECONDS,
				}
			: {}),
	});
	const lane = async (laneIndex) => {
		await sleep(laneIndex * ARRIVAL_GAP_MS);
		while (next < row.total) {
			const i = next++;
			const answer = await callWebhook(n8n, p, body(i)).catch((error) => ({
				status: 0,
				text: String(error),
			}));
			if (!answerOk(p, answer)) {
				failed += 1;
				firstFailure ??= `${answer.status}: ${answer.text}`;
			}
		}
	};
	await Promise.all(Array.from({ length: Math.min(row.alive, row.total) }, (_, i) => lane(i)));
	const wallMs = Date.now() - started;
	await sleep(SETTLE_MS);
	if (firstFailure)
		log(
			`${row.id} ${p.way}: ${failed} execution(s) did not complete with an output; first: ${firstFailure}`,
		);
	return { failed, wallMs, endedAtMs: started + wallMs };
}

/** n8n's resident memory (main process), in bytes: read from /proc while a row runs. */
function rssOf(pid) {
	try {
		const kb = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
		return kb ? Number(kb) * 1024 : NaN;
	} catch {
		return NaN;
	}
}

/** Samples n8n's memory every 250 ms until stopped: its baseline and peak. */
function memorySampler(n8n) {
	const pid = n8n.child?.pid;
	const base = rssOf(pid);
	let peak = base;
	const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 250);
	return () => {
		clearInterval(timer);
		return { baseRss: base, peakRss: Math.max(peak, rssOf(pid)) };
	};
}

/** The backfill: one execution of `documents` files, started by one webhook call. */
async function runBackfill(n8n, p) {
	const stopSampling = memorySampler(n8n);
	const started = Date.now();
	const answer = await callWebhook(n8n, p, { reference: `${p.row.id}` }).catch((error) => ({
		status: 0,
		text: String(error),
	}));
	const wallMs = Date.now() - started;
	const memory = stopSampling();
	const ok = answer.status === 200 && answer.json;
	if (!ok) log(`${p.row.id}: the execution did not end well: ${answer.status}: ${answer.text}`);
	await sleep(SETTLE_MS);
	return { failed: ok ? 0 : 1, wallMs, endedAtMs: started + wallMs, memory };
}

/** The steady stream: one-document executions arriving at `rate` a second for `seconds`, none waiting for another. */
async function runStream(n8n, p) {
	const { rate, seconds } = p.row;
	const count = Math.round(rate * seconds);
	const started = Date.now();
	let failed = 0;
	let firstFailure;
	const calls = [];
	for (let i = 0; i < count; i++) {
		const at = started + (i * 1000) / rate;
		if (at > Date.now()) await sleep(at - Date.now());
		calls.push(
			callWebhook(n8n, p, { reference: `${p.row.id}-${i}` })
				.catch((error) => ({ status: 0, text: String(error) }))
				.then((answer) => {
					if (answerOk(p, answer)) return;
					failed += 1;
					firstFailure ??= `${answer.status}: ${answer.text}`;
				}),
		);
	}
	await Promise.all(calls);
	const wallMs = Date.now() - started;
	if (firstFailure)
		log(
			`${p.row.id}: ${failed} execution(s) did not complete with an output; first: ${firstFailure}`,
		);
	await sleep(SETTLE_MS);
	return { failed, wallMs, endedAtMs: started + wallMs };
}

/**
 * The figures of one way of one row from the whole request log: every request made with its
 * key, whenever it came (the key is the way's own), so reads still made after its last
 * execution ended count too, and are also reported apart.
 */
async function measureParty(control, p, run, log_) {
	const entries = log_.filter((entry) => entry.headers['x-api-key'] === p.key.key);
	const runs = (await control.listRuns({ workflowId: p.workflow.id })).filter((r) => r.completedOn);
	const f = {
		...figures(entries, runs, documentsOf(p.row)),
		...batchFloor(entries, runs, p.row),
		...run,
		afterEnd: entries.filter((entry) => entry.realTimeMs > run.endedAtMs).length,
	};
	if (p.row.kind === 'stream') f.streamMissed = streamGoals(p.row, f).some((goal) => !goal.met);
	return f;
}

/**
 * A backfill's floor, from the sandbox's log and runs: the later of its last upload and two reads
 * a document (its run, its output) at the read limit, plus one run; both from its first upload's
 * start. `limitUsed`: its reads over what the limit allows from the first run's end to its last read.
 */
function batchFloor(entries, runs, row) {
	if (row.kind !== 'backfill') return {};
	const uploads = entries.filter((entry) => entry.method === 'POST').map((e) => e.realTimeMs);
	const reads = entries.filter((entry) => entry.method === 'GET').map((e) => e.realTimeMs);
	const first = Math.min(...uploads);
	const runMs = Math.round(row.lengths()[0] * TIME_SCALE);
	const readsMs = ((2 * row.documents) / row.readLimit) * 1000;
	const firstEnd = Math.min(...runs.map((run) => Date.parse(run.completedOn)));
	const lastRead = Math.max(...reads);
	return {
		firstUploadAtMs: first,
		uploadsMs: Math.max(...uploads) - first,
		floorMs: Math.max(Math.max(...uploads) - first, readsMs) + runMs,
		limitUsed:
			reads.filter((at) => at >= firstEnd).length /
			(((lastRead - firstEnd) / 1000) * row.readLimit),
	};
}

/** Requests per document, kinds of requests, 429 share, peak reads a second, and how late each output was read. */
function figures(entries, runs, documents) {
	const kind = (entry) => {
		const p = pathOf(entry);
		if (entry.method === 'POST') return 'uploads';
		if (/^\/runs\/[^/]+\/output$/.test(p)) return 'output';
		if (/^\/runs\/[^/]+$/.test(p)) return 'status';
		if (p.startsWith('/events')) return 'events';
		return 'other';
	};
	const kinds = { uploads: 0, status: 0, events: 0, output: 0, other: 0 };
	for (const entry of entries) kinds[kind(entry)] += 1;
	const perSecond = new Map();
	for (const entry of entries)
		if (entry.method === 'GET')
			perSecond.set(
				Math.floor(entry.realTimeMs / 1000),
				(perSecond.get(Math.floor(entry.realTimeMs / 1000)) ?? 0) + 1,
			);
	return {
		documents,
		runs: runs.length,
		requests: entries.length,
		perDocument: entries.length / documents,
		kinds,
		rateLimited: entries.filter((entry) => entry.status === 429).length,
		peakReadsPerSecond: Math.max(0, ...perSecond.values()),
		...outputLateness(entries, runs),
		byRunLength: byRunLength(entries, runs),
	};
}

(async () => {
	if (selected.length === 0)
		throw new Error(
			`BENCH_N8N_ROWS=${process.env.BENCH_N8N_ROWS} names no row; rows: ${ROWS.map((r) => r.id).join(', ')}`,
		);
	const suiteStarted = Date.now();
	e2e.ensureInstalled('2');
	const tgz = e2e.buildAndPack({
		build: process.env.BENCH_SKIP_BUILD !== '1',
		destDir: path.join(e2e.CACHE, 'bench-executions-pack'),
	});
	sbx.buildSandbox();
	const { startSandbox } = require(path.join(sbx.BUILD_DIR, 'sandbox', 'src', 'index.js'));
	const sandbox = await startSandbox({});
	const control = sandbox.control;
	const userFolder = process.env.BENCH_N8N_DIR ?? path.join(e2e.CACHE, 'bench-executions');
	const n8n = new e2e.N8nInstance({ major: '2', userFolder, fresh: true, port: 5698 });
	const results = new Map();
	const runsOf = new Map();
	const phases = [];
	try {
		// Every organisation, key, credential and workflow exists before n8n starts: no key is used before its row.
		const parties = [];
		for (const row of selected) {
			parties.push(await party(control, row, 'node', parties.length));
			if (row.diy) parties.push(await party(control, row, 'diy', parties.length));
		}
		for (const p of parties) p.baseUrl = sandbox.baseUrl;
		e2e.installPackageInto(userFolder, tgz);
		const nodeParties = parties.filter((p) => p.way === 'node');
		await n8n.importCredentials(
			nodeParties.map((p) =>
				e2e.documentWorkflowCredential({
					id: p.credentialId,
					name: `bench ${p.row.id}`,
					baseUrl: sandbox.baseUrl,
					apiKey: p.key.key,
				}),
			),
		);
		const workflows = nodeParties.map((p, i) =>
			nodeWebhookWorkflow({
				id: `dwBenchExec${String(i).padStart(5, '0')}`,
				path: p.webhookPath,
				workflowId: p.workflow.id,
				credential: { id: p.credentialId, name: `bench ${p.row.id}` },
				documents: p.row.kind === 'backfill' ? p.row.documents : undefined,
			}),
		);
		if (parties.some((p) => p.way === 'diy'))
			workflows.push(
				diyLoopWorkflow({
					id: 'dwBenchExecDiy01',
					trigger: 'webhook',
					path: DIY_PATH,
					waitSeconds: DIY_WAIT_SECONDS,
				}),
			);
		await n8n.importWorkflows(workflows);
		for (const wf of workflows) await n8n.activateWorkflow(wf.id);
		await n8n.start();
		await waitForWebhooks(n8n, parties);
		log(
			`n8n ready, ${workflows.length} workflows active, ${((Date.now() - suiteStarted) / 1000).toFixed(0)} s after the start`,
		);

		// Rows whose events name their run first, then the others (a setting of the whole sandbox).
		// In each row the two ways run side by side (own keys, own limits), unless BENCH_N8N_SERIAL=1;
		// the first-execution row runs beside the previous row of the same setting, which leaves its key untouched.
		// Cold rows run first of their setting, alone, each in an n8n started anew unless nothing ran in it yet.
		let n8nServed = false;
		for (const named of [true, false]) {
			const rows = selected.filter((row) => row.named === named);
			if (rows.length === 0) continue;
			await control.setSettings({ runEventsNameRun: named });
			const groups = [];
			for (const row of rows) {
				const own = parties.filter((p) => p.row === row);
				// 400 executions of the rate-limited row at once would measure the machine; the two ways there run one after the other.
				const serial = SERIAL || row.readLimit;
				for (const group of serial ? own.map((p) => [p]) : [own]) groups.push(group);
			}
			groups.sort((a, b) => Number(Boolean(b[0].row.cold)) - Number(Boolean(a[0].row.cold)));
			const firstGroup = groups.findIndex((g) => g[0].row.id === 'first');
			if (!SERIAL && firstGroup > 0 && !groups[firstGroup - 1][0].row.cold)
				groups[firstGroup - 1].push(...groups.splice(firstGroup, 1)[0]);
			for (const group of groups) {
				// A trial of a higher stream rate runs only while the rates before it met the row's bounds.
				const trial = group[0].row.trialOf;
				if (trial && [...results.values()].some((r) => r.streamMissed)) continue;
				if (group[0].row.cold && n8nServed) {
					const tr = Date.now();
					await n8n.restart();
					await waitForWebhooks(n8n, parties);
					phases.push({
						what: `n8n started anew before ${group[0].row.id}`,
						ms: Date.now() - tr,
					});
					log(`n8n started anew for ${group[0].row.id} in ${round((Date.now() - tr) / 1000)} s`);
				}
				n8nServed = true;
				const t0 = Date.now();
				log(`running ${group.map((p) => `${p.row.id}/${p.way}`).join(' beside ')}`);
				const measured = await Promise.all(group.map((p) => runParty(n8n, control, p)));
				const log_ = await control.getRequests({ origin: 'api' });
				if (process.env.BENCH_DUMP_DIR)
					for (const p of group)
						fs.writeFileSync(
							path.join(process.env.BENCH_DUMP_DIR, `${p.row.id}-${p.way}.json`),
							JSON.stringify({
								log: log_.filter((entry) => entry.headers['x-api-key'] === p.key.key),
								runs: await control.listRuns({ workflowId: p.workflow.id }),
							}),
						);
				for (const [i, p] of group.entries()) {
					const f = await measureParty(control, p, measured[i], log_);
					runsOf.set(p, measured[i]);
					if (p.row.kind === 'stream') results.set(`${p.row.id}/${p.way}`, f);
					log(
						`${p.row.id}/${p.way}: ${round(f.perDocument, 2)} requests per document (${JSON.stringify(f.kinds)}), 429: ${f.rateLimited}, late median ${round(f.lateMedianMs / 1000, 2)} s, worst ${round(f.lateWorstMs / 1000, 2)} s (${round(f.lateWorstShare * 100)}% of the run), failed ${f.failed}, unread ${f.unread}, ${round(f.wallMs / 1000)} s`,
					);
					if (f.worstStory)
						log(`${p.row.id}/${p.way}: the latest output read: ${JSON.stringify(f.worstStory)}`);
				}
				phases.push({
					what: group
						.map((p) => `${p.row.id} (${p.way === 'node' ? 'node' : 'do-it-yourself'})`)
						.join(' beside '),
					ms: Date.now() - t0,
				});
			}
		}
		// Counted once more at the end, n8n still running: a read made after a row ended is still its cost.
		await sleep(SETTLE_MS);
		const log_ = await control.getRequests({ origin: 'api' });
		for (const [p, run] of runsOf)
			results.set(`${p.row.id}/${p.way}`, await measureParty(control, p, run, log_));
		for (const [key, f] of results) if (f.streamMissed === undefined) delete f.streamMissed;
	} finally {
		await n8n.stop().catch(() => undefined);
		await sandbox.stop();
	}
	writeResults(results, phases, Date.now() - suiteStarted);
})().catch((error) => {
	console.error(error);
	process.exitCode = 1;
});

/** n8n registers a production webhook at start; a GET to a POST-only webhook then answers with a hint naming POST. */
async function waitForWebhooks(n8n, parties, timeoutMs = 120_000) {
	const t0 = Date.now();
	for (const p of new Map(parties.map((party) => [party.webhookPath, party])).values()) {
		for (;;) {
			const res = await fetch(`${n8n.baseUrl}/webhook/${p.webhookPath}`).catch(() => null);
			const text = res ? await res.text() : '';
			if (res && /POST/.test(text)) break;
			if (Date.now() - t0 > timeoutMs)
				throw new Error(
					`webhook ${p.webhookPath} not registered after ${timeoutMs} ms: ${res?.status} ${text.slice(0, 200)}`,
				);
			await sleep(500);
		}
	}
}

/** A row as the tables and goals name it. */
function rowName(row) {
	if (row.kind === 'backfill') return `a backfill in an n8n process started anew: ${row.label}`;
	if (row.kind === 'stream')
		return `a steady stream in an n8n process started anew: ${row.label.replace(`${STREAM_RATES[0]} a second`, `${row.rate} a second`)}`;
	if (row.cold)
		return `the first ${row.total} one-document executions of an n8n process started anew, all alive at once, ${row.label}`;
	return `${row.total === 1 ? 'one execution' : `${row.alive} one-document executions alive at once (${row.total} in all)`}, ${row.label}`;
}

/** What the cold rows measure and which wrong waiting each would catch, when any of them ran. */
function coldSections() {
	const cold = selected.filter((row) => row.cold && !row.kind);
	if (cold.length === 0) return [];
	return [
		{
			heading: 'Cold rows: an n8n process that has learned nothing',
			text: [
				"Before each cold row n8n is stopped and started again (unless nothing has run in it yet), so the row's executions are the first of an n8n process: nothing learned in memory (run lengths, whether events name their run, the read pace), no JIT warmth in n8n or in the node.",
				"The row's executions all start at once (25 ms apart), alone in n8n; the row has its own API key, so the sandbox's request log holds exactly its executions' requests.",
				'The warm rows above measure what later executions cost once earlier ones taught the watcher; these measure what the first ones cost, which every n8n restart, deployment and new worker pays again.',
				`Goals: the issue's requests per document, at least ${MOST_PART * 100}% of outputs read within a tenth of their run after it ended (a fifth where run lengths vary), all within a fifth.`,
			].join(' '),
			table: {
				columns: ['row', 'what it would catch'],
				rows: cold.map((row) => [rowName(row), row.catches]),
			},
		},
	];
}

const s = (ms) => (Number.isFinite(ms) ? `${round(ms / 1000, 1)} s` : 'n/a');
const pct = (share) => (Number.isFinite(share) ? `${round(share * 100, 1)}%` : 'n/a');
const mb = (bytes) => (Number.isFinite(bytes) ? `${round(bytes / 2 ** 20, 1)} MB` : 'n/a');

/** Every execution completed and every output was read. */
const completedGoal = (name, f) => ({
	goal: `${name}: every execution completes with its output read`,
	figure: `${f.documents - f.failed} of ${f.documents} completed, ${f.runs - f.unread} outputs read`,
	met: f.failed === 0 && f.unread === 0 && f.runs === f.documents,
});

/** The steady stream's bounds, for its row and for each trial of a higher rate. */
function streamGoals(row, f) {
	const name = rowName(row);
	const within = withinShare(f.lateShares, row.mostWithin);
	const refused = f.rateLimited / Math.max(1, f.requests);
	return [
		{ ...completedGoal(name, f), met: f.failed === 0 && f.unread === 0 },
		{
			goal: `${name}: at least ${MOST_PART * 100}% of outputs read within ${row.mostWithin * 100}% of their run after the run completed`,
			figure: `${within} of ${f.documents} (${pct(within / f.documents)})`,
			met: within >= MOST_PART * f.documents,
		},
		{
			goal: `${name}: every output read within ${row.maxLate * 100}% of its run after the run completed`,
			figure: `${pct(f.lateWorstShare)} (${s(f.lateWorstMs)})`,
			met: f.lateWorstShare <= row.maxLate && f.unread === 0,
		},
		{
			goal: `${name}: at most ${row.maxRequests} API requests per document`,
			figure: `${round(f.perDocument, 2)}`,
			met: f.perDocument <= row.maxRequests,
		},
		{
			goal: `${name}: under ${row.max429Share * 100}% of requests answered 429`,
			figure: pct(refused),
			met: refused < row.max429Share,
		},
	];
}

/** The backfill's goals: its floor, its requests, its refusals. */
function backfillGoals(row, f) {
	const name = rowName(row);
	const ratio = (f.endedAtMs - f.firstUploadAtMs) / f.floorMs;
	const refused = f.rateLimited / Math.max(1, f.requests);
	return [
		completedGoal(name, f),
		{
			goal: `${name}: within ${row.maxRatio}× of the floor (the later of the last upload and two reads a document at the limit, plus one run)`,
			figure: `${round(ratio, 3)}× (read limit used at ${pct(f.limitUsed)})`,
			met: ratio <= row.maxRatio,
		},
		{
			goal: `${name}: at most ${row.maxRequests} API requests per document`,
			figure: `${round(f.perDocument, 3)}`,
			met: f.perDocument <= row.maxRequests,
		},
		{
			goal: `${name}: under ${row.max429Share * 100}% of requests answered 429`,
			figure: pct(refused),
			met: refused < row.max429Share,
		},
	];
}

/** Said of the rows at the limit when n8n ran at a lower CPU priority than the sandbox (E2E_N8N_NICE). */
const PRIORITY_TEXT = process.env.E2E_N8N_NICE
	? `n8n ran at a lower CPU priority than the sandbox (nice ${process.env.E2E_N8N_NICE}): on this one 2-core machine the sandbox otherwise answers after n8n's bursts of work, and its fixed window then counts reads that arrived bunched, as a remote API on its own machine does not.`
	: 'n8n and the sandbox ran at the same CPU priority on this one 2-core machine.';

/** The sections of the backfill and the steady stream, when they ran. */
function atTheLimitSections(results) {
	const sections = [];
	for (const row of selected.filter((r) => r.kind === 'backfill')) {
		const f = results.get(`${row.id}/node`);
		if (!f) continue;
		sections.push({
			heading: `Backfill at the read limit: one execution of ${row.documents} documents`,
			text: [
				`n8n started anew, then one production webhook call starts one execution: Webhook → Code (makes the ${row.documents} files) → Document Workflow "Submit Document" with Wait for Completion and Include Output on, every other option at its default.`,
				`Every run takes ${len(6000)}; the key's reads are limited to ${row.readLimit} a second (a 429 with Retry-After past it), uploads are not limited; run events name their run.`,
				`The floor is what the API allows: from the first upload's start, the later of the last upload and two reads a document (its run, its output) at the limit (2 × ${row.documents} ÷ ${row.readLimit} s), plus one run (the first reads can come only once the first run has ended); the time runs from the first upload's start to the webhook's answer.`,
				'"Read limit used": the reads made from the first run\'s end to the last read, over what the limit allows in that time.',
				"n8n's memory: the resident memory of n8n's main process, sampled every 250 ms while the execution ran, less its value before.",
				PRIORITY_TEXT,
			].join(' '),
			table: {
				columns: ['figure', 'value'],
				rows: [
					['completed with their output', `${f.runs - f.unread} of ${f.documents}`],
					[
						'time / floor / time vs floor',
						`${s(f.endedAtMs - f.firstUploadAtMs)} / ${s(f.floorMs)} / ${round((f.endedAtMs - f.firstUploadAtMs) / f.floorMs, 3)}×`,
					],
					['first upload to the last', s(f.uploadsMs)],
					['requests per document', String(round(f.perDocument, 3))],
					[
						'uploads / status / events / output reads',
						`${f.kinds.uploads} / ${f.kinds.status} / ${f.kinds.events} / ${f.kinds.output}`,
					],
					['429 answers', `${f.rateLimited} (${pct(f.rateLimited / Math.max(1, f.requests))})`],
					['read limit used', pct(f.limitUsed)],
					['peak reads a second', String(f.peakReadsPerSecond)],
					['output read late: median / worst', `${s(f.lateMedianMs)} / ${s(f.lateWorstMs)}`],
					[
						"n8n's memory: before / peak / per document",
						`${mb(f.memory?.baseRss)} / ${mb(f.memory?.peakRss)} / ${round((f.memory?.peakRss - f.memory?.baseRss) / f.documents / 1024, 1)} KB`,
					],
				],
			},
		});
	}
	const stream = selected.filter((r) => r.kind === 'stream');
	if (stream.some((row) => results.has(`${row.id}/node`))) {
		const [row] = stream;
		const ran = stream.filter((r) => results.has(`${r.id}/node`));
		const carried = ran.filter((r) => !results.get(`${r.id}/node`).streamMissed).map((r) => r.rate);
		const highest = carried.length ? Math.max(...carried) : undefined;
		sections.push({
			heading: `Steady stream near the read limit: one-document executions arriving at ${row.rate} a second`,
			text: [
				`n8n started anew before each rate; one-document executions (Webhook → Code → Document Workflow "Submit Document", Wait for Completion, Include Output) arrive ${row.seconds} s long at a fixed rate, none waiting for another; runs spread from ${len(5000)} to ${len(30_000)} (shuffled); run events name their run; the key's reads are limited to ${row.readLimit} a second.`,
				`A status read and an output read a document are two reads, so ${row.readLimit / 2} documents a second is the most any waiting can carry: the rate is given as a share of that.`,
				`After the row's rate (${row.rate} a second, its goals), higher rates are tried (${row.rates.slice(1).join(', ')} a second) while each meets the same bounds; "highest rate carried" is the highest that did.`,
				PRIORITY_TEXT,
			].join(' '),
			table: {
				columns: [
					"arrivals a second (share of the limit's half)",
					'documents',
					'requests per document',
					'uploads / status / events / output reads',
					'429 answers',
					`${MOST_PART * 100}% within (share of the run)`,
					'worst',
					'bounds met',
				],
				rows: ran.map((r) => {
					const f = results.get(`${r.id}/node`);
					return [
						`${r.rate} (${pct(r.rate / (r.readLimit / 2))})`,
						String(f.documents),
						String(round(f.perDocument, 2)),
						`${f.kinds.uploads} / ${f.kinds.status} / ${f.kinds.events} / ${f.kinds.output}`,
						`${f.rateLimited} (${pct(f.rateLimited / Math.max(1, f.requests))})`,
						pct(shareReachedBy(f.lateShares, f.documents, MOST_PART)),
						`${pct(f.lateWorstShare)} (${s(f.lateWorstMs)})`,
						f.streamMissed ? 'no' : 'yes',
					];
				}),
			},
			charts: streamCharts(ran, results),
		});
		sections.push({
			heading: 'Steady stream: the highest arrival rate carried within its bounds',
			table: {
				columns: ['figure', 'value'],
				rows: [
					[
						'highest rate carried',
						highest === undefined
							? 'none of the rates tried'
							: `${highest} a second, ${pct(highest / (row.readLimit / 2))} of the limit's half${highest === Math.max(...row.rates) ? ' (the highest tried)' : ''}`,
					],
				],
			},
		});
	}
	return sections;
}

/**
 * The fewest requests a document can take, both ways: its upload, one read of its run and, with
 * Include Output on (the node's WAIT_OPTIONS; the loop always reads it), one read of its output.
 */
const FLOOR_REQUESTS = 2 + (WAIT_OPTIONS.includeOutput ? 1 : 0);
const FLOOR_TEXT = `an upload, a read of its run${WAIT_OPTIONS.includeOutput ? ' and a read of its output (Include Output on)' : ''}`;

/**
 * Charts of a row whose run lengths vary, node beside the do-it-yourself loop: requests per
 * document and output lateness against run length, from each way's runs in groups by length
 * (measure.js byRunLength). A way that did not run draws no series; neither way, no chart.
 */
function runLengthCharts(results) {
	const charts = [];
	for (const row of selected.filter((r) => !r.kind && r.diy)) {
		if (new Set(row.lengths(row.total)).size < 2) continue;
		const ways = [
			['node', 'Document Workflow node', results.get(`${row.id}/node`)],
			['diy', `do-it-yourself loop (Wait ${DIY_WAIT_SECONDS} s)`, results.get(`${row.id}/diy`)],
		].filter(([, , f]) => f?.byRunLength?.length);
		if (ways.length === 0) continue;
		const grouping = ways
			.map(
				([, label, f]) =>
					`${label}: ${f.runs} runs in ${f.byRunLength.length} groups of ${f.byRunLength.map((g) => g.documents).join(', ')}`,
			)
			.join('; ');
		const point = (g, value) => [round(g.lengthMs / 1000, 2), value];
		charts.push(
			{
				id: `${row.id}-requests-by-run-length`,
				title: `Requests per document against run length (${row.label})`,
				caption: `${rowName(row)}. Each way's runs sorted by length into groups (${grouping}); a point is a group's median run length and its requests per document: the requests that name its runs (status reads, output reads, their 429 answers) and an equal share of those that name none (uploads, event-list reads). Floor: ${FLOOR_REQUESTS} requests a document, ${FLOOR_TEXT}.`,
				x: { label: 'run length (s)' },
				y: { label: 'requests per document' },
				series: [
					...ways.map(([, label, f]) => ({
						label,
						points: f.byRunLength.map((g) => point(g, round(g.requestsPerDocument, 3))),
					})),
					{ label: `floor: ${FLOOR_REQUESTS} (${FLOOR_TEXT})`, reference: true, y: FLOOR_REQUESTS },
				],
			},
			{
				id: `${row.id}-lateness-by-run-length`,
				title: `Output read late, as a share of its run, against run length (${row.label})`,
				caption: `${rowName(row)}. The same groups (${grouping}); a point is a group's median run length and how late its outputs were read after their run completed, as a share of the run: the median (line) and the worst (dashed); a group with an unread output has no worst. Floor: 0, each output read the moment its run completed.`,
				x: { label: 'run length (s)' },
				y: { label: 'output read late (share of the run)', format: 'percent' },
				series: [
					...ways.flatMap(([way, label, f]) => [
						{
							label: `${label}: median`,
							group: way,
							points: f.byRunLength.map((g) => point(g, round(g.lateMedianShare, 4))),
						},
						{
							label: `${label}: worst`,
							group: way,
							dashed: true,
							points: f.byRunLength.map((g) => point(g, round(g.lateWorstShare, 4))),
						},
					]),
					{ label: 'floor: 0 (read as its run completed)', reference: true, y: 0 },
				],
			},
		);
	}
	return charts;
}

/**
 * Charts of the steady stream: requests per document and output lateness against the arrival
 * rate, one point a rate that ran, beside the floor and the most any waiting can carry.
 */
function streamCharts(ran, results) {
	if (ran.length === 0) return [];
	const [row] = ran;
	const carry = row.readLimit / 2;
	const most = {
		label: `the most any waiting can carry: ${carry} a second (a read of its run and one of its output a document, at ${row.readLimit} reads a second)`,
		reference: true,
		x: carry,
	};
	const of = (figure) => ran.map((r) => [r.rate, figure(results.get(`${r.id}/node`))]);
	return [
		{
			id: `${row.id}-requests-by-rate`,
			title: 'Steady stream: requests per document against arrival rate',
			caption: `Each rate that ran (${ran.map((r) => `${r.rate} a second, ${results.get(`${r.id}/node`).documents} documents`).join('; ')}), the node only: the stream has no do-it-yourself row. Floor: ${FLOOR_REQUESTS} requests a document, ${FLOOR_TEXT}.`,
			x: { label: 'arrivals a second' },
			y: { label: 'requests per document' },
			series: [
				{ label: 'Document Workflow node', points: of((f) => round(f.perDocument, 3)) },
				{ label: `floor: ${FLOOR_REQUESTS} (${FLOOR_TEXT})`, reference: true, y: FLOOR_REQUESTS },
				most,
			],
		},
		{
			id: `${row.id}-lateness-by-rate`,
			title: 'Steady stream: output read late, as a share of its run, against arrival rate',
			caption: `Each rate that ran, the node only: how late outputs were read after their run completed, as a share of the run: the median, the share ${MOST_PART * 100}% of outputs were read within (not drawn where fewer were read) and the worst (dashed). Floor: 0, each output read the moment its run completed.`,
			x: { label: 'arrivals a second' },
			y: { label: 'output read late (share of the run)', format: 'percent' },
			series: [
				{ label: 'median', points: of((f) => round(f.lateMedianShare, 4)) },
				{
					label: `${MOST_PART * 100}% within`,
					points: of((f) => round(shareReachedBy(f.lateShares, f.documents, MOST_PART), 4)),
				},
				{ label: 'worst', dashed: true, points: of((f) => round(f.lateWorstShare, 4)) },
				{ label: 'floor: 0 (read as its run completed)', reference: true, y: 0 },
				most,
			],
		},
	];
}

function writeResults(results, phases, totalMs) {
	const rows = [];
	const comparison = [];
	const goals = [];
	for (const row of selected.filter((r) => r.kind === 'backfill')) {
		const f = results.get(`${row.id}/node`);
		if (f) goals.push(...backfillGoals(row, f));
	}
	for (const row of selected.filter((r) => r.kind === 'stream' && !r.trialOf)) {
		const f = results.get(`${row.id}/node`);
		if (f) goals.push(...streamGoals(row, f));
	}
	for (const row of selected.filter((r) => !r.kind)) {
		const name = rowName(row);
		const nodeF = results.get(`${row.id}/node`);
		const diyKey = `${row.diy ? row.id : row.diyFrom}/diy`;
		const diyF = results.get(diyKey);
		for (const [way, f] of [
			['Document Workflow node', nodeF],
			// A row without its own loop figures compares with those of the row with events naming their run (the loop reads no events).
			[`do-it-yourself loop (Wait ${DIY_WAIT_SECONDS} s)`, row.diy ? diyF : undefined],
		]) {
			if (!f) continue;
			rows.push([
				name,
				way,
				`${f.documents - f.failed} of ${f.documents}`,
				`${round(f.perDocument, 2)}`,
				`${f.kinds.uploads} / ${f.kinds.status} / ${f.kinds.events} / ${f.kinds.output}${f.kinds.other ? ` / ${f.kinds.other} other` : ''}`,
				`${f.rateLimited} (${pct(f.rateLimited / Math.max(1, f.requests))})`,
				String(f.peakReadsPerSecond),
				String(f.afterEnd),
				`${s(f.lateMedianMs)} (${pct(f.lateMedianShare)})`,
				pct(shareReachedBy(f.lateShares, f.documents, MOST_PART)),
				`${s(f.lateWorstMs)} (${pct(f.lateWorstShare)})`,
				s(f.wallMs),
			]);
		}
		if (!nodeF) continue;
		const completed = nodeF.failed === 0 && nodeF.unread === 0 && nodeF.runs === nodeF.documents;
		goals.push({
			goal: `${name}: every execution completes with its output read`,
			figure: `${nodeF.documents - nodeF.failed} of ${nodeF.documents} completed, ${nodeF.runs - nodeF.unread} outputs read`,
			met: completed,
		});
		if (row.maxRequests !== undefined)
			goals.push({
				goal: `${name}: at most ${row.maxRequests} API requests per document`,
				figure: `${round(nodeF.perDocument, 2)}`,
				met: nodeF.perDocument <= row.maxRequests,
			});
		if (row.mostWithin !== undefined) {
			const within = withinShare(nodeF.lateShares, row.mostWithin);
			goals.push({
				goal: `${name}: at least ${MOST_PART * 100}% of outputs read within ${row.mostWithin * 100}% of their run after the run completed`,
				figure: `${within} of ${nodeF.documents} (${pct(within / nodeF.documents)})`,
				met: within >= MOST_PART * nodeF.documents,
			});
		}
		if (row.maxLate !== undefined)
			goals.push({
				goal: `${name}: output read at worst ${row.maxLate * 100}% of its run after the run completed`,
				figure: `${pct(nodeF.lateWorstShare)} (${s(nodeF.lateWorstMs)})`,
				met: nodeF.lateWorstShare <= row.maxLate,
			});
		if (row.readLimit)
			goals.push({
				goal: `${name}: under ${MAX_429_SHARE * 100}% of requests answered 429`,
				figure: pct(nodeF.rateLimited / Math.max(1, nodeF.requests)),
				met: nodeF.rateLimited / Math.max(1, nodeF.requests) < MAX_429_SHARE,
			});
		if (diyF) {
			const fewer = nodeF.perDocument < diyF.perDocument;
			const asPrompt = nodeF.lateWorstMs <= diyF.lateWorstMs;
			comparison.push([
				name,
				`${round(nodeF.perDocument, 2)} vs ${round(diyF.perDocument, 2)}`,
				`${s(nodeF.lateWorstMs)} vs ${s(diyF.lateWorstMs)}`,
				fewer && asPrompt
					? 'yes'
					: `no (${[fewer ? null : 'more requests', asPrompt ? null : 'later'].filter(Boolean).join(', ')})`,
			]);
		}
	}
	const scaled =
		COUNT_SCALE !== 1 || TIME_SCALE !== 1
			? ` **Trial settings: counts × ${COUNT_SCALE}, run lengths × ${TIME_SCALE}; not the benchmark's figures.**`
			: '';
	const results_ = {
		suite: 'n8n-executions',
		title: 'One document per execution in a real n8n (webhook executions, node vs do-it-yourself)',
		sections: [
			{
				heading: 'Executions alive at once, one document each',
				text: [
					`A real n8n ${e2e.versionInfo('2').version} (\`n8n start\`, regular mode, one process) with this package installed from its packed tarball into \`~/.n8n/nodes\`, as users install community packages.`,
					'Each execution starts from a production webhook: Webhook → Code (makes the one file) → Document Workflow "Submit Document" with Wait for Completion and Include Output on, every other option at its default; the webhook answers when the execution ends.',
					`The do-it-yourself loop: Webhook → Code → HTTP Request (upload) → Wait ${DIY_WAIT_SECONDS} s → HTTP Request (read the run) → IF final, else back to the Wait → HTTP Request (read the output).`,
					'"Alive at once": that many executions in flight, a new one starting as one ends (the first ones 25 ms apart), until the row\'s count has run, so later executions meet what earlier ones taught.',
					"Each row and each way has its own organisation, API key, credential and API workflow in the sandbox, all created before n8n started: no row starts from what another taught, and a read limit is the way's own.",
					"Requests per document: every request the sandbox logged with the way's key (its own), counted once every row has ended, divided by its documents: uploads, status reads, event-list reads (shared reads divided by documents), output reads, 429 answers; those made after the way's last execution ended are also shown apart.",
					"\"Output read late\": for each document, from its run's completedOn to the first successful GET /runs/{id}/output for it, both on the sandbox's clock; the floor of a one-document execution is its own run's end. The share is of that run's length (completedOn − startedOn).",
					`${SERIAL ? 'The two ways ran one after the other.' : 'The two ways of a row ran side by side in the same n8n (the rate-limited row: one after the other); the first-execution row ran beside the row before it with the same event setting.'} Whether run events name their run is a setting of the whole sandbox: the loop reads no events, so its figures serve both settings.`,
					'"90% within": the share of its run that 90% of the outputs were read within, unread outputs counted as never.',
					`Counts in this run: ${selected
						.filter((row) => !row.kind)
						.map((row) => `${row.id} ${row.alive} alive, ${row.total} in all`)
						.join(
							'; ',
						)}. Real-n8n part took ${s(totalMs)} (n8n start and imports included).${scaled}`,
				].join(' '),
				table: {
					columns: [
						'pattern',
						'how',
						'completed',
						'requests per document',
						'uploads / status / events / output reads',
						'429 answers',
						'peak reads a second',
						'requests after its last execution ended',
						'output read late: median',
						`${MOST_PART * 100}% within (share of the run)`,
						'worst',
						'row time',
					],
					rows,
				},
				charts: runLengthCharts(results),
			},
			...coldSections(),
			...atTheLimitSections(results),
			{
				heading: 'Node vs do-it-yourself (a reported comparison, not a goal)',
				text: 'Whether the node makes fewer requests per document than the do-it-yourself loop at an equal or better worst lateness, row by row. The issue lets the README say where and why it does not; so this table reports and fails nothing.',
				table: {
					columns: [
						'pattern',
						'requests per document: node vs loop',
						'worst lateness: node vs loop',
						'node fewer requests and no later',
					],
					rows: comparison,
				},
			},
			{
				heading: 'How long each part took',
				table: { columns: ['part', 'time'], rows: phases.map((ph) => [ph.what, s(ph.ms)]) },
			},
		],
		goals,
	};
	fs.mkdirSync(path.join(ROOT, '.bench-results'), { recursive: true });
	fs.writeFileSync(
		path.join(ROOT, '.bench-results', 'n8n-executions.json'),
		`${JSON.stringify(results_, null, 2)}\n`,
	);
	log(`done in ${s(totalMs)}; machine: ${os.cpus().length} CPUs`);
}
