/** First activation: nothing from the past, at most two requests; or everything, from the oldest event. */
import {
	DAY,
	MINUTE,
	TriggerHost,
	compareDelivered,
	eventRequests,
	queryOf,
	spreadEvents,
} from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

describe('first activation', () => {
	test('with 50,000 events of history: emits nothing, costs at most 2 requests, then emits only new events', async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		const created = await env.sandbox.control.createEvents(
			spreadEvents(50_000, now - 7 * DAY + MINUTE, now - 1000),
		);
		expect(created.count).toBe(50_000);
		await env.sandbox.control.clearRequests();

		const host = new TriggerHost(env.sandbox);
		const activation = await host.activate();
		expect(activation.error).toBeUndefined();
		expect(activation.items).toBeNull();
		const requests = await eventRequests(env.sandbox);
		expect(requests.length).toBeLessThanOrEqual(2);
		expect(requests.map((r) => queryOf(r).get('pageSize'))).toEqual(requests.map(() => '100'));
		// The saved cursor points at the newest event, not at the start of the history.
		const state = host.saved['node:Document Workflow Trigger'] as {
			eventCursor: { after: string };
		};
		expect(state.eventCursor.after >= created.firstId!).toBe(true);
		expect(
			Object.keys((state.eventCursor as unknown as { listed: object }).listed).length,
		).toBeLessThanOrEqual(100);

		// Only what happens after activation is emitted, each once.
		await env.sandbox.control.advanceClock(MINUTE);
		const fresh = await env.sandbox.control.createEvents(
			spreadEvents(30, now + 1000, now + 30_000, () => ({ type: 'document.received' })),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		const first = await host.poll();
		expect(first.error).toBeUndefined();
		expect(first.items?.map((item) => item.json.id)).toEqual(fresh.ids);
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll()).items).toBeNull();
		expect(
			compareDelivered(
				host.delivered,
				fresh.ids!.map((id) => ({ id })),
			),
		).toEqual({ duplicates: [], lost: [], unexpected: [] });
	});

	test('with no events at all: nothing emitted, and the first event that appears later is emitted', async () => {
		const host = new TriggerHost(env.sandbox);
		expect((await host.activate()).items).toBeNull();
		await env.sandbox.control.createEvents([{ type: 'run.failed', data: { n: 1 } }]);
		const result = await host.poll();
		expect(result.items?.map((item) => item.json.data)).toEqual([{ n: 1 }]);
		expect((await host.poll()).items).toBeNull();
	});

	test('emits the event exactly as the API returned it', async () => {
		const host = new TriggerHost(env.sandbox);
		await host.activate();
		await env.sandbox.control.createEvents([
			{ type: 'review.created', data: { reviewTaskId: 'x', nested: { a: [1, 2] } } },
		]);
		const result = await host.poll();
		const [event] = await env.sandbox.control.listEvents({ type: 'review.created' });
		expect(result.items).toHaveLength(1);
		expect(result.items![0].json).toEqual({
			id: event.id,
			type: 'review.created',
			createdOn: event.createdOn,
			environment: 'prod',
			data: { reviewTaskId: 'x', nested: { a: [1, 2] } },
		});
	});

	test('start from the oldest available event: emits the whole 7-day history once, oldest first, and nothing older', async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		await env.sandbox.control.createEvents(
			spreadEvents(40, now - 9 * DAY, now - 8 * DAY, () => ({ data: { old: true } })),
		);
		await env.sandbox.control.createEvents(
			spreadEvents(1234, now - 7 * DAY + 10 * MINUTE, now - 1000),
		);
		const inWindow = await env.sandbox.control.listEvents({ includeUncommitted: false });
		const expected = inWindow.filter((event) => Date.parse(event.createdOn) > now - 7 * DAY);
		expect(expected).toHaveLength(1234);

		const host = new TriggerHost(env.sandbox, { options: { startFrom: 'oldest' } });
		const activation = await host.activate();
		expect(activation.error).toBeUndefined();
		expect(activation.items?.map((item) => item.json.id)).toEqual(
			expected.map((event) => event.id),
		);
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll()).items).toBeNull();
		expect(compareDelivered(host.delivered, expected)).toEqual({
			duplicates: [],
			lost: [],
			unexpected: [],
		});
	});

	test('an event committed late with an id below the activation baseline but inside the overlap window is still emitted', async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		await env.sandbox.control.createEvents(spreadEvents(500, now - 30 * MINUTE, now - 1000));
		// Created 2 minutes ago, committed 3 minutes after creation: invisible at activation.
		const late = await env.sandbox.control.createEvents(
			[
				{
					type: 'run.completed',
					createdOn: new Date(now - 2 * MINUTE).toISOString(),
					commitDelayMs: 3 * MINUTE,
					data: { late: true },
				},
			],
			{ returnIds: true },
		);
		const host = new TriggerHost(env.sandbox);
		expect((await host.activate()).items).toBeNull();
		await env.sandbox.control.advanceClock(2 * MINUTE);
		const result = await host.poll();
		expect(result.items?.map((item) => item.json.id)).toEqual(late.ids);
	});

	test("durable cursors (n8n 2.41): the activation poll's state is dropped; the first scheduled poll still emits every event since activation, and nothing older than one poll interval and a half", async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		const history = await env.sandbox.control.createEvents(
			spreadEvents(5000, now - 2 * DAY, now - 2 * MINUTE),
			{ returnIds: true },
		);
		// Created in the half-minute before activation: inside the bound, may be emitted.
		const justBefore = await env.sandbox.control.createEvents(
			spreadEvents(20, now - 30_000, now - 1000),
			{ returnIds: true },
		);
		const host = new TriggerHost(env.sandbox);
		expect(
			(await host.activate({ activation: 'activate', pollBudgetMs: 5 * MINUTE })).items,
		).toBeNull();
		// n8n keeps nothing of what the activation poll wrote.
		host.live = {};
		host.saved = {};
		const afterActivation = await env.sandbox.control.createEvents(
			spreadEvents(50, now + 100, now + 2000),
			{ returnIds: true },
		);
		const beforeFirstPoll = await env.sandbox.control.createEvents(
			spreadEvents(15_000, now + 2000, now + 55_000),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		await env.sandbox.control.clearRequests();
		// Scheduled polls under durable cursors: activation mode "update", a 36 s budget.
		// At most Max Events per Poll each: polls until the list is read.
		for (let poll = 0; poll < 6; poll++) {
			const result = await host.poll({ activation: 'update', pollBudgetMs: 36_000 });
			expect(result.error).toBeUndefined();
			if (!result.items) break;
		}
		const expected = [...afterActivation.ids!, ...beforeFirstPoll.ids!].map((id) => ({ id }));
		const check = compareDelivered(host.delivered, expected);
		expect(check.lost).toEqual([]);
		expect(check.duplicates).toEqual([]);
		expect(check.unexpected.filter((id) => !justBefore.ids!.includes(id))).toEqual([]);
		expect(check.unexpected.some((id) => history.ids!.includes(id))).toBe(false);
		// Finding where to start costs a binary search over the pages, not a read of the history.
		expect((await eventRequests(env.sandbox)).length).toBeLessThan(15_000 / 100 + 30);
	});

	test('durable cursors with Poll Times every 5 minutes: the first scheduled poll looks back one interval and a half (up to a minute more), from its own Poll Times', async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		const host = new TriggerHost(env.sandbox, {
			pollTimes: { item: [{ mode: 'everyX', value: 5, unit: 'minutes' }] },
		});
		expect((await host.activate({ activation: 'activate' })).items).toBeNull();
		host.live = {};
		host.saved = {};
		// Activation at `now`; the first scheduled poll 5 minutes later. Look-back: 5 + 1 minutes.
		const tooOld = await env.sandbox.control.createEvents(
			spreadEvents(10, now - 4 * MINUTE, now - 2 * MINUTE),
			{ returnIds: true },
		);
		const sinceActivation = await env.sandbox.control.createEvents(
			spreadEvents(10, now + 1000, now + 4 * MINUTE),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(5 * MINUTE);
		const first = await host.poll({ activation: 'update', pollBudgetMs: 36_000 });
		const ids = first.items?.map((item) => item.json.id);
		expect(ids).toEqual(sinceActivation.ids);
		expect(ids?.some((id) => tooOld.ids!.includes(id as string))).toBe(false);
	});
});
