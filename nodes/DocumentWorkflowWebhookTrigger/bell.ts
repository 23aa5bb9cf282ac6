/**
 * When the webhook trigger reads, decided apart from the reading (`reader.ts`): pure, the
 * clock passed in. A delivered id newer than anything the trigger has read rings the bell:
 * a read soon, and if that read does not list it, a few looks again on whole seconds (one
 * schedule per trigger, shared by every id). Reads are spaced more widely while rung ids turn
 * out not to be listed (a second per request the last read made), so ids that are never listed
 * cost at most one request a second, and none once their last look is over. Ids at or below
 * what was read cost nothing (`reader.ts`).
 */

export interface BellTiming {
	/** How long a newly rung id waits for others before its read (one read for all of them). */
	gatherMs: number;
	/** The shortest time between two reads while every rung id was listed by the read after it. */
	fastGapMs: number;
	/** After a read that did not list an id that rang for it: the shortest time to the next read, per request it made (at most three); looks again are always this far apart. */
	slowGapMs: number;
	/** An id not listed is looked for again this long after its delivery, then after twice as long, and so on. */
	firstLookMs: number;
	/** Looks again fall on multiples of this (whole seconds), so ids delivered close together share them. */
	gridMs: number;
	/** An id not listed by a read that started this long after its delivery is let go. */
	lookForMs: number;
}

export const DEFAULT_BELL_TIMING: BellTiming = {
	gatherMs: 100,
	fastGapMs: 250,
	slowGapMs: 1000,
	firstLookMs: 1000,
	gridMs: 1000,
	lookForMs: 4000,
};

/** Ids looked for at once per trigger; beyond it the oldest is let go (its event still comes out with a later read). */
export const MAX_PENDING_IDS = 1000;

interface PendingId {
	deliveredAt: number;
	/** When it is looked for again, if the read it rang for does not list it. */
	lookAt: number;
	/** The gap from its delivery to its next look. */
	gapMs: number;
}

/** One trigger's bell. */
export interface Bell {
	/** Delivered ids not listed yet, oldest delivery first. */
	pending: Map<string, PendingId>;
	/** Ids that rang since the last read started: the next read is for them. */
	rung: Set<string>;
	/** When the oldest of them rang. */
	rungAt?: number;
	/** Set when a read stopped before the end of the list (its limits): another read follows. */
	goOnAt?: number;
	lastReadAt: number;
	/** The last read did not list an id that rang for it (or failed): reads are spaced `slowGapMs` per request. */
	slow: boolean;
	/** Requests the last read made. */
	lastRequests: number;
}

/** The slow spacing grows with the requests of the last read up to this many. */
const MAX_SLOW_REQUESTS = 3;

export function newBell(): Bell {
	return {
		pending: new Map(),
		rung: new Set(),
		lastReadAt: -Infinity,
		slow: false,
		lastRequests: 1,
	};
}

function onGrid(ms: number, timing: BellTiming): number {
	return Math.ceil(ms / timing.gridMs) * timing.gridMs;
}

/** Ids a delivery named that are newer than what was read and not looked for yet. Returns the ids let go to make room. */
export function ring(bell: Bell, ids: string[], now: number, timing: BellTiming): string[] {
	const dropped: string[] = [];
	for (const id of ids) {
		if (bell.pending.has(id)) continue;
		bell.pending.set(id, {
			deliveredAt: now,
			lookAt: onGrid(now + timing.firstLookMs, timing),
			gapMs: timing.firstLookMs,
		});
		bell.rung.add(id);
		bell.rungAt ??= now;
	}
	for (const id of bell.pending.keys()) {
		if (bell.pending.size <= MAX_PENDING_IDS) break;
		bell.pending.delete(id);
		bell.rung.delete(id);
		dropped.push(id);
	}
	return dropped;
}

/** Lets go of the ids whose looks are over though no read looked (no delivery waited to carry one). Returns them. */
export function expire(bell: Bell, now: number, timing: BellTiming): string[] {
	const expired: string[] = [];
	for (const [id, pending] of bell.pending) {
		if (now - pending.deliveredAt < timing.lookForMs + timing.gridMs) continue;
		bell.pending.delete(id);
		bell.rung.delete(id);
		expired.push(id);
	}
	if (bell.rung.size === 0) bell.rungAt = undefined;
	return expired;
}

/**
 * When the next read is due; undefined when nothing wants one. Ids that rang are read for
 * after `gatherMs`, `fastGapMs` after the last read (`slowGapMs` per request while rung ids
 * went unlisted); looks again come `slowGapMs` per request after the last read at the soonest.
 */
export function nextReadAt(bell: Bell, timing: BellTiming): number | undefined {
	const slowGapMs = timing.slowGapMs * Math.min(Math.max(bell.lastRequests, 1), MAX_SLOW_REQUESTS);
	let rung = bell.rungAt === undefined ? Infinity : bell.rungAt + timing.gatherMs;
	if (bell.goOnAt !== undefined) rung = Math.min(rung, bell.goOnAt);
	let look = Infinity;
	for (const [id, pending] of bell.pending)
		if (!bell.rung.has(id)) look = Math.min(look, pending.lookAt);
	const due = Math.min(
		Math.max(rung, bell.lastReadAt + (bell.slow ? slowGapMs : timing.fastGapMs)),
		Math.max(look, bell.lastReadAt + slowGapMs),
	);
	return due === Infinity ? undefined : due;
}

/** What a read is for, taken when it starts. */
export interface ReadPurpose {
	startedAt: number;
	/** The ids that rang for it. */
	rung: Set<string>;
	/** The ids it looks for again (a read before it did not list them). */
	lookedAgain: string[];
}

export function readStarts(bell: Bell, now: number): ReadPurpose {
	const purpose: ReadPurpose = { startedAt: now, rung: bell.rung, lookedAgain: [] };
	for (const [id, pending] of bell.pending)
		if (!purpose.rung.has(id) && pending.lookAt <= now) purpose.lookedAgain.push(id);
	bell.rung = new Set();
	bell.rungAt = undefined;
	bell.goOnAt = undefined;
	bell.lastReadAt = now;
	return purpose;
}

/**
 * Takes what a read found: `listed` says whether an id is listed now (or can never be). A
 * complete read (to the end of the list) that did not list a pending id it looked for
 * schedules its next look, or lets it go once it started `lookForMs` after the delivery. A
 * read that stopped before the end is followed by another at the usual spacing. Returns the
 * ids let go.
 */
export function readEnds(
	bell: Bell,
	purpose: ReadPurpose,
	outcome: {
		complete: boolean;
		failed: boolean;
		/** Requests the read made. */
		requests: number;
		listed: (id: string) => boolean;
	},
	now: number,
	timing: BellTiming,
): string[] {
	const letGo: string[] = [];
	bell.lastRequests = outcome.requests;
	if (!outcome.complete) {
		// Looked for by nobody yet: the ids ring again for the read that goes on.
		for (const id of purpose.rung) if (bell.pending.has(id)) bell.rung.add(id);
		if (bell.rung.size > 0) bell.rungAt ??= now;
		if (!outcome.failed) bell.goOnAt = now;
		bell.slow = outcome.failed;
		return letGo;
	}
	bell.slow = false;
	for (const [id, pending] of bell.pending) {
		if (outcome.listed(id)) {
			bell.pending.delete(id);
			continue;
		}
		const lookedFor = purpose.rung.has(id) || pending.lookAt <= purpose.startedAt;
		if (!lookedFor) continue;
		if (purpose.rung.has(id)) bell.slow = true;
		if (purpose.startedAt - pending.deliveredAt >= timing.lookForMs) {
			bell.pending.delete(id);
			letGo.push(id);
			continue;
		}
		if (!purpose.rung.has(id)) pending.gapMs *= 2;
		pending.lookAt = Math.max(
			onGrid(pending.deliveredAt + Math.min(pending.gapMs, timing.lookForMs), timing),
			purpose.startedAt + 1,
		);
	}
	return letGo;
}
