/**
 * Events leaving the 7-day history while a read runs (issue 19, path 2). Every page that
 * the sandbox answers moves its clock on, so the oldest events expire between two pages and
 * every later page moves back: a read that pages by number skips the events that slid over
 * a page boundary. Start From: Oldest reads without `after`, from the oldest event.
 */
import {
	DAY,
	MINUTE,
	TriggerHost,
	compareDelivered,
	spreadEvents,
} from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

describe('events expiring while the trigger reads', () => {
	test('Start From: Oldest, 3,000 events of which 1,500 leave the window during the first read: every recent event once, nothing twice', async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		// 1,500 events within the first 30 minutes of the window: a page a minute lets about 50 of them expire per page.
		const expiring = await env.sandbox.control.createEvents(
			spreadEvents(1500, now - 7 * DAY + MINUTE, now - 7 * DAY + 31 * MINUTE),
			{ returnIds: true },
		);
		const recent = await env.sandbox.control.createEvents(
			spreadEvents(1500, now - 2 * DAY, now - 10 * MINUTE),
			{ returnIds: true },
		);
		await env.sandbox.control.setSettings({ eventPageClockAdvanceMs: MINUTE });

		const host = new TriggerHost(env.sandbox, { options: { startFrom: 'oldest' } });
		const activation = await host.activate();
		expect(activation.error).toBeUndefined();
		await env.sandbox.control.setSettings({ eventPageClockAdvanceMs: 0 });
		// The window really moved during the read: by a minute a page, half an hour or so.
		expect((await env.sandbox.control.getClock()).nowMs).toBeGreaterThan(now + 20 * MINUTE);
		for (let i = 0; i < 3; i++) {
			await env.sandbox.control.advanceClock(MINUTE);
			expect((await host.poll()).error).toBeUndefined();
		}
		const check = compareDelivered(
			host.delivered,
			recent.ids!.map((id) => ({ id })),
		);
		expect(check.lost).toEqual([]);
		expect(check.duplicates).toEqual([]);
		// Expiring events may come out (those read before they left), never twice, and nothing else does.
		expect(check.unexpected.every((id) => expiring.ids!.includes(id))).toBe(true);
	});

	test('a cursor that left the 7-day history while new events expire during the catch-up read: every event still listed once', async () => {
		const host = new TriggerHost(env.sandbox);
		expect((await host.activate()).items).toBeNull();
		const { nowMs } = await env.sandbox.control.getClock();
		await env.sandbox.control.createEvents(spreadEvents(5, nowMs + 1000, nowMs + 5000));
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll()).items).toHaveLength(5);
		// n8n is down for 7 days and a bit; events kept coming, the oldest of them now about to expire.
		const expiring = await env.sandbox.control.createEvents(
			spreadEvents(1000, nowMs + 2 * MINUTE, nowMs + 32 * MINUTE),
			{ returnIds: true },
		);
		const later = await env.sandbox.control.createEvents(
			spreadEvents(1000, nowMs + DAY, nowMs + 6 * DAY),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(7 * DAY + MINUTE);
		await env.sandbox.control.setSettings({ eventPageClockAdvanceMs: MINUTE });
		const result = await host.poll();
		await env.sandbox.control.setSettings({ eventPageClockAdvanceMs: 0 });
		expect(result.error).toBeUndefined();
		await env.sandbox.control.advanceClock(MINUTE);
		expect((await host.poll()).error).toBeUndefined();
		const check = compareDelivered(
			host.delivered.slice(5),
			later.ids!.map((id) => ({ id })),
		);
		expect(check.lost).toEqual([]);
		expect(check.duplicates).toEqual([]);
		expect(check.unexpected.every((id) => expiring.ids!.includes(id))).toBe(true);
	});
});
