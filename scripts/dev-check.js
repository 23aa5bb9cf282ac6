#!/usr/bin/env node
'use strict';
/**
 * CI's check of the README's `npm run dev` (.ci/run runs it right after `npm ci`, before any
 * other step makes a folder, so a folder dev forgets to make fails here as in a user's fresh clone):
 *
 *   1. starts `npm run dev` as a user types it (its output shown as it comes, prefixed `dev │`);
 *   2. waits for its "is running" banner, within READY_BOUND_MS;
 *   3. logs in with the owner the banner prints and checks, through n8n's REST API, that every
 *      example of examples/*.json is in that n8n with its nodes;
 *   4. runs every example that starts with a Manual Trigger as the editor's "Execute workflow" does
 *      (`POST /rest/workflows/:id/run` with the trigger to start from: n8n 2.41.1's
 *      workflows.controller `runManually`), and checks that each execution succeeded, more than
 *      its trigger ran, no node is in error, and the sandbox received API requests meanwhile;
 *   5. presses Ctrl-C (SIGINT to dev's process group, as a terminal does) and checks that dev
 *      stops within STOP_BOUND_MS, saying "Stopped." (it says more when a part could not be
 *      stopped), that none of its processes is left (its own, n8n's and the sandbox's process
 *      groups) and that the editor's and the sandbox's ports are free.
 *
 * A failure says which step failed, and prints the tail of n8n's log (dev's output is already
 * shown). Prints `[timing]` lines for the time to ready and to stop. Exit 0 when all passed.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const n8n = require('./e2e/n8n');
const { checkInstall, installInfo } = require('./e2e/n8n-install');
const { PORTS } = require('./e2e/ports');
const { Control } = require('./e2e/sandbox');

/**
 * How long dev may take to say it is running. With n8n in the cache, dev in a fresh checkout was
 * ready in 64 and 76 s here (build, pack, n8n's first start with its database migrations, three CLI
 * imports); 3 minutes leaves room for a machine busy with other work. Installing n8n 2.41.1 with
 * its Node took 6 to 8 minutes here with the machine to itself (the installer's [timing] line in
 * CI's cold runs), and dev was ready after 15 minutes on an empty HOME while other work loaded the
 * machine (npm ci 8.5 min, the native rebuild 4 min); 25 minutes leaves room for that and more.
 */
const READY_BOUND_MS = { cached: 3 * 60_000, installing: 25 * 60_000 };
/** One example's execution: the slowest (the batch of three runs) takes a few seconds. */
const EXECUTION_BOUND_MS = 2 * 60_000;
/** dev stops n8n (SIGTERM, SIGKILL after 20 s) and the sandbox (5 s) at once. */
const STOP_BOUND_MS = 60_000;
const BANNER_END = 'Press Ctrl-C to stop everything.';

const ROOT = path.resolve(__dirname, '..');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

class CheckFailed extends Error {}

function fail(message) {
	throw new CheckFailed(message);
}

/** Whether any process of the process group led by `pgid` is still there. */
function groupAlive(pgid) {
	try {
		process.kill(-pgid, 0);
		return true;
	} catch (error) {
		return error.code === 'EPERM';
	}
}

/** Starts `npm run dev` in its own process group, its output echoed and collected. */
function startDev() {
	const child = spawn('npm', ['run', 'dev'], {
		cwd: ROOT,
		env: process.env,
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	});
	const dev = { child, output: '', exit: null };
	dev.exited = new Promise((resolve) =>
		child.once('exit', (code, signal) => resolve((dev.exit = { code, signal }))),
	);
	let partial = '';
	const echo = (chunk) => {
		dev.output += chunk;
		const lines = (partial + chunk).split('\n');
		partial = lines.pop();
		// dev's `[timing]` lines (the n8n install's) unprefixed: scripts/timings.js reads them.
		for (const line of lines)
			process.stdout.write(line.startsWith('[timing] ') ? `${line}\n` : `dev │ ${line}\n`);
	};
	child.stdout.setEncoding('utf8').on('data', echo);
	child.stderr.setEncoding('utf8').on('data', echo);
	return dev;
}

/** Resolves with dev's output once it holds `text`; fails when dev exits first or `boundMs` passes. */
async function waitForOutput(dev, text, boundMs, what) {
	const t0 = Date.now();
	while (!dev.output.includes(text)) {
		if (dev.exit) fail(`npm run dev exited (${JSON.stringify(dev.exit)}) before ${what}`);
		if (Date.now() - t0 > boundMs)
			fail(`npm run dev did not reach ${what} within ${seconds(boundMs)}`);
		await sleep(250);
	}
	return dev.output;
}

/** The values the banner prints (`   Label:   value`). */
function readBanner(output) {
	const banner = output.slice(output.lastIndexOf('is running.'));
	const value = (label) => {
		const m = new RegExp(`^\\s*${label}:\\s+(\\S+)`, 'm').exec(banner);
		if (!m) fail(`the banner of npm run dev has no "${label}:" line:\n${banner}`);
		return m[1];
	};
	return {
		editor: value('Editor'),
		email: value('Email'),
		password: value('Password'),
		sandboxApi: value('Sandbox API'),
		controlApi: value('Control API'),
		n8nLog: path.resolve(ROOT, value('n8n log')),
	};
}

/** The process groups dev started, from its log lines (n8n's and the sandbox's own groups). */
function startedGroups(output) {
	const pids = [...output.matchAll(/(?:n8n \S+ starting on \S+|sandbox up: .*?) \(pid (\d+)/g)];
	return pids.map((m) => Number(m[1]));
}

/** The examples of examples/*.json, with the name of their Manual Trigger (null when none). */
function exampleFiles() {
	const dir = path.join(ROOT, 'examples');
	return fs
		.readdirSync(dir)
		.filter((file) => file.endsWith('.json'))
		.sort()
		.map((file) => {
			const workflow = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
			const manual = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.manualTrigger');
			return { file, workflow, manualTrigger: manual ? manual.name : null };
		});
}

/** Every example in that n8n, by name, with the same nodes; returns each file's n8n workflow. */
async function checkExamples(instance) {
	const listed = await instance.rest('GET', '/rest/workflows');
	const workflows = Array.isArray(listed) ? listed : listed.data || listed.results || [];
	const found = [];
	for (const example of exampleFiles()) {
		const summary = workflows.find((w) => w.name === example.workflow.name);
		if (!summary) fail(`example ${example.file} ("${example.workflow.name}") is not in n8n`);
		const stored = await instance.rest('GET', `/rest/workflows/${summary.id}`);
		const names = (nodes) => nodes.map((node) => node.name).sort();
		if (JSON.stringify(names(stored.nodes)) !== JSON.stringify(names(example.workflow.nodes)))
			fail(`example ${example.file} is in n8n with other nodes: ${names(stored.nodes)}`);
		found.push({ ...example, id: summary.id });
	}
	console.log(`dev-check: all ${found.length} examples are in n8n`);
	return found;
}

async function lastRequestSeq(control) {
	const requests = await control.getRequests({ origin: 'api' });
	return requests.length ? requests[requests.length - 1].seq : 0;
}

/** Runs one example as the editor's "Execute workflow" does; fails unless it succeeded cleanly. */
async function runExample(instance, control, example) {
	const t0 = Date.now();
	const seq = await lastRequestSeq(control);
	const started = await instance.rest('POST', `/rest/workflows/${example.id}/run`, {
		triggerToStartFrom: { name: example.manualTrigger },
	});
	if (!started?.executionId)
		fail(`n8n started no execution of ${example.file}: ${JSON.stringify(started)}`);
	let execution;
	for (;;) {
		execution = await instance.getExecution(started.executionId);
		if (!['new', 'running', 'waiting'].includes(execution.status) && execution.stoppedAt) break;
		if (Date.now() - t0 > EXECUTION_BOUND_MS)
			fail(
				`${example.file}: execution ${started.executionId} still "${execution.status}" after ${seconds(EXECUTION_BOUND_MS)}`,
			);
		await sleep(500);
	}
	const runData = execution.data?.resultData?.runData || {};
	const inError = Object.entries(runData)
		.filter(([, runs]) => runs.some((r) => r.error))
		.map(([name, runs]) => `${name}: ${runs.find((r) => r.error).error.message}`);
	const apiRequests = (await control.getRequests({ origin: 'api', afterSeq: seq })).length;
	const outcome = {
		status: execution.status,
		nodesRan: Object.keys(runData).length,
		inError,
		error: execution.data?.resultData?.error?.message,
		apiRequests,
	};
	if (
		outcome.status !== 'success' ||
		outcome.nodesRan < 2 ||
		inError.length ||
		outcome.error ||
		apiRequests === 0
	)
		fail(`${example.file} did not run cleanly against the sandbox: ${JSON.stringify(outcome)}`);
	console.log(
		`dev-check: ${example.file}: success in ${seconds(Date.now() - t0)}, ${outcome.nodesRan} nodes ran, none in error, ${apiRequests} requests to the sandbox API`,
	);
}

/** Ctrl-C as a terminal sends it: SIGINT to every process of dev's foreground group. */
async function pressCtrlC(dev) {
	if (!dev.exit) process.kill(-dev.child.pid, 'SIGINT');
	let timer;
	const bound = new Promise((resolve) => (timer = setTimeout(() => resolve(null), STOP_BOUND_MS)));
	const exit = await Promise.race([dev.exited, bound]);
	clearTimeout(timer);
	return exit;
}

/** Whatever is left of dev after a failure: SIGKILL to its group and to the groups it started. */
function killLeftovers(dev) {
	for (const pgid of [dev.child.pid, ...startedGroups(dev.output)]) {
		try {
			process.kill(-pgid, 'SIGKILL');
		} catch {
			/* gone */
		}
	}
}

function printLogTail(file, lines = 60) {
	if (!file || !fs.existsSync(file)) return;
	const tail = fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
	console.log(`\n── the last ${lines} lines of ${path.relative(ROOT, file)} ──\n${tail}`);
}

async function main() {
	// The point of this check is a checkout where dev has made nothing yet; in CI, say so if it is not.
	const made = [n8n.CACHE, path.join(ROOT, '.sandbox-build'), path.join(ROOT, 'dist')].filter(
		(folder) => fs.existsSync(folder),
	);
	if (made.length && process.env.CI)
		fail(
			`${made.map((p) => path.relative(ROOT, p)).join(', ')} already exist: run this check first in .ci/run, right after npm ci, so that it sees a fresh clone`,
		);

	const installing = !checkInstall(installInfo('2')).ok;
	const readyBound = READY_BOUND_MS[installing ? 'installing' : 'cached'];
	console.log(
		`dev-check: npm run dev (n8n ${installing ? 'not installed yet: dev installs it' : 'in the cache'}); ready within ${seconds(readyBound)} or it fails`,
	);
	const t0 = Date.now();
	const dev = startDev();
	let banner = null;
	try {
		const output = await waitForOutput(dev, BANNER_END, readyBound, 'its "is running" banner');
		const readyMs = Date.now() - t0;
		console.log(
			`[timing] npm run dev ready: ${seconds(readyMs)} (${installing ? 'n8n installed by it' : 'n8n in the cache'})`,
		);
		banner = readBanner(output);

		// The REST client of the tests, pointed at dev's n8n (it never starts or stops it).
		const instance = new n8n.N8nInstance({
			major: '2',
			userFolder: path.join(n8n.CACHE, 'dev'),
			port: PORTS.dev,
		});
		if (instance.editorUrl !== banner.editor)
			fail(
				`the banner's editor ${banner.editor} is not ${instance.editorUrl}, where dev starts n8n`,
			);
		instance.owner = { email: banner.email, password: banner.password };
		await instance.login();
		const control = new Control(banner.controlApi);

		const examples = await checkExamples(instance);
		for (const example of examples.filter((e) => e.manualTrigger))
			await runExample(instance, control, example);
		console.log(
			`dev-check: not started by hand (they wait for events): ${examples
				.filter((e) => !e.manualTrigger)
				.map((e) => e.file)
				.join(', ')}`,
		);

		const groups = startedGroups(dev.output);
		if (groups.length !== 2)
			fail(`expected dev to start n8n and the sandbox, found pids ${groups}`);
		const tStop = Date.now();
		const exit = await pressCtrlC(dev);
		if (!exit) fail(`npm run dev did not stop within ${seconds(STOP_BOUND_MS)} of Ctrl-C`);
		console.log(`[timing] npm run dev stop: ${seconds(Date.now() - tStop)}`);
		// npm waits for dev, then ends itself with the SIGINT it got (a shell shows 130), whatever
		// dev's exit code: dev's own outcome is its last line.
		if (exit.signal !== 'SIGINT' && exit.code !== 0)
			fail(`npm run dev exited with ${JSON.stringify(exit)} after Ctrl-C`);
		if (!/^Stopped\.$/m.test(dev.output))
			fail('npm run dev did not end with "Stopped." after Ctrl-C (see its output above)');
		await sleep(500); // a process group's last member may still be exiting
		const left = [dev.child.pid, ...groups].filter(groupAlive);
		if (left.length) fail(`processes left after Ctrl-C in the process groups ${left.join(', ')}`);
		const ports = [
			Number(new URL(banner.editor).port),
			Number(new URL(banner.sandboxApi).port),
			Number(new URL(banner.controlApi).port),
		];
		for (const port of ports)
			if (!(await n8n.portIsFree(port))) fail(`port ${port} is still in use after Ctrl-C`);
		console.log(
			`dev-check: stopped cleanly ("Stopped.", no process left, ports ${ports.join(', ')} free)`,
		);
	} catch (error) {
		console.log(
			`\ndev-check FAILED: ${error instanceof CheckFailed ? error.message : error.stack}`,
		);
		if (!dev.exit) await pressCtrlC(dev);
		killLeftovers(dev);
		printLogTail(banner?.n8nLog || path.join(n8n.CACHE, 'dev', 'n8n.log'));
		process.exitCode = 1;
	}
}

main();
