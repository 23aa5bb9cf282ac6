/**
 * The API's separate rate limits (reads, triggers, original-file downloads): when each
 * opens again after a 429, shared by every request of this n8n process that uses the same
 * API and key, and how long `Retry-After` asks to wait.
 */
import { createHash } from 'node:crypto';
import type { IDataObject } from 'n8n-workflow';
import { LruMap } from '../lruMap';

/** API keys (and workflows per key) whose pacer, limit gates and waiting knowledge are kept. */
export const KEYS_KEPT = 100;

/** Which of the API's separate rate limits a request counts against. */
export type RateLimitClass = 'read' | 'trigger' | 'original';

/** A stable key for "this API and this key", so rate-limit waits are shared by all requests that share the limit. */
export function limitScope(baseUrl: string, credentials: IDataObject): string {
	const digest = createHash('sha256')
		.update(`${String(credentials.apiKey ?? '')}\u0000${String(credentials.workspaceId ?? '')}`)
		.digest('hex')
		.slice(0, 16);
	return `${baseUrl}|${digest}`;
}

/**
 * When each rate limit opens again, per API key. A 429 on one request makes every request
 * of that class wait (in this n8n process), while the other classes keep going.
 */
const rateLimitGates = new LruMap<string, number>(KEYS_KEPT, (opensAt) => opensAt > Date.now());

export function rateLimitOpensAt(scope: string, limit: RateLimitClass): number {
	return rateLimitGates.get(`${scope}|${limit}`) ?? 0;
}

export function closeRateLimitUntil(scope: string, limit: RateLimitClass, until: number): void {
	const key = `${scope}|${limit}`;
	if ((rateLimitGates.get(key) ?? 0) < until) rateLimitGates.set(key, until);
}

/** `Retry-After` in milliseconds from now: seconds, or an HTTP date. Undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
	if (value === undefined || value === null) return undefined;
	const text = String(value).trim();
	if (text === '') return undefined;
	if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
	const date = Date.parse(text);
	if (Number.isNaN(date)) return undefined;
	return Math.max(0, date - now);
}

/** A read sent and not yet answered: `heldBack` aborts it, to go again once the limit opens. */
export interface ReadOnItsWay {
	readonly sentAt: number;
	readonly heldBack: AbortController;
}

/** The reads on their way, per API key: n8n may take tens of ms to put one on the wire. */
const readsOnTheirWay = new LruMap<string, Set<ReadOnItsWay>>(KEYS_KEPT, (reads) => reads.size > 0);

/** Counts a read as on its way until `answered`. */
export function readOnItsWay(scope: string, sentAt: number): ReadOnItsWay {
	const read = { sentAt, heldBack: new AbortController() };
	readsOnTheirWay.getOrCreate(scope, () => new Set()).add(read);
	return read;
}

export function readAnswered(scope: string, read: ReadOnItsWay): void {
	readsOnTheirWay.get(scope)?.delete(read);
}

/** A 429 for a read sent at `refusedSentAt`: the reads sent after it met a full limit too. */
export function holdBackReadsSentAfter(scope: string, refusedSentAt: number): void {
	for (const read of readsOnTheirWay.get(scope) ?? [])
		if (read.sentAt >= refusedSentAt) read.heldBack.abort();
}
