/**
 * The Document Workflow API's event list, in memory, on the clock the test controls (jest's
 * fake `Date.now`, plus an optional skew: the API's clock need not be n8n's). What the spec
 * says of "List events" (api-spec.md) and nothing more:
 *
 * - ids reflect creation time (time-ordered, UUID-shaped: the creation ms first, then a
 *   counter), so sorting by id is creation order;
 * - an event is listed only once committed, up to the overlap window after its creation and
 *   in any order, so an event can appear later with a lower id than one already read;
 * - only the last 7 days are listed, oldest first by id; `after`, `page`, `pageSize` (at most
 *   100), `type`; the envelope `{count, pages, data}` is computed when the request is
 *   evaluated, so pages shift under a read as events commit or expire between its requests;
 * - subscription test pings and forged ids are never listed;
 * - faults on demand: 500 (problem+json), 429 with `Retry-After` (seconds or an HTTP date), a
 *   connection reset; a latency per request; the `Date` header optional (whole seconds).
 *
 * The spec is silent on a page past the last one for events (it says 400 for review tasks):
 * `beyondLastPage` chooses an empty page (the spec's envelope, computed as asked) or 400.
 */

export const WINDOW_MS = 7 * 24 * 60 * 60 * 1000;
export const EVENT_TYPES = ['run.completed', 'run.failed', 'document.received'] as const;
export const TEST_PING_TYPE = 'subscription.test';

export interface ApiEvent {
	id: string;
	type: string;
	/** Creation time on the API's clock. */
	createdOnMs: number;
	/** When it becomes listed (API clock): creation plus its commit delay. */
	commitAtMs: number;
	/** Order of creation in this history (1, 2, ...): names the event in a printed history. */
	n: number;
}

export interface ApiSettings {
	/** Whether answers carry `Date` (whole seconds, rounded down, as HTTP does). */
	dateHeader: boolean;
	/** Time from sending a request to its answer; the list is evaluated half-way. */
	latencyMs: number;
	/** The API's clock less n8n's. */
	skewMs: number;
	/** What a page past the last one answers. */
	beyondLastPage: 'empty' | '400';
}

export type Fault =
	| { kind: '500' }
	| { kind: 'reset' }
	| { kind: '429'; retryAfterS: number; asDate?: boolean };

export interface ApiAnswer {
	status: number;
	headers: Record<string, string>;
	body?: unknown;
	/** No answer at all: the connection was reset. */
	reset?: boolean;
}

export interface RequestRecord {
	/** n8n's clock when it was sent. */
	sentAt: number;
	/** The n8n process that sent it. */
	process: number;
	query: Record<string, string>;
	status: number | 'reset';
	/** Ids of the page answered. */
	listed: string[];
	/** A 429's `Retry-After`, in ms, as n8n reads it (an HTTP date on n8n's clock). */
	retryAfterMs?: number;
}

/** A UUID-shaped id whose text order is (ms, counter) order, as the API's time-ordered ids are. */
export function timeOrderedId(ms: number, counter: number, salt = 0): string {
	const t = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
	const c = counter.toString(16).padStart(14, '0').slice(-14);
	const s = salt.toString(16).padStart(4, '0').slice(-4);
	return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${c.slice(0, 3)}-8${c.slice(3, 6)}-${c.slice(6, 14)}${s}`;
}

/** The creation ms a time-ordered id carries. */
export function idTimeMs(id: string): number {
	return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The index of the first event whose id is greater than `id`. */
function firstAbove(events: ApiEvent[], id: string): number {
	let low = 0;
	let high = events.length;
	while (low < high) {
		const middle = (low + high) >>> 1;
		if (events[middle].id <= id) low = middle + 1;
		else high = middle;
	}
	return low;
}

export class ModelApi {
	/** Every event created, sorted by id. */
	readonly events: ApiEvent[] = [];
	readonly requests: RequestRecord[] = [];
	private readonly faults: Fault[] = [];
	private counter = 0;
	/** Forged ids and pings come from another counter range: never equal to a created id. */
	private forgedCounter = 0x8000_0000;

	/** A copy of the setup's: a step that changes it (`apiLatency`) leaves the drawn setup, which fast-check prints and reruns, as it was. */
	readonly settings: ApiSettings;

	constructor(settings: ApiSettings) {
		this.settings = { ...settings };
	}

	/** The API's clock. */
	now(): number {
		return Date.now() + this.settings.skewMs;
	}

	/**
	 * Creates an event. One created in the past (`createdOnMs` before now) is listed from now on at
	 * the earliest, unless `history` (events that existed before the history began).
	 */
	create(type: string, commitDelayMs: number, createdOnMs = this.now(), history = false): ApiEvent {
		this.counter++;
		const commitAtMs = createdOnMs + Math.max(0, commitDelayMs);
		const event: ApiEvent = {
			id: timeOrderedId(createdOnMs, this.counter),
			type,
			createdOnMs,
			commitAtMs: history ? commitAtMs : Math.max(commitAtMs, this.now()),
			n: this.counter,
		};
		const last = this.events[this.events.length - 1];
		this.events.push(event);
		if (last && byId(last, event) > 0) this.events.sort(byId);
		return event;
	}

	/** An event that existed before the history began: listed from `createdOnMs` plus its delay. */
	createHistory(type: string, commitDelayMs: number, createdOnMs: number): ApiEvent {
		return this.create(type, commitDelayMs, createdOnMs, true);
	}

	/** An id the API never lists, created at `ms` (API clock): a forged delivery's or a test ping's. */
	unlistedId(ms = this.now()): string {
		return timeOrderedId(ms, ++this.forgedCounter, 0xf0f0);
	}

	isListed(event: ApiEvent, atMs = this.now()): boolean {
		return event.commitAtMs <= atMs && event.createdOnMs > atMs - WINDOW_MS;
	}

	/** The answers of the next requests fail this way, one fault per request, in order. */
	fail(...faults: Fault[]): void {
		this.faults.push(...faults);
	}

	clearFaults(): void {
		this.faults.length = 0;
	}

	/** `GET /events` as evaluated at API time `atMs`. */
	list(query: Record<string, string>, atMs: number): ApiAnswer {
		const page = query.page === undefined ? 1 : Number(query.page);
		const pageSize = query.pageSize === undefined ? 20 : Number(query.pageSize);
		if (!Number.isInteger(page) || page < 1 || !Number.isInteger(pageSize) || pageSize < 1)
			return problem(400, 'invalid page or pageSize');
		if (pageSize > 100) return problem(400, 'pageSize must be at most 100');
		const after = query.after?.toLowerCase();
		// Events are sorted by id, and ids begin with their creation time: start past `after` and the 7 days.
		const floor = timeOrderedId(atMs - WINDOW_MS, 0, 0);
		const from = after === undefined || after < floor ? floor : after;
		const matching: ApiEvent[] = [];
		for (let i = firstAbove(this.events, from); i < this.events.length; i++) {
			const event = this.events[i];
			if (this.isListed(event, atMs) && (query.type === undefined || event.type === query.type))
				matching.push(event);
		}
		const count = matching.length;
		const pages = Math.ceil(count / pageSize);
		if (page > Math.max(pages, 1) && this.settings.beyondLastPage === '400')
			return problem(400, `page ${page} is too large: there are ${pages} pages`);
		const data = matching.slice((page - 1) * pageSize, page * pageSize).map((event) => ({
			id: event.id,
			type: event.type,
			createdOn: new Date(event.createdOnMs).toISOString(),
			environment: 'prod',
			data: { n: event.n },
		}));
		return {
			status: 200,
			headers: { 'content-type': 'application/json' },
			body: { count, pages, data },
		};
	}

	/** One request, answered after the latency; the list is evaluated half-way there. */
	async answer(process: number, path: string, query: Record<string, string>): Promise<ApiAnswer> {
		const sentAt = Date.now();
		const half = this.settings.latencyMs / 2;
		if (half > 0) await sleepFor(half);
		const evaluatedAt = this.now();
		const fault = this.faults.shift();
		let answer: ApiAnswer;
		if (path !== '/events') answer = problem(404, `no such path ${path}`);
		else if (fault?.kind === '500') answer = problem(500, 'internal error');
		else if (fault?.kind === 'reset') answer = { status: 0, headers: {}, reset: true };
		else if (fault?.kind === '429') {
			answer = problem(429, 'rate limit exceeded');
			answer.headers['retry-after'] = fault.asDate
				? new Date(evaluatedAt + fault.retryAfterS * 1000).toUTCString()
				: String(fault.retryAfterS);
		} else answer = this.list(query, evaluatedAt);
		if (this.settings.dateHeader && !answer.reset)
			answer.headers.date = new Date(Math.floor(evaluatedAt / 1000) * 1000).toUTCString();
		answer.headers['x-correlation-id'] = `c-${this.requests.length + 1}`;
		this.requests.push({
			sentAt,
			process,
			query,
			status: answer.reset ? 'reset' : answer.status,
			listed:
				answer.status === 200
					? ((answer.body as { data: Array<{ id: string }> }).data ?? []).map((e) => e.id)
					: [],
			// As n8n reads it: an HTTP date on n8n's own clock, so off by the API clock's lead.
			...(fault?.kind === '429'
				? {
						retryAfterMs: Math.max(
							0,
							fault.retryAfterS * 1000 + (fault.asDate ? this.settings.skewMs : 0),
						),
					}
				: {}),
		});
		if (half > 0) await sleepFor(half);
		return answer;
	}
}

function problem(status: number, detail: string): ApiAnswer {
	return {
		status,
		headers: { 'content-type': 'application/problem+json' },
		body: {
			status,
			title: detail,
			type: 'about:blank',
			instance: '/events',
			traceId: '00-0-0-01',
			detail,
		},
	};
}

function sleepFor(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Events that existed before a history began (the API's clock at its start: `api.now()`). */
export interface HistorySpec {
	/** Spread evenly over the 7 days, the newest an hour old. */
	spread: number;
	/**
	 * Created 7 days before now, so that they leave the list between the first and the last
	 * request of a read that starts now: between `latency`/2 and 1.5 × `latency` from now (within
	 * 1.5 s when there is no latency, for a read slowed by a retry or a 429).
	 */
	expiring: number;
	/** Created in the 3 minutes before now, some listed up to 80 s late. */
	recent: number;
}

export function seedHistory(api: ModelApi, history: HistorySpec): void {
	const now = api.now();
	const latency = api.settings.latencyMs;
	const hour = 60 * 60_000;
	for (let i = 0; i < history.spread; i++)
		api.createHistory(
			EVENT_TYPES[i % EVENT_TYPES.length],
			0,
			now - WINDOW_MS + ((i + 1) * (WINDOW_MS - hour)) / (history.spread + 1),
		);
	const from = latency > 0 ? latency / 2 + 1 : 1;
	const span = latency > 0 ? latency : 1500;
	for (let i = 0; i < history.expiring; i++)
		api.createHistory(
			EVENT_TYPES[i % EVENT_TYPES.length],
			0,
			now - WINDOW_MS + from + Math.floor((i * span) / Math.max(1, history.expiring)),
		);
	for (let i = 0; i < history.recent; i++)
		api.createHistory(
			EVENT_TYPES[i % EVENT_TYPES.length],
			((i * 7919) % 5) * 20_000,
			now - 3 * 60_000 + i * 1000,
		);
}
