/**
 * Nothing answered is lost, and nothing comes out twice, across restarts of n8n: the cursor and
 * the ids of its overlap window are in the node's static data (n8n loads a copy per request and
 * saves it after the request when the node changed it: only requests that emit do). An event
 * answered but not listed when n8n stops comes out with the next delivery's read; the activation
 * starts the cursor from now less the look-back (`freshStart.test.ts`); a restart keeps it.
 */

import { COPIES_KEY, CURSOR_KEY } from '../../../nodes/shared/eventCursor';
import { FRESH_START_LOOK_BACK_MS } from '../../../nodes/DocumentWorkflowWebhookTrigger/reader';
import { MINUTE, spreadEvents } from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';
import type { WebhookHost } from '../../harness/webhookHost';

import { eventReads, forgedId, listedCopies, settle, useHosts, wait } from './helpers';

const env = useSandbox();
const newHost = useHosts(env);

const idsOf = (host: WebhookHost) => host.emitted().map((event) => String(event.id));

describe('Document Workflow Webhook Trigger: across restarts', () => {
	test.each([
		['3 s', 3000],
		['60 s', 60_000],
	])(
		'5 events answered but listed only %s after their delivery, n8n restarted meanwhile: the next delivery emits them once, repeats included',
		async (_label, commitDelayMs) => {
			const host = await newHost();
			await env.sandbox.control.addSubscription({ url: host.url });
			const late = (
				await env.sandbox.control.createEvents(
					Array.from({ length: 5 }, (_, n) => ({
						type: 'run.completed',
						commitDelayMs,
						data: { n },
					})),
					{ returnIds: true },
				)
			).ids!;
			await env.sandbox.subscriptions.settled();
			expect(
				(await env.sandbox.control.getDeliveries()).every((delivery) => delivery.status === 202),
			).toBe(true);
			// n8n stops before the API lists them (what the process was doing is lost), and starts again.
			await host.restart();
			await env.sandbox.control.advanceClock(commitDelayMs);
			const [next] = (
				await env.sandbox.control.createEvents([{ type: 'run.failed' }], { returnIds: true })
			).ids!;
			await settle(env.sandbox, host);
			expect(idsOf(host)).toEqual([...late, next]);
			// Every event delivered again, before and after another restart: nothing more.
			const listed = await listedCopies(env.sandbox);
			const repeats = [...late, next].map((id) => listed.get(id));
			await host.post(repeats);
			await host.settled();
			await host.restart();
			await host.post(repeats);
			for (const event of repeats) await host.post(event);
			await host.settled();
			expect(idsOf(host)).toEqual([...late, next]);
		},
	);

	test('a burst answered by many requests at once, then a restart, then every delivery again: nothing twice', async () => {
		const host = await newHost();
		await env.sandbox.control.addSubscription({ url: host.url, maxDelayMs: 200, seed: 5 });
		const created = await env.sandbox.control.createEvents(
			Array.from({ length: 150 }, (_, n) => ({ type: 'run.completed', data: { n } })),
			{ returnIds: true },
		);
		await settle(env.sandbox, host);
		expect(new Set(idsOf(host)).size).toBe(150);
		await host.restart();
		const listed = await listedCopies(env.sandbox);
		const sorted = [...created.ids!].sort();
		for (let start = 0; start < sorted.length; start += 10)
			await Promise.all(
				sorted
					.slice(start, start + 10)
					.map(async (id) => await host.post(listed.get(id) ?? { id })),
			);
		await host.settled();
		expect(idsOf(host)).toHaveLength(150);
	});

	test('an event answered (twice) and n8n stopped at once, listed 2.5 s after the next event is delivered (twice): it comes out while that delivery is held, with no delivery after its listing', async () => {
		const host = await newHost();
		await env.sandbox.control.addSubscription({ url: host.url, repeats: 1 });
		// Slow reads: n8n is stopped the moment both deliveries are answered, long before a read
		// would have ended had the answer not waited for it.
		await env.sandbox.control.addFault({ pathPrefix: '/events', kind: 'latency', ms: 300 });
		const [late] = (
			await env.sandbox.control.createEvents([{ type: 'run.failed', commitDelayMs: 60_000 }], {
				returnIds: true,
			})
		).ids!;
		await env.sandbox.subscriptions.settled();
		const answered = await env.sandbox.control.getDeliveries();
		expect(answered.map((delivery) => delivery.status)).toEqual([202, 202]);
		await host.restart();
		await env.sandbox.control.clearFaults();
		const listedAt = Date.parse(
			(await env.sandbox.control.listEvents()).find((event) => event.id === late)!.commitOn!,
		);
		await env.sandbox.control.advanceClock(
			listedAt - 2500 - (await env.sandbox.control.getClock()).nowMs,
		);
		const [next] = (
			await env.sandbox.control.createEvents([{ type: 'run.completed' }], { returnIds: true })
		).ids!;
		// The next event's deliveries are held (the late id is still owed) when the API lists it.
		for (let waited = 0; !idsOf(host).includes(next) && waited < 3000; waited += 20) await wait(20);
		expect(idsOf(host)).toEqual([next]);
		expect(host.open).toBe(1);
		await env.sandbox.control.advanceClock(2500);
		await settle(env.sandbox, host);
		const deliveries = await env.sandbox.control.getDeliveries();
		expect(deliveries.filter((delivery) => delivery.eventIds.includes(next))).toHaveLength(2);
		expect(deliveries).toHaveLength(4);
		expect(idsOf(host).sort()).toEqual([late, next].sort());
	});

	test('a request saves static data when it emits, or when it brings an id still to look for (so a restart keeps it); a repeat saves nothing. The cursor is kept by node name, its copy by node id', async () => {
		const host = await newHost();
		const afterActivation = host.store.saves;
		expect(afterActivation).toBe(1);
		await env.sandbox.control.addSubscription({ url: host.url });
		await env.sandbox.control.createEvents([{ type: 'run.completed' }, { type: 'run.failed' }]);
		await settle(env.sandbox, host);
		expect(host.executions.length).toBeGreaterThan(0);
		expect(host.store.saves).toBe(afterActivation + host.executions.length);
		// A repeat of an emitted event leaves the static data alone.
		await host.post({ id: idsOf(host)[0] });
		await host.settled();
		expect(host.store.saves).toBe(afterActivation + host.executions.length);
		// An id the API does not list (yet) is kept, with the cursor, until it is listed or too old.
		const unknown = forgedId();
		await host.post({ id: unknown });
		await host.settled();
		expect(host.store.saves).toBe(afterActivation + host.executions.length + 1);
		const saved = host.store.data as Record<string, Record<string, Record<string, unknown>>>;
		const own = saved[`node:${host.nodeName}`][CURSOR_KEY] as {
			nodeId: string;
			listed: Record<string, number>;
			owed: Record<string, number>;
		};
		expect(own.nodeId).toBe(host.nodeId);
		expect(Object.keys(own.listed)).toEqual(expect.arrayContaining(idsOf(host)));
		expect(Object.keys(own.owed)).toEqual([unknown]);
		expect(saved.global[COPIES_KEY][host.nodeId]).toEqual(own);
	});

	test('an id emitted since, still owed in an older copy saved last (another process), is not owed again: a repeat reads nothing, and the copy saved owes nothing', async () => {
		const host = await newHost();
		const [late] = (
			await env.sandbox.control.createEvents([{ type: 'run.completed', commitDelayMs: 60_000 }], {
				returnIds: true,
			})
		).ids!;
		// Not listed yet: the delivery looks again while it is held, then leaves it owed, saved.
		await host.post({ id: late });
		await host.settled();
		const older = JSON.parse(JSON.stringify(host.store.data)) as typeof host.store.data;
		expect(JSON.stringify(older)).toContain(`"owed":{"${late}"`);
		await env.sandbox.control.advanceClock(60_000);
		await host.post({ id: late });
		await host.settled();
		expect(idsOf(host)).toEqual([late]);
		// Another webhook process's save of its older copy lands last (n8n saves static data whole).
		host.store.save(older);
		await env.sandbox.control.clearRequests();
		await host.post({ id: late });
		await host.settled();
		expect(await eventReads(env.sandbox)).toBe(0);
		expect(idsOf(host)).toEqual([late]);
		const saved = host.store.data[`node:${host.nodeName}`] as Record<string, { owed: object }>;
		expect(saved[CURSOR_KEY].owed).toEqual({});
	});

	test('activation starts from now, less the look-back: events created earlier are not emitted, even when delivered after it; a restart keeps the place', async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		// Seconds clear of the look-back's start: the API's clock is known from its `Date` (whole seconds).
		const lookBackStart = now - FRESH_START_LOOK_BACK_MS - 5000;
		const before = (
			await env.sandbox.control.createEvents(
				spreadEvents(2, lookBackStart - MINUTE, lookBackStart),
				{ returnIds: true },
			)
		).ids!;
		const host = await newHost();
		const listed = await listedCopies(env.sandbox);
		for (const id of before) await host.post(listed.get(id));
		await host.settled();
		expect(host.executions).toHaveLength(0);
		// n8n was down while these happened (their deliveries failed): the next delivery's read emits them.
		const sub = await env.sandbox.control.addSubscription({
			url: 'http://127.0.0.1:9/unreachable',
		});
		const whileDown = (
			await env.sandbox.control.createEvents([{ type: 'run.completed' }], { returnIds: true })
		).ids!;
		await env.sandbox.subscriptions.settled();
		await env.sandbox.control.removeSubscription(sub.id);
		await host.restart();
		await env.sandbox.control.addSubscription({ url: host.url });
		const [after] = (
			await env.sandbox.control.createEvents([{ type: 'review.created' }], { returnIds: true })
		).ids!;
		await settle(env.sandbox, host);
		expect(idsOf(host)).toEqual([...whileDown, after]);
	});

	test('a renamed trigger keeps its place (the copy by node id): repeats start nothing, new events once', async () => {
		const host = await newHost();
		await env.sandbox.control.addSubscription({ url: host.url });
		const first = (
			await env.sandbox.control.createEvents([{ type: 'run.completed' }], { returnIds: true })
		).ids!;
		await settle(env.sandbox, host);
		host.rename('Documents arrived');
		await host.restart();
		const listed = await listedCopies(env.sandbox);
		await host.post(listed.get(first[0]));
		const second = (
			await env.sandbox.control.createEvents([{ type: 'run.failed' }], { returnIds: true })
		).ids!;
		await settle(env.sandbox, host);
		expect(idsOf(host)).toEqual([...first, ...second]);
	});
});
