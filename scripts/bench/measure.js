'use strict';
/**
 * What the real-n8n benchmark scripts read from the sandbox's request log and runs: how late
 * each document's output was read after its run completed. One place, so the node's rows and
 * the do-it-yourself rows are measured the same way (bench/benchmark.bench.ts does the same
 * through n8n-core).
 */

const pathOf = (entry) => entry.path.split('?')[0];

const median = (values) => {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/** For each run id: when its output was first read with success (sandbox clock, ms). */
function firstOutputReads(entries) {
	const firstRead = new Map();
	for (const entry of entries) {
		const runId = /^\/runs\/([^/]+)\/output$/.exec(pathOf(entry))?.[1];
		if (entry.method === 'GET' && runId && entry.status === 200 && !firstRead.has(runId))
			firstRead.set(runId, Date.parse(entry.time));
	}
	return firstRead;
}

/**
 * For each final run: from its completedOn to the first successful GET /runs/{id}/output for
 * it, both on the sandbox's clock, in ms and as a share of the run's length (completedOn −
 * startedOn). `unread`: runs whose output was never read. `lateShares`: every read run's share,
 * for goals on how many outputs came within a bound (withinShare).
 */
function outputLateness(entries, runs) {
	const firstRead = firstOutputReads(entries);
	const ms = [];
	const share = [];
	let unread = 0;
	let worst;
	for (const run of runs) {
		const readAt = firstRead.get(run.id);
		if (readAt === undefined) {
			unread += 1;
			continue;
		}
		const end = Date.parse(run.completedOn);
		ms.push(readAt - end);
		share.push((readAt - end) / (end - Date.parse(run.startedOn ?? run.visibleOn)));
		if (!worst || readAt - end > worst.lateMs) worst = { lateMs: readAt - end, run };
	}
	// The latest document's story, for the log: when its run started and ended, and each request that named it.
	const worstStory = worst && {
		runId: worst.run.id,
		started: worst.run.startedOn ?? worst.run.visibleOn,
		completed: worst.run.completedOn,
		requests: entries
			.filter((entry) => entry.path.includes(worst.run.id))
			.map(
				(entry) =>
					`${entry.time.slice(11, 23)} ${entry.method} ${pathOf(entry).replace(worst.run.id, '{id}')} ${entry.status}`,
			),
	};
	return {
		unread,
		worstStory,
		lateMedianMs: ms.length ? median(ms) : NaN,
		lateWorstMs: ms.length ? Math.max(...ms) : NaN,
		lateMedianShare: share.length ? median(share) : NaN,
		lateWorstShare: share.length ? Math.max(...share) : NaN,
		lateShares: share,
	};
}

/** How many of `documents` outputs were read within `bound` (a share of their run) after it ended; unread ones are not. */
const withinShare = (lateShares, bound) => lateShares.filter((share) => share <= bound).length;

/** The smallest share that `part` (0.9: 90%) of `documents` outputs were read within; Infinity when fewer were read. */
function shareReachedBy(lateShares, documents, part) {
	const needed = Math.ceil(part * documents);
	const sorted = [...lateShares].sort((a, b) => a - b);
	return needed <= sorted.length ? sorted[needed - 1] : Infinity;
}

/**
 * The same figures per run length: the runs sorted by length (completedOn − startedOn) and cut
 * into `groups` groups of (nearly) equal counts, each with its median length, its requests per
 * document and its lateness (shares of the run, as outputLateness). A run's requests are those
 * whose path names it (its status reads, its output reads, their 429 answers) plus an equal
 * share of those that name no run (uploads, event-list reads), so that the groups' requests add
 * up to all the requests. For charts of a row whose run lengths vary.
 */
function byRunLength(entries, runs, groups = 6) {
	const firstRead = firstOutputReads(entries);
	const named = new Map();
	let unnamed = 0;
	for (const entry of entries) {
		const runId = /^\/runs\/([^/]+)/.exec(pathOf(entry))?.[1];
		if (runId) named.set(runId, (named.get(runId) ?? 0) + 1);
		else unnamed += 1;
	}
	const perRun = runs
		.map((run) => {
			const start = Date.parse(run.startedOn ?? run.visibleOn);
			const end = Date.parse(run.completedOn);
			const readAt = firstRead.get(run.id);
			return {
				lengthMs: end - start,
				requests: (named.get(run.id) ?? 0) + unnamed / Math.max(1, runs.length),
				lateShare: readAt === undefined ? undefined : (readAt - end) / (end - start),
			};
		})
		.sort((a, b) => a.lengthMs - b.lengthMs);
	const count = Math.min(groups, perRun.length);
	return Array.from({ length: count }, (_, i) => {
		const group = perRun.slice(
			Math.round((i * perRun.length) / count),
			Math.round(((i + 1) * perRun.length) / count),
		);
		const shares = group.map((r) => r.lateShare).filter((share) => share !== undefined);
		return {
			lengthMs: median(group.map((r) => r.lengthMs)),
			documents: group.length,
			requestsPerDocument: group.reduce((sum, r) => sum + r.requests, 0) / group.length,
			unread: group.length - shares.length,
			lateMedianShare: shares.length ? median(shares) : NaN,
			late90Share: shareReachedBy(shares, group.length, 0.9),
			lateWorstShare: shares.length === group.length ? Math.max(...shares) : Infinity,
		};
	});
}

module.exports = {
	byRunLength,
	median,
	round,
	outputLateness,
	pathOf,
	shareReachedBy,
	withinShare,
};
