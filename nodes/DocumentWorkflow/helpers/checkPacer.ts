/**
 * How fast the wait may send checks, learned from the API's read rate limit (pure: the
 * caller passes `now`).
 *
 * The transport obeys `Retry-After`, but every request already on its way when a limit's
 * window runs out gets a 429 too. So the wait spaces its checks: it starts at `START_RATE`
 * checks a second and doubles the rate while it is the limit that holds the checks back;
 * when a 429 comes it drops to a little under the rate the API let through in the last
 * second, and from then on grows only slowly (`SLOW_GROWTH` a second), as the limit is near. Few requests are then in flight when a window runs out, and a sweep
 * over a large batch spreads itself at about the rate the API allows.
 */

/** Checks a second before anything is known about the limit. */
export const START_RATE = 200;
/** After a 429: this share of the rate the API let through in the last second. */
const BACK_OFF = 0.85;
/** Without a 429, the rate doubles after this long spent held back by it. */
const GROWTH_AFTER_MS = 100;
/** Once a 429 was seen: the rate grows by this share per second held back. */
const SLOW_GROWTH = 0.05;

export class CheckPacer {
	private rate = START_RATE;
	private nextAt = 0;
	private heldSince?: number;
	private limitSeen = false;
	private readonly answeredAt: number[] = [];

	/** Checks a second currently allowed. */
	get checksPerSecond(): number {
		return this.rate;
	}

	/** The earliest moment the next check may be sent. */
	nextSendAt(): number {
		return this.nextAt;
	}

	/** A check is sent now. */
	sent(now: number): void {
		this.nextAt = Math.max(this.nextAt, now) + 1000 / this.rate;
	}

	/** Checks were due but held back by the pacer at `now` (undefined: nothing was held back). */
	heldBack(now: number | undefined): void {
		if (now === undefined) {
			this.heldSince = undefined;
			return;
		}
		this.heldSince ??= now;
		const after = this.limitSeen ? 1000 : GROWTH_AFTER_MS;
		if (now - this.heldSince >= after) {
			this.rate *= this.limitSeen ? 1 + SLOW_GROWTH : 2;
			this.heldSince = now;
		}
	}

	/** A check got its answer (not a 429). */
	answered(now: number): void {
		this.answeredAt.push(now);
		while (this.answeredAt.length > 0 && this.answeredAt[0] < now - 1000) this.answeredAt.shift();
	}

	/** A 429 was seen: the API's limit is below the current rate. */
	rateLimited(now: number): void {
		while (this.answeredAt.length > 0 && this.answeredAt[0] < now - 1000) this.answeredAt.shift();
		this.rate = Math.max(1, Math.min(this.rate, this.answeredAt.length) * BACK_OFF);
		this.heldSince = undefined;
		this.limitSeen = true;
	}
}
