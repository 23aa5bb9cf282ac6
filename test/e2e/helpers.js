'use strict';
// Shared by the e2e test files: which n8n lines to test, the packed tarball, the in-process
// sandbox, waiting helpers (waitUntilSettled instead of a fixed sleep before "nothing more").
const fs = require('node:fs');
const path = require('node:path');
const e2e = require('../../scripts/e2e/n8n');

/** n8n lines to test, from E2E_N8N ("2,1" by default). */
function lines() {
	return (process.env.E2E_N8N || '2,1')
		.split(',')
		.map((s) => s.trim())
		.filter(Boolean);
}

/** The tarball global-setup packed (packs now if the file is missing, e.g. a single file run). */
function latestTgz() {
	const file = path.join(e2e.CACHE, 'pack', 'latest.json');
	if (fs.existsSync(file)) {
		const { tgz } = JSON.parse(fs.readFileSync(file, 'utf8'));
		if (fs.existsSync(tgz)) return tgz;
	}
	return e2e.packPackage();
}

/** The sandbox in this process (sandbox/src/index.ts through ts-jest). */
async function startSandbox(options = {}) {
	const { startSandbox: start } = require('../../sandbox/src/index.ts');
	return await start(options);
}

/** Polls `fn` until it returns a truthy value; throws with `what` (and the last value) on timeout. */
async function waitFor(fn, { timeoutMs = 60000, intervalMs = 1000, what = 'condition' } = {}) {
	const t0 = Date.now();
	let last;
	for (;;) {
		last = await fn();
		if (last) return last;
		if (Date.now() - t0 > timeoutMs) {
			throw new Error(
				`timed out after ${timeoutMs} ms waiting for ${what}${last !== undefined ? ` (last: ${JSON.stringify(last)})` : ''}`,
			);
		}
		await e2e.sleep(intervalMs);
	}
}

/**
 * Resolves once a trigger is done with what happened so far: no request to the sandbox's event
 * list (with `apiKey`, when given) in flight or made for `quietMs` (counted from this call at the
 * earliest), and no execution of `workflowId` new or running. What a fixed sleep before "nothing
 * more was emitted" only gives on a fast enough machine: a slow n8n reads and starts later, and is
 * waited for. `quietMs` must be longer than the longest gap between the trigger's reads while it
 * is still at work (a poll's pages, or a webhook trigger's looks for a delivered id).
 */
async function waitUntilSettled(
	n8n,
	control,
	{ workflowId, apiKey, quietMs, timeoutMs = 120_000, what = 'the trigger to settle' },
) {
	const calledAt = Date.now();
	await waitFor(
		async () => {
			const reads = (await control.getRequests({ pathPrefix: '/events' })).filter(
				(r) => !apiKey || r.headers['x-api-key'] === apiKey,
			);
			if (reads.some((r) => r.status === null && !r.dropped)) return false;
			const lastRead = Math.max(calledAt, ...reads.map((r) => r.realTimeMs));
			if (Date.now() - lastRead < quietMs) return false;
			const executions = await n8n.listExecutions(workflowId);
			return executions.every((x) => !['new', 'running'].includes(x.status));
		},
		{ what, timeoutMs, intervalMs: 500 },
	);
}

/** A run's items for one node, failing with the run's error when the node did not run. */
function outputOf(run, nodeName) {
	const items = e2e.N8nInstance.nodeOutput(run, nodeName);
	if (!items) {
		const err = run?.data?.resultData?.error;
		const ran = Object.keys(run?.data?.resultData?.runData || {});
		throw new Error(
			`node "${nodeName}" has no output; nodes that ran: ${ran.join(', ')}; error: ${err ? JSON.stringify(err).slice(0, 1500) : 'none'}`,
		);
	}
	return items;
}

module.exports = { lines, latestTgz, startSandbox, waitFor, waitUntilSettled, outputOf };
