#!/usr/bin/env node
'use strict';
/**
 * Benchmark row for docs/benchmarks.md: the 200-document submit-and-wait batch (runs of 3 s in
 * the sandbox) on one n8n process (regular mode) vs n8n in queue mode with two workers.
 * Same machine, same PostgreSQL/Redis setup, same workflow (production webhook -> Code -> Document
 * Workflow submit-and-wait -> summary), default node settings.
 *
 *   node scripts/e2e/queue-bench.js [--repeat 3] [--skip-build] [--only compare|limited]
 *
 * Shapes measured (wall time from the first webhook call to the last answer):
 *   - 20 executions x 10 documents, called concurrently (work arriving as separate executions);
 *   - 1 execution x 200 documents (one execution always runs on one worker).
 * Then 200 one-document executions on a main and two workers under a 50/s read limit
 * (scripts/bench/queue-limited.js), and that row modelled on the waiting simulator, each worker with
 * its own pacer and both behind one (bench/queue-model.bench.ts, `--only model` for it alone). Not
 * part of the tests. Writes .bench-results/queue/*.json and renders them with
 * scripts/bench/report.js into docs/benchmarks-queue.md (commit, date, machine included).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const e2e = require('./n8n');
const sbx = require('./sandbox');
const queue = require('./queue');
const { batchWorkflow } = require('../../test/e2e-queue/workflows');
const { measureQueueLimited } = require('../bench/queue-limited');

const args = process.argv.slice(2);
const REPEAT = Number(args[args.indexOf('--repeat') + 1]) || (args.includes('--repeat') ? 3 : 3);
const ONLY = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const DIR = path.join(e2e.CACHE, 'queue-bench');
const ROOT = path.join(__dirname, '..', '..');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function call(main, body) {
	const res = await fetch(`${main.baseUrl}/webhook/dw-bench`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
		signal: AbortSignal.timeout(600000),
	});
	const json = await res.json().catch(() => null);
	if (res.status !== 200)
		throw new Error(`webhook answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
	return json;
}

async function runShape(main, sandbox, workflowId, { executions, perExecution, tag }) {
	const before = await sandbox.control.countDocuments({ workflowId });
	const t0 = Date.now();
	const answers = await Promise.all(
		Array.from({ length: executions }, (_, i) =>
			call(main, {
				documents: Array.from({ length: perExecution }, (_, j) => ({
					reference: `${tag}-${i}-${j}`,
				})),
			}),
		),
	);
	const ms = Date.now() - t0;
	const completed = answers.reduce(
		(n, a) => n + a.runs.filter((r) => r.status === 'completed').length,
		0,
	);
	const created = (await sandbox.control.countDocuments({ workflowId })) - before;
	if (completed !== executions * perExecution || created !== executions * perExecution) {
		throw new Error(
			`${tag}: ${completed} completed, ${created} documents created, expected ${executions * perExecution}`,
		);
	}
	return ms;
}

async function measure(label, { workers, env }, sandbox, flow, tgz) {
	const cluster = new queue.QueueCluster({
		tgz,
		mainPort: 5710,
		workers,
		dir: path.join(DIR, label),
		env,
	});
	const results = {};
	try {
		await cluster.startServices();
		const cred = { id: 'dwBenchCred00001', name: 'Document Workflow API (sandbox)' };
		await cluster.main.importCredentials([
			e2e.documentWorkflowCredential({ ...cred, baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey }),
		]);
		const wf = batchWorkflow({
			id: 'qBenchBatch00001',
			name: 'Bench batch',
			path: 'dw-bench',
			sandboxWorkflowId: flow.id,
			credential: cred,
		});
		await cluster.main.importWorkflows([wf]);
		await cluster.main.activateWorkflow(wf.id);
		await cluster.startMain();
		await cluster.startWorkers();
		await cluster.waitForWebhooks(['dw-bench']);
		// Warm-up (first execution loads code paths on each process).
		await runShape(cluster.main, sandbox, flow.id, {
			executions: 4,
			perExecution: 2,
			tag: `${label}-warm`,
		});
		for (const shape of [
			{ name: '20 executions x 10 documents', executions: 20, perExecution: 10 },
			{ name: '1 execution x 200 documents', executions: 1, perExecution: 200 },
		]) {
			const times = [];
			for (let r = 0; r < REPEAT; r++)
				times.push(
					await runShape(cluster.main, sandbox, flow.id, {
						...shape,
						tag: `${label}-${shape.executions}-${r}`,
					}),
				);
			results[shape.name] = { medianMs: median(times), runsMs: times };
			e2e.log(`${label} ${shape.name}: ${times.join(', ')} ms`);
		}
		if (workers) {
			const per = {};
			for (const w of cluster.workers) per[w.name] = w.startedExecutions().length;
			results.executionsPerWorker = per;
		}
	} finally {
		await cluster.stopAll();
	}
	return results;
}

/** The queue-limited row on the waiting simulator (bench/queue-model.bench.ts), into `resultsDir`. */
function modelled(resultsDir) {
	const jest = spawnSync(
		process.execPath,
		[path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '-c', 'bench/jest.bench.config.js'],
		{
			cwd: ROOT,
			stdio: 'inherit',
			env: { ...process.env, BENCH_SUITES: 'queue-model', BENCH_RESULTS_DIR: resultsDir },
		},
	);
	if (jest.status !== 0) throw new Error(`the queue-mode model failed (jest exit ${jest.status})`);
}

/** The rows in real n8n: one process against queue mode, and the limited row. */
async function inN8n(resultsDir) {
	e2e.ensureInstalled('2');
	const tgz = e2e.buildAndPack({
		build: !args.includes('--skip-build'),
		destDir: path.join(DIR, 'pack'),
	});
	sbx.buildSandbox();
	const { startSandbox } = require(path.join(sbx.BUILD_DIR, 'sandbox', 'src', 'index.js'));
	const sandbox = await startSandbox({});
	const out = {
		date: new Date().toISOString(),
		machine: `${os.cpus().length} CPUs, ${Math.round(os.totalmem() / 2 ** 30)} GB`,
		n8n: e2e.versionInfo('2').version,
		repeat: REPEAT,
	};
	const writeSuite = (results) =>
		fs.writeFileSync(
			path.join(resultsDir, `${results.suite}.json`),
			`${JSON.stringify(results, null, 2)}\n`,
		);
	try {
		if (ONLY === undefined || ONLY === 'compare') await compare(sandbox, tgz, out);
		if (ONLY === undefined || ONLY === 'limited')
			writeSuite(await measureQueueLimited({ tgz, sandbox, dir: path.join(DIR, 'limited') }));
	} finally {
		await sandbox.stop();
		await queue.stopEverything();
	}
	if (out.single) writeCompare(out, writeSuite);
}

(async () => {
	// Only this run's suites are rendered: results of an earlier run (another commit) go first.
	const resultsDir = path.join(ROOT, '.bench-results', 'queue');
	fs.rmSync(resultsDir, { recursive: true, force: true });
	fs.mkdirSync(resultsDir, { recursive: true });
	if (ONLY === undefined || ONLY === 'compare' || ONLY === 'limited') await inN8n(resultsDir);
	if (ONLY === undefined || ONLY === 'model') modelled(resultsDir);
	const report = spawnSync(
		process.execPath,
		[
			path.join(__dirname, '..', 'bench', 'report.js'),
			'--results',
			resultsDir,
			'--out',
			path.join(__dirname, '..', '..', 'docs', 'benchmarks-queue.md'),
		],
		{ stdio: 'inherit' },
	);
	if (report.status !== 0) process.exitCode = report.status ?? 1;
})().catch((error) => {
	console.error(error);
	process.exitCode = 1;
});

/** One n8n process vs a main and two workers, on the batch shapes. */
async function compare(sandbox, tgz, out) {
	const flow = await sandbox.control.createWorkflow({
		name: 'Bench (3 s runs)',
		triggerFormats: ['pdf'],
		script: [
			{ status: 'queued', ms: 100 },
			{ status: 'running', ms: 2900 },
			{ status: 'completed' },
		],
	});
	out.single = await measure(
		'single',
		{
			workers: 0,
			env: { EXECUTIONS_MODE: 'regular', OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'false' },
		},
		sandbox,
		flow,
		tgz,
	);
	out.queue = await measure('queue', { workers: 2 }, sandbox, flow, tgz);
}

function writeCompare(out, writeSuite) {
	fs.mkdirSync(DIR, { recursive: true });
	fs.writeFileSync(path.join(DIR, 'results.json'), JSON.stringify(out, null, 2));
	const s = (x) => `${(x / 1000).toFixed(1)} s`;
	const shapes = ['20 executions x 10 documents', '1 execution x 200 documents'];
	// docs/benchmarks-queue.md is written whole by the report generator from this suite's results
	// (with the commit and the machine); nothing in it is typed by hand.
	const results = {
		suite: 'queue',
		title: 'Queue mode: one n8n process vs a main and two workers',
		sections: [
			{
				heading: '200 documents, runs of 3 s',
				text: `Written by \`npm run bench:queue\` (\`scripts/e2e/queue-bench.js\`): webhook → Code → Document Workflow submit-and-wait with default settings, on real n8n ${out.n8n} with Redis and PostgreSQL, all processes on this one machine; wall time from the first webhook call to the last answer, median of ${REPEAT}.`,
				table: {
					columns: ['shape', 'one n8n process (regular mode)', 'queue mode, main + 2 workers'],
					rows: shapes.map((shape) => [
						shape,
						s(out.single[shape].medianMs),
						s(out.queue[shape].medianMs),
					]),
				},
			},
			{
				heading: 'Executions per worker',
				table: {
					columns: ['worker', 'executions'],
					rows: Object.entries(out.queue.executionsPerWorker ?? {}).map(([name, count]) => [
						name,
						String(count),
					]),
				},
			},
		],
		goals: [],
	};
	writeSuite(results);
}
