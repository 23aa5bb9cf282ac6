/**
 * The memory of emitted ids is bounded by the overlap window, not by history: measured over a
 * long run. What the trigger keeps in static data counts its copy by node id, and the copies of
 * a workflow's triggers are bounded in number.
 */
import { COPIES_KEY } from '../../../nodes/shared/eventCursor';

const MAX_CURSOR_COPIES = 10;
import { MINUTE, TriggerHost, compareDelivered, spreadEvents } from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

describe('memory of seen ids', () => {
	test.each([
		['default 5-minute window', {}, 5],
		['15-minute window', { options: { overlapMinutes: 15 } }, 15],
	])(
		'stays bounded over 6 hours of polling every minute (%s)',
		async (_label, parameters, windowMinutes) => {
			const RATE = 30; // events a minute
			const POLLS = 6 * 60;
			const host = new TriggerHost(env.sandbox, parameters);
			await host.activate();
			const ids: number[] = [];
			const bytes: number[] = [];
			for (let minute = 0; minute < POLLS; minute++) {
				const now = (await env.sandbox.control.getClock()).nowMs;
				await env.sandbox.control.createEvents(
					spreadEvents(RATE, now, now + MINUTE - 1, (i) => ({
						commitDelayMs: i % 10 === 0 ? 2 * MINUTE : 0,
					})),
				);
				await env.sandbox.control.advanceClock(MINUTE);
				const result = await host.poll();
				expect(result.error).toBeUndefined();
				const memory = host.memory();
				ids.push(memory.ids);
				bytes.push(memory.bytes);
			}
			const total = RATE * POLLS;
			// The window holds about RATE * windowMinutes events; allow one more minute of polling and the late ones.
			const bound = RATE * (windowMinutes + 2);
			expect(Math.max(...ids)).toBeLessThanOrEqual(bound);
			// No growth: the last hour remembers no more than the second hour did (within one minute of events).
			const secondHour = Math.max(...ids.slice(60, 120));
			const lastHour = Math.max(...ids.slice(-60));
			expect(lastHour).toBeLessThanOrEqual(secondHour + RATE);
			// The static data stays small: about 60 bytes per remembered id, twice (the node's state and its copy by node id), plus a constant.
			expect(Math.max(...bytes)).toBeLessThan(2 * (bound * 70 + 1000));
			// A small share of keeping every emitted id (twice, as the state and its copy are kept).
			expect(Math.max(...bytes)).toBeLessThan(2 * total * 60 * 0.05);
			console.log(
				`${_label}: ${total} events emitted; remembered ids max ${Math.max(...ids)} (bound ${bound}); static data max ${Math.max(...bytes)} bytes`,
			);

			// While delivering everything once (the late tail commits within the window).
			await env.sandbox.control.advanceClock(5 * MINUTE);
			await host.poll();
			expect(compareDelivered(host.delivered, await env.sandbox.control.listEvents())).toEqual({
				duplicates: [],
				lost: [],
				unexpected: [],
			});
		},
	);

	test(`the copies by node id are bounded: a workflow that has had 25 triggers keeps at most ${MAX_CURSOR_COPIES}, those that read last`, async () => {
		const host = new TriggerHost(env.sandbox);
		await host.activate();
		for (let n = 1; n < 25; n++) {
			await env.sandbox.control.advanceClock(MINUTE);
			host.replaceNode(`trigger-${n}`, `Trigger ${n}`);
			expect((await host.activate()).error).toBeUndefined();
		}
		const copies = Object.keys((host.saved.global as Record<string, object>)[COPIES_KEY]);
		expect(copies).toHaveLength(MAX_CURSOR_COPIES);
		expect(copies).toContain('trigger-24');
		expect(copies).not.toContain('trigger-1');
	});
});
