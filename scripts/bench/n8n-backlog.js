#!/usr/bin/env node
'use strict';
/**
 * A backlog after downtime, in a real n8n (issue 43, item 3): the polling trigger active with its
 * default options (a copy of examples/trigger-on-run-events.json, Poll Times every minute), n8n
 * stopped, 60,000 events created over the two hours it was down, n8n started again and left to
 * catch up. Every execution's items and times, every event once and oldest first, n8n's memory
 * before and while it catches up, and the time it takes. Measured for the package built from a
 * commit before the cap (`BENCH_BACKLOG_BEFORE`, default 1136861) and for this tree, each in an
 * n8n and a sandbox of its own; writes `.bench-results/n8n-backlog.json` for
 * scripts/bench/report.js (`npm run bench:backlog` writes docs/benchmarks-backlog.md).
 *
 *   node scripts/bench/n8n-backlog.js
 *
 * Environment:
 *   BENCH_BACKLOG_EVENTS   events created while n8n is down (default 60000; other counts are trials)
 *   BENCH_BACKLOG_BEFORE   commit measured first, as the code before the cap (default 1136861; `none`: skip)
 *   BENCH_SKIP_BUILD=1     pack the dist/ already built instead of running npm run build
 *
 * The downtime is the sandbox's clock moved on two hours while n8n is stopped: the trigger reads
 * time only from the API (its `Date` header and the events' `createdOn`), never from n8n's clock.
 * The package of the earlier commit is built from `git archive` of that commit in a temporary
 * folder (npm ci, build, pack), removed afterwards; its tarball is kept under .e2e/ for the next run.
 */
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const e2e = require('../e2e/n8n');
const { PORTS } = require('../e2e/ports');
const sbx = require('../e2e/sandbox');
const { spawnOwned, stopProc } = require('../e2e/processes');
const { median, round } = require('./measure');

const ROOT = path.join(__dirname, '..', '..');
const EVENTS = Number(process.env.BENCH_BACKLOG_EVENTS ?? 60_000);
const BEFORE = process.env.BENCH_BACKLOG_BEFORE ?? '1136861';
const DOWNTIME_MS = 2 * 60 * 60_000;
const WARM_UP_EVENTS = 10;
const WORKFLOW_ID = 'dwBenchBacklog01';
const CREDENTIAL = { id: 'dwBenchBacklogCr', name: 'Document Workflow API (backlog)' };
const TYPES = ['run.completed', 'run.failed', 'review.created'];
/** n8n's main process is sampled this often (RSS from /proc), and its /metrics once a second. */
const SAMPLE_MS = 250;
/** After the last event came out: one more poll's worth of time in which nothing more may come out. */
const QUIET_MS = 75_000;
const PACKAGE_NAME = e2e.PACKAGE_NAME;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const started = Date.now();
const log = (...args) =>
	process.stderr.write(
		`[n8n-backlog ${new Date().toISOString().slice(11, 19)}] ${args.join(' ')}\n`,
	);
const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();

/** The package as it was at `ref`, packed once per commit (kept under .e2e/ by the commit's hash). */
function packAtCommit(ref) {
	const sha = git('rev-parse', '--verify', `${ref}^{commit}`);
	const destDir = path.join(e2e.CACHE, 'bench-backlog-before', sha.slice(0, 12));
	const packed = fs.existsSync(destDir) && fs.readdirSync(destDir).find((f) => f.endsWith('.tgz'));
	if (packed) return { sha, tgz: path.join(destDir, packed) };
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `dw-backlog-${sha.slice(0, 7)}-`));
	try {
		log(`building the package of ${sha.slice(0, 7)} in ${tmp}`);
		execFileSync('bash', ['-c', `git archive --format=tar ${sha} | tar -x -C "${tmp}"`], {
			cwd: ROOT,
		});
		for (const [cmd, args] of [
			['npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error']],
			['npm', ['run', 'build']],
		]) {
			const r = spawnSync(cmd, args, { cwd: tmp, encoding: 'utf8' });
			if (r.status !== 0)
				throw new Error(`${cmd} ${args.join(' ')} at ${sha}:\n${r.stdout}\n${r.stderr}`);
		}
		fs.mkdirSync(destDir, { recursive: true });
		const out = execFileSync(
			'npm',
			['pack', '--json', '--ignore-scripts', '--pack-destination', destDir],
			{
				cwd: tmp,
				encoding: 'utf8',
			},
		);
		return { sha, tgz: path.join(destDir, path.basename(JSON.parse(out)[0].filename)) };
	} finally {
		fs.rmSync(tmp, { recursive: true, force: true });
	}
}

/** Max Events per Poll's default in the package n8n loaded (undefined: the package has no such option). */
function capOf(userFolder) {
	const file = path.join(
		userFolder,
		'.n8n',
		'nodes',
		'node_modules',
		PACKAGE_NAME,
		'dist',
		'nodes',
		'DocumentWorkflowTrigger',
		'triggerSettings.js',
	);
	if (!fs.existsSync(file)) return undefined;
	// Each package installs at the same path: the module of the one measured before must not be reused.
	delete require.cache[require.resolve(file)];
	return require(file).DEFAULT_MAX_EVENTS_PER_POLL;
}

/** Runs SQL on n8n's SQLite database; rows as objects. */
function sql(n8n, query) {
	const database = path.join(n8n.userFolder, '.n8n', 'database.sqlite');
	const out = execFileSync('sqlite3', ['-json', '-cmd', '.timeout 10000', database, query], {
		encoding: 'utf8',
		maxBuffer: 1 << 30,
	}).trim();
	return out ? JSON.parse(out) : [];
}

const utcMs = (text) => (text ? Date.parse(`${String(text).replace(' ', 'T')}Z`) : NaN);

/** The workflow's executions as n8n stored them, without their data. */
function executionRows(n8n) {
	return sql(
		n8n,
		`select e.id as id, e.status as status, e.startedAt as startedAt, e.stoppedAt as stoppedAt, length(d.data) as bytes from execution_entity e join execution_data d on d.executionId = e.id where e.workflowId = '${WORKFLOW_ID}' order by e.id`,
	).map((row) => ({
		id: Number(row.id),
		status: row.status,
		startedAtMs: utcMs(row.startedAt),
		stoppedAtMs: utcMs(row.stoppedAt),
		bytes: Number(row.bytes),
	}));
}

/** The event ids the trigger emitted in one execution, in its output's order. */
function emittedIds(n8n, executionId, triggerName) {
	const [row] = sql(n8n, `select data from execution_data where executionId = ${executionId}`);
	const items = e2e.N8nInstance.nodeOutput({ data: n8n.unflatten(row.data) }, triggerName) ?? [];
	return items.map((item) => String(item.json.id));
}

/** The trigger's static data as n8n saved it (the workflow's, every node's). */
function staticData(n8n) {
	const [row] = sql(n8n, `select staticData from workflow_entity where id = '${WORKFLOW_ID}'`);
	return row?.staticData ?? null;
}

/**
 * Starts sampling n8n's main process (scripts/bench/sample-memory.js, a process of its own) as
 * soon as it is spawned: call it right after `n8n.start()` without awaiting that. `stop()`
 * resolves with `{ rss: [{ atMs, rss }], heap: [{ atMs, heap }] }`.
 */
async function sampleMemory(n8n, file) {
	const pid = await until('n8n spawned', async () => n8n.child?.pid, 30_000, 5);
	fs.rmSync(file, { force: true });
	const proc = spawnOwned(
		'memory sampler',
		process.execPath,
		[
			path.join(__dirname, 'sample-memory.js'),
			String(pid),
			file,
			`${n8n.baseUrl}/metrics`,
			String(SAMPLE_MS),
		],
		{ logFile: `${file}.log` },
	);
	return {
		stop: async () => {
			await stopProc(proc, { graceMs: 2000 });
			const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : [];
			const samples = lines.filter(Boolean).map((line) => JSON.parse(line));
			return { rss: samples.filter((x) => 'rss' in x), heap: samples.filter((x) => 'heap' in x) };
		},
	};
}

const between = (list, from, to) => list.filter((s) => s.atMs >= from && s.atMs <= to);

/** GET /events answered for the key since `fromMs` (real time). */
async function readsSince(control, apiKey, fromMs) {
	return (await control.getRequests({ origin: 'api', pathPrefix: '/events' })).filter(
		(r) => r.headers['x-api-key'] === apiKey && r.realTimeMs >= fromMs,
	);
}

async function until(what, check, timeoutMs, intervalMs = 1000) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value) return value;
		if (Date.now() > deadline)
			throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
		await sleep(intervalMs);
	}
}

/** One package through the whole story; returns its figures. */
async function measure({ label, tgz, commit }) {
	log(`${label}: ${EVENTS} events, package ${path.basename(tgz)} (${commit})`);
	const { startSandbox } = require(path.join(sbx.BUILD_DIR, 'sandbox', 'src', 'index.js'));
	const sandbox = await startSandbox({});
	const control = sandbox.control;
	const n8n = new e2e.N8nInstance({
		major: '2',
		userFolder: path.join(e2e.CACHE, 'bench-backlog'),
		fresh: true,
		port: PORTS.benchN8nBacklog,
		env: { N8N_METRICS: 'true' },
	});
	const samplesFile = path.join(e2e.CACHE, 'bench-backlog-memory.jsonl');
	let sampling;
	try {
		const org = await control.createOrg({ name: `backlog ${label}` });
		const key = await control.createKey({ orgId: org.id, name: `backlog ${label}` });
		e2e.installPackageInto(n8n.userFolder, tgz);
		const cap = capOf(n8n.userFolder);
		await n8n.importCredentials([
			e2e.documentWorkflowCredential({ ...CREDENTIAL, baseUrl: sandbox.baseUrl, apiKey: key.key }),
		]);
		const example = e2e
			.loadExamples({ CREDENTIAL_ID: CREDENTIAL.id, CREDENTIAL_NAME: CREDENTIAL.name })
			.find((entry) => entry.file === 'trigger-on-run-events.json').workflow;
		example.id = WORKFLOW_ID;
		const trigger = example.nodes.find((node) => node.type === e2e.NODE_TYPES[1]);
		if (
			JSON.stringify(trigger.parameters.events) !== JSON.stringify(TYPES) ||
			trigger.parameters.options
		)
			throw new Error(`the example's trigger changed: ${JSON.stringify(trigger.parameters)}`);
		await n8n.importWorkflows([example]);
		await n8n.activateWorkflow(WORKFLOW_ID);

		// Before the downtime: activated (the trigger starts from now), one small execution, idle.
		const first = n8n.start();
		first.catch(() => undefined); // awaited below, after the sampler started
		sampling = await sampleMemory(n8n, samplesFile);
		await first;
		await until('the cursor saved at activation', async () => staticData(n8n), 60_000);
		const warmUp = (
			await control.createEvents(
				Array.from({ length: WARM_UP_EVENTS }, (_, n) => ({
					type: TYPES[n % 3],
					data: { warmUp: n },
				})),
				{ orgId: org.id, returnIds: true },
			)
		).ids;
		await until(
			'the warm-up events emitted by a scheduled poll',
			async () => executionRows(n8n).some((row) => row.status === 'success'),
			150_000,
		);
		const warmUpRows = executionRows(n8n);
		const warmUpEmitted = warmUpRows.flatMap((row) => emittedIds(n8n, row.id, trigger.name));
		await sleep(5000);
		const idleFrom = Date.now();
		await sleep(10_000);
		const idleTo = Date.now();
		const idle = await sampling.stop();
		const idleRss = median(between(idle.rss, idleFrom, idleTo).map((x) => x.rss));
		const startPeakRss = Math.max(...idle.rss.map((x) => x.rss));
		await n8n.stop();

		// The downtime: two hours on the API's clock, the backlog spread over them, oldest first.
		const downFromMs = (await control.getClock()).nowMs;
		const downToMs = (await control.advanceClock(DOWNTIME_MS)).nowMs;
		const step = (downToMs - downFromMs - 1000) / EVENTS;
		const backlog = [];
		for (let from = 0; from < EVENTS; from += 20_000) {
			const events = [];
			for (let n = from; n < Math.min(EVENTS, from + 20_000); n++)
				events.push({
					type: TYPES[n % 3],
					createdOn: new Date(downFromMs + Math.round((n + 1) * step)).toISOString(),
					data: { n },
				});
			backlog.push(...(await control.createEvents(events, { orgId: org.id, returnIds: true })).ids);
		}
		const expected = [...backlog].sort();
		log(
			`${label}: n8n down; ${backlog.length} events created over ${DOWNTIME_MS / 3_600_000} h of the API's clock`,
		);

		// n8n again: it polls at start, then every minute, until it has caught up.
		const startAt = Date.now();
		const second = n8n.start();
		second.catch(() => undefined); // awaited below, after the sampler started
		sampling = await sampleMemory(n8n, samplesFile);
		await second;
		const healthyAt = Date.now();
		const emitted = new Map();
		const perCap = cap ? Math.ceil(EVENTS / cap) : 1;
		const deadline = startAt + (perCap + 5) * 60_000;
		let lastNewAt = Date.now();
		let count = 0;
		for (;;) {
			await sleep(2000);
			for (const row of executionRows(n8n))
				if (!emitted.has(row.id) && row.status !== 'running' && row.status !== 'new') {
					const ids = emittedIds(n8n, row.id, trigger.name);
					emitted.set(row.id, { ...row, ids });
					if (!warmUpRows.some((w) => w.id === row.id)) {
						count += ids.length;
						lastNewAt = Date.now();
						log(
							`${label}: execution ${row.id}: ${ids.length} events (${count} of ${EVENTS} so far)`,
						);
					}
				}
			if (count >= EVENTS && Date.now() - lastNewAt >= QUIET_MS) break;
			if (Date.now() > deadline) {
				log(`${label}: gave up waiting at ${count} of ${EVENTS} events`);
				break;
			}
		}
		const endAt = Date.now();
		const samples = await sampling.stop();
		const reads = await readsSince(control, key.key, startAt);
		await n8n.stop();
		const stored = staticData(n8n);

		const runs = [...emitted.values()].filter((row) => !warmUpRows.some((w) => w.id === row.id));
		const inBacklog = new Set(backlog);
		const catchUp = runs.filter((row) => row.ids.some((id) => inBacklog.has(id)));
		const times = new Map();
		for (const row of runs) for (const id of row.ids) times.set(id, (times.get(id) ?? 0) + 1);
		const order = runs.flatMap((row) => row.ids).filter((id) => inBacklog.has(id));
		const lastRun = catchUp.at(-1);
		const caughtUpAt = lastRun ? lastRun.stoppedAtMs : NaN;
		// The catch-up starts with the first read after the restart; what n8n's own start left in
		// memory before it is the same as at any start, and is shown apart.
		const firstRead = reads.length ? reads[0].realTimeMs : NaN;
		const beforeRead = between(samples.rss, firstRead - 2000, firstRead);
		const heapBefore = between(samples.heap, startAt, firstRead).at(-1);
		const during = between(samples.rss, firstRead, caughtUpAt);
		const duringHeap = between(samples.heap, firstRead, caughtUpAt);
		const after = between(samples.rss, caughtUpAt + 30_000, endAt);
		const sampled = between(samples.rss, startAt, caughtUpAt);
		const gaps = sampled.slice(1).map((x, i) => x.atMs - sampled[i].atMs);
		// A poll's reads come together; polls are a minute apart.
		const pollStarts = reads.filter(
			(r, i) => i === 0 || r.realTimeMs - reads[i - 1].realTimeMs > 10_000,
		);
		return {
			label,
			commit,
			cap,
			events: EVENTS,
			lost: backlog.filter((id) => !times.has(id)).length,
			twice: backlog.filter((id) => (times.get(id) ?? 0) > 1).length,
			other: [...times.keys()].filter((id) => !inBacklog.has(id)).length,
			oldestFirst: order.length === expected.length && order.every((id, i) => id === expected[i]),
			warmUp: {
				events: WARM_UP_EVENTS,
				once: warmUp.every((id) => warmUpEmitted.filter((x) => x === id).length === 1),
			},
			executions: catchUp.map((row) => ({
				id: row.id,
				items: row.ids.length,
				startedAfterMs: row.startedAtMs - startAt,
				stoppedAfterMs: row.stoppedAtMs - startAt,
				status: row.status,
				bytes: row.bytes,
			})),
			failedExecutions: runs.filter((row) => row.status !== 'success').length,
			healthyAfterMs: healthyAt - startAt,
			caughtUpAfterMs: caughtUpAt - startAt,
			firstAfterMs: catchUp.length ? catchUp[0].startedAtMs - startAt : NaN,
			firstReadAfterMs: firstRead - startAt,
			polls: pollStarts.length,
			reads: reads.length,
			memory: {
				idleRss,
				startPeakRss,
				restartPeakRss: Math.max(...between(samples.rss, startAt, firstRead).map((x) => x.rss)),
				beforeRss: median(beforeRead.map((x) => x.rss)),
				peakRss: Math.max(...during.map((x) => x.rss)),
				heapBefore: heapBefore ? heapBefore.heap : NaN,
				peakHeap: Math.max(...duringHeap.map((x) => x.heap)),
				afterRss: median(after.map((x) => x.rss)),
				samples: sampled.length,
				heapSamples: duringHeap.length,
				largestGapMs: gaps.length ? Math.max(...gaps) : NaN,
			},
			staticDataBytes: stored ? Buffer.byteLength(stored) : 0,
		};
	} finally {
		await sampling?.stop();
		await n8n.stop().catch(() => undefined);
		await sandbox.stop();
	}
}

const MB = (bytes) => `${round(bytes / 2 ** 20, 1)} MB`;
const s = (ms) => (Number.isFinite(ms) ? `${round(ms / 1000, 1)} s` : 'n/a');
const min = (ms) => (Number.isFinite(ms) ? `${round(ms / 60_000, 1)} min` : 'n/a');
const num = (n) => Number(n).toLocaleString('en-US');

/** The items of the executions, as few words as possible: "5,000 × 12" or "5,000, 5,000, 1,234". */
function sizes(executions) {
	const counts = executions.map((e) => e.items);
	if (counts.length === 0) return 'none';
	const runs = [];
	for (const n of counts)
		if (runs.length && runs.at(-1)[0] === n) runs.at(-1)[1]++;
		else runs.push([n, 1]);
	return runs.map(([n, times]) => (times > 1 ? `${num(n)} × ${times}` : num(n))).join(', ');
}

function write(results, totalMs) {
	const now = results.at(-1);
	const before = results.length > 1 ? results[0] : undefined;
	const largest = (r) => Math.max(0, ...r.executions.map((e) => e.items));
	const largestBytes = (r) => Math.max(0, ...r.executions.map((e) => e.bytes));
	const rise = (r) => r.memory.peakRss - r.memory.beforeRss;
	const heapRise = (r) => r.memory.peakHeap - r.memory.heapBefore;
	const column = (r) =>
		r === now ? `this commit (${r.commit})` : `before the cap (commit ${r.commit})`;
	const rows = [
		['Max Events per Poll (default)', (r) => (r.cap ? num(r.cap) : 'no such option')],
		['executions with backlog events', (r) => String(r.executions.length)],
		['events per execution, in order', (r) => sizes(r.executions)],
		[
			'largest execution: events / stored data',
			(r) => `${num(largest(r))} / ${MB(largestBytes(r))}`,
		],
		[
			'every event once, oldest first',
			(r) =>
				`${r.lost} lost, ${r.twice} twice, ${r.other} others; ${r.oldestFirst ? 'oldest first' : '**not** oldest first'}`,
		],
		['failed executions', (r) => String(r.failedExecutions)],
		['n8n start → healthy', (r) => s(r.healthyAfterMs)],
		['n8n start → first read of the event list', (r) => s(r.firstReadAfterMs)],
		['n8n start → first backlog execution started', (r) => s(r.firstAfterMs)],
		[
			'n8n start → last backlog execution finished (caught up)',
			(r) => `${s(r.caughtUpAfterMs)} (${min(r.caughtUpAfterMs)})`,
		],
		['polls that read events / GET /events requests', (r) => `${r.polls} / ${num(r.reads)}`],
		[
			'main process RSS before the downtime: peak of its start / idle',
			(r) => `${MB(r.memory.startPeakRss)} / ${MB(r.memory.idleRss)}`,
		],
		[
			'main process RSS after the restart: peak of its start, before the first read',
			(r) => MB(r.memory.restartPeakRss),
		],
		['main process RSS: just before the first read', (r) => MB(r.memory.beforeRss)],
		[
			'main process RSS: peak while catching up (first read → caught up)',
			(r) => MB(r.memory.peakRss),
		],
		['**main process RSS: rise while catching up**', (r) => `**${MB(rise(r))}**`],
		['main process RSS: a minute after catching up', (r) => MB(r.memory.afterRss)],
		[
			'V8 heap used + external: before the first read / peak while catching up / rise',
			(r) => `${MB(r.memory.heapBefore)} / ${MB(r.memory.peakHeap)} / ${MB(heapRise(r))}`,
		],
		['static data after catching up', (r) => `${round(r.staticDataBytes / 1024, 1)} KB`],
	];
	const goals = [
		{
			goal: `a backlog of ${num(EVENTS)} events created while n8n was down: every event emitted once, oldest first (catches a cap that drops or repeats the events past it)`,
			figure: `${num(EVENTS - now.lost)} of ${num(EVENTS)} emitted, ${now.lost} lost, ${now.twice} twice, ${now.other} others; ${now.oldestFirst ? 'oldest first' : 'not oldest first'}; ${now.failedExecutions} failed executions`,
			met:
				now.lost === 0 &&
				now.twice === 0 &&
				now.other === 0 &&
				now.oldestFirst &&
				now.failedExecutions === 0 &&
				now.warmUp.once,
		},
		{
			goal: `no execution above Max Events per Poll (its default${now.cap ? `, ${num(now.cap)}` : ''}) while catching up`,
			figure: `largest ${num(largest(now))} events in ${now.executions.length} executions`,
			met: Boolean(now.cap) && largest(now) <= now.cap,
		},
		{
			goal: `n8n's memory measured throughout the catch-up: its main process's RSS at least every second from its start until it caught up`,
			figure: `${num(now.memory.samples)} samples, largest gap ${s(now.memory.largestGapMs)}; rise ${MB(rise(now))}`,
			met: now.memory.samples > 0 && now.memory.largestGapMs <= 1000,
		},
	];
	if (before)
		goals.push({
			goal: `n8n's main-process RSS rise while catching up below that of the code before the cap (commit ${before.commit}, measured in the same run)`,
			figure: `${MB(rise(now))} vs ${MB(rise(before))}`,
			met: rise(now) < rise(before),
		});
	const trial =
		EVENTS !== 60_000 ? ` **Trial: ${num(EVENTS)} events, not the benchmark's 60,000.**` : '';
	const suite = {
		suite: 'n8n-backlog',
		title: 'A backlog after downtime in a real n8n (polling trigger)',
		sections: [
			{
				heading: `${num(EVENTS)} events created while n8n was down`,
				text: [
					`A real n8n ${e2e.versionInfo('2').version} (\`n8n start\`, regular mode, SQLite, \`N8N_METRICS=true\`) with the package installed from its packed tarball into \`~/.n8n/nodes\`, as users install community packages; the sandbox API in the benchmark's process.`,
					'The workflow: a copy of `examples/trigger-on-run-events.json` (the polling trigger, its options at their defaults, Poll Times every minute, events `run.completed`, `run.failed`, `review.created` → No Operation), published before n8n started, so the trigger starts from now.',
					`Before the downtime: n8n started, its activation poll saved the cursor, ${WARM_UP_EVENTS} events came out in one execution of a scheduled poll, then n8n idled 15 s (its RSS "idle before the downtime" is the median of the last 10 s) and was stopped (SIGTERM).`,
					`While it was down, the sandbox's clock moved on ${DOWNTIME_MS / 3_600_000} hours (the trigger reads time only from the API) and ${num(EVENTS)} events of the three types were created, spread evenly over those hours, oldest first.`,
					`Then n8n was started again; it polls at start, then once a minute. Caught up: the last execution with backlog events finished (n8n's \`stoppedAt\`), after which nothing more came out for ${QUIET_MS / 1000} s.`,
					'Executions, their items and times are read from n8n\'s database; "every event once": each created event in exactly one execution, no other event, and the events of all executions, in execution order, are the created ones sorted by id.',
					`Memory: n8n's main process (task runners apart), its RSS from /proc every ${SAMPLE_MS} ms and its V8 heap (used + external, n8n's own \`/metrics\`) every second. n8n's own start takes its RSS far above its idle figure before any poll (what it allocates while starting is collected later), so the catch-up is measured from the trigger's first read after the restart (the sandbox's request log): the rise is the peak from that read until n8n caught up, less the median of the 2 s before it; both starts' peaks are shown beside it.`,
					before
						? `Two packages measured one after the other, each in an n8n and a sandbox of its own: the code before the cap (commit ${before.commit}, built from \`git archive\` of that commit) and this commit.`
						: 'This commit only.',
					`The whole run took ${s(totalMs)} (builds, n8n starts and waits included).${trial}`,
				].join(' '),
				table: {
					columns: ['figure', ...results.map(column)],
					rows: rows.map(([name, f]) => [name, ...results.map(f)]),
				},
			},
			...results.map((r) => ({
				heading: `Each execution: ${column(r)}`,
				table: {
					columns: [
						'execution',
						'started after n8n start',
						'finished',
						'events',
						'stored data',
						'status',
					],
					rows: r.executions.map((e, i) => [
						String(i + 1),
						s(e.startedAfterMs),
						s(e.stoppedAfterMs),
						num(e.items),
						MB(e.bytes),
						e.status,
					]),
				},
			})),
		],
		goals,
	};
	fs.mkdirSync(path.join(ROOT, '.bench-results'), { recursive: true });
	fs.writeFileSync(
		path.join(ROOT, '.bench-results', 'n8n-backlog.json'),
		`${JSON.stringify(suite, null, 2)}\n`,
	);
	log(`done in ${s(totalMs)}: ${goals.filter((g) => !g.met).length} goal(s) missed`);
}

(async () => {
	e2e.ensureInstalled('2');
	sbx.buildSandbox();
	const packages = [];
	if (BEFORE !== 'none') packages.push({ label: 'before', ...packAtCommit(BEFORE) });
	const tgz = e2e.buildAndPack({
		build: process.env.BENCH_SKIP_BUILD !== '1',
		destDir: path.join(e2e.CACHE, 'bench-backlog-pack'),
	});
	packages.push({ label: 'now', tgz, sha: git('rev-parse', 'HEAD') });
	const results = [];
	for (const p of packages)
		results.push(await measure({ label: p.label, tgz: p.tgz, commit: p.sha.slice(0, 7) }));
	write(results, Date.now() - started);
})().catch((error) => {
	console.error(error);
	process.exitCode = 1;
});
