/**
 * A burst far larger than one poll can read: 100,000 events created within one minute,
 * overlap window 1 minute, n8n 2.41's durable-cursor poll budget (36 s) against an API
 * that takes 100 ms a page. Real time is scaled down tenfold so the test stays short: the
 * budget is 3.6 s and the sandbox adds 10 ms a page (the sandbox clock, which the events
 * and the API's `Date` header follow, still moves a minute between polls).
 */
import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';

import {
	MINUTE,
	TriggerHost,
	burstEvents,
	captureWarnings,
	compareDelivered,
} from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';
import { DEFAULT_MAX_EVENTS_PER_POLL } from '../../../nodes/DocumentWorkflowTrigger/triggerSettings';

const env = useSandbox();

const BURST = 100_000;
const SCALE = 10;
const POLL_BUDGET_MS = 36_000 / SCALE;
const PAGE_LATENCY_MS = 100 / SCALE;
/** Share of the burst's events committed up to a minute after their place in the list. */
const LATE_SHARE = 0.01;
const FIRST_POLL_AFTER_MS = 20_000;

describe('a burst larger than one poll can read', () => {
	// With a 5-minute window the whole burst stays young for five polls: only reading on from the newest id read makes progress then.
	test.each([1, 5])(
		'100,000 events within one minute, overlap %i minute(s), a 36 s budget: every event once, every poll emits new events until caught up',
		async (overlapMinutes) => {
			const host = new TriggerHost(env.sandbox, { options: { overlapMinutes } });
			expect((await host.activate({ pollBudgetMs: POLL_BUDGET_MS })).error).toBeUndefined();
			const start = (await env.sandbox.control.getClock()).nowMs;
			await env.sandbox.control.createEvents(
				burstEvents(BURST, start + 1000, MINUTE, {
					seed: 11,
					lateShare: LATE_SHARE,
					maxLateMs: MINUTE,
				}),
			);
			await env.sandbox.control.setSettings({ eventPageLatencyMs: PAGE_LATENCY_MS });

			const warnings = captureWarnings();
			const infos: string[] = [];
			const info = jest
				.spyOn(Container.get(Logger), 'info')
				.mockImplementation((message: string) => void infos.push(message));
			const perPoll: number[] = [];
			const remembered: number[] = [];
			try {
				// The first poll comes 20 s into the burst, so that events committed late enter the list
				// behind the ids it read (however fast this machine reads): the polls that catch up must let
				// go of the ids behind them all the same.
				while (host.delivered.length < BURST && perPoll.length < 60) {
					await env.sandbox.control.advanceClock(
						perPoll.length === 0 ? FIRST_POLL_AFTER_MS : MINUTE,
					);
					const result = await host.poll({ pollBudgetMs: POLL_BUDGET_MS });
					expect(result.error).toBeUndefined();
					perPoll.push(result.items?.length ?? 0);
					remembered.push(host.memory().ids);
				}
			} finally {
				warnings.restore();
				info.mockRestore();
			}
			const pollsToCatchUp = perPoll.length;
			// No execution above Max Events per Poll, late events read again included.
			expect(Math.max(...perPoll)).toBeLessThanOrEqual(DEFAULT_MAX_EVENTS_PER_POLL);
			// More than one poll was needed, and each one emitted events not emitted before until only
			// late events (committed behind the ids read) were left: those come out of re-reads that go
			// on where the last stopped (idle.test.ts), and a slow poll's re-read may find none of them.
			expect(pollsToCatchUp).toBeGreaterThan(2);
			const emittedBefore = perPoll.map((_, i) => perPoll.slice(0, i).reduce((a, b) => a + b, 0));
			const whileBehind = perPoll.filter((_, i) => emittedBefore[i] < BURST * (1 - LATE_SHARE));
			expect(whileBehind.length).toBeGreaterThan(2);
			expect(whileBehind.every((count) => count > 0)).toBe(true);
			// Each poll that stops before the end of the list says so (n8n's log, level info).
			const behind = infos.filter((message) =>
				/more events are listed than one poll emits/.test(message),
			);
			expect(behind.length).toBeGreaterThanOrEqual(whileBehind.length - 1);

			// Settles: a few more polls emit nothing and forget the burst.
			for (let i = 0; i < overlapMinutes + 2; i++) {
				await env.sandbox.control.advanceClock(MINUTE);
				expect((await host.poll({ pollBudgetMs: POLL_BUDGET_MS })).items).toBeNull();
			}
			const all = await env.sandbox.control.listEvents();
			expect(all.every((event) => event.committed)).toBe(true);
			expect(compareDelivered(host.delivered, all)).toEqual({
				duplicates: [],
				lost: [],
				unexpected: [],
			});

			// Memory: at most what the polls of one overlap window read (polls a minute apart), and nothing once settled.
			const peak = Math.max(...remembered);
			expect(peak).toBeLessThanOrEqual((overlapMinutes + 1) * Math.max(...perPoll));
			if (overlapMinutes === 1) expect(peak).toBeLessThan(BURST / 4);
			expect(host.memory().ids).toBe(0);
			console.log(
				`burst of ${BURST}, overlap ${overlapMinutes} min: caught up in ${pollsToCatchUp} polls (${perPoll.join(', ')} events), remembered ids peak ${peak}, settled ${host.memory().ids} (${host.memory().bytes} bytes)`,
			);
		},
	);

	// The spec does not promise a `Date` header. Without it the cursor takes the API's clock from
	// the newest `createdOn` it read. While no later event shows that clock moving on, the
	// burst's stretches stay young and their ids stay remembered; a poll re-reads them only where
	// the API's count shows a late event entered, going on where the last re-read stopped
	// (idle.test.ts counts the reads). Once a later event comes, the stretches close: every event
	// exactly once, the ids let go (docs/polling-trigger.md, Known limits).
	test('half the burst from an API that sends no Date header: all but its late events at once, and every event exactly once with the ids let go once a later event comes', async () => {
		const overlapMinutes = 1;
		const burst = BURST / 2;
		await env.sandbox.control.setSettings({ sendDateHeader: false });
		const host = new TriggerHost(env.sandbox, { options: { overlapMinutes } });
		expect((await host.activate({ pollBudgetMs: POLL_BUDGET_MS })).error).toBeUndefined();
		const start = (await env.sandbox.control.getClock()).nowMs;
		await env.sandbox.control.createEvents(
			burstEvents(burst, start + 1000, MINUTE, { seed: 12, lateShare: 0.01, maxLateMs: MINUTE }),
		);
		await env.sandbox.control.setSettings({ eventPageLatencyMs: PAGE_LATENCY_MS });
		// The API really answers without a clock.
		const probe = await fetch(`${env.sandbox.baseUrl}/events?pageSize=1`, {
			headers: { 'X-Api-Key': env.sandbox.apiKey },
		});
		expect(probe.status).toBe(200);
		expect(probe.headers.get('date')).toBeNull();

		// A poll's budget is real time, so how many polls a busy machine needs varies: the polls go
		// on until one emits nothing, and none before it may come back empty.
		const perPoll: number[] = [];
		while (host.delivered.length < burst && perPoll.at(-1) !== 0) {
			await env.sandbox.control.advanceClock(MINUTE);
			const result = await host.poll({ pollBudgetMs: POLL_BUDGET_MS });
			expect(result.error).toBeUndefined();
			perPoll.push(result.items?.length ?? 0);
		}
		expect(perPoll.slice(0, -1).every((count) => count > 0)).toBe(true);
		// Everything but (at most) the 1% committed late.
		expect(host.delivered.length).toBeGreaterThanOrEqual(burst * 0.99);
		const deliveredBeforeLater = host.delivered.length;
		const heldAfterBurst = host.memory().ids;

		// A later event moves the clock the cursor knows past the burst and its overlap window.
		const { nowMs } = await env.sandbox.control.getClock();
		await env.sandbox.control.createEvents([
			{ type: 'document.received', createdOn: new Date(nowMs).toISOString(), data: {} },
		]);
		// Every poll from here on delivers the later event or lets ids go, however few its budget
		// allows on a busy machine; a poll that does neither is stuck and fails the test.
		let pollsToLetGo = 0;
		while (host.memory().ids > 1 || host.delivered.length <= burst) {
			const before = { ids: host.memory().ids, delivered: host.delivered.length };
			await env.sandbox.control.advanceClock(MINUTE);
			expect((await host.poll({ pollBudgetMs: POLL_BUDGET_MS })).error).toBeUndefined();
			pollsToLetGo++;
			expect({
				pollsToLetGo,
				progressed: host.memory().ids < before.ids || host.delivered.length > before.delivered,
			}).toEqual({ pollsToLetGo, progressed: true });
		}

		const all = await env.sandbox.control.listEvents();
		expect(all.every((event) => event.committed)).toBe(true);
		expect(compareDelivered(host.delivered, all)).toEqual({
			duplicates: [],
			lost: [],
			unexpected: [],
		});
		console.log(
			`burst of ${burst} without Date: ${deliveredBeforeLater} events within ${perPoll.length} polls (${perPoll.join(', ')}); ${heldAfterBurst} ids remembered until a later event came; the rest and the let-go within ${pollsToLetGo} more polls`,
		);
	}, 600_000);
});
