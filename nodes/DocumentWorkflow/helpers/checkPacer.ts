/**
 * How fast the wait may send checks, learned from the API's read rate limit (pure: the
 * caller passes `now`).
 *
 * The transport obeys `Retry-After`, but every request already on its way when a limit's
 * window runs out gets a 429 too. So the wait spaces its checks: it starts at `START_RATE`
 * checks a second and doubles the rate while it is the limit that holds the checks back;
 * when a 429 comes it drops to a little under the rate the API let through in the last
 * second, and from then on grows only slowly (`SLOW_GROWTH` a second), as the limit is near.
 * What the API let through is remembered as the limit: for `LIMIT_TRUSTED_MS` after a 429 the
 * rate stays just under it (`UNDER_LIMIT`), so the wait does not run into the same limit again
 * every few seconds (each 429 closes the reads for a whole `Retry-After`). Few requests are
 * then in flight when a window runs out, and a sweep over a large batch spreads itself at
 * about the rate the API allows.
 */

/** Checks a second before anything is known about the limit. */
export const START_RATE = 200;
/**
 * Unused rate of up to this long may be spent at once. The wait looks at the pacer every few
 * milliseconds (a sleep slice), so without it the pacer could allow at most one check per
 * look, however high the rate (about 170 a second: the cap the first measurements showed).
 */
export const BURST_MS = 25;
/** The rate does not grow past this (far above any read limit); it keeps the arithmetic finite. */
export const MAX_RATE = 10_000;
/** After a 429: this share of the rate the API let through in the last second. */
const BACK_OFF = 0.85;
/**
 * Without a 429, the rate doubles after this long spent held back by it. Not faster: every
 * check in flight when an unknown limit is first met gets a 429 too, so the rate at that
 * moment decides how many are refused (at 200 a second a limit of 50 is met within this
 * time, with about one check in flight).
 */
const GROWTH_AFTER_MS = 250;
/** Once a 429 was seen: the rate grows by this share per second held back. */
const SLOW_GROWTH = 0.05;
/** The rate stays under this share of what the API let through in the second before a 429… */
const UNDER_LIMIT = 0.95;
/** …for this long after that 429; then it may grow past it (the limit may have risen). */
const LIMIT_TRUSTED_MS = 15_000;

export class CheckPacer {
	private rate = START_RATE;
	private nextAt = 0;
	private heldSince?: number;
	/** What the API let through in the second before the last 429, and when that was. */
	private limit?: { perSecond: number; at: number };
	private readonly answeredAt: number[] = [];

	/** Checks a second currently allowed. */
	get checksPerSecond(): number {
		return this.rate;
	}

	/** The earliest moment the next check may be sent. */
	nextSendAt(): number {
		return this.nextAt;
	}

	/** How many checks may be sent at `now`: the rate over the time since the last send, at most `BURST_MS` of it. */
	allowance(now: number): number {
		if (this.nextAt > now) return 0;
		const since = Math.max(this.nextAt, now - BURST_MS);
		return 1 + Math.floor(((now - since) * this.rate) / 1000);
	}

	/** A check is sent now. */
	sent(now: number): void {
		this.nextAt = Math.max(this.nextAt, now - BURST_MS) + 1000 / this.rate;
	}

	/** Checks were due but held back by the pacer at `now` (undefined: nothing was held back). */
	heldBack(now: number | undefined): void {
		if (now === undefined) {
			this.heldSince = undefined;
			return;
		}
		this.heldSince ??= now;
		const after = this.limit ? 1000 : GROWTH_AFTER_MS;
		if (now - this.heldSince >= after) {
			let grown = Math.min(MAX_RATE, this.rate * (this.limit ? 1 + SLOW_GROWTH : 2));
			if (this.limit && now - this.limit.at < LIMIT_TRUSTED_MS) grown = Math.max(this.rate, Math.min(grown, this.limit.perSecond * UNDER_LIMIT));
			this.rate = grown;
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
		// What the API let through in the last second overstates a limit counted in fixed windows
		// when that second spans two of them; a later 429 corrects it, so the estimate only
		// comes down while it is trusted.
		const letThrough = Math.max(1, this.answeredAt.length);
		const trusted = this.limit && now - this.limit.at < LIMIT_TRUSTED_MS ? this.limit.perSecond : Infinity;
		this.limit = { perSecond: Math.min(trusted, letThrough), at: now };
		this.heldSince = undefined;
	}
}
