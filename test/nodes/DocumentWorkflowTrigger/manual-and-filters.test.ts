/** "Fetch Test Event" (manual mode) and the event type selection. */
import type { IDataObject } from 'n8n-workflow';

import {
	DAY,
	MINUTE,
	TriggerHost,
	deepCopy,
	eventRequests,
	queryOf,
	spreadEvents,
} from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

const TYPES = [
	'document.received',
	'run.completed',
	'run.failed',
	'run.cancelled',
	'review.created',
	'review.completed',
];

describe('manual mode (Fetch Test Event)', () => {
	test('returns the most recent matching events, oldest first, and leaves the cursor untouched', async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		await env.sandbox.control.createEvents(
			spreadEvents(450, now - DAY, now - 1000, (i) => ({ type: TYPES[i % TYPES.length] })),
		);
		const all = await env.sandbox.control.listEvents();

		// With an active cursor in the static data: manual mode neither reads it nor changes it.
		const host = new TriggerHost(env.sandbox);
		await host.activate();
		await env.sandbox.control.createEvents([
			{ type: 'run.completed', data: { after: 'activation' } },
		]);
		const before = deepCopy(host.live);
		const manual = await host.poll({ mode: 'manual' });
		expect(manual.error).toBeUndefined();
		const latest = await env.sandbox.control.listEvents();
		expect(manual.items?.map((item) => item.json.id)).toEqual(
			latest.slice(-5).map((event) => event.id),
		);
		expect(deepCopy(host.live)).toEqual(before);
		// The scheduled poll still emits the event that manual mode showed.
		expect((await host.poll()).items?.map((item) => item.json.data)).toEqual([
			{ after: 'activation' },
		]);

		// Without any state: none is created.
		const fresh = new TriggerHost(env.sandbox, { events: ['run.failed', 'review.created'] });
		const filtered = await fresh.poll({ mode: 'manual' });
		const expected = all
			.filter((event) => event.type === 'run.failed' || event.type === 'review.created')
			.slice(-5);
		expect(filtered.items?.map((item) => item.json.id)).toEqual(expected.map((event) => event.id));
		expect(fresh.live).toEqual({});
	});

	test('with no matching event in the last 7 days: a clear error', async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		await env.sandbox.control.createEvents([
			{ type: 'run.failed', createdOn: new Date(now - 8 * DAY).toISOString() },
		]);
		await env.sandbox.control.createEvents([{ type: 'run.completed' }]);
		const host = new TriggerHost(env.sandbox, { events: ['run.failed'] });
		const result = await host.poll({ mode: 'manual' });
		expect(result.error?.message).toBe('No run.failed events in the last 7 days');
		expect(result.error?.description).toMatch(/last 7 days/);

		const multi = new TriggerHost(env.sandbox, { events: ['run.failed', 'review.completed'] });
		expect((await multi.poll({ mode: 'manual' })).error?.message).toBe(
			'No run.failed, review.completed events in the last 7 days',
		);

		await env.sandbox.control.reset();
		expect((await new TriggerHost(env.sandbox).poll({ mode: 'manual' })).error?.message).toBe(
			'No events in the last 7 days',
		);
	});
});

describe('event type selection', () => {
	test('one type: the node emits only that type; the list is read unfiltered, so the cursor stays true when Events changes', async () => {
		const host = new TriggerHost(env.sandbox, { events: ['run.failed'] });
		await host.activate();
		await env.sandbox.control.createEvents(TYPES.map((type) => ({ type })));
		await env.sandbox.control.clearRequests();
		const result = await host.poll();
		expect(result.items?.map((item) => item.json.type)).toEqual(['run.failed']);
		const requests = await eventRequests(env.sandbox);
		expect(requests.length).toBeGreaterThan(0);
		for (const request of requests) expect(queryOf(request).get('type')).toBeNull();
		// Events changed to another type: its events of the same poll window come out, nothing twice.
		host.parameters.events = ['run.completed'];
		await env.sandbox.control.createEvents([{ type: 'run.completed' }, { type: 'run.failed' }]);
		const next = await host.poll();
		expect(next.items?.map((item) => item.json.type)).toEqual(['run.completed']);
		expect(new Set(host.delivered.map((event) => event.id)).size).toBe(host.delivered.length);
	});

	test('several types: one unfiltered read, filtered in the node', async () => {
		const host = new TriggerHost(env.sandbox, {
			events: ['run.failed', 'review.created', 'document.received'],
		});
		await host.activate();
		const now = (await env.sandbox.control.getClock()).nowMs;
		await env.sandbox.control.createEvents(
			spreadEvents(240, now - 30_000, now - 1000, (i) => ({ type: TYPES[i % TYPES.length] })),
		);
		await env.sandbox.control.clearRequests();
		const result = await host.poll();
		const all = await env.sandbox.control.listEvents();
		const expected = all.filter((event) =>
			['run.failed', 'review.created', 'document.received'].includes(event.type),
		);
		expect(result.items?.map((item) => item.json.id)).toEqual(expected.map((event) => event.id));
		const requests = await eventRequests(env.sandbox);
		// 240 events on 3 pages of 100: three requests, none with a type filter.
		expect(requests).toHaveLength(3);
		for (const request of requests) expect(queryOf(request).has('type')).toBe(false);
	});

	test('empty selection: every type, including types the API adds later', async () => {
		const host = new TriggerHost(env.sandbox);
		await host.activate();
		await env.sandbox.control.createEvents([
			...TYPES.map((type) => ({ type })),
			{ type: 'document.archived' },
		]);
		await env.sandbox.control.clearRequests();
		const result = await host.poll();
		expect(result.items?.map((item) => item.json.type)).toEqual([...TYPES, 'document.archived']);
		for (const request of await eventRequests(env.sandbox))
			expect(queryOf(request).has('type')).toBe(false);
	});

	test('the overlap window option is honoured: an event committed 8 minutes late is caught with 10 minutes, not with the default 5', async () => {
		const run = async (parameters: IDataObject) => {
			await env.sandbox.control.reset();
			const host = new TriggerHost(env.sandbox, parameters);
			await host.activate();
			const now = (await env.sandbox.control.getClock()).nowMs;
			const late = await env.sandbox.control.createEvents(
				[{ type: 'run.failed', createdOn: new Date(now).toISOString(), commitDelayMs: 8 * MINUTE }],
				{ returnIds: true },
			);
			for (let i = 0; i < 10; i++) {
				await env.sandbox.control.advanceClock(MINUTE);
				await env.sandbox.control.createEvents([{ type: 'run.completed' }]);
				await host.poll();
			}
			return host.delivered.map((event) => event.id).includes(late.ids![0]);
		};
		expect(await run({ options: { overlapMinutes: 10 } })).toBe(true);
		expect(await run({})).toBe(false);
	});
});
