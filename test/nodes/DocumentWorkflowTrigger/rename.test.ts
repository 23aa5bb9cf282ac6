/**
 * Renaming the trigger of an active workflow (issue 19, path 1). n8n keeps a node's static
 * data under its name, so in the default polling mode the renamed trigger finds no state of
 * its own and n8n re-activates it with activation mode `update`, the mode its durable-cursor
 * polls run with too. Nothing may come out twice, and nothing may be lost; renaming back to
 * an earlier name finds that name's older state, and a new trigger given a deleted trigger's
 * name finds the deleted one's (issue 33, item 6).
 */
import {
	DAY,
	MINUTE,
	NODE_NAME,
	TriggerHost,
	compareDelivered,
	spreadEvents,
} from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

describe('renaming the trigger of an active workflow', () => {
	test.each([
		['every minute', { item: [{ mode: 'everyMinute' }] }],
		['every day', { item: [{ mode: 'everyDay' }] }],
	])(
		'default polling mode, polls %s: the renamed trigger emits nothing twice and loses nothing',
		async (_label, pollTimes) => {
			const now = (await env.sandbox.control.getClock()).nowMs;
			await env.sandbox.control.createEvents(spreadEvents(300, now - DAY, now - 10 * MINUTE));
			const host = new TriggerHost(env.sandbox, { pollTimes });
			expect((await host.activate()).items).toBeNull();

			// Events of the minutes before the rename, emitted by the polls as they came.
			const emitted: string[] = [];
			for (let round = 0; round < 3; round++) {
				const { nowMs } = await env.sandbox.control.getClock();
				const batch = await env.sandbox.control.createEvents(
					spreadEvents(5, nowMs + 1000, nowMs + 50_000),
					{ returnIds: true },
				);
				emitted.push(...batch.ids!);
				await env.sandbox.control.advanceClock(MINUTE);
				const result = await host.poll();
				expect(result.items?.map((item) => item.json.id)).toEqual(batch.ids);
			}
			// More events after the last poll, then the rename: n8n re-activates the workflow.
			const { nowMs } = await env.sandbox.control.getClock();
			const beforeRename = await env.sandbox.control.createEvents(
				spreadEvents(4, nowMs + 1000, nowMs + 20_000),
				{ returnIds: true },
			);
			await env.sandbox.control.advanceClock(30_000);
			host.rename('Documents arrived');
			const reactivation = await host.poll({ activation: 'update' });
			expect(reactivation.error).toBeUndefined();
			expect(reactivation.items?.map((item) => item.json.id) ?? []).toEqual(beforeRename.ids);

			// Scheduled polls of the re-activated workflow (n8n keeps the activation mode of the activation).
			const afterRename = await env.sandbox.control.createEvents(
				spreadEvents(6, nowMs + 40_000, nowMs + 80_000),
				{ returnIds: true },
			);
			for (let i = 0; i < 3; i++) {
				await env.sandbox.control.advanceClock(MINUTE);
				expect((await host.poll({ activation: 'update' })).error).toBeUndefined();
			}
			const expected = [...emitted, ...beforeRename.ids!, ...afterRename.ids!].map((id) => ({
				id,
			}));
			expect(compareDelivered(host.delivered, expected)).toEqual({
				duplicates: [],
				lost: [],
				unexpected: [],
			});
		},
	);

	test('a restart after the rename (default mode): still nothing twice', async () => {
		const host = new TriggerHost(env.sandbox);
		expect((await host.activate()).items).toBeNull();
		const { nowMs } = await env.sandbox.control.getClock();
		const first = await env.sandbox.control.createEvents(
			spreadEvents(5, nowMs + 1000, nowMs + 50_000),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll()).items).toHaveLength(5);
		host.rename('Renamed');
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll({ activation: 'update' })).items).toBeNull();
		host.restart();
		const second = await env.sandbox.control.createEvents(
			spreadEvents(3, nowMs + 2 * MINUTE, nowMs + 2 * MINUTE + 10_000),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll({ activation: 'init' })).items?.map((item) => item.json.id)).toEqual(
			second.ids,
		);
		expect(
			compareDelivered(
				host.delivered,
				[...first.ids!, ...second.ids!].map((id) => ({ id })),
			),
		).toEqual({ duplicates: [], lost: [], unexpected: [] });
	});

	test('durable cursors: the cursor follows the node id, so the renamed trigger goes on where it was', async () => {
		const host = new TriggerHost(env.sandbox);
		expect((await host.activate({ activation: 'activate' })).items).toBeNull();
		const { nowMs } = await env.sandbox.control.getClock();
		const first = await env.sandbox.control.createEvents(
			spreadEvents(5, nowMs + 1000, nowMs + 50_000),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll({ activation: 'update', pollBudgetMs: 36_000 })).items).toHaveLength(5);
		host.rename('Renamed', 'durable');
		const second = await env.sandbox.control.createEvents(
			spreadEvents(3, nowMs + 70_000, nowMs + 80_000),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		expect(
			(await host.poll({ activation: 'update', pollBudgetMs: 36_000 })).items?.map(
				(item) => item.json.id,
			),
		).toEqual(second.ids);
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll({ activation: 'update', pollBudgetMs: 36_000 })).items).toBeNull();
		expect(
			compareDelivered(
				host.delivered,
				[...first.ids!, ...second.ids!].map((id) => ({ id })),
			),
		).toEqual({ duplicates: [], lost: [], unexpected: [] });
	});

	test("durable cursors, first scheduled poll: where n8n kept the workflow's global static data written at activation, it starts exactly at activation", async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		const justBefore = await env.sandbox.control.createEvents(
			spreadEvents(20, now - 30_000, now - 1000),
			{ returnIds: true },
		);
		const host = new TriggerHost(env.sandbox);
		expect((await host.activate({ activation: 'activate' })).items).toBeNull();
		// The node's cursor written by the activation poll is dropped; the workflow's static data is not.
		host.live = { global: host.saved.global };
		const sinceActivation = await env.sandbox.control.createEvents(
			spreadEvents(50, now + 100, now + 50_000),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		const first = await host.poll({ activation: 'update', pollBudgetMs: 36_000 });
		expect(first.items?.map((item) => item.json.id)).toEqual(sinceActivation.ids);
		expect(host.delivered.some((event) => justBefore.ids!.includes(event.id))).toBe(false);
	});

	test('renaming back to an earlier name (default mode): the older state kept under that name does not bring back what was emitted since', async () => {
		const host = new TriggerHost(env.sandbox);
		expect((await host.activate()).items).toBeNull();
		const emitted: string[] = [];
		const pollNew = async (count: number) => {
			const { nowMs } = await env.sandbox.control.getClock();
			const batch = await env.sandbox.control.createEvents(
				spreadEvents(count, nowMs + 1000, nowMs + 30_000),
				{ returnIds: true },
			);
			await env.sandbox.control.advanceClock(MINUTE);
			const result = await host.poll({ activation: 'update' });
			expect(result.items?.map((item) => item.json.id)).toEqual(batch.ids);
			emitted.push(...batch.ids!);
		};
		await pollNew(3);
		host.rename('Documents arrived');
		await pollNew(4);
		await pollNew(2);
		host.rename(NODE_NAME);
		await pollNew(3);
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll({ activation: 'update' })).items).toBeNull();
		expect(
			compareDelivered(
				host.delivered,
				emitted.map((id) => ({ id })),
			),
		).toEqual({
			duplicates: [],
			lost: [],
			unexpected: [],
		});
	});

	test("a new trigger given a deleted trigger's name starts from now, not from the deleted one's place", async () => {
		const host = new TriggerHost(env.sandbox);
		expect((await host.activate()).items).toBeNull();
		const { nowMs } = await env.sandbox.control.getClock();
		const first = await env.sandbox.control.createEvents(
			spreadEvents(3, nowMs + 1000, nowMs + 30_000),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll()).items?.map((item) => item.json.id)).toEqual(first.ids);
		// Events while the old trigger still ran, but after its last poll.
		await env.sandbox.control.createEvents(spreadEvents(5, nowMs + 70_000, nowMs + 100_000));
		await env.sandbox.control.advanceClock(10 * MINUTE);
		// Deleted; a new trigger (a new node id) with the same name; the workflow published again.
		host.replaceNode('new-trigger-node-id');
		expect((await host.poll({ activation: 'update' })).items).toBeNull();
		const now = (await env.sandbox.control.getClock()).nowMs;
		const after = await env.sandbox.control.createEvents(
			spreadEvents(2, now + 1000, now + 20_000),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll({ activation: 'update' })).items?.map((item) => item.json.id)).toEqual(
			after.ids,
		);
	});
});
