/** When the webhook trigger reads and which deliveries wait (`reader.ts` reads); pure, the clock
 * passed in; why: README.md. A delivery stays till a read since it came looked for its ids, or its
 * hold ends. */
import type { EventCursor } from '../shared/eventCursor';
import { frontier } from '../shared/eventCursor';

/** The shortest time between two reads while every id that rang for them was listed. */
export const FAST_GAP_MS = 250;
/** Else a second per request of the read before (at most 3): unlisted ids cost a request/s. */
export const SLOW_GAP_MS = 1000;
/** A delivery's hold after it arrives, unless a read sets another (`afterRead`, `waitsUntil`). */
export const HOLD_MS = 5000;

/** What paces the reads (local ms), as it is before the first. */
export const firstTiming = () => ({
	lastReadAt: -Infinity, // when the last read that ended had started
	lastRequests: 1, // the requests it made
	listedAll: true, // it listed every id that rang for it
	more: false, // it stopped at its bound with more listed
	rungAt: Infinity, // when the first id rang since it started (Infinity: none)
	checkedAt: -Infinity, // when the last read over what was read before that did not fail started
});
export type ReadTiming = ReturnType<typeof firstTiming>;

/** When the next read is due; undefined when nothing calls for one. */
export function nextReadAt(timing: ReadTiming, owed: number): number | undefined {
	// New ids are read for as soon as the gap after the last read allows (what a delivery brings is
	// saved after its read: the sooner the safer), so a burst shares its reads. Ids still owed are
	// looked for again a gap later (a second a request); a process's first delivery always reads.
	const lookAgainAt =
		owed > 0 || timing.checkedAt === -Infinity ? timing.lastReadAt + SLOW_GAP_MS : Infinity;
	const wanted = timing.more ? -Infinity : Math.min(timing.rungAt, lookAgainAt);
	if (wanted === Infinity) return undefined;
	const gap = timing.listedAll ? FAST_GAP_MS : SLOW_GAP_MS * Math.min(timing.lastRequests, 3);
	return Math.max(wanted, timing.lastReadAt + gap);
}

/** A read goes over what was read before a second after the last did, or for an owed id there:
 * every owed id, not just those that rang now, as one listed late below the frontier is found. */
export function rechecks(timing: ReadTiming, now: number, owed: string[], cursor?: EventCursor) {
	const newest = cursor && frontier(cursor);
	return owed.some((id) => !!newest && id <= newest) || now - timing.checkedAt >= SLOW_GAP_MS;
}

/** The rule's time: an answered delivery's event comes out within this long of it, once listed. */
export const RULE_MS = 10_000;
/** A read starts no request ending past this long at its pace; the next goes on (`more`). */
export const READ_MS = 10_000;
/** The longest hold (a backlog's holder, `afterRead`); a read's starter waits for its end. */
export const MAX_HOLD_MS = READ_MS + RULE_MS;

/** A held delivery as the policy sees it: `readsBefore` its arrival; `holdUntil` as the last read's
 * `afterRead` set it (unset: `HOLD_MS` after it came). */
export type Held = { arrivedAt: number; readsBefore: number; state: string; holdUntil?: number };
type Outcome = { index: number; failed: boolean; found: boolean; owed: number; more: boolean };

/** Until when a held delivery waits: for its next read (`due`), within its hold; while a read it
 * did not start is in flight, till `MAX_HOLD_MS` after arriving, whatever its hold (ids owed). */
export const waitsUntil = (d: Held, due: number, inFlight: boolean) =>
	inFlight ? d.arrivedAt + MAX_HOLD_MS : Math.min(due, d.holdUntil ?? d.arrivedAt + HOLD_MS);

/** After read number `index`: the earliest delivery that started or joined it carries what it
 * found; while ids are owed or more is listed, the latest other one stays as holder (`MAX_HOLD_MS`
 * while more is listed: a backlog). One that came during the read stays `RULE_MS` (else a long read
 * answers it unread); the holder, and all after a failed read, `HOLD_MS`; the rest leave. Holds
 * count from arrival; `staying`: each → when its hold ends. */
export function afterRead<T extends Held>(waiting: Iterable<T>, read: Outcome, now: number) {
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
