/**
 * What a quiet trigger costs after a burst (issue 19, path 3). Without the API's clock (no
 * `Date` header) a burst's stretches stay young for as long as no later event comes, and
 * with it they stay young for one overlap window: a poll must not read them all again while
 * nothing enters them. At most 2 event reads per idle poll, with or without `Date`; a late
 * event entering the burst is still emitted, once.
 */
import {
	MINUTE,
	TriggerHost,
	burstEvents,
	compareDelivered,
	eventRequests,
	lastSeq,
} from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

const BURST = 6000;
const POLL_BUDGET_MS = 36_000;

describe('a quiet trigger after a burst', () => {
	test.each([
		['without', false],
		['with', true],
	])(
		'%s a Date header: at most 2 reads per idle poll, and a late event inside the burst comes out once',
		async (_label, sendDateHeader) => {
			await env.sandbox.control.setSettings({ sendDateHeader });
			const host = new TriggerHost(env.sandbox);
			expect((await host.activate({ pollBudgetMs: POLL_BUDGET_MS })).error).toBeUndefined();
			const start = (await env.sandbox.control.getClock()).nowMs;
			await env.sandbox.control.createEvents(burstEvents(BURST, start + 1000, 40_000, { seed: 5 }));
			// Created within the burst, committed 3 minutes later (inside the 5-minute overlap window).
			const late = await env.sandbox.control.createEvents(
				[
					{
						type: 'run.failed',
						createdOn: new Date(start + 20_000).toISOString(),
						commitDelayMs: 3 * MINUTE,
						data: { late: true },
					},
				],
				{ returnIds: true },
			);

			// Caught up with the burst.
			let polls = 0;
			while (host.delivered.length < BURST && polls < 10) {
				await env.sandbox.control.advanceClock(MINUTE);
				expect((await host.poll({ pollBudgetMs: POLL_BUDGET_MS })).error).toBeUndefined();
				polls++;
			}
			expect(host.delivered).toHaveLength(BURST);

			// Quiet minutes: the late event appears after the third, nothing else happens.
			const readsPerPoll: number[] = [];
			for (let minute = 0; minute < 8; minute++) {
				await env.sandbox.control.advanceClock(MINUTE);
				const seq = await lastSeq(env.sandbox);
				const result = await host.poll({ pollBudgetMs: POLL_BUDGET_MS });
				expect(result.error).toBeUndefined();
				const reads = (await eventRequests(env.sandbox, seq)).length;
				if (!result.items) readsPerPoll.push(reads);
			}
			expect(readsPerPoll.length).toBeGreaterThanOrEqual(7);
			expect(Math.max(...readsPerPoll)).toBeLessThanOrEqual(2);

			const all = await env.sandbox.control.listEvents();
			expect(all.every((event) => event.committed)).toBe(true);
			expect(compareDelivered(host.delivered, all)).toEqual({
				duplicates: [],
				lost: [],
				unexpected: [],
			});
			expect(host.delivered.filter((event) => event.id === late.ids![0])).toHaveLength(1);
			console.log(
				`burst of ${BURST} ${sendDateHeader ? 'with' : 'without'} Date: caught up in ${polls} polls; event reads per idle poll: ${readsPerPoll.join(', ')}`,
			);
		},
		120_000,
	);

	test('without a Date header, a re-read that runs out of budget goes on from where it stopped at the next poll', async () => {
		await env.sandbox.control.setSettings({ sendDateHeader: false });
		const host = new TriggerHost(env.sandbox, { options: { maxEventsPerPoll: BURST } });
		expect((await host.activate({ pollBudgetMs: POLL_BUDGET_MS })).error).toBeUndefined();
		const start = (await env.sandbox.control.getClock()).nowMs;
		await env.sandbox.control.createEvents(burstEvents(BURST, start + 1000, 40_000, { seed: 6 }));
		// Late events at the start and the end of the burst: the count shows something entered, so the spans are read again.
		const late = await env.sandbox.control.createEvents(
			[
				{
					type: 'run.failed',
					createdOn: new Date(start + 1500).toISOString(),
					commitDelayMs: 2 * MINUTE,
					data: { late: 1 },
				},
				{
					type: 'run.failed',
					createdOn: new Date(start + 40_500).toISOString(),
					commitDelayMs: 2 * MINUTE,
					data: { late: 2 },
				},
			],
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll({ pollBudgetMs: POLL_BUDGET_MS })).items).toHaveLength(BURST);
		// Slow pages: one poll's budget (70% of 3.6 s) reads about 25 of the 60 pages.
		await env.sandbox.control.setSettings({ eventPageLatencyMs: 100 });
		await env.sandbox.control.advanceClock(2 * MINUTE);
		// Polls until both late events are out (a busy machine reads fewer pages per poll); a re-read
		// that started at the same place every poll would never reach the late event at the end.
		const lateOut = () => host.delivered.filter((event) => late.ids!.includes(event.id));
		let polls = 0;
		for (; lateOut().length < 2 && polls < 15; polls++) {
			expect((await host.poll({ pollBudgetMs: POLL_BUDGET_MS / 10 })).error).toBeUndefined();
			await env.sandbox.control.advanceClock(10_000);
		}
		expect(lateOut()).toHaveLength(2);
		// Each late event costs a count and the pages from where it entered, not a read of the 60 pages.
		expect(polls).toBeLessThanOrEqual(4);
		const all = await env.sandbox.control.listEvents();
		expect(compareDelivered(host.delivered, all)).toEqual({
			duplicates: [],
			lost: [],
			unexpected: [],
		});
	}, 180_000);
});
