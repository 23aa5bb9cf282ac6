/**
 * Sandbox subscriptions: events delivered to a registered URL as they are created (before
 * they are listed, when they commit late), in the listed shape; filtered by type, organization
 * and environment; repeats, out-of-order deliveries, batches and test pings that are never
 * listed; every delivery recorded.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { TEST_PING_EVENT_TYPE } from '../../sandbox/src';
import { get } from './helpers';
import { useSandbox } from '../harness/sandbox';

const env = useSandbox({ nodes: false });

interface Received {
	body: unknown;
	at: number;
}

let server: Server;
let url: string;
const received: Received[] = [];

beforeAll(async () => {
	server = createServer((req: IncomingMessage, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			received.push({ body: JSON.parse(Buffer.concat(chunks).toString('utf8')), at: Date.now() });
			res.writeHead(202, { 'Content-Type': 'application/json' });
			res.end('{"ok":true}');
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
	await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
	received.length = 0;
});

const ids = (bodies: unknown[]) =>
	bodies.flatMap((body) =>
		(Array.isArray(body) ? body : [body]).map((event) => (event as { id: string }).id),
	);

describe('Subscriptions', () => {
	test('each event is delivered once, as it is created, in the shape the list returns', async () => {
		const sub = await env.sandbox.control.addSubscription({ url });
		const created = await env.sandbox.control.createEvents(
			[
				{ type: 'run.completed', data: { n: 1 } },
				{ type: 'review.created', data: { n: 2 } },
			],
			{ returnIds: true },
		);
		await env.sandbox.subscriptions.settled();
		expect(ids(received.map((r) => r.body)).sort()).toEqual([...created.ids!].sort());
		const listed = await get(env.sandbox, '/events', { query: { pageSize: 100 } });
		for (const { body } of received) {
			const copy = (listed.body.data as Array<{ id: string }>).find(
				(event) => event.id === (body as { id: string }).id,
			);
			expect(body).toEqual(copy);
		}
		const deliveries = await env.sandbox.control.getDeliveries({ subscriptionId: sub.id });
		expect(deliveries.map((d) => d.status)).toEqual([202, 202]);
		expect(deliveries.every((d) => d.answer === '{"ok":true}' && !d.ping)).toBe(true);
	});

	test('an event that commits late is delivered before the list shows it', async () => {
		await env.sandbox.control.addSubscription({ url });
		const created = await env.sandbox.control.createEvents(
			[{ type: 'run.completed', commitDelayMs: 60_000 }],
			{ returnIds: true },
		);
		await env.sandbox.subscriptions.settled();
		expect(ids(received.map((r) => r.body))).toEqual(created.ids);
		const listed = await get(env.sandbox, '/events', { query: { pageSize: 100 } });
		expect((listed.body.data as Array<{ id: string }>).map((e) => e.id)).not.toContain(
			created.ids![0],
		);
	});

	test('only the subscribed types, organization and environment are delivered', async () => {
		await env.sandbox.control.addSubscription({ url, eventTypes: ['run.failed'] });
		const other = await env.sandbox.control.createOrg({ name: 'other' });
		const wanted = await env.sandbox.control.createEvents(
			[
				{ type: 'run.failed' },
				{ type: 'run.completed' },
				{ type: 'run.failed', environment: 'dev' },
			],
			{ returnIds: true },
		);
		await env.sandbox.control.createEvents([{ type: 'run.failed' }], { orgId: other.id });
		await env.sandbox.subscriptions.settled();
		expect(ids(received.map((r) => r.body))).toEqual([wanted.ids![0]]);
	});

	test('repeats: each delivery is sent again; batches: events created together arrive as arrays', async () => {
		await env.sandbox.control.addSubscription({ url, repeats: 2, batchSize: 10 });
		const created = await env.sandbox.control.createEvents(
			Array.from({ length: 15 }, (_, n) => ({ type: 'run.completed', data: { n } })),
			{ returnIds: true },
		);
		await env.sandbox.subscriptions.settled();
		expect(received.every((r) => Array.isArray(r.body))).toBe(true);
		expect(received.map((r) => (r.body as unknown[]).length).sort((a, b) => a - b)).toEqual([
			5, 5, 5, 10, 10, 10,
		]);
		const counts = new Map<string, number>();
		for (const id of ids(received.map((r) => r.body))) counts.set(id, (counts.get(id) ?? 0) + 1);
		expect([...counts.keys()].sort()).toEqual([...created.ids!].sort());
		expect([...counts.values()].every((n) => n === 3)).toBe(true);
	});

	test('random delays make deliveries arrive out of creation order', async () => {
		await env.sandbox.control.addSubscription({ url, maxDelayMs: 200, seed: 7 });
		const created = await env.sandbox.control.createEvents(
			Array.from({ length: 20 }, (_, n) => ({ type: 'run.completed', data: { n } })),
			{ returnIds: true },
		);
		await env.sandbox.subscriptions.settled();
		const order = ids(received.map((r) => r.body));
		expect([...order].sort()).toEqual([...created.ids!].sort());
		expect(order).not.toEqual(created.ids);
	});

	test('test pings are delivered (on demand and every n events) and never listed', async () => {
		const sub = await env.sandbox.control.addSubscription({ url, pingEvery: 2 });
		const ping = await env.sandbox.control.pingSubscription(sub.id);
		await env.sandbox.control.createEvents([{ type: 'run.completed' }, { type: 'run.failed' }], {
			returnIds: true,
		});
		await env.sandbox.subscriptions.settled();
		const pings = received
			.map((r) => r.body as { id: string; type: string })
			.filter((body) => body.type === TEST_PING_EVENT_TYPE);
		expect(pings).toHaveLength(2);
		expect(pings[0].id).toBe(ping.id);
		const deliveries = await env.sandbox.control.getDeliveries();
		expect(
			deliveries
				.filter((d) => d.ping)
				.map((d) => d.eventIds[0])
				.sort(),
		).toEqual(pings.map((p) => p.id).sort());
		const listed = await get(env.sandbox, '/events', { query: { pageSize: 100 } });
		const listedIds = (listed.body.data as Array<{ id: string }>).map((e) => e.id);
		for (const p of pings) expect(listedIds).not.toContain(p.id);
	});

	test('a receiver that cannot be reached is recorded, and a removed subscription delivers nothing', async () => {
		const dead = await env.sandbox.control.addSubscription({
			url: 'http://127.0.0.1:9/nothing-listens',
		});
		await env.sandbox.control.createEvents([{ type: 'run.completed' }]);
		await env.sandbox.subscriptions.settled();
		const [record] = await env.sandbox.control.getDeliveries({ subscriptionId: dead.id });
		expect(record.status).toBe(0);
		expect(record.error).toBeTruthy();
		const sub = await env.sandbox.control.addSubscription({ url });
		expect(await env.sandbox.control.removeSubscription(sub.id)).toEqual({ deleted: true });
		await env.sandbox.control.createEvents([{ type: 'run.completed' }]);
		await env.sandbox.subscriptions.settled();
		expect(received).toHaveLength(0);
		expect((await env.sandbox.control.listSubscriptions()).map((s) => s.id)).toEqual([dead.id]);
	});

	test('a URL that is not absolute http is refused with 400', async () => {
		await expect(
			env.sandbox.control.addSubscription({ url: 'ftp://example.com/x' }),
		).rejects.toThrow(/http/);
		await expect(env.sandbox.control.addSubscription({ url: 'not a url' })).rejects.toThrow(
			/absolute/,
		);
	});
});
