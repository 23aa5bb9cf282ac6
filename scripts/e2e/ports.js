'use strict';
/**
 * Every n8n editor port this repository's tests, benchmarks and `npm run dev` use, in one table,
 * so that processes running at the same time (the e2e files run side by side) never share one.
 * E2E_PORT_OFFSET moves them all (each checkout its own offset). Everything else an n8n needs (its
 * task broker, Redis, PostgreSQL, a worker's health port) takes a port from reservePort().
 */
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const PORTS = {
	dev: 5678, // npm run dev (--port= moves it; its sandbox and other servers take free ports)
	e2eN8n2: 5690, // test/e2e/01-n8n2
	e2eTriggerDurableDefault: 5691, // test/e2e/04-trigger-durable, default mode
	e2eN8n1: 5692, // test/e2e/02-n8n1
	e2eRenameDefault: 5693, // test/e2e/06-trigger-rename, default mode
	e2eBrowser: 5694, // test/e2e/03-browser
	e2eTriggerDurable: 5695, // test/e2e/04-trigger-durable, durable cursors
	e2eAgent: 5696, // test/e2e/05-agent
	e2eRenameDurable: 5699, // test/e2e/06-trigger-rename, durable cursors
	e2eWebhookRestartN8n2: 5685, // test/e2e/07-webhook-restart, n8n 2
	e2eWebhookRestartN8n1: 5686, // test/e2e/07-webhook-restart, n8n 1
	queueMain: 5700, // test/e2e-queue (E2E_QUEUE_PORT moves it)
	queueWebhook1: 5701, // test/e2e-queue, the first `n8n webhook` process (the exactly-once example)
	queueWebhook2: 5702, // test/e2e-queue, the second
	// The benchmarks (npm run bench runs them one after another; they write these numbers themselves).
	benchN8nBaseline: 5697, // scripts/bench/n8n-baseline.js
	benchN8nExecutions: 5698, // scripts/bench/n8n-executions.js, bench/webhook.bench.ts
	benchQueue: 5710, // scripts/e2e/queue-bench.js
	benchQueueLimited: 5730, // scripts/bench/queue-limited.js (npm run bench:queue)
	benchN8nBacklog: 5740, // scripts/bench/n8n-backlog.js (npm run bench:backlog)
	benchWebhookSafety: 5681, // bench/webhook-safety.bench.ts
	benchWebhookLatency: 5682, // bench/webhook-latency.bench.ts
	benchWebhookQueueMain: 5720, // bench/webhook-queue.bench.ts, the main
	benchWebhookQueueWebhook1: 5721, // bench/webhook-queue.bench.ts, the first `n8n webhook` process
	benchWebhookQueueWebhook2: 5722, // bench/webhook-queue.bench.ts, the second
};

/** n8n's task broker listens on 5679 unless told otherwise: no instance may take it. */
const N8N_BROKER_DEFAULT_PORT = 5679;

/** The port a process really listens on: the table's, moved by E2E_PORT_OFFSET. */
const withPortOffset = (port) => port + Number(process.env.E2E_PORT_OFFSET || 0);

/**
 * Where reservePort() looks: below the kernel's ephemeral range. A port from the kernel (listen on
 * 0) lies inside that range, where any outgoing connection may take it between our check and
 * n8n's listen, which comes after its migrations (20-40 s): n8n's task broker then exits with
 * EADDRINUSE ("n8n Task Broker's port ... is already in use"), as one CI run showed.
 */
function reservableRange() {
	let ephemeralLow = 32768;
	try {
		ephemeralLow = Number(
			fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
		);
	} catch {
		/* not Linux: the IANA ephemeral range starts at 49152, higher than Linux's default */
	}
	// From 11000: above fetch's last refused port (10080), as a worker's health port is fetched.
	return { low: 11000, high: Math.min(ephemeralLow, 32768) - 1 };
}

/** One file per port handed out, naming the process that holds it: no two processes of ours share one. */
const RESERVATIONS = path.join(os.tmpdir(), 'document-workflow-ports');

function processAlive(pid) {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return error.code === 'EPERM';
	}
}

/**
 * Takes the reservation file of `port` for this process: false if a live process holds it. A stale
 * reservation (its process has ended) is taken over under a lock directory, since two processes
 * that both read the same stale file would otherwise both write it and both hold the port.
 */
function claim(port) {
	const file = path.join(RESERVATIONS, String(port));
	fs.mkdirSync(RESERVATIONS, { recursive: true });
	try {
		fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
		return true;
	} catch (error) {
		if (error.code !== 'EEXIST') throw error;
	}
	const lock = `${file}.lock`;
	try {
		fs.mkdirSync(lock);
	} catch (error) {
		if (error.code === 'EEXIST') return false; // another process is taking it over
		throw error;
	}
	try {
		const holder = Number(fs.readFileSync(file, 'utf8'));
		if (holder && holder !== process.pid && processAlive(holder)) return false;
		fs.writeFileSync(file, String(process.pid));
		return true;
	} finally {
		fs.rmdirSync(lock);
	}
}

/** Whether a server could listen on `port` now (127.0.0.1). */
function portIsFree(port) {
	return new Promise((resolve) => {
		const srv = net.createServer();
		srv.once('error', () => resolve(false));
		srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
	});
}

const handedOut = new Set();
// Our reservations end with us: left behind, every later pick would meet a stale file to take over.
process.on('exit', () => {
	for (const port of handedOut) {
		const file = path.join(RESERVATIONS, String(port));
		try {
			if (Number(fs.readFileSync(file, 'utf8')) === process.pid) fs.unlinkSync(file);
		} catch {
			/* gone already */
		}
	}
});

/**
 * A port for a server that starts later (n8n's task broker, Redis, PostgreSQL, a worker's health
 * port): free now, outside the kernel's ephemeral range so no outgoing connection takes it in the
 * meantime, and reserved so that no other process of ours is handed it while this one lives.
 */
async function reservePort() {
	const { low, high } = reservableRange();
	const taken = new Set([N8N_BROKER_DEFAULT_PORT, ...Object.values(PORTS).map(withPortOffset)]);
	for (let attempt = 0; attempt < 200; attempt++) {
		const port = low + Math.floor(Math.random() * (high - low + 1));
		if (taken.has(port) || handedOut.has(port)) continue;
		if (!claim(port)) continue;
		if (!(await portIsFree(port))) continue;
		handedOut.add(port);
		return port;
	}
	throw new Error(`no free port between ${low} and ${high} after 200 tries`);
}

module.exports = { PORTS, N8N_BROKER_DEFAULT_PORT, withPortOffset, portIsFree, reservePort, claim };
