/** The cursor falling out of the 7-day history (n8n down for longer), and quiet spells that are no gap. */
import {
	DAY,
	MINUTE,
	TriggerHost,
	captureWarnings,
	compareDelivered,
	spreadEvents,
} from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

describe('the 7-day history', () => {
	test.each([
		['no history at activation', 0],
		['a history at activation', 300],
	])(
		'after more than 7 days down (%s): says so once, then carries on from the oldest available event',
		async (_label, history) => {
			const start = (await env.sandbox.control.getClock()).nowMs;
			const past = history
				? (
						await env.sandbox.control.createEvents(
							spreadEvents(history, start - DAY, start - 1000),
							{ returnIds: true },
						)
					).ids!
				: [];
			const host = new TriggerHost(env.sandbox);
			await host.activate();
			const t0 = (await env.sandbox.control.getClock()).nowMs;
			await env.sandbox.control.createEvents(spreadEvents(20, t0 + 1000, t0 + 20_000));
			await env.sandbox.control.advanceClock(MINUTE);
			expect((await host.poll()).items).toHaveLength(20);

			// n8n is down for 8 days; events keep happening.
			const expired = await env.sandbox.control.createEvents(
				spreadEvents(30, t0 + 2 * MINUTE, t0 + 12 * 60 * MINUTE),
				{ returnIds: true },
			);
			const kept = await env.sandbox.control.createEvents(
				spreadEvents(250, t0 + 2 * DAY, t0 + 8 * DAY - MINUTE),
				{ returnIds: true },
			);
			await env.sandbox.control.advanceClock(8 * DAY);
			host.restart();

			const warnings = captureWarnings();
			try {
				const result = await host.poll();
				expect(result.error).toBeUndefined();
				expect(result.items?.map((item) => item.json.id)).toEqual(kept.ids);
				const gapWarnings = warnings.messages.filter((message) => message.includes('7-day'));
				expect(gapWarnings).toHaveLength(1);
				expect(gapWarnings[0]).toMatch(/may have been missed/);

				// Once: the following polls carry on without repeating the warning.
				await env.sandbox.control.createEvents(
					spreadEvents(
						5,
						(await env.sandbox.control.getClock()).nowMs,
						(await env.sandbox.control.getClock()).nowMs + 5000,
					),
				);
				await env.sandbox.control.advanceClock(MINUTE);
				expect((await host.poll()).items).toHaveLength(5);
				await env.sandbox.control.advanceClock(MINUTE);
				expect((await host.poll()).items).toBeNull();
				expect(warnings.messages.filter((message) => message.includes('7-day'))).toHaveLength(1);
			} finally {
				warnings.restore();
			}
			const lost = compareDelivered(host.delivered, await env.sandbox.control.listEvents()).lost;
			// Lost: exactly the events that left the history while n8n was down (and the history before activation).
			expect(new Set(lost)).toEqual(new Set([...past, ...expired.ids!]));
		},
	);

	test('a quiet spell of 6 days is no gap: no warning, nothing lost', async () => {
		const host = new TriggerHost(env.sandbox);
		await host.activate();
		const t0 = (await env.sandbox.control.getClock()).nowMs;
		await env.sandbox.control.createEvents(spreadEvents(10, t0 + 1000, t0 + 10_000));
		await env.sandbox.control.advanceClock(MINUTE);
		await host.poll();
		await env.sandbox.control.advanceClock(6 * DAY);
		const later = await env.sandbox.control.createEvents(
			spreadEvents(10, t0 + 6 * DAY, t0 + 6 * DAY + 10_000),
			{ returnIds: true },
		);
		await env.sandbox.control.advanceClock(MINUTE);
		const warnings = captureWarnings();
		try {
			expect((await host.poll()).items?.map((item) => item.json.id)).toEqual(later.ids);
			expect(warnings.messages.filter((message) => message.includes('7-day'))).toEqual([]);
		} finally {
			warnings.restore();
		}
		expect(compareDelivered(host.delivered, await env.sandbox.control.listEvents())).toEqual({
			duplicates: [],
			lost: [],
			unexpected: [],
		});
	});
});
