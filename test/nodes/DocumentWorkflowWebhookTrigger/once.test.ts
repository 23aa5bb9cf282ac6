/**
 * Once per event, and soon: repeated and out-of-order deliveries start the workflow once per
 * event, also across a restart; an event delivered before the API lists it is found by a look
 * again, or by the next delivery's read when it is listed later than the looks; close
 * deliveries share reads; the answer comes before the API is read.
 */
import { HOLD_MS, MAX_HOLD_MS } from '../../../nodes/DocumentWorkflowWebhookTrigger/readPolicy';
import { WebhookReaders } from '../../../nodes/DocumentWorkflowWebhookTrigger/reader';
import { CURSOR_KEY } from '../../../nodes/shared/eventCursor';
import { captureWarnings } from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';
import { eventReads, forgedId, listedCopies, settle, useHosts, wait } from './helpers';

const env = useSandbox();
const newHost = useHosts(env);

/** A node's static data as n8n keeps it: the cursor, with the ids still owed. */
type StoredNode = Record<string, { owed: Record<string, number> }>;

const counts = (ids: unknown[]) => {
	const map = new Map<string, number>();
	for (const id of ids) map.set(String(id), (map.get(String(id)) ?? 0) + 1);
	return map;
};

describe('Document Workflow Webhook Trigger: once per event', () => {
	test('repeated deliveries (each sent three times) start the workflow once per event', async () => {
		const host = await newHost();
		await env.sandbox.control.addSubscription({ url: host.url, repeats: 2 });
		const created = await env.sandbox.control.createEvents(
			Array.from({ length: 20 }, (_, n) => ({ type: 'run.completed', data: { n } })),
			{ returnIds: true },
		);
		await settle(env.sandbox, host);
		expect((await env.sandbox.control.getDeliveries()).length).toBe(60);
		const emitted = counts(host.emitted().map((event) => event.id));
		expect([...emitted.keys()].sort()).toEqual([...created.ids!].sort());
		expect([...emitted.values()].every((n) => n === 1)).toBe(true);
		// A repeat long after the first delivery is still recognised.
		const listed = await listedCopies(env.sandbox);
		await host.post(listed.get(created.ids![0]));
		await host.settled();
		expect(host.emitted()).toHaveLength(20);
	});

	test('out-of-order deliveries, also as arrays, emit every event once, each as listed', async () => {
		const host = await newHost();
		await env.sandbox.control.addSubscription({
			url: host.url,
			maxDelayMs: 400,
			seed: 3,
			batchSize: 4,
			repeats: 1,
		});
		const created = await env.sandbox.control.createEvents(
			Array.from({ length: 30 }, (_, n) => ({
				type: n % 2 ? 'run.failed' : 'review.completed',
				data: { n },
			})),
			{ returnIds: true },
		);
		await settle(env.sandbox, host);
		const order = (await env.sandbox.control.getDeliveries())
			.sort((a, b) => a.answeredAtMs - b.answeredAtMs)
			.flatMap((d) => d.eventIds);
		expect(order.slice(0, 30)).not.toEqual(created.ids);
		const emitted = counts(host.emitted().map((event) => event.id));
		expect(emitted.size).toBe(30);
		expect([...emitted.values()].every((n) => n === 1)).toBe(true);
		const listed = await listedCopies(env.sandbox);
		for (const event of host.emitted()) expect(event).toEqual(listed.get(String(event.id)));
	});

	test('an event delivered before the API lists it is looked for again and found', async () => {
		const host = await newHost();
		await env.sandbox.control.addSubscription({ url: host.url });
		const created = await env.sandbox.control.createEvents(
			[{ type: 'run.completed', commitDelayMs: 1500 }],
			{ returnIds: true },
		);
		const start = Date.now();
		await settle(env.sandbox, host);
		expect(host.emitted().map((event) => event.id)).toEqual(created.ids);
		expect(host.executions[0].at - start).toBeGreaterThanOrEqual(1400);
		expect(await eventReads(env.sandbox)).toBeGreaterThanOrEqual(2);
	});

	test('an event listed 60 s after its delivery is not lost: the looks again end with one log line, and the next delivery emits it, once', async () => {
		const host = await newHost();
		const warnings = captureWarnings();
		try {
			await env.sandbox.control.addSubscription({ url: host.url });
			const start = Date.now();
			const [late] = (
				await env.sandbox.control.createEvents([{ type: 'run.completed', commitDelayMs: 60_000 }], {
					returnIds: true,
				})
			).ids!;
			await settle(env.sandbox, host);
			// The delivery was held while it looked again (HOLD_MS), then ended with nothing.
			expect(Date.now() - start).toBeGreaterThanOrEqual(HOLD_MS);
			// Not until the event is listed (60 s); HOLD_MS spare for a loaded machine.
			expect(Date.now() - start).toBeLessThan(2 * HOLD_MS);
			expect(host.executions).toHaveLength(0);
			expect(warnings.messages.filter((m) => m.includes(late))).toHaveLength(1);
			// Still owed (listed late, not lost) for as long as the API may list it: the overlap window.
			expect(WebhookReaders.getInstance().size()).toMatchObject({ owed: 1, held: 0 });
			// A minute later (the sandbox's clock) the API lists it; the next delivery's read emits it.
			await env.sandbox.control.advanceClock(60_000);
			const [next] = (
				await env.sandbox.control.createEvents([{ type: 'run.failed' }], { returnIds: true })
			).ids!;
			await settle(env.sandbox, host);
			expect(host.emitted().map((event) => event.id)).toEqual([late, next]);
			await host.post({ id: late });
			await host.settled();
			expect(host.emitted()).toHaveLength(2);
		} finally {
			warnings.restore();
		}
	});

	test('an API failing for longer than a delivery waits delays the event to the next delivery, it does not drop it', async () => {
		const host = await newHost();
		// 503 for the next 30 requests: every read fails (each tries three times) for longer than the delivery waits.
		await env.sandbox.control.addFault({
			pathPrefix: '/events',
			kind: 'status5xx',
			status: 503,
			count: 30,
		});
		const [id] = (
			await env.sandbox.control.createEvents([{ type: 'run.completed' }], { returnIds: true })
		).ids!;
		await host.post({ id });
		await host.settled();
		expect(host.executions).toHaveLength(0);
		await env.sandbox.control.clearFaults();
		await host.post({ id });
		await host.settled();
		expect(host.emitted().map((event) => event.id)).toEqual([id]);
	});

	test('deliveries arriving close together share reads and executions: 200 events, one delivery each, at most one read and one execution per 10', async () => {
		const host = await newHost();
		await env.sandbox.control.addSubscription({ url: host.url });
		for (let burst = 0; burst < 10; burst++) {
			await env.sandbox.control.createEvents(
				Array.from({ length: 20 }, (_, n) => ({ type: 'run.completed', data: { burst, n } })),
			);
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
		await settle(env.sandbox, host);
		expect(host.emitted()).toHaveLength(200);
		expect(new Set(host.emitted().map((event) => event.id)).size).toBe(200);
		expect(await eventReads(env.sandbox)).toBeLessThanOrEqual(20);
		// The events one read finds start one execution: a burst starts a few, not one per delivery.
		expect(host.executions.length).toBeLessThanOrEqual(20);
	});

	test('ids the list never shows, among a steady stream, share their later looks: 400 events in 4 s with 20 forged ids, at most one read per 10 events', async () => {
		const host = await newHost();
		await env.sandbox.control.addSubscription({ url: host.url });
		const forged: Array<Promise<unknown>> = [];
		const start = Date.now();
		for (let tick = 0; tick < 40; tick++) {
			const at = start + tick * 100;
			if (at > Date.now()) await new Promise((resolve) => setTimeout(resolve, at - Date.now()));
			await env.sandbox.control.createEvents(
				Array.from({ length: 10 }, (_, n) => ({ type: 'run.completed', data: { tick, n } })),
			);
			if (tick % 2 === 0) forged.push(host.post({ id: forgedId(), type: 'run.completed' }));
		}
		await Promise.all(forged);
		await settle(env.sandbox, host);
		expect(new Set(host.emitted().map((event) => event.id)).size).toBe(400);
		expect(host.emitted()).toHaveLength(400);
		// Each forged id looked for on its own every 0.5 s for 5 s made 74 reads (the code before this test).
		expect(await eventReads(env.sandbox)).toBeLessThanOrEqual(40);
	});

	test('a delivery is answered after its read: one whose event is not listed yet once n8n has saved its id as owed, one that emits as it hands n8n the events', async () => {
		const host = await newHost();
		await env.sandbox.control.addFault({ pathPrefix: '/events', kind: 'latency', ms: 2000 });
		const [late] = (
			await env.sandbox.control.createEvents([{ type: 'run.failed', commitDelayMs: 60_000 }], {
				returnIds: true,
			})
		).ids!;
		const savesBefore = host.store.saves;
		const owed = await host.post({ id: late, type: 'run.failed' });
		expect(owed.status).toBe(202);
		expect(JSON.parse(owed.body)).toEqual({ received: 1 });
		expect(owed.ms).toBeGreaterThanOrEqual(2000);
		// Saved before the answer: a stop right after it still looks for the id.
		expect(host.store.saves).toBe(savesBefore + 1);
		expect(JSON.stringify(host.store.data)).toContain(`"owed":{"${late}"`);

		const [id] = (
			await env.sandbox.control.createEvents([{ type: 'run.completed' }], { returnIds: true })
		).ids!;
		const emits = await host.post({ id, type: 'run.completed' });
		expect(emits.status).toBe(202);
		expect(JSON.parse(emits.body)).toEqual({ received: 1 });
		expect(emits.ms).toBeGreaterThanOrEqual(2000);
		await host.settled();
		expect(host.emitted().map((event) => event.id)).toEqual([id]);
	});

	test('a delivery that joins a read whose request the API answers slowly is answered by MAX_HOLD_MS, its id saved as owed; its event comes out with the read, once', async () => {
		const host = await newHost();
		// The next read's one request is answered after SLOW_MS (the transport waits 30 s): past MAX_HOLD_MS.
		const SLOW_MS = MAX_HOLD_MS + 6000;
		await env.sandbox.control.addFault({
			pathPrefix: '/events',
			kind: 'latency',
			ms: SLOW_MS,
			count: 1,
		});
		const create = async (type: string) =>
			(await env.sandbox.control.createEvents([{ type }], { returnIds: true })).ids![0];
		const owedSaved = () =>
			Object.keys((host.store.data[`node:${host.nodeName}`] as StoredNode)[CURSOR_KEY].owed);
		const first = await create('run.completed');
		const starting = host.post({ id: first });
		await wait(500);
		const second = await create('run.failed');
		const joined = await host.post({ id: second });
		expect(joined.status).toBe(202);
		expect(joined.ms).toBeLessThan(MAX_HOLD_MS + 1500);
		// Answered after n8n saved its id as owed, with nothing emitted yet: the read is still in flight.
		expect(owedSaved()).toContain(second);
		expect(host.executions).toHaveLength(0);
		// The delivery that started the read waits for it, and carries what it found: both events.
		expect((await starting).ms).toBeGreaterThanOrEqual(SLOW_MS);
		await host.settled();
		expect(host.emitted().map((event) => event.id)).toEqual([first, second]);
		// Saved with them: nothing owed.
		expect(owedSaved()).toEqual([]);
		await host.post({ id: second });
		await host.settled();
		expect(host.emitted()).toHaveLength(2);
	});

	test('after a quiet week (what the trigger had read has left the 7-day list), the next delivery still emits its event, once', async () => {
		const host = await newHost();
		await env.sandbox.control.addSubscription({ url: host.url });
		const before = (
			await env.sandbox.control.createEvents(
				Array.from({ length: 150 }, (_, n) => ({ type: 'run.completed', data: { n } })),
				{ returnIds: true },
			)
		).ids!;
		await settle(env.sandbox, host);
		// More than a page known in the stretch read again, checked again a second later: by a probe.
		await new Promise((resolve) => setTimeout(resolve, 1100));
		await env.sandbox.control.advanceClock(8 * 24 * 60 * 60 * 1000);
		const after = (
			await env.sandbox.control.createEvents([{ type: 'run.failed' }], { returnIds: true })
		).ids!;
		await settle(env.sandbox, host);
		expect(host.emitted().map((event) => event.id)).toEqual([...before, ...after]);
	});

	test('a repeat after a restart of n8n starts nothing: the emitted ids are in static data', async () => {
		const host = await newHost();
		const [id] = (
			await env.sandbox.control.createEvents([{ type: 'run.completed' }], { returnIds: true })
		).ids!;
		await host.post({ id });
		await host.post({ id });
		await host.settled();
		expect(host.executions).toHaveLength(1);
		await host.restart();
		await host.post({ id });
		await host.settled();
		expect(host.executions).toHaveLength(1);
	});
});
