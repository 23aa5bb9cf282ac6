'use strict';
/**
 * Several n8n webhook processes behind one URL, for the queue-mode suite and the webhook
 * benchmark: `n8n webhook` processes of a queue-mode cluster (scripts/e2e/queue.js), each with the
 * packed package in its own user folder, and a small proxy in front of them that routes each
 * delivery as a load balancer would:
 *
 * - `both`: the first copy of a body goes to the next process in turn, each later copy of the same
 *   body to the one after, so a delivery sent twice reaches two processes (each process receives
 *   every delivery once when the service sends each twice);
 * - `round-robin`: each request to the next process in turn, whatever its body (a repeat usually
 *   lands on another process than the first copy).
 */
const { createServer, request } = require('node:http');
const path = require('node:path');
const e2e = require('./n8n');
const queue = require('./queue');

/**
 * An `n8n webhook` process with the package installed in a user folder of its own under `dir`,
 * ready once /healthz answers. `env`: the cluster's environment (and anything added to it).
 */
async function startWebhookProcess({ name, dir, env, port, tgz }) {
	const inst = new e2e.N8nInstance({
		userFolder: path.join(dir, name),
		port,
		env,
		fresh: true,
		encryptionKey: queue.ENCRYPTION_KEY,
	});
	e2e.installPackageInto(inst.userFolder, tgz);
	await inst.ensureBrokerPort();
	const proc = queue.spawnOwned(name, inst.info.nodeBin, [inst.info.n8nBin, 'webhook'], {
		env: inst.env(),
		cwd: inst.userFolder,
		logFile: path.join(inst.userFolder, 'webhook.log'),
	});
	await queue.waitUntil(async () => (await fetch(`${inst.baseUrl}/healthz`)).status === 200, {
		timeoutMs: 180_000,
		intervalMs: 500,
		what: `${name} /healthz`,
		proc,
	});
	e2e.log(`${name} ready on ${inst.baseUrl} (pid ${proc.pid})`);
	return { name, baseUrl: inst.baseUrl, proc, stop: () => queue.stopProc(proc) };
}

/**
 * One URL in front of `backends` (base URLs), routing as `mode` says (see above). `counts[i]`:
 * requests sent to backend i so far. Resolves once it listens on a free loopback port.
 */
async function startDeliveryProxy(backends, { mode = 'both' } = {}) {
	if (mode !== 'both' && mode !== 'round-robin') throw new Error(`unknown proxy mode ${mode}`);
	const seen = new Map();
	const counts = backends.map(() => 0);
	let turn = 0;
	const server = createServer((req, res) => {
		const chunks = [];
		req.on('data', (chunk) => chunks.push(chunk));
		req.on('end', () => {
			const body = Buffer.concat(chunks);
			let index;
			if (mode === 'round-robin') index = turn++ % backends.length;
			else {
				const key = body.toString('utf8');
				const last = seen.get(key);
				index = last === undefined ? turn++ % backends.length : (last + 1) % backends.length;
				seen.set(key, index);
			}
			counts[index]++;
			const forward = request(
				`${backends[index]}${req.url}`,
				{ method: req.method, headers: { ...req.headers, host: new URL(backends[index]).host } },
				(answer) => {
					res.writeHead(answer.statusCode ?? 502, answer.headers);
					answer.pipe(res);
				},
			);
			forward.on('error', () => {
				res.writeHead(502);
				res.end();
			});
			forward.end(body);
		});
	});
	await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${server.address().port}`,
		counts,
		close: () => new Promise((resolve) => server.close(() => resolve())),
	};
}

module.exports = { startWebhookProcess, startDeliveryProxy };
