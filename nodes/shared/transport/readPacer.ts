/**
 * How fast reads may go under the API's read rate limit: one pacer per API key in this n8n
 * process (`readPacerFor`), shared by every read of both nodes, since the plan's read limit
 * is one limit. Pure apart from the registry (the caller passes `now`); why it learns the
 * limit as it does: ../../DocumentWorkflow/helpers/README.md.
 */

/** Reads a second before anything is known about the limit. */
export const START_RATE = 200;
/** Unused rate of up to this long may be spent at once (else one read per wake-up of a waiting read, at most). */
export const BURST_MS = 25;
/** The rate does not grow past this (far above any read limit); it keeps the arithmetic finite. */
export const MAX_RATE = 10_000;
/** After a 429: this share of the rate the API let through in the last second. */
const BACK_OFF = 0.85;
/** Without a 429, the rate doubles after this long held back (not faster: reads in flight when a limit is met get 429s). */
const GROWTH_AFTER_MS = 250;
/** Once a 429 was seen: the rate grows by this share per second held back. */
const SLOW_GROWTH = 0.05;
/** The rate stays under this share of what the API let through in the second before a 429… */
const UNDER_LIMIT = 0.95;
/** …for this long after that 429; then it may grow past it (the limit may have risen). */
const LIMIT_TRUSTED_MS = 15_000;
/** A 429 whose `Retry-After` is at most this long comes from a limit counted per second or so, which the pacer learns. */
const PER_SECOND_WINDOW_MS = 2_000;
/** Reads held back less than this apart count as one stretch of being held back. */
const HELD_GAP_MS = 300;

export class ReadPacer {
	private rate = START_RATE;
	private nextAt = 0;
	private heldSince?: number;
	private lastHeldAt?: number;
	/** What the API let through in the second before the last 429, and when that was. */
	private limit?: { perSecond: number; at: number };
	private readonly answeredAt: number[] = [];

	/** Reads a second currently allowed. */
	get readsPerSecond(): number {
		return this.rate;
	}

	/** The earliest moment the next read may be sent. */
	nextSendAt(): number {
		return this.nextAt;
	}

	/** How many reads may be sent at `now`: the rate over the time since the last send, at most `BURST_MS` of it. */
	allowance(now: number): number {
		if (this.nextAt > now) return 0;
		const since = Math.max(this.nextAt, now - BURST_MS);
		return 1 + Math.floor(((now - since) * this.rate) / 1000);
	}

	/** A read is sent now. */
	sent(now: number): void {
		this.nextAt = Math.max(this.nextAt, now - BURST_MS) + 1000 / this.rate;
	}

	/** A read was held back by the pacer at `now`; held back again within `HELD_GAP_MS`, the pacer counts it as held back all along. */
	heldBack(now: number): void {
		if (this.heldSince === undefined || this.lastHeldAt === undefined || now - this.lastHeldAt > HELD_GAP_MS) this.heldSince = now;
		this.lastHeldAt = now;
		const after = this.limit ? 1000 : GROWTH_AFTER_MS;
		if (now - this.heldSince >= after) {
			let grown = Math.min(MAX_RATE, this.rate * (this.limit ? 1 + SLOW_GROWTH : 2));
			if (this.limit && now - this.limit.at < LIMIT_TRUSTED_MS) grown = Math.max(this.rate, Math.min(grown, this.limit.perSecond * UNDER_LIMIT));
			this.rate = grown;
			this.heldSince = now;
		}
	}

	/** A read got its answer (not a 429). */
	answered(now: number): void {
		this.answeredAt.push(now);
		while (this.answeredAt.length > 0 && this.answeredAt[0] < now - 1000) this.answeredAt.shift();
	}

	/** A 429 was seen: the API's limit is below the current rate. */
	rateLimited(now: number, retryAfterMs = 1000): void {
		this.heldSince = undefined;
		// A limit counted over minutes says nothing about reads a second; the gate holds reads until it opens.
		if (retryAfterMs > PER_SECOND_WINDOW_MS) return;
		while (this.answeredAt.length > 0 && this.answeredAt[0] < now - 1000) this.answeredAt.shift();
		this.rate = Math.max(1, Math.min(this.rate, this.answeredAt.length) * BACK_OFF);
		// What the API let through in the last second overstates a limit counted in fixed windows
		// when that second spans two of them; a later 429 corrects it, so the estimate only
		// comes down while it is trusted.
		const letThrough = Math.max(1, this.answeredAt.length);
		const trusted = this.limit && now - this.limit.at < LIMIT_TRUSTED_MS ? this.limit.perSecond : Infinity;
		this.limit = { perSecond: Math.min(trusted, letThrough), at: now };
	}
}

/** One pacer per API key (`limitScope`); bounded, as keys come and go. */
const pacers = new Map<string, ReadPacer>();

export function readPacerFor(scope: string): ReadPacer {
	let pacer = pacers.get(scope);
	if (!pacer) {
		if (pacers.size >= 100) pacers.delete(pacers.keys().next().value!);
		pacer = new ReadPacer();
		pacers.set(scope, pacer);
	}
	return pacer;
}
