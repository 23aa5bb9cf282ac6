/**
 * How fast reads may go under the API's read rate limit: one pacer per API key in this n8n
 * process, shared by every read of every node, since the plan's read limit is one limit. Pure
 * apart from the registry (the caller passes `now`). What each value trades:
 * ../../DocumentWorkflow/waiting/README.md.
 */
import { LruMap } from '../lruMap';
import { KEYS_KEPT } from './rateLimits';

export const START_RATE = 200;
export const GROWTH_AFTER_MS = 250;
export const BACK_OFF = 0.85;
export const SLOW_GROWTH = 0.05;
export const LIMIT_TRUSTED_MS = 15_000;

/** The window the pacer counts answers over: its rates are reads a second. */
const SECOND_MS = 1000;

export class ReadPacer {
	private rate = START_RATE;
	private nextAt = 0;
	/** Since when reads have been held back, with no read going unheld since. */
	private heldSince?: number;
	private heldSinceSend = false;
	/** What the API let through in the second before the last 429, and when that was. */
	private limit?: { perSecond: number; at: number };
	private readonly answeredAt: number[] = [];

	get readsPerSecond(): number {
		return this.rate;
	}

	/** Whether a read may go at `now`; if so, it is counted as sent. Held back long enough, the rate grows. */
	trySend(now: number): boolean {
		if (this.nextAt <= now) {
			this.nextAt = Math.max(this.nextAt, now - SECOND_MS / this.rate) + SECOND_MS / this.rate;
			if (!this.heldSinceSend) this.heldSince = undefined;
			this.heldSinceSend = false;
			return true;
		}
		[this.heldSince, this.heldSinceSend] = [this.heldSince ?? now, true];
		if (now - this.heldSince >= (this.limit ? SECOND_MS : GROWTH_AFTER_MS)) {
			// Before any 429 the rate doubles; after one it grows slowly, and stays a step under the limit while that is trusted.
			let grown = this.rate * (this.limit ? 1 + SLOW_GROWTH : 2);
			if (this.limit && now - this.limit.at < LIMIT_TRUSTED_MS)
				grown = Math.max(this.rate, Math.min(grown, this.limit.perSecond * (1 - SLOW_GROWTH)));
			[this.rate, this.heldSince] = [grown, now];
		}
		return false;
	}

	/** When a read held back may try again. */
	nextSendAt(): number {
		return this.nextAt;
	}

	/** A read got its answer (not a 429). */
	answered(now: number): void {
		this.answeredAt.push(now);
		this.forgetBefore(now - SECOND_MS);
	}

	/** A 429 of a limit counted per second or so (a longer `Retry-After` says nothing about reads a second). */
	rateLimited(now: number, retryAfterMs = SECOND_MS): void {
		this.heldSince = undefined;
		if (retryAfterMs > LIMIT_TRUSTED_MS) return;
		this.forgetBefore(now - SECOND_MS);
		const letThrough = Math.max(1, this.answeredAt.length);
		this.rate = Math.max(1, Math.min(this.rate, letThrough) * BACK_OFF);
		const trusted =
			this.limit && now - this.limit.at < LIMIT_TRUSTED_MS ? this.limit.perSecond : Infinity;
		this.limit = { perSecond: Math.min(trusted, letThrough), at: now };
	}

	private forgetBefore(at: number): void {
		while (this.answeredAt.length > 0 && this.answeredAt[0] < at) this.answeredAt.shift();
	}
}

/** The pacer of each API key (`limitScope`), the least recently used let go first. */
const pacers = new LruMap<string, ReadPacer>(KEYS_KEPT);

export function readPacerFor(scope: string): ReadPacer {
	return pacers.getOrCreate(scope, () => new ReadPacer());
}
