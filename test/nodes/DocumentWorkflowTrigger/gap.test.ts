/** The cursor falling out of the 7-day history (n8n down for longer), and quiet spells that are no gap. */
import { startSandbox } from '../../../sandbox/src';
import type { Sandbox } from '../../../sandbox/src';
import { DAY, MINUTE, TriggerHost, captureWarnings, compareDelivered, spreadEvents } from '../../harness/triggerHost';

let sb: Sandbox;

beforeAll(async () => {
	sb = await startSandbox();
});
afterAll(async () => {
	await sb.stop();
});
beforeEach(async () => {
	await sb.control.reset();
});

describe('the 7-day history', () => {
	test.each([
		['no history at activation', 0],
		['a history at activation', 300],
	])('after more than 7 days down (%s): says so once, then carries on from the oldest available event', async (_label, history) => {
		const start = (await sb.control.getClock()).nowMs;
		const past = history ? (await sb.control.createEvents(spreadEvents(history, start - DAY, start - 1000), { returnIds: true })).ids! : [];
		const host = new TriggerHost(sb);
		await host.activate();
		const t0 = (await sb.control.getClock()).nowMs;
		await sb.control.createEvents(spreadEvents(20, t0 + 1000, t0 + 20_000));
		await sb.control.advanceClock(MINUTE);
		expect((await host.poll()).items).toHaveLength(20);

		// n8n is down for 8 days; events keep happening.
		const expired = await sb.control.createEvents(spreadEvents(30, t0 + 2 * MINUTE, t0 + 12 * 60 * MINUTE), { returnIds: true });
		const kept = await sb.control.createEvents(spreadEvents(250, t0 + 2 * DAY, t0 + 8 * DAY - MINUTE), { returnIds: true });
		await sb.control.advanceClock(8 * DAY);
		host.restart();

		const warnings = captureWarnings();
		try {
			const result = await host.poll();
			expect(result.error).toBeUndefined();
			expect(result.items?.map((item) => item.json.id)).toEqual(kept.ids);
			const gapWarnings = warnings.messages.filter((message) => message.includes('7-day'));
			expect(gapWarnings).toHaveLength(1);
			expect(gapWarnings[0]).toMatch(/may have been missed/);
			const state = (host.saved['node:Document Workflow Trigger'] as { eventCursor: { gap?: { oldestAvailableId: string } } }).eventCursor;
			expect(state.gap?.oldestAvailableId).toBe(kept.ids![0]);

			// Once: the following polls carry on without repeating the warning.
			await sb.control.createEvents(spreadEvents(5, (await sb.control.getClock()).nowMs, (await sb.control.getClock()).nowMs + 5000));
			await sb.control.advanceClock(MINUTE);
			expect((await host.poll()).items).toHaveLength(5);
			await sb.control.advanceClock(MINUTE);
			expect((await host.poll()).items).toBeNull();
			expect(warnings.messages.filter((message) => message.includes('7-day'))).toHaveLength(1);
		} finally {
			warnings.restore();
		}
		const lost = compareDelivered(host.delivered, await sb.control.listEvents()).lost;
		// Lost: exactly the events that left the history while n8n was down (and the history before activation).
		expect(new Set(lost)).toEqual(new Set([...past, ...expired.ids!]));
	});

	test('a quiet spell of 6 days is no gap: no warning, nothing lost', async () => {
		const host = new TriggerHost(sb);
		await host.activate();
		const t0 = (await sb.control.getClock()).nowMs;
		await sb.control.createEvents(spreadEvents(10, t0 + 1000, t0 + 10_000));
		await sb.control.advanceClock(MINUTE);
		await host.poll();
		await sb.control.advanceClock(6 * DAY);
		const later = await sb.control.createEvents(spreadEvents(10, t0 + 6 * DAY, t0 + 6 * DAY + 10_000), { returnIds: true });
		await sb.control.advanceClock(MINUTE);
		const warnings = captureWarnings();
		try {
			expect((await host.poll()).items?.map((item) => item.json.id)).toEqual(later.ids);
			expect(warnings.messages.filter((message) => message.includes('7-day'))).toEqual([]);
		} finally {
			warnings.restore();
		}
		expect(compareDelivered(host.delivered, await sb.control.listEvents())).toEqual({ duplicates: [], lost: [], unexpected: [] });
	});
});
