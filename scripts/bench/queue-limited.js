#!/usr/bin/env node
'use strict';
/**
 * Queue mode under one read limit: a main and two workers (each its own watcher and pacer),
 * 200 one-document executions started by a production webhook, all alive at once, runs of 5 s,
 * the key's reads limited to 50 a second (429 with Retry-After). Part of `npm run bench:queue`
 * (scripts/e2e/queue-bench.js, into docs/benchmarks-queue.md); alone, for a quick look:
 *
 *   node scripts/bench/queue-limited.js [--skip-build]    .bench-results/queue-limited/ and its .md
 *
 * The row runs BENCH_QUEUE_RUNS times (default 5), each in a cluster started anew (workers that
 * learned nothing), and every run must meet the goals: whether two pacers learn fair shares is a
 * matter of which worker meets the limit first, so one run says little.
 * BENCH_N8N_SCALE multiplies the executions (a trial; the report says so).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const e2e = require('../e2e/n8n');
const sbx = require('../e2e/sandbox');
const queue = require('../e2e/queue');
const { PORTS } = require('../e2e/ports');
const { outputLateness, pathOf, round, shareReachedBy } = require('./measure');
const { nodeWebhookWorkflow } = require('./workflows');

const ROOT = path.join(__dirname, '..', '..');
const COUNT_SCALE = Number(process.env.BENCH_N8N_SCALE ?? 1);
const ROW = require('./queue-row');
const { RUN_MS, READ_LIMIT, ARRIVAL_GAP_MS, MAX_429_SHARE, FAIR_FACTOR, FAIR_SLACK_MS } = ROW;
const EXECUTIONS = Math.max(1, Math.round(ROW.EXECUTIONS * COUNT_SCALE));
/** Executions each worker runs at once: enough for all of them to be alive together, as in the regular-mode `limited` row. */
const WORKER_CONCURRENCY = Math.max(10, Math.ceil(EXECUTIONS / 2));
/** The limit's window: a worker's first 429 closes its reads for at least this long (Retry-After). */
const LIMIT_WINDOW_MS = 1000;
const SETTLE_MS = 2000;
const MAX_REQUESTS = 4;
const RUNS = Math.max(1, Number(process.env.BENCH_QUEUE_RUNS ?? 5));
const WEBHOOK_PATH = 'dw-bench-queue-limited';
/** The document's reference names the execution, so each run is put to the worker that ran it. */
const REFERENCE = '={{ $json.reference + "@" + $execution.id }}';

const log = (...args) =>
	process.stderr.write(
		`[queue-limited ${new Date().toISOString().slice(11, 19)}] ${args.join(' ')}\n`,
	);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const s = (ms) => (Number.isFinite(ms) ? `${round(ms / 1000, 1)} s` : 'n/a');
const pct = (share) => (Number.isFinite(share) ? `${round(share * 100, 1)}%` : 'n/a');

async function call(main, reference) {
	try {
		const res = await fetch(`${main.baseUrl}/webhook/${WEBHOOK_PATH}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ reference }),
			signal: AbortSignal.timeout(10 * 60_000),
		});
		const json = await res.json().catch(() => null);
		const item = Array.isArray(json) ? json[0] : json;
		const ok = res.status === 200 && item?.waitOutcome === 'completed' && item.output != null;
		return ok ? null : `${res.status}: ${JSON.stringify(json).slice(0, 300)}`;
	} catch (error) {
		return String(error);
	}
}

/** The request's kind, as scripts/bench/n8n-executions.js counts them. */
function kindOf(entry) {
	const p = pathOf(entry);
	if (entry.method === 'POST') return 'uploads';
	if (/^\/runs\/[^/]+\/output$/.test(p)) return 'output';
	if (/^\/runs\/[^/]+$/.test(p)) return 'status';
	if (p.startsWith('/events')) return 'events';
	return 'other';
}

/** The most runs in progress at once (n8n's queue may start the executions more slowly than they arrive). */
function mostAlive(runs) {
	const edges = runs.flatMap((run) => [
		[Date.parse(run.startedOn ?? run.visibleOn), 1],
		[Date.parse(run.completedOn), -1],
	]);
	edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
	let alive = 0;
	let most = 0;
	for (const [, step] of edges) most = Math.max(most, (alive += step));
	return most;
}

const peakPerSecond = (entries) => {
	const perSecond = new Map();
	for (const entry of entries) {
		const second = Math.floor(entry.realTimeMs / 1000);
		perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
	}
	return Math.max(0, ...perSecond.values());
};

/** Whether the workers' worst latenesses (ms) are within FAIR_FACTOR, or FAIR_SLACK_MS, of each other. */
function fair(worstMs) {
	if (worstMs.length !== 2 || !worstMs.every(Number.isFinite)) return false;
	const [low, high] = [Math.min(...worstMs), Math.max(...worstMs)];
	return high <= low * FAIR_FACTOR || high - low <= FAIR_SLACK_MS;
}

/**
 * Starts its own cluster (main + two workers, fresh user folders, its own PostgreSQL and Redis)
 * against `sandbox`, runs the row once, stops the cluster; returns its figures and sections.
 */
async function measureOnce({ tgz, sandbox, dir }) {
	const t0 = Date.now();
	const { control } = sandbox;
	const org = await control.createOrg({ name: 'bench queue limited' });
	const key = await control.createKey({ orgId: org.id, name: 'bench queue limited' });
	const flow = await control.createWorkflow({
		orgId: org.id,
		name: 'bench queue limited',
		triggerFormats: ['pdf'],
		script: [{ status: 'running', ms: RUN_MS }, { status: 'completed' }],
	});
	const cluster = new queue.QueueCluster({
		tgz,
		mainPort: PORTS.benchQueueLimited,
		workers: 2,
		concurrency: WORKER_CONCURRENCY,
		dir,
	});
	const phases = [];
	let wallMs;
	let failures = [];
	let byWorker;
	try {
		await cluster.startServices();
		const credential = { id: 'dwBenchQueueLim1', name: 'bench queue limited' };
		await cluster.main.importCredentials([
			e2e.documentWorkflowCredential({ ...credential, baseUrl: sandbox.baseUrl, apiKey: key.key }),
		]);
		const wf = nodeWebhookWorkflow({
			id: 'dwBenchQueueLim01',
			path: WEBHOOK_PATH,
			workflowId: flow.id,
			credential,
			reference: REFERENCE,
		});
		await cluster.main.importWorkflows([wf]);
		await cluster.main.activateWorkflow(wf.id);
		await cluster.startMain();
		await cluster.startWorkers();
		await cluster.waitForWebhooks([WEBHOOK_PATH]);
		phases.push({ what: 'PostgreSQL, Redis, main and two workers started', ms: Date.now() - t0 });
		await control.setRateLimits({
			orgId: org.id,
			reads: { limit: READ_LIMIT, windowMs: LIMIT_WINDOW_MS },
		});
		log(`cluster ready; ${EXECUTIONS} executions, workers' concurrency ${WORKER_CONCURRENCY}`);
		const started = Date.now();
		const answers = await Promise.all(
			Array.from({ length: EXECUTIONS }, async (_, i) => {
				await sleep(i * ARRIVAL_GAP_MS);
				return call(cluster.main, `queue-limited-${i}`);
			}),
		);
		wallMs = Date.now() - started;
		failures = answers.filter(Boolean);
		await sleep(SETTLE_MS);
		phases.push({ what: `${EXECUTIONS} executions`, ms: wallMs });
		byWorker = cluster.executionWorkers();
	} finally {
		await cluster.stopAll();
	}
	const entries = (await control.getRequests({ origin: 'api' })).filter(
		(entry) => entry.headers['x-api-key'] === key.key,
	);
	const runs = (await control.listRuns({ workflowId: flow.id })).filter((run) => run.completedOn);
	const kinds = { uploads: 0, status: 0, events: 0, output: 0, other: 0 };
	for (const entry of entries) kinds[kindOf(entry)] += 1;
	const rateLimited = entries.filter((entry) => entry.status === 429).length;
	const reads = entries.filter((entry) => entry.method === 'GET');
	const late = outputLateness(entries, runs);
	const uploadTimes = entries.filter((e) => e.method === 'POST').map((e) => e.realTimeMs);
	// Each run's worker, from its reference (`…@<execution id>`) and the workers' logs.
	const workerOfRun = new Map();
	for (const run of runs) {
		const execution = /@(\d+)$/.exec(run.reference ?? '')?.[1];
		workerOfRun.set(run.id, byWorker.get(execution)?.join(' and ') ?? 'unknown');
	}
	// The raw log beside the cluster's folders, to study a row after the fact (not read by the report).
	fs.writeFileSync(
		path.join(dir, 'requests.json'),
		JSON.stringify({ entries, runs, workerOfRun: [...workerOfRun] }),
	);
	const workers = [...new Set(workerOfRun.values())].sort();
	const worstOf = (worker) =>
		outputLateness(
			entries,
			runs.filter((run) => workerOfRun.get(run.id) === worker),
		).lateWorstMs;
	const workerRows = workers.map((worker) => {
		const own = reads.filter((entry) => {
			const runId = /^\/runs\/([^/]+)/.exec(pathOf(entry))?.[1];
			return runId !== undefined && workerOfRun.get(runId) === worker;
		});
		const executions = [...workerOfRun.values()].filter((w) => w === worker).length;
		const refusedAt = own.filter((entry) => entry.status === 429).map((entry) => entry.realTimeMs);
		const refused = refusedAt.length;
		// Refused within the window after its first 429 had left before that answer came back.
		const onTheirWay = refusedAt.filter((at) => at < Math.min(...refusedAt) + LIMIT_WINDOW_MS);
		return [
			worker,
			String(executions),
			String(own.length),
			`${refused} (${pct(refused / Math.max(1, own.length))})`,
			`${onTheirWay.length} / ${refused - onTheirWay.length}`,
			String(peakPerSecond(own)),
			s(worstOf(worker)),
		];
	});
	const perDocument = entries.length / EXECUTIONS;
	const share429 = rateLimited / Math.max(1, entries.length);
	const completed = EXECUTIONS - failures.length;
	if (failures.length) log(`${failures.length} execution(s) failed; first: ${failures[0]}`);
	log(
		`${round(perDocument, 2)} requests per document (${JSON.stringify(kinds)}), 429: ${rateLimited} (${pct(share429)}), peak reads ${peakPerSecond(reads)}/s, late worst ${s(late.lateWorstMs)} (${pct(late.lateWorstShare)}), ${s(wallMs)}`,
	);
	const name = `${EXECUTIONS} one-document executions alive at once on a main and two workers, runs of ${s(RUN_MS)}, read limit ${READ_LIMIT} a second (429 with Retry-After), events name their run`;
	const scaled =
		COUNT_SCALE !== 1
			? ` **Trial settings: executions × ${COUNT_SCALE}; not the benchmark's figures.**`
			: '';
	return {
		name,
		completed: completed === EXECUTIONS && late.unread === 0 && runs.length === EXECUTIONS,
		completedFigure: `${completed} of ${EXECUTIONS} completed, ${runs.length - late.unread} outputs read`,
		share429,
		perDocument,
		lateWorstMs: late.lateWorstMs,
		workerWorstMs: workers.map(worstOf),
		workers,
		sections: [
			{
				heading: `${EXECUTIONS} one-document executions, read limit ${READ_LIMIT} a second`,
				text: [
					`n8n ${e2e.versionInfo('2').version} in queue mode on this one machine (PostgreSQL, Redis, a main and two workers, each with the packed package in its own community-nodes folder, as on separate machines); each worker runs up to ${WORKER_CONCURRENCY} executions at once, so all ${EXECUTIONS} may be alive together, as in the regular-mode \`limited\` row (n8n's default of 10 a worker would keep the reads far under the limit); how many runs were in progress at once, and how long n8n's queue took to start them all, is in the table.`,
					`Each execution starts from a production webhook on the main (${ARRIVAL_GAP_MS} ms apart): Webhook → Code (the one file) → Document Workflow "Submit Document" with Wait for Completion and Include Output on, every other option at its default; a worker runs it.`,
					`The API key's reads are limited to ${READ_LIMIT} a second (a 429 with Retry-After past it); every run takes ${s(RUN_MS)}; run events name their run. The workers started with nothing learned: each has its own watcher and read pacer in its own process, and nothing of either is shared between them.`,
					`What it measures: whether two pacers that share one limit refuse each other. Each learns the limit from what the API let through before a 429; if each took the whole limit for itself, the two would send twice what the API allows and about half of their reads would be answered 429; if each made up for a refused read by reading again, the requests per document would grow.`,
					`Requests per document: every request the sandbox logged with the row's key (uploads, status reads, event-list reads, output reads, 429 answers), counted after the last execution ended, divided by the executions. A worker's reads are those naming a run of its executions (the document's reference carries the execution's id; the workers' logs tell which worker ran it); event-list reads name no run and are counted in the total only. "Output read late": from a run's completedOn to the first successful read of its output, on the sandbox's clock.${scaled}`,
				].join(' '),
				table: {
					columns: ['figure', 'value'],
					rows: [
						['completed with their output', `${completed} of ${EXECUTIONS}`],
						['requests per document', String(round(perDocument, 2))],
						[
							'uploads / status / events / output reads',
							`${kinds.uploads} / ${kinds.status} / ${kinds.events} / ${kinds.output}${kinds.other ? ` / ${kinds.other} other` : ''}`,
						],
						['429 answers', `${rateLimited} (${pct(share429)})`],
						[
							'runs in progress at once, at most / first upload to the last',
							`${mostAlive(runs)} / ${s(Math.max(...uploadTimes) - Math.min(...uploadTimes))}`,
						],
						['peak reads a second (both workers)', String(peakPerSecond(reads))],
						[
							'output read late: median / 90% within / worst',
							`${s(late.lateMedianMs)} (${pct(late.lateMedianShare)}) / ${pct(shareReachedBy(late.lateShares, EXECUTIONS, 0.9))} / ${s(late.lateWorstMs)} (${pct(late.lateWorstShare)})`,
						],
						['first webhook call to the last answer', s(wallMs)],
					],
				},
			},
			{
				heading: 'Each worker: its executions, its reads, its 429 answers',
				text: `A worker meets a limit it has not learnt with reads already on their way: each read n8n had already sent when the API refused its first is refused too (those the node had let go but n8n had not sent yet are held back), and then its reads wait for Retry-After (at least the limit's ${s(LIMIT_WINDOW_MS)} window). So its refusals within ${s(LIMIT_WINDOW_MS)} of its first are that one meeting; later ones are its pacer running into the limit again, the two workers' paces together above it.`,
				table: {
					columns: [
						'worker',
						'executions',
						'reads naming its runs',
						'429 answers',
						'of them: on their way at its first 429 / later',
						'peak reads a second',
						'its worst output read late',
					],
					rows: workerRows,
				},
			},
			{
				heading: 'How long each part took',
				table: {
					columns: ['part', 'time'],
					rows: [...phases.map((ph) => [ph.what, s(ph.ms)]), ['all', s(Date.now() - t0)]],
				},
			},
		],
	};
}

/**
 * The row: RUNS runs, each in a cluster started anew; the first one's figures in full, one line
 * for each run, and goals every run must meet.
 */
async function measureQueueLimited({ tgz, sandbox, dir, runs = RUNS }) {
	const results = [];
	for (let i = 0; i < runs; i++) {
		log(`run ${i + 1} of ${runs}`);
		results.push(await measureOnce({ tgz, sandbox, dir: path.join(dir, `run-${i + 1}`) }));
	}
	const { name } = results[0];
	const every = (test) => `${results.filter(test).length} of ${runs} runs`;
	const fairRun = (r) => fair(r.workerWorstMs);
	return {
		suite: 'queue-limited',
		title: 'Queue mode under one read limit: two workers, two pacers',
		sections: [
			...results[0].sections.map((section, k) =>
				k === 0 ? { ...section, heading: `${section.heading}: run 1 of ${runs}` } : section,
			),
			{
				heading: `Every run: fair shares, refusals, requests`,
				text: `The row ran ${runs} times, each in a cluster started anew, so that each time both workers begin with nothing learned and either may meet the limit first. Fair shares: each worker's worst output read late is within ${FAIR_FACTOR}× of the other's, or within ${s(FAIR_SLACK_MS)} of it (a worker that learnt too small a share of the limit keeps its executions waiting longer).`,
				table: {
					columns: [
						'run',
						'worst output read late, each worker',
						'fair',
						'429 answers',
						'requests per document',
						'completed',
					],
					rows: results.map((r, k) => [
						String(k + 1),
						r.workers.map((w, i) => `${w}: ${s(r.workerWorstMs[i])}`).join(', '),
						fairRun(r) ? 'yes' : 'no',
						pct(r.share429),
						String(round(r.perDocument, 2)),
						r.completedFigure,
					]),
				},
			},
		],
		goals: [
			{
				goal: `${name}: every execution completes with its output read, in every run`,
				figure: every((r) => r.completed),
				met: results.every((r) => r.completed),
			},
			{
				goal: `${name}: each worker's worst output lateness within ${FAIR_FACTOR}× (or ${s(FAIR_SLACK_MS)}) of the other's, in every run`,
				figure: every(fairRun),
				met: results.every(fairRun),
			},
			{
				goal: `${name}: under ${MAX_429_SHARE * 100}% of requests answered 429, in every run`,
				figure: `${every((r) => r.share429 < MAX_429_SHARE)} (${results.map((r) => pct(r.share429)).join(', ')})`,
				met: results.every((r) => r.share429 < MAX_429_SHARE),
			},
			{
				goal: `${name}: at most ${MAX_REQUESTS} API requests per document, in every run`,
				figure: `${every((r) => r.perDocument <= MAX_REQUESTS)} (${results.map((r) => round(r.perDocument, 2)).join(', ')})`,
				met: results.every((r) => r.perDocument <= MAX_REQUESTS),
			},
		],
	};
}

module.exports = { measureQueueLimited };

if (require.main === module) {
	(async () => {
		e2e.ensureInstalled('2');
		const dir = path.join(e2e.CACHE, 'queue-limited');
		const tgz = e2e.buildAndPack({
			build: !process.argv.includes('--skip-build'),
			destDir: path.join(dir, 'pack'),
		});
		sbx.buildSandbox();
		const { startSandbox } = require(path.join(sbx.BUILD_DIR, 'sandbox', 'src', 'index.js'));
		const sandbox = await startSandbox({});
		let results;
		try {
			results = await measureQueueLimited({ tgz, sandbox, dir: path.join(dir, 'cluster') });
		} finally {
			await sandbox.stop();
			await queue.stopEverything();
		}
		const resultsDir = path.join(ROOT, '.bench-results', 'queue-limited');
		fs.mkdirSync(resultsDir, { recursive: true });
		fs.writeFileSync(
			path.join(resultsDir, 'queue-limited.json'),
			`${JSON.stringify(results, null, 2)}\n`,
		);
		const report = spawnSync(
			process.execPath,
			[
				path.join(__dirname, 'report.js'),
				'--results',
				resultsDir,
				'--out',
				path.join(resultsDir, 'queue-limited.md'),
			],
			{ stdio: 'inherit' },
		);
		process.exitCode = report.status ?? 1;
	})().catch((error) => {
		console.error(error);
		process.exitCode = 1;
	});
}
