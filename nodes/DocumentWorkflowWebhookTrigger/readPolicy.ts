/** When the webhook trigger reads and which deliveries wait (`reader.ts` reads): pure, the clock passed in. Why: README.md. */

/** The shortest time between two reads while every id that rang for them was listed. */
export const FAST_GAP_MS = 250;
/** Otherwise a second per request of the read before (at most three): unlisted ids cost a request a second at most. */
export const SLOW_GAP_MS = 1000;
/** A delivery is held this long after it arrives, unless a read keeps it (`afterRead`) or it waits for one (`waitsUntil`). */
export const HOLD_MS = 5000;

/** The reads so far: when the last started (local ms) and its requests, whether it listed every id that rang for it, whether it stopped at its bound with more listed (`more`); when the first id rang since (Infinity: none); when a read last went over what was read before (-Infinity: none in this process). */
export type ReadTiming = ReturnType<typeof firstTiming>;

const NO_READ_YET = { lastReadAt: -Infinity, lastRequests: 1, listedAll: true, more: false };
export const firstTiming = () => ({ ...NO_READ_YET, rungAt: Infinity, checkedAt: -Infinity });

/** When the next read is due; undefined when nothing calls for one. */
export function nextReadAt(timing: ReadTiming, owed: number): number | undefined {
	// New ids are read for at once (what a delivery brings is saved after its read: the sooner the
	// safer); those that ring during a read wait for the gap, so a burst shares its reads. Ids still
	// owed are looked for again a second later; a process's first delivery always reads.
	const lookAgainAt =
		owed > 0 || timing.checkedAt === -Infinity ? timing.lastReadAt + SLOW_GAP_MS : Infinity;
	const wanted = timing.more ? -Infinity : Math.min(timing.rungAt, lookAgainAt);
	if (wanted === Infinity) return undefined;
	const gap = timing.listedAll ? FAST_GAP_MS : SLOW_GAP_MS * Math.min(timing.lastRequests, 3);
	return Math.max(wanted, timing.lastReadAt + gap);
}

/** A read goes over what was read before a second after the last time, or for an owed id that lies there. */
export const rechecks = (timing: ReadTiming, now: number, owedBehindFrontier: boolean) =>
	owedBehindFrontier || now - timing.checkedAt >= SLOW_GAP_MS;

/** The rule's time: an answered delivery's event comes out within this long of it, once listed. */
export const RULE_MS = 10_000;
/** A read starts no request past this long; what it did not reach, the next read goes on with (`more`). */
export const READ_MS = 10_000;
/** The longest hold (a backlog's holder, `afterRead`). */
export const MAX_HOLD_MS = READ_MS + RULE_MS;

/** A held delivery as the policy sees it: when it came, how many reads had started, its state, and its hold as a read kept it. */
type Held = { arrivedAt: number; readsBefore: number; state: string; holdUntil?: number };

/** Until when a held delivery waits: for its next read (`due`), within its hold; for a read in flight that it did not start, within `MAX_HOLD_MS` of its arrival, however long that read takes (its ids stay owed). */
export const waitsUntil = (d: Held, due: number, inFlight: boolean) =>
	inFlight ? d.arrivedAt + MAX_HOLD_MS : Math.min(due, d.holdUntil ?? d.arrivedAt + HOLD_MS);

/**
 * Who goes after read number `index`. The earliest delivery awake carries what it found (one
 * asleep until its next read would notice only then); while ids are owed or more is listed, the
 * latest of the others stays as the holder. The rest stay until a read since their arrival looked
 * for their ids (or after a failed read), within `HOLD_MS` of their arrival, or `RULE_MS` for one
 * that came during this read (else a long read answers it unread). A read that stopped at its
 * bound keeps its holder for the next, `MAX_HOLD_MS` after it came (a backlog at a slow API).
 * `staying` maps each delivery that stays to when its hold ends.
 */
export function afterRead<T extends Held>(
	waiting: T[],
	read: { index: number; failed: boolean; found: boolean; owed: number; more: boolean },
	now: number,
): { carrier?: T; staying: Map<T, number> } {
	const byArrival = [...waiting].sort((a, b) => a.arrivedAt - b.arrivedAt);
	const carrier = read.found ? byArrival.find(({ state }) => state !== 'asleep') : undefined;
	const others = byArrival.filter((delivery) => delivery !== carrier);
	const holder = read.owed > 0 || read.more ? others.at(-1) : undefined;
	const holdFor = (delivery: T) => {
		if (delivery === holder && read.more) return MAX_HOLD_MS;
		if (delivery.readsBefore >= read.index) return RULE_MS; // came during this read
		return delivery === holder || read.failed ? HOLD_MS : 0;
	};
	const ends = others.map((d) => [d, d.arrivedAt + holdFor(d)] as const);
	return { carrier, staying: new Map(ends.filter(([, end]) => now < end)) };
}
