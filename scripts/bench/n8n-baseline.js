#!/usr/bin/env node
'use strict';
/**
 * What n8n users build today without this package, measured on the same batches as the
 * node (`npm run bench` runs it; it writes `.bench-results/n8n-baseline.json`):
 * an n8n 2.41.1 workflow that uploads each file with an HTTP Request node, waits with a Wait
 * node, reads each run with an HTTP Request node, loops the unfinished ones back to the Wait
 * with an IF node, then reads the outputs of the finished ones. Run in a real n8n with
 * `n8n execute` (one process, regular mode), against the same sandbox build the tests use.
 *
 *   node scripts/bench/n8n-baseline.js
 *
 * The time runs from the first upload's start (the sandbox's request log) to the end of the
 * execution as n8n records it (`stoppedAt`); the floor is the same as the node's: to the
 * moment the slowest run became final, on the sandbox's clock. Short rows: median of
 * BENCH_REPEATS (default 3); rows with 60 s runs: once.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const e2e = require('../e2e/n8n');
const sbx = require('../e2e/sandbox');
const { median, outputLateness, round } = require('./measure');
const { diyLoopWorkflow } = require('./workflows');

const ROOT = path.join(__dirname, '..', '..');
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const BATCH = Number(process.env.BENCH_BATCH ?? 200);
const ROWS = process.env.BENCH_ROWS ?? 'all';
const WORKFLOW_ID = 'dwBenchDiyLoop01';

async function measure(n8n, sandbox, { runMs, waitSeconds }) {
	await sandbox.control.reset();
	const info = await sandbox.control.info();
	await sandbox.control.updateWorkflow(info.defaultWorkflowId, {
		script: [{ status: 'running', ms: runMs }, { status: 'completed' }],
	});
	const flow = diyLoopWorkflow({
		id: WORKFLOW_ID,
		baseUrl: info.baseUrl,
		apiKey: info.apiKey,
		workflowId: info.defaultWorkflowId,
		documents: BATCH,
		waitSeconds,
	});
	await n8n.importWorkflows([flow]);
	const result = await n8n.execute(WORKFLOW_ID, { timeoutMs: 20 * 60_000 });
	if (!result.ok)
		throw new Error(`the workflow failed: ${(result.stderr || result.stdout).slice(-2000)}`);
	const outputs = result.run.data.resultData.runData['Read output'] ?? [];
	const read = outputs.reduce((n, task) => n + (task.data?.main?.[0]?.length ?? 0), 0);
	if (read !== BATCH) throw new Error(`${read} outputs read, expected ${BATCH}`);
	const log = await sandbox.control.getRequests({ origin: 'api' });
	const firstUpload = log
		.filter((entry) => entry.method === 'POST')
		.sort((a, b) => a.realTimeMs - b.realTimeMs)[0];
	const runs = await sandbox.control.listRuns({ workflowId: info.defaultWorkflowId });
	const lastEnd = Math.max(...runs.map((run) => Date.parse(run.completedOn)));
	return {
		ms: Date.parse(result.run.stoppedAt) - firstUpload.realTimeMs,
		// Both on the sandbox's clock (its offset from real time is 0 after a reset, and this n8n runs on the same machine).
		floorMs: lastEnd - Date.parse(firstUpload.time),
		requests: log.length,
		rateLimited: log.filter((entry) => entry.status === 429).length,
		...outputLateness(log, runs),
	};
}

(async () => {
	// BENCH_SUITES (see bench/jest.bench.config.js) names the suites to run; this one is `n8n-baseline`.
	if (
		process.env.BENCH_SUITES &&
		!process.env.BENCH_SUITES.split(',')
			.map((name) => name.trim())
			.includes('n8n-baseline')
	)
		return;
	e2e.ensureInstalled('2');
	sbx.buildSandbox();
	const { startSandbox } = require(path.join(sbx.BUILD_DIR, 'sandbox', 'src', 'index.js'));
	const sandbox = await startSandbox({});
	const n8n = new e2e.N8nInstance({
		major: '2',
		userFolder: path.join(e2e.CACHE, 'bench-baseline'),
		fresh: true,
		port: 5697,
	}); // its own port: the e2e suites use 5678
	const rows = [];
	const goalsOut = [];
	try {
		const plan = [
			{ runMs: 5000, waitSeconds: 10, long: false },
			{ runMs: 5000, waitSeconds: 2, long: false },
			{ runMs: 60_000, waitSeconds: 10, long: true },
			{ runMs: 60_000, waitSeconds: 2, long: true },
		].filter((row) => ROWS === 'all' || (ROWS === 'short') === !row.long);
		for (const row of plan) {
			const runs = [];
			for (let repeat = 0; repeat < (row.long ? 1 : REPEATS); repeat++)
				runs.push(await measure(n8n, sandbox, row));
			const ratio = median(runs.map((r) => r.ms / r.floorMs));
			rows.push([
				`${BATCH} documents, every run ${row.runMs / 1000} s`,
				`HTTP Request + Wait ${row.waitSeconds} s + IF loop`,
				`${round(median(runs.map((r) => r.ms)) / 1000)} s`,
				`${round(median(runs.map((r) => r.floorMs)) / 1000)} s`,
				`${round(ratio, 2)}×`,
				`${round(median(runs.map((r) => r.requests / BATCH)), 2)}`,
				`${round(median(runs.map((r) => r.rateLimited / r.requests)) * 100, 2)}%`,
				`${round(median(runs.map((r) => r.lateMedianMs)) / 1000, 2)} s (${round(median(runs.map((r) => r.lateMedianShare)) * 100, 1)}%)`,
				`${round(median(runs.map((r) => r.lateWorstMs)) / 1000, 2)} s (${round(median(runs.map((r) => r.lateWorstShare)) * 100, 1)}%)`,
				String(runs.length),
			]);
			process.stderr.write(`[baseline] ${rows[rows.length - 1].join(' | ')}\n`);
		}
	} finally {
		await sandbox.stop();
	}
	const results = {
		suite: 'n8n-baseline',
		title: 'What users build today without this package (n8n workflow, for comparison)',
		sections: [
			{
				heading: 'Upload, Wait node, read the runs, IF loop, read the outputs',
				text: `An n8n ${e2e.versionInfo('2').version} workflow run with \`n8n execute\` (regular mode, one process): a Code node makes the ${BATCH} files, an HTTP Request node uploads them (multipart, all items), a Wait node waits, an HTTP Request node reads each run, an IF node sends the unfinished ones back to the Wait and the finished ones to an HTTP Request node that reads their output. Same sandbox, same floor as the node's rows (first upload's start to the slowest run's final moment); the time ends when n8n records the execution as stopped. Requests per document count uploads, run reads and output reads. "Output read late": for each document, from its run's completedOn to the first successful read of its output, on the sandbox's clock (the share is of the run's length); median and worst over the batch, then the median of the repeats. Rows with 5 s runs: median of ${REPEATS}; with 60 s runs: once. Nothing here is a goal of this package; it is the comparison.`,
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
					rows,
				},
			},
		],
		goals: goalsOut,
	};
	fs.mkdirSync(path.join(ROOT, '.bench-results'), { recursive: true });
	fs.writeFileSync(
		path.join(ROOT, '.bench-results', 'n8n-baseline.json'),
		`${JSON.stringify(results, null, 2)}\n`,
	);
	console.log(`machine: ${os.cpus().length} CPUs`);
})().catch((error) => {
	console.error(error);
	process.exitCode = 1;
});
