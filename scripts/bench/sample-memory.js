#!/usr/bin/env node
'use strict';
/**
 * Samples one process's memory into a file, one JSON line per sample, until the process is gone
 * or this one is ended: its RSS from /proc every `intervalMs`, and once a second, when a metrics
 * URL is given, n8n's own V8 heap figures from its `/metrics` (`N8N_METRICS=true`). A process of
 * its own, so that what the benchmark does meanwhile (reading n8n's database) never delays a
 * sample.
 *
 *   node scripts/bench/sample-memory.js <pid> <out.jsonl> [metricsUrl] [intervalMs]
 */
const fs = require('node:fs');

const [pid, out, metricsUrl, intervalArg] = process.argv.slice(2);
const intervalMs = Number(intervalArg ?? 250);
const fd = fs.openSync(out, 'a');
const write = (sample) => fs.writeSync(fd, `${JSON.stringify(sample)}\n`);

function rss() {
	try {
		const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
		return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) * 1024;
	} catch {
		return NaN;
	}
}

async function heap() {
	try {
		const res = await fetch(metricsUrl, { signal: AbortSignal.timeout(2000) });
		if (!res.ok) return NaN;
		const text = await res.text();
		const metric = (name) => Number(new RegExp(`^n8n_${name} (\\S+)`, 'm').exec(text)?.[1]);
		return metric('nodejs_heap_size_used_bytes') + metric('nodejs_external_memory_bytes');
	} catch {
		return NaN;
	}
}

let ticks = 0;
let asking = false;
const timer = setInterval(() => {
	const atMs = Date.now();
	const bytes = rss();
	if (!Number.isFinite(bytes)) {
		clearInterval(timer);
		return;
	}
	write({ atMs, rss: bytes });
	if (!metricsUrl || asking || ticks++ % Math.max(1, Math.round(1000 / intervalMs)) !== 0) return;
	asking = true;
	void heap().then((value) => {
		asking = false;
		if (Number.isFinite(value)) write({ atMs, heap: value });
	});
}, intervalMs);
process.on('SIGTERM', () => process.exit(0));
