/**
 * How fast reads may go under the API's read rate limit: one pacer per API key in this n8n
 * process, shared by every read of both nodes, since the plan's read limit is one limit.
 * Pure apart from the registry (the caller passes `now`); how it learns the limit and why:
 * ../../DocumentWorkflow/helpers/README.md, "One read pacer per API key".
 */

/** What each value sets: ../../DocumentWorkflow/helpers/README.md, "The values, and why". */
export const START_RATE = 200;
export const BURST_MS = 25;
export const MAX_RATE = 10_000;
const BACK_OFF = 0.85;
const GROWTH_AFTER_MS = 250;
const SLOW_GROWTH = 0.05;
const UNDER_LIMIT = 0.95;
const LIMIT_TRUSTED_MS = 15_000;
const PER_SECOND_WINDOW_MS = 2_000;
const HELD_GAP_MS = 300;
const PACERS_KEPT = 100;

export class ReadPacer {
	private rate = START_RATE;
	private nextAt = 0;
	private heldSince?: number;
	private lastHeldAt?: number;
	/** What the API let through in the second before the last 429, and when that was. */
	private limit?: { perSecond: number; at: number };
	private readonly answeredAt: number[] = [];

	get readsPerSecond(): number {
		return this.rate;
	}

	/** A read may be sent from then on. */
	nextSendAt(): number {
		return this.nextAt;
	}

	/** A read was sent at `now`: the rate since the last send is spent at once, at most `BURST_MS` of it. */
	sent(now: number): void {
		this.nextAt = Math.max(this.nextAt, now - BURST_MS) + 1000 / this.rate;
	}

	/** A read was held back at `now`: held back long enough, the rate grows. */
	heldBack(now: number): void {
		if (
			this.heldSince === undefined ||
			this.lastHeldAt === undefined ||
			now - this.lastHeldAt > HELD_GAP_MS
		)
			this.heldSince = now;
		this.lastHeldAt = now;
		if (now - this.heldSince < (this.limit ? 1000 : GROWTH_AFTER_MS)) return;
		let grown = Math.min(MAX_RATE, this.rate * (this.limit ? 1 + SLOW_GROWTH : 2));
		if (this.limit && now - this.limit.at < LIMIT_TRUSTED_MS)
			grown = Math.max(this.rate, Math.min(grown, this.limit.perSecond * UNDER_LIMIT));
		this.rate = grown;
		this.heldSince = now;
	}

	/** A read got its answer (not a 429). */
	answered(now: number): void {
		this.answeredAt.push(now);
		this.forgetBefore(now - 1000);
	}

	/** A 429 was seen: the API's limit is below the current rate. */
	rateLimited(now: number, retryAfterMs = 1000): void {
		this.heldSince = undefined;
		if (retryAfterMs > PER_SECOND_WINDOW_MS) return;
		this.forgetBefore(now - 1000);
		this.rate = Math.max(1, Math.min(this.rate, this.answeredAt.length) * BACK_OFF);
		const letThrough = Math.max(1, this.answeredAt.length);
		const trusted =
			this.limit && now - this.limit.at < LIMIT_TRUSTED_MS ? this.limit.perSecond : Infinity;
		this.limit = { perSecond: Math.min(trusted, letThrough), at: now };
	}

	private forgetBefore(at: number): void {
		while (this.answeredAt.length > 0 && this.answeredAt[0] < at) this.answeredAt.shift();
	}
}

const pacers = new Map<string, ReadPacer>();

/** The pacer of an API key (`limitScope`); bounded, as keys come and go. */
export function readPacerFor(scope: string): ReadPacer {
	let pacer = pacers.get(scope);
	if (!pacer) {
		if (pacers.size >= PACERS_KEPT) pacers.delete(pacers.keys().next().value!);
		pacer = new ReadPacer();
		pacers.set(scope, pacer);
	}
	return pacer;
}
