/**
 * When the webhook trigger reads and how long a delivery waits, decided apart from the reading
 * (`reader.ts`): pure, the clock passed in. README.md beside this file says why.
 */

/** New ids wait this long for others to ring with them: one read for a burst. */
export const GATHER_MS = 100;
/** The shortest time between two reads while every id they were for was listed. */
export const FAST_GAP_MS = 250;
/** Otherwise a read waits this long per request of the read before (at most three): forged ids cost at most a request a second. */
export const SLOW_GAP_MS = 1000;
/** A delivery is held at most this long after it arrives (a read in flight is waited for). */
export const HOLD_MS = 5000;
/** The stretch read before is gone over (for events committed late) at most this often, unless an id is looked for there. */
export const RECHECK_MS = 1000;

/** What a trigger's reads have been, as far as the timing goes. */
export interface ReadTiming {
	/** When the last read started (local ms). */
	lastReadAt: number;
	/** Requests it made. */
	lastRequests: number;
	/** It listed every id that rang for it. */
	listedAll: boolean;
	/** When the first id rang since the last read started; undefined: none did. */
	rungAt?: number;
	/** The last read stopped at its limits: more is listed. */
	more: boolean;
	/** When a read last went over the stretch read before (no read yet in this process: -Infinity). */
	checkedAt: number;
}

export const firstTiming = (): ReadTiming => ({
	lastReadAt: -Infinity,
	lastRequests: 1,
	listedAll: true,
	more: false,
	checkedAt: -Infinity,
});

/**
 * When the next read is due; undefined when nothing calls for one. Ids that rang are read for
 * after `GATHER_MS`, the rest of a long list at once, ids still owed a second after the last look.
 */
export function nextReadAt(timing: ReadTiming, owed: number): number | undefined {
	const wanted = Math.min(
		timing.rungAt === undefined ? Infinity : timing.rungAt + GATHER_MS,
		timing.more ? -Infinity : Infinity,
		owed > 0 || timing.checkedAt === -Infinity ? timing.lastReadAt + SLOW_GAP_MS : Infinity,
	);
	if (wanted === Infinity) return undefined;
	const gap = timing.listedAll
		? FAST_GAP_MS
		: SLOW_GAP_MS * Math.min(Math.max(timing.lastRequests, 1), 3);
	return Math.max(wanted, timing.lastReadAt + gap);
}

/** Whether a read starting `now` also goes over what was read before: first in this process, a second since the last time, or an id that just rang lies there. */
export function rechecks(timing: ReadTiming, now: number, rungBehindFrontier: boolean): boolean {
	return rungBehindFrontier || now - timing.checkedAt >= RECHECK_MS;
}

/** A waiting delivery, as far as the policy goes. */
export interface Waiting {
	arrivedAt: number;
}

/**
 * Who goes after a read that started at `startedAt` (failed or not): the earliest arrival carries
 * what it found; while ids are owed or more is listed, the latest arrival stays as the holder, up
 * to `HOLD_MS` after it arrived; every other delivery stays only until a read since its arrival
 * succeeded (its ids were looked for, and it then saves what is owed), or `HOLD_MS`.
 */
export function afterRead<T extends Waiting>(
	waiting: T[],
	read: { startedAt: number; failed: boolean; found: boolean; owed: number; more: boolean },
	now: number,
): { carrier?: T; staying: T[] } {
	const byArrival = [...waiting].sort((a, b) => a.arrivedAt - b.arrivedAt);
	const carrier = read.found ? byArrival.shift() : undefined;
	const holder = read.owed > 0 || read.more ? byArrival[byArrival.length - 1] : undefined;
	const staying = byArrival.filter(
		(delivery) =>
			now < delivery.arrivedAt + HOLD_MS &&
			(delivery === holder || read.failed || read.startedAt < delivery.arrivedAt),
	);
	return { carrier, staying };
}
