/** Rate limits, fault injection and the request log of the two public origins. */
import { seededRandom, uuid } from './ids';
import type {
	FaultInfo,
	FaultRule,
	RateLimit,
	RateLimitsInput,
	RequestFilter,
	RequestLogEntry,
} from './types';

export type RateClass = 'reads' | 'triggers' | 'originals';

interface OrgLimits {
	reads: RateLimit | null;
	triggers: RateLimit | null;
	originals: RateLimit | null;
	retryAfterFormat: 'seconds' | 'date';
}

interface Window {
	startMs: number;
	count: number;
}

export interface RateDecision {
	ok: boolean;
	/** Ms until the window resets (when not ok). */
	retryAfterMs: number;
	format: 'seconds' | 'date';
}

/** Fixed-window counters per organization and class, on the sandbox clock. */
export class RateLimiter {
	private readonly limits = new Map<string, OrgLimits>();
	private readonly windows = new Map<string, Window>();

	clear(): void {
		this.limits.clear();
		this.windows.clear();
	}

	set(orgId: string, input: RateLimitsInput): RateLimitsInput {
		const cur: OrgLimits = {
			reads: check(input.reads),
			triggers: check(input.triggers),
			originals: check(input.originals),
			retryAfterFormat: input.retryAfterFormat === 'date' ? 'date' : 'seconds',
		};
		this.limits.set(orgId, cur);
		for (const k of [...this.windows.keys()]) if (k.startsWith(`${orgId}|`)) this.windows.delete(k);
		return { orgId, ...cur };
	}

	take(orgId: string, cls: RateClass, nowMs: number): RateDecision {
		const l = this.limits.get(orgId);
		const limit = l?.[cls];
		if (!l || !limit) return { ok: true, retryAfterMs: 0, format: 'seconds' };
		const key = `${orgId}|${cls}`;
		let w = this.windows.get(key);
		if (!w || nowMs >= w.startMs + limit.windowMs || nowMs < w.startMs) {
			w = { startMs: nowMs, count: 0 };
			this.windows.set(key, w);
		}
		if (w.count >= limit.limit) {
			return {
				ok: false,
				retryAfterMs: w.startMs + limit.windowMs - nowMs,
				format: l.retryAfterFormat,
			};
		}
		w.count += 1;
		return { ok: true, retryAfterMs: 0, format: l.retryAfterFormat };
	}
}

function check(l: RateLimit | null | undefined): RateLimit | null {
	if (!l) return null;
	if (!(l.limit >= 0) || !(l.windowMs > 0))
		throw new Error('rate limit needs limit >= 0 and windowMs > 0');
	return { limit: Math.floor(l.limit), windowMs: l.windowMs };
}

/** `Retry-After` value: whole seconds (at least 1), or an HTTP date in real time. */
export function retryAfterHeader(ms: number, format: 'seconds' | 'date'): string {
	const secs = Math.max(1, Math.ceil(ms / 1000));
	if (format === 'date') return new Date(Date.now() + secs * 1000).toUTCString();
	return String(secs);
}

interface FaultState {
	rule: FaultInfo;
	rand: () => number;
}

export class FaultInjector {
	private rules: FaultState[] = [];

	clear(): void {
		this.rules = [];
	}

	add(rule: FaultRule): FaultInfo {
		const kinds = ['status5xx', 'drop', 'dropAfterProcess', 'latency', 'rate429', 'badBody'];
		if (!kinds.includes(rule.kind)) throw new Error(`unknown fault kind ${String(rule.kind)}`);
		const info: FaultInfo = {
			...rule,
			id: rule.id ?? uuid(),
			hits: 0,
			remaining: rule.count !== undefined ? Math.max(0, Math.floor(rule.count)) : null,
		};
		this.rules.push({ rule: info, rand: seededRandom(rule.seed ?? 1) });
		return info;
	}

	get size(): number {
		return this.rules.length;
	}

	list(): FaultInfo[] {
		return this.rules.map((r) => ({ ...r.rule }));
	}

	/** The rules that fire for this request, in order (latency rules first stack, then one terminal rule). */
	match(origin: 'api' | 'files', method: string, path: string): FaultInfo[] {
		const out: FaultInfo[] = [];
		for (const s of this.rules) {
			const r = s.rule;
			if (r.origin && r.origin !== origin) continue;
			if (r.method && r.method.toUpperCase() !== method.toUpperCase()) continue;
			if (r.pathPrefix && !path.startsWith(r.pathPrefix)) continue;
			if (r.remaining !== null && r.remaining <= 0) continue;
			if (r.probability !== undefined && !(s.rand() < r.probability)) continue;
			if (r.remaining !== null) r.remaining -= 1;
			r.hits += 1;
			out.push({ ...r });
			if (r.kind !== 'latency') break;
		}
		return out;
	}
}

const MAX_LOG = 200_000;

/**
 * Requests to a file-link origin that carried `X-Api-Key`, counted over every sandbox of this
 * process and never reset (unlike `RequestLog.sawApiKeyOnFiles`, which `reset` clears), so a
 * test run can check at its end that no key ever reached a file-link origin.
 */
let filesOriginApiKeySightings: Array<{ path: string; time: string }> = [];

export function filesOriginApiKeySightingsInProcess(): Array<{ path: string; time: string }> {
	return [...filesOriginApiKeySightings];
}

export class RequestLog {
	private entries: RequestLogEntry[] = [];
	private seq = 0;
	sawApiKeyOnFiles = false;

	clear(): void {
		this.entries = [];
		this.sawApiKeyOnFiles = false;
	}

	add(e: Omit<RequestLogEntry, 'seq'>): RequestLogEntry {
		this.seq += 1;
		const entry: RequestLogEntry = { seq: this.seq, ...e };
		this.entries.push(entry);
		if (this.entries.length > MAX_LOG) this.entries.splice(0, this.entries.length - MAX_LOG);
		if (e.origin === 'files' && e.headers['x-api-key'] !== undefined) {
			this.sawApiKeyOnFiles = true;
			filesOriginApiKeySightings = [...filesOriginApiKeySightings, { path: e.path, time: e.time }];
		}
		return entry;
	}

	list(f: RequestFilter): RequestLogEntry[] {
		const afterSeq = f.afterSeq !== undefined ? Number(f.afterSeq) : undefined;
		return this.entries.filter(
			(e) =>
				(f.origin === undefined || e.origin === f.origin) &&
				(f.method === undefined || e.method === f.method.toUpperCase()) &&
				(f.pathPrefix === undefined || e.path.startsWith(f.pathPrefix)) &&
				(afterSeq === undefined || e.seq > afterSeq),
		);
	}
}
