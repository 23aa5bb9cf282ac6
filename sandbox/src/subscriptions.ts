/**
 * Subscriptions: the service's deliveries of events to a URL, as a test needs them.
 *
 * A control call registers a URL with event types (empty: all), for one organization and
 * environment. Each event created there is POSTed to the URL as it is created (JSON, the
 * listed shape), before it is committed if it commits late, so a receiver can meet an event
 * it cannot list yet. Options make deliveries harder: `repeats` (each delivery sent again),
 * `maxDelayMs` (each delivery held back a random time, so they arrive out of order),
 * `batchSize` (events sent as arrays) and `pingEvery` (a test ping, never listed, after every
 * n events); `maxConnections` bounds the connections open to the URL at once (a delivery pool,
 * 50 by default). A test ping can also be sent on demand. Every delivery is recorded; a failed
 * one is not sent again.
 *
 * Forged deliveries need no route: a test POSTs whatever body it likes to the receiver.
 */
import { Agent, request } from 'node:http';
import type { IncomingMessage } from 'node:http';

import { EngineError, iso } from './engine';
import type { Engine } from './engine';
import type { EventRec } from './event-store';
import { seededRandom, uuid, uuid7 } from './ids';
import type { Environment } from './types';
import { TEST_PING_EVENT_TYPE } from './types';

export interface SubscriptionInput {
	url: string;
	/** Event types to deliver; empty or omitted: all. */
	eventTypes?: string[];
	/** Default `default`. */
	orgId?: string;
	/** Default `prod`. */
	environment?: Environment;
	/** Extra copies of each delivery (default 0). */
	repeats?: number;
	/** Each delivery (and each copy) waits a random 0..maxDelayMs before it is sent (default 0: at once, in order). */
	maxDelayMs?: number;
	/** Events per delivery: 1 (default) sends one event as the body, more sends arrays of events created together. */
	batchSize?: number;
	/** A test ping after every `pingEvery` events (default 0: none). */
	pingEvery?: number;
	/** Seed of the random delays. */
	seed?: number;
	/** Connections open to the URL at once (default 50), as a service's delivery pool: more deliveries wait for one. */
	maxConnections?: number;
}

export interface SubscriptionInfo extends Required<Omit<SubscriptionInput, 'seed'>> {
	id: string;
}

export interface DeliveryRecord {
	subscriptionId: string;
	/** Ids in the body, in order. */
	eventIds: string[];
	ping: boolean;
	/** Which copy: 0 first, 1.. the repeats. */
	copy: number;
	/** Real time (ms) when the first event of the body was created. */
	createdAtMs: number;
	sentAtMs: number;
	/** The receiver's status, or 0 when it could not be reached. */
	status: number;
	/** Real time (ms) when the receiver's answer was complete. */
	answeredAtMs: number;
	/** The receiver's answer body (first 500 characters). */
	answer: string;
	error?: string;
}

interface Subscription extends SubscriptionInfo {
	random: () => number;
	agent: Agent;
	sinceLastPing: number;
	/** Events created in the current tick, waiting to be sent together (batchSize > 1). */
	batch: Array<{ rec: EventRec; createdAtMs: number }>;
}

const DELIVERY_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_CONNECTIONS = 50;

export class Subscriptions {
	private readonly subs = new Map<string, Subscription>();
	private readonly log: DeliveryRecord[] = [];
	private readonly inFlight = new Set<Promise<void>>();
	private flushScheduled = false;

	constructor(private readonly engine: Engine) {}

	add(input: SubscriptionInput): SubscriptionInfo {
		let url: URL;
		try {
			url = new URL(String(input.url));
		} catch {
			throw new EngineError(400, `url must be an absolute http URL, got ${String(input.url)}`);
		}
		if (url.protocol !== 'http:')
			throw new EngineError(400, 'url must use http: (the sandbox delivers over plain HTTP)');
		const environment = input.environment ?? 'prod';
		if (environment !== 'dev' && environment !== 'prod')
			throw new EngineError(400, `environment must be dev or prod, got ${String(environment)}`);
		const orgId = input.orgId ?? 'default';
		this.engine.org(orgId);
		const sub: Subscription = {
			id: uuid(),
			url: url.toString(),
			eventTypes: Array.isArray(input.eventTypes) ? input.eventTypes.map(String) : [],
			orgId,
			environment,
			repeats: Math.max(0, Math.floor(Number(input.repeats ?? 0))),
			maxDelayMs: Math.max(0, Number(input.maxDelayMs ?? 0)),
			batchSize: Math.max(1, Math.floor(Number(input.batchSize ?? 1))),
			pingEvery: Math.max(0, Math.floor(Number(input.pingEvery ?? 0))),
			maxConnections: Math.max(
				1,
				Math.floor(Number(input.maxConnections ?? DEFAULT_MAX_CONNECTIONS)),
			),
			random: seededRandom(Number(input.seed ?? 1)),
			agent: new Agent({
				keepAlive: true,
				maxSockets: Math.max(
					1,
					Math.floor(Number(input.maxConnections ?? DEFAULT_MAX_CONNECTIONS)),
				),
			}),
			sinceLastPing: 0,
			batch: [],
		};
		this.subs.set(sub.id, sub);
		return this.info(sub);
	}

	list(): SubscriptionInfo[] {
		return [...this.subs.values()].map((sub) => this.info(sub));
	}

	remove(id: string): { deleted: boolean } {
		this.subs.get(id)?.agent.destroy();
		return { deleted: this.subs.delete(id) };
	}

	/** Sends a test ping now (an event that is never listed). */
	ping(id: string): { id: string } {
		const sub = this.subs.get(id);
		if (!sub) throw new EngineError(404, `no subscription ${id}`);
		return { id: this.sendPing(sub) };
	}

	deliveries(filter: { subscriptionId?: string } = {}): DeliveryRecord[] {
		return this.log.filter(
			(record) =>
				filter.subscriptionId === undefined || record.subscriptionId === filter.subscriptionId,
		);
	}

	/** Resolves once every delivery started so far has been answered (or failed). */
	async settled(): Promise<void> {
		while (this.inFlight.size > 0 || this.flushScheduled)
			await Promise.all([...this.inFlight, new Promise((resolve) => setImmediate(resolve))]);
	}

	clear(): void {
		for (const sub of this.subs.values()) sub.agent.destroy();
		this.subs.clear();
		this.log.length = 0;
	}

	/** Called by the event store for every event created. */
	onCreated(rec: EventRec): void {
		if (rec.type === TEST_PING_EVENT_TYPE) return;
		const createdAtMs = Date.now();
		for (const sub of this.subs.values()) {
			if (sub.orgId !== rec.orgId || sub.environment !== rec.environment) continue;
			if (sub.eventTypes.length > 0 && !sub.eventTypes.includes(rec.type)) continue;
			sub.batch.push({ rec, createdAtMs });
			if (sub.batch.length >= sub.batchSize) this.flush(sub);
		}
		// Events created together (one bulk call) leave together once the call is over.
		if (!this.flushScheduled) {
			this.flushScheduled = true;
			setImmediate(() => {
				this.flushScheduled = false;
				for (const sub of this.subs.values()) if (sub.batch.length > 0) this.flush(sub);
			});
		}
	}

	private flush(sub: Subscription): void {
		const batch = sub.batch.splice(0);
		if (batch.length === 0) return;
		const bodies =
			sub.batchSize === 1
				? batch.map((entry) => this.engine.eventJson(entry.rec))
				: [batch.map((entry) => this.engine.eventJson(entry.rec))];
		const createdAt = batch[0]!.createdAtMs;
		for (const body of bodies) this.send(sub, body, createdAt, false);
		sub.sinceLastPing += batch.length;
		if (sub.pingEvery > 0 && sub.sinceLastPing >= sub.pingEvery) {
			sub.sinceLastPing = 0;
			this.sendPing(sub);
		}
	}

	private sendPing(sub: Subscription): string {
		const now = Date.now();
		const id = uuid7(this.engine.now());
		const body = {
			id,
			type: TEST_PING_EVENT_TYPE,
			createdOn: iso(this.engine.now()),
			environment: sub.environment,
			data: { test: true },
		};
		this.send(sub, body, now, true);
		return id;
	}

	private send(sub: Subscription, body: unknown, createdAtMs: number, ping: boolean): void {
		const ids = (Array.isArray(body) ? body : [body]).map((event) =>
			String((event as { id: unknown }).id),
		);
		for (let copy = 0; copy <= sub.repeats; copy++) {
			const delay = sub.maxDelayMs > 0 ? Math.floor(sub.random() * sub.maxDelayMs) : 0;
			const record: DeliveryRecord = {
				subscriptionId: sub.id,
				eventIds: ids,
				ping,
				copy,
				createdAtMs,
				sentAtMs: 0,
				status: 0,
				answeredAtMs: 0,
				answer: '',
			};
			this.log.push(record);
			const sending = new Promise<void>((resolve) => {
				const go = () => this.post(sub, JSON.stringify(body), record).then(resolve);
				if (delay > 0) setTimeout(go, delay);
				else go();
			});
			this.inFlight.add(sending);
			void sending.then(() => this.inFlight.delete(sending));
		}
	}

	private post(sub: Subscription, text: string, record: DeliveryRecord): Promise<void> {
		return new Promise((resolve) => {
			// Handed to the pool: waiting for a free connection counts in the answer time.
			record.sentAtMs = Date.now();
			const req = request(
				sub.url,
				{
					agent: sub.agent,
					method: 'POST',
					headers: {
						'Content-Type': 'application/json',
						'Content-Length': Buffer.byteLength(text),
						'User-Agent': 'document-workflow-sandbox',
					},
					timeout: DELIVERY_TIMEOUT_MS,
				},
				(res: IncomingMessage) => {
					const chunks: Buffer[] = [];
					res.on('data', (chunk: Buffer) => chunks.push(chunk));
					res.on('end', () => {
						record.status = res.statusCode ?? 0;
						record.answeredAtMs = Date.now();
						record.answer = Buffer.concat(chunks).toString('utf8').slice(0, 500);
						resolve();
					});
					res.on('error', (error) => {
						record.error = error.message;
						resolve();
					});
				},
			);
			req.on('timeout', () => req.destroy(new Error('timed out')));
			req.on('error', (error) => {
				record.error = error.message;
				record.answeredAtMs = Date.now();
				resolve();
			});
			req.end(text);
		});
	}

	private info(sub: Subscription): SubscriptionInfo {
		const {
			id,
			url,
			eventTypes,
			orgId,
			environment,
			repeats,
			maxDelayMs,
			batchSize,
			pingEvery,
			maxConnections,
		} = sub;
		return {
			id,
			url,
			eventTypes,
			orgId,
			environment,
			repeats,
			maxDelayMs,
			batchSize,
			pingEvery,
			maxConnections,
		};
	}
}

type Handler = (params: string[], query: URLSearchParams, body: Record<string, unknown>) => unknown;

/** The control routes of subscriptions (see control-client.ts). */
export function subscriptionRoutes(subs: Subscriptions): Array<[string, RegExp, Handler]> {
	return [
		['GET', /^\/subscriptions$/, () => subs.list()],
		['POST', /^\/subscriptions$/, (_p, _q, body) => subs.add(body as unknown as SubscriptionInput)],
		['DELETE', /^\/subscriptions\/([^/]+)$/, (p) => subs.remove(p[0]!)],
		['POST', /^\/subscriptions\/([^/]+)\/ping$/, (p) => subs.ping(p[0]!)],
		[
			'GET',
			/^\/deliveries$/,
			(_p, q) => subs.deliveries({ subscriptionId: q.get('subscriptionId') ?? undefined }),
		],
	];
}
