/** Identifiers: UUIDv4, time-ordered UUIDv7-like event ids, API keys, trace ids. */
import { randomBytes, randomUUID } from 'node:crypto';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
	return typeof value === 'string' && UUID_RE.test(value);
}

export function uuid(): string {
	return randomUUID();
}

let counter = 0;

/**
 * A UUIDv7-like id: 48-bit ms timestamp first, then a process-wide counter, so ids compare
 * lexicographically by creation time, then by creation order within one millisecond.
 */
export function uuid7(ms: number): string {
	counter += 1;
	const t = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
	const c = counter.toString(16).padStart(14, '0');
	const r = randomBytes(2).toString('hex');
	return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${c.slice(0, 3)}-8${c.slice(3, 6)}-${c.slice(6, 14)}${r}`;
}

/** The smallest id of a millisecond: every uuid7(ms' >= ms) is >= it. */
export function uuid7Floor(ms: number): string {
	const t = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
	return `${t.slice(0, 8)}-${t.slice(8, 12)}-0000-0000-000000000000`;
}

export const KEY_PREFIX = 'dwk_';

export function newApiKey(): string {
	return KEY_PREFIX + randomBytes(16).toString('hex');
}

/** W3C trace-context style trace id. */
export function traceId(): string {
	return `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
}

/** Small seeded PRNG (mulberry32) for probability-based faults. */
export function seededRandom(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}
