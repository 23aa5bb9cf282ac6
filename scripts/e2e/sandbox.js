'use strict';
/**
 * The sandbox (local fake of the Document Workflow API) as a separate process, for scripts/dev.js
 * and the e2e suite: compiles it (`tsc -p sandbox/tsconfig.json` into .sandbox-build, as
 * `npm run sandbox` does), starts its compiled cli, reads its control URL from the output and
 * talks to the control API over HTTP (the same routes as sandbox/src/control-client.ts).
 */
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { killGroup, own, stopProc } = require('./processes');

const ROOT = path.resolve(__dirname, '..', '..');
const BUILD_DIR = path.join(ROOT, '.sandbox-build');
const CLI = path.join(BUILD_DIR, 'sandbox', 'src', 'cli.js');

function log(...args) {
	if (process.env.E2E_QUIET) return;
	// stderr directly: jest's console adds a stack trace to every line.
	process.stderr.write(`[sandbox ${new Date().toISOString().slice(11, 19)}] ${args.join(' ')}\n`);
}

/** Compiles the sandbox (tsc -p sandbox/tsconfig.json). Throws with tsc's output on failure. */
function buildSandbox() {
	const tsconfig = path.join(ROOT, 'sandbox', 'tsconfig.json');
	if (!fs.existsSync(tsconfig)) throw new Error('sandbox/tsconfig.json does not exist yet');
	const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
	const r = spawnSync(process.execPath, [tsc, '-p', tsconfig], { cwd: ROOT, encoding: 'utf8' });
	if (!fs.existsSync(CLI))
		throw new Error(
			`sandbox build produced no ${path.relative(ROOT, CLI)}:\n${r.stdout}\n${r.stderr}`,
		);
	if (r.status !== 0)
		log(`tsc reported problems (cli.js was emitted, continuing):\n${r.stdout}${r.stderr}`);
}

/** Minimal control API client (JSON over HTTP), mirroring sandbox/src/control-client.ts. */
class Control {
	constructor(controlUrl) {
		this.controlUrl = controlUrl.replace(/\/+$/, '');
	}

	async call(method, urlPath, body) {
		const res = await fetch(`${this.controlUrl}${urlPath}`, {
			method,
			headers: body === undefined ? {} : { 'content-type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await res.text();
		const parsed = text ? JSON.parse(text) : undefined;
		if (!res.ok)
			throw Object.assign(
				new Error(`sandbox control ${method} ${urlPath} -> ${res.status}: ${text}`),
				{ status: res.status },
			);
		return parsed;
	}

	info() {
		return this.call('GET', '/info');
	}
	reset() {
		return this.call('POST', '/reset', {});
	}
	createWorkflow(input = {}) {
		return this.call('POST', '/workflows', input);
	}
	updateWorkflow(id, patch) {
		return this.call('PATCH', `/workflows/${encodeURIComponent(id)}`, patch);
	}
	createKey(input = {}) {
		return this.call('POST', '/keys', input);
	}
	listDocuments(filter = {}) {
		return this.call('GET', `/documents?${new URLSearchParams(filter)}`);
	}
	getDocument(id) {
		return this.call('GET', `/documents/${encodeURIComponent(id)}`);
	}
	listRuns(filter = {}) {
		return this.call('GET', `/runs?${new URLSearchParams(filter)}`);
	}
	getRun(id) {
		return this.call('GET', `/runs/${encodeURIComponent(id)}`);
	}
	listEvents(filter = {}) {
		return this.call('GET', `/events?${new URLSearchParams(filter)}`);
	}
	createEvents(events, options = {}) {
		return this.call('POST', '/events/bulk', { events, ...options });
	}
	getClock() {
		return this.call('GET', '/clock');
	}
	getRequests(filter = {}) {
		return this.call('GET', `/requests?${new URLSearchParams(filter)}`);
	}
	fileOriginSawApiKey() {
		return this.call('GET', '/files-origin').then((r) => r.sawApiKey);
	}
	addSubscription(input) {
		return this.call('POST', '/subscriptions', input);
	}
	getDeliveries(filter = {}) {
		return this.call('GET', `/deliveries?${new URLSearchParams(filter)}`);
	}
}

/**
 * Starts the compiled sandbox cli as a child process (own process group).
 * Resolves with `{ info, control, stop() }` where `info` is the control API's /info
 * (`baseUrl`, `controlUrl`, `apiKey`, `defaultWorkflowId`, ...).
 * @param {{ build?: boolean, args?: string[], env?: object, timeoutMs?: number, logFile?: string }} opts
 */
async function startSandboxProcess({
	build = true,
	args = [],
	env = {},
	timeoutMs = 60000,
	logFile,
} = {}) {
	if (build || !fs.existsSync(CLI)) buildSandbox();
	const child = spawn(process.execPath, [CLI, ...args], {
		cwd: ROOT,
		env: { ...process.env, ...env },
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	});
	let output = '';
	// The log's folder may not exist yet (.e2e/ in a fresh clone): a stream opened there fails later, unhandled.
	if (logFile) fs.mkdirSync(path.dirname(logFile), { recursive: true });
	const logStream = logFile ? fs.createWriteStream(logFile, { flags: 'a' }) : null;
	const onData = (d) => {
		output += d;
		if (logStream) logStream.write(d);
	};
	child.stdout.on('data', onData);
	child.stderr.on('data', onData);
	const proc = own('sandbox', child);

	const t0 = Date.now();
	let info = null;
	while (Date.now() - t0 < timeoutMs) {
		if (proc.exitInfo)
			throw new Error(`sandbox exited during start (${JSON.stringify(proc.exitInfo)}):\n${output}`);
		const controlUrl = findControlUrl(output);
		if (controlUrl) {
			try {
				info = await new Control(controlUrl).info();
				break;
			} catch {
				/* not answering yet */
			}
		}
		await new Promise((r) => setTimeout(r, 200));
	}
	if (!info) {
		killGroup(child.pid, 'SIGKILL');
		throw new Error(`sandbox printed no reachable control URL in ${timeoutMs} ms:\n${output}`);
	}
	log(`sandbox up: API ${info.baseUrl}, control ${info.controlUrl} (pid ${child.pid})`);
	return {
		info,
		control: new Control(info.controlUrl),
		child,
		exited: proc.exited,
		output: () => output,
		async stop() {
			if (proc.exitInfo) return;
			await stopProc(proc, { graceMs: 5000 });
			if (logStream) logStream.end();
		},
	};
}

/** The control URL in the cli's output: a JSON line with `controlUrl`, or a line naming "control" and a URL. */
function findControlUrl(output) {
	for (const line of output.split('\n')) {
		const t = line.trim();
		if (t.startsWith('{')) {
			try {
				const j = JSON.parse(t);
				if (j.controlUrl) return j.controlUrl;
			} catch {
				/* not JSON */
			}
		}
		const m = /control[^\n]*?(https?:\/\/[^\s"',)]+)/i.exec(t);
		if (m) return m[1];
	}
	return null;
}

module.exports = {
	ROOT,
	CLI,
	BUILD_DIR,
	buildSandbox,
	startSandboxProcess,
	Control,
	findControlUrl,
};
