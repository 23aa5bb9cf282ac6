/**
 * How fast reads may go under the API's read rate limit: one pacer per API key in this n8n
 * process, shared by every read of every node (the plan's read limit is one limit). Pure but for
 * the registry; the caller passes `now`. What each value trades: docs/waiting.md.
 */
import { LruMap } from '../lruMap';
import { KEYS_KEPT } from './rateLimits';

export const START_RATE = 200;
export const GROWTH_AFTER_MS = 100;
export const BACK_OFF = 0.85;
export const SLOW_GROWTH = 0.02;
export const LIMIT_TRUSTED_MS = 60_000;

/** A unit, not a choice: rates are reads a second. */
const SECOND_MS = 1000;
/** The second a 429 counts back, and a second for that 429 to come late. */
const SENDS_KEPT_MS = 2 * SECOND_MS;
/** A 429 under the trusted limit lowers it only if another came under it this shortly before. */
export const LOWER_AFTER_MS = 10 * SECOND_MS;

export class ReadPacer {
	/** Reads a second it lets through now, and when a read held back may try again. */
	readsPerSecond = START_RATE;
	nextSendAt = 0;
	/** Since when reads are held back, no read going unheld meanwhile. */
	private heldSince?: number;
	private heldSinceSend = false;
	/** The limit learnt at the last 429 that taught one (see `rateLimited`), and when. */
	private limit?: { perSecond: number; at: number };
	/** The last 429 under the trusted limit: what was sent in the second before it, and when. */
	private under?: { sent: number; at: number };
	private readonly sentAt: number[] = [];
	/** Reads waiting for a slot, in the order they first asked: a slot goes to the first. */
	private readonly queue = new Set<object>();

	/**
	 * Whether a read may go at `now` (then it counts as sent); held back long, the rate grows. With
	 * a `ticket`, reads go in the order they asked: one that asks again right after its answer
	 * (a trigger looking again each second) takes no turn from those already waiting.
	 */
	trySend(now: number, ticket?: object): boolean {
		const first = !ticket || this.queue.add(ticket).values().next().value === ticket;
		const interval = SECOND_MS / this.readsPerSecond;
		const trusted = this.trustedLimit(now);
		if (trusted !== undefined) {
			// A read after a pause may go close behind the one before (below), but under a trusted
			// limit not so that a second holds more than the pace: the API's window would refuse one.
			// The second is counted a step long (the pace's step under the limit, at a limit of 1 too):
			// at the pace no 1.02 s holds more than the limit, so reads that start a window together
			// (after a 429's wait) leave the API's window a fiftieth of a second of slack for jitter.
			const span = SECOND_MS * (1 + SLOW_GROWTH);
			const recent = this.sentAt.filter((at) => at > now - span);
			if (recent.length >= Math.ceil(this.readsPerSecond * (1 + SLOW_GROWTH)))
				this.nextSendAt = Math.max(this.nextSendAt, recent[0] + span);
		}
		if (this.nextSendAt <= now && first) {
			// The interval unused while the timer was late is spent: reads keep their pace.
			this.nextSendAt = Math.max(this.nextSendAt, now - interval) + interval;
			// Back under a trusted limit, reads held within each second count as held all along:
			// answers come in bursts, and the pace that was cut at the 429 is to grow back to it.
			const burst = trusted !== undefined && now - (this.sentAt.at(-1) ?? -Infinity) <= SECOND_MS;
			if (!this.heldSinceSend && !burst) this.heldSince = undefined;
			this.heldSinceSend = false;
			this.sentAt.push(now);
			while (this.sentAt[0] < now - SENDS_KEPT_MS) this.sentAt.shift();
			if (ticket) this.queue.delete(ticket);
			return true;
		}
		this.heldSince ??= now;
		this.heldSinceSend = true;
		if (now - this.heldSince < (this.limit ? SECOND_MS : GROWTH_AFTER_MS)) return false;
		// The rate doubles, up to a step under a trusted limit: a 429 costs a second of slower reads.
		// Past a limit no longer trusted it grows slowly, to find whether the limit rose.
		const rate = this.readsPerSecond;
		let grown = rate * (this.limit && trusted === undefined ? 1 + SLOW_GROWTH : 2);
		if (trusted !== undefined) grown = Math.max(rate, Math.min(grown, trusted * (1 - SLOW_GROWTH)));
		this.readsPerSecond = grown;
		this.heldSince = now;
		return false;
	}

	/** A read that stops waiting (cancelled, or out of time) gives up its place. */
	leave(ticket: object): void {
		this.queue.delete(ticket);
	}

	/** A 429 for a read sent at `refusedSentAt`; a limit per second unless `Retry-After` is long. */
	rateLimited(now: number, retryAfterMs = SECOND_MS, refusedSentAt = now): void {
		this.heldSince = undefined;
		if (retryAfterMs > LIMIT_TRUSTED_MS) return;
		// Sent before the refused read: not answered (answers come late), nor after it (limit full).
		const sent = this.sentAt.filter((at) => at >= refusedSentAt - SECOND_MS && at < refusedSentAt);
		const counted = Math.max(1, sent.length);
		const trusted = this.trustedLimit(now);
		let limit = Math.min(trusted ?? Infinity, counted);
		if ((trusted !== undefined && counted < trusted) || sent.length === 0) {
			// Under the pace's own cap one 429 below the limit is most often a burst (n8n's event loop
			// sent reads late, together), and one with nothing sent in the second before it says only
			// that others fill the window: the limit and the pace stay. A second soon after is a lower
			// limit (another process took a share of it).
			const before = this.under && now - this.under.at < LOWER_AFTER_MS ? this.under.sent : 0;
			this.under = { sent: counted, at: now };
			if (!before) return;
			limit = Math.max(counted, before);
		}
		// Down to BACK_OFF of the limit, a limit of 1 too: the pace stays a step under it.
		this.readsPerSecond = Math.max(1, Math.min(this.readsPerSecond, limit)) * BACK_OFF;
		this.limit = { perSecond: limit, at: now };
	}

	/** The limit learnt at the last 429, for LIMIT_TRUSTED_MS after it. */
	private trustedLimit(now: number): number | undefined {
		const trusted = this.limit && now - this.limit.at < LIMIT_TRUSTED_MS;
		return trusted ? this.limit!.perSecond : undefined;
	}
}

/** The pacer of each API key (`limitScope`), the least recently used let go first. */
const pacers = new LruMap<string, ReadPacer>(KEYS_KEPT);

export function readPacerFor(scope: string): ReadPacer {
	return pacers.getOrCreate(scope, () => new ReadPacer());
}
