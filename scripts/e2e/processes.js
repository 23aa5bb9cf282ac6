'use strict';
/**
 * The one registry of processes the end-to-end scripts start: n8n mains and workers, n8n CLI
 * commands, Redis, PostgreSQL and the sandbox. Each runs in its own process group (so its
 * children, e.g. n8n's task runners, end with it), and one process 'exit' hook SIGKILLs every
 * group still running, so an interrupted test or benchmark leaves nothing behind.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const owned = new Set();
let exitHooked = false;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Sends `signal` to the process group led by `pid`; false when the group is gone. */
function killGroup(pid, signal) {
	try {
		process.kill(-pid, signal);
		return true;
	} catch {
		return false;
	}
}

/**
 * Registers a child spawned with `detached: true` (its own process group). Returns the record
 * the other functions take: `{ name, child, pid, logFile, exitInfo, exited }`, where `exited`
 * resolves with `{ code, signal }` and `exitInfo` holds it once the process has ended.
 */
function own(name, child, { logFile } = {}) {
	const proc = { name, child, pid: child.pid, logFile, exitInfo: null };
	proc.exited = new Promise((resolve) =>
		child.once('exit', (code, signal) => {
			proc.exitInfo = { code, signal };
			owned.delete(proc);
			resolve(proc.exitInfo);
		}),
	);
	owned.add(proc);
	if (!exitHooked) {
		exitHooked = true;
		process.once('exit', () => {
			for (const p of owned) killGroup(p.pid, 'SIGKILL');
		});
	}
	return proc;
}

/**
 * Spawns a command in its own process group, output appended to `logFile` after a header line,
 * and registers it. `proc.logStart` is the log's size before the process wrote anything.
 */
function spawnOwned(name, cmd, args, { env = process.env, cwd, logFile, uid, gid } = {}) {
	fs.mkdirSync(path.dirname(logFile), { recursive: true });
	const out = fs.openSync(logFile, 'a');
	fs.writeSync(
		out,
		`\n===== ${name} start ${new Date().toISOString()}: ${cmd} ${args.join(' ')} =====\n`,
	);
	const logStart = fs.fstatSync(out).size;
	const child = spawn(cmd, args, {
		env,
		cwd,
		stdio: ['ignore', out, out],
		detached: true,
		uid,
		gid,
	});
	fs.closeSync(out);
	return Object.assign(own(name, child, { logFile }), { logStart });
}

/**
 * SIGTERM to the process group, SIGKILL after `graceMs`; resolves with the exit info once the
 * leader has exited. Then, after `settleMs`, SIGKILL to whatever is left in the group.
 */
async function stopProc(proc, { graceMs = 15000, settleMs = 0 } = {}) {
	if (!proc || proc.exitInfo) return proc && proc.exitInfo;
	killGroup(proc.pid, 'SIGTERM');
	const timer = setTimeout(() => killGroup(proc.pid, 'SIGKILL'), graceMs);
	const info = await proc.exited;
	clearTimeout(timer);
	if (settleMs) await sleep(settleMs);
	killGroup(proc.pid, 'SIGKILL'); // stragglers (task runners) in the group
	return info;
}

/** Everything started through this registry that is still running (a last-resort cleanup). */
async function stopEverything() {
	await Promise.all([...owned].map((p) => stopProc(p, { graceMs: 5000 })));
}

module.exports = { killGroup, own, spawnOwned, stopProc, stopEverything };
