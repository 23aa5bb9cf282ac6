/**
 * Events, per organization and environment, in one array sorted by id (ids are
 * time-ordered, so this is creation order). Reads binary-search the 7-day window start and
 * `after`, then scan forward filtering on commit time and type: 50,000+ events stay cheap.
 */
import { uuid7, uuid7Floor } from './ids';
import type { Environment } from './types';
import { TEST_PING_EVENT_TYPE } from './types';

export interface EventRec {
	id: string;
	type: string;
	createdOnMs: number;
	environment: Environment;
	data: Record<string, unknown>;
	orgId: string;
	commitAtMs: number;
}

export const EVENT_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/** First index whose id is >= id (strict=false) or > id (strict=true). */
function bound(list: EventRec[], id: string, strict: boolean): number {
	let lo = 0;
	let hi = list.length;
	while (lo < hi) {
		const mid = (lo + hi) >>> 1;
		const v = list[mid]!.id;
		if (strict ? v <= id : v < id) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

export interface EventQuery {
	after?: string;
	type?: string;
	page: number;
	pageSize: number;
}

export class EventStore {
	private readonly lists = new Map<string, EventRec[]>();
	/** Told of every event created, as it is created (subscriptions deliver from here). */
	private readonly createdListeners = new Set<(rec: EventRec) => void>();

	onCreated(listener: (rec: EventRec) => void): void {
		this.createdListeners.add(listener);
	}

	private created(rec: EventRec): void {
		for (const listener of this.createdListeners) listener(rec);
	}

	clear(): void {
		this.lists.clear();
	}

	private list(orgId: string, env: Environment): EventRec[] {
		const k = `${orgId}|${env}`;
		let l = this.lists.get(k);
		if (!l) {
			l = [];
			this.lists.set(k, l);
		}
		return l;
	}

	create(
		orgId: string,
		env: Environment,
		type: string,
		data: Record<string, unknown>,
		createdOnMs: number,
		commitDelayMs: number,
	): EventRec {
		const rec: EventRec = {
			id: uuid7(createdOnMs),
			type,
			createdOnMs,
			environment: env,
			data,
			orgId,
			commitAtMs: createdOnMs + Math.max(0, commitDelayMs),
		};
		const l = this.list(orgId, env);
		if (l.length === 0 || l[l.length - 1]!.id < rec.id) l.push(rec);
		else l.splice(bound(l, rec.id, false), 0, rec);
		this.created(rec);
		return rec;
	}

	/** Bulk insert: append, then one sort per touched list if needed. */
	createMany(
		items: Array<Omit<EventRec, 'id' | 'commitAtMs'> & { commitDelayMs: number }>,
	): EventRec[] {
		const touched = new Set<EventRec[]>();
		const out: EventRec[] = new Array(items.length);
		for (let i = 0; i < items.length; i++) {
			const it = items[i]!;
			const rec: EventRec = {
				id: uuid7(it.createdOnMs),
				type: it.type,
				createdOnMs: it.createdOnMs,
				environment: it.environment,
				data: it.data,
				orgId: it.orgId,
				commitAtMs: it.createdOnMs + Math.max(0, it.commitDelayMs),
			};
			const l = this.list(it.orgId, it.environment);
			if (l.length > 0 && l[l.length - 1]!.id > rec.id) touched.add(l);
			l.push(rec);
			out[i] = rec;
		}
		for (const l of touched) l.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
		for (const rec of out) this.created(rec);
		return out;
	}

	/** The public listing: last 7 days, committed, key's environment, oldest first by id. */
	query(
		orgId: string,
		env: Environment,
		q: EventQuery,
		nowMs: number,
	): { count: number; items: EventRec[]; matches: number } {
		const l = this.lists.get(`${orgId}|${env}`) ?? [];
		let start = bound(l, uuid7Floor(nowMs - EVENT_WINDOW_MS), false);
		if (q.after) start = Math.max(start, bound(l, q.after.toLowerCase(), true));
		const from = (q.page - 1) * q.pageSize;
		const to = from + q.pageSize;
		const items: EventRec[] = [];
		let count = 0;
		for (let i = start; i < l.length; i++) {
			const e = l[i]!;
			if (e.commitAtMs > nowMs) continue;
			if (e.type === TEST_PING_EVENT_TYPE) continue;
			if (q.type !== undefined && e.type !== q.type) continue;
			if (count >= from && count < to) items.push(e);
			count++;
		}
		return { count, items, matches: count };
	}

	all(
		filter: {
			orgId?: string;
			environment?: Environment;
			type?: string;
			includeUncommitted?: boolean;
		},
		nowMs: number,
	): EventRec[] {
		const out: EventRec[] = [];
		for (const l of this.lists.values()) {
			for (const e of l) {
				if (filter.orgId !== undefined && e.orgId !== filter.orgId) continue;
				if (filter.environment !== undefined && e.environment !== filter.environment) continue;
				if (filter.type !== undefined && e.type !== filter.type) continue;
				if (filter.includeUncommitted === false && e.commitAtMs > nowMs) continue;
				out.push(e);
			}
		}
		out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
		return out;
	}
}
