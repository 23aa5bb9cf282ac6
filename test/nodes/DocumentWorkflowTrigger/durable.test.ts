/**
 * Durable poll cursors (n8n 2.41), as n8n saves them (test/harness/triggerHost.ts, mode
 * 'durable'): the workflow's static data is saved as a poll emits, the node's cursor is committed
 * with the execution under the poll's fence. When the fence refuses that commit (the poll lost its
 * lease, or n8n crashed before the commit), n8n starts no execution and keeps the old cursor; the
 * next poll must emit those events, once.
 */
import { useSandbox } from '../../harness/sandbox';
import { MINUTE, TriggerHost, compareDelivered, spreadEvents } from '../../harness/triggerHost';

const env = useSandbox();

describe('durable poll cursors: a commit the fence refuses', () => {
	test('the events of a poll whose commit was refused come out with the next poll, once', async () => {
		const host = new TriggerHost(env.sandbox, {}, 'durable');
		expect((await host.activate()).error).toBeUndefined();
		await env.sandbox.control.advanceClock(MINUTE);
		// The first scheduled poll finds no state of its own (the activation poll's was dropped).
		expect((await host.poll()).error).toBeUndefined();

		const { nowMs } = await env.sandbox.control.getClock();
		const refusedBatch = await env.sandbox.control.createEvents(
			spreadEvents(3, nowMs + 1000, nowMs + 20_000),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		host.failNextCommit = true;
		const refused = await host.poll();
		expect(refused.refused).toBe(true);
		expect(refused.items?.map((item) => item.json.id)).toEqual(refusedBatch.ids);
		expect(host.delivered).toEqual([]);

		const later = await env.sandbox.control.createEvents(
			spreadEvents(2, nowMs + 70_000, nowMs + 80_000),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll()).error).toBeUndefined();
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll()).error).toBeUndefined();

		expect(
			compareDelivered(
				host.delivered,
				[...refusedBatch.ids!, ...later.ids!].map((id) => ({ id })),
			),
		).toEqual({ duplicates: [], lost: [], unexpected: [] });
	});

	test('a restart after a refused commit: nothing lost, nothing twice', async () => {
		const host = new TriggerHost(env.sandbox, {}, 'durable');
		expect((await host.activate()).error).toBeUndefined();
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll()).error).toBeUndefined();
		const { nowMs } = await env.sandbox.control.getClock();
		const batch = await env.sandbox.control.createEvents(
			spreadEvents(4, nowMs + 1000, nowMs + 20_000),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		host.failNextCommit = true;
		expect((await host.poll()).refused).toBe(true);
		host.restart();
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll()).error).toBeUndefined();
		expect(
			compareDelivered(
				host.delivered,
				batch.ids!.map((id) => ({ id })),
			),
		).toEqual({ duplicates: [], lost: [], unexpected: [] });
	});
});
