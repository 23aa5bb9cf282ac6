/** Conformance: the public API's `Date` header follows the sandbox clock (as a real server's clock would), the event page latency setting, and the clock moving on with each page. */
import { useSandbox } from '../harness/sandbox';
import { get } from './helpers';

const env = useSandbox();
const DAY = 24 * 3_600_000;

describe('the sandbox clock on the wire', () => {
	test('Date is the sandbox clock, also after it was moved forward', async () => {
		await env.sandbox.control.advanceClock(3 * DAY);
		const { nowMs } = await env.sandbox.control.getClock();
		const res = await get(env.sandbox, '/events');
		const date = Date.parse(res.headers.get('date') ?? '');
		// Whole seconds, rounded down.
		expect(date).toBeLessThanOrEqual(nowMs + 1000);
		expect(date).toBeGreaterThan(nowMs - 60_000);
		expect(date - Date.now()).toBeGreaterThan(2 * DAY);
	});

	test('eventPageLatencyMs is a setting of the control API, back to 0 after a reset', async () => {
		expect(
			(await env.sandbox.control.setSettings({ eventPageLatencyMs: 25 })).eventPageLatencyMs,
		).toBe(25);
		expect((await get(env.sandbox, '/events')).status).toBe(200);
		await env.sandbox.control.reset();
		expect((await env.sandbox.control.setSettings({})).eventPageLatencyMs).toBe(0);
	});

	test('eventPageClockAdvanceMs: each page of events moves the clock on, so the oldest events leave the 7-day window between two pages', async () => {
		const { nowMs } = await env.sandbox.control.getClock();
		// 3 events, the oldest 1 s inside the window, the others a day younger.
		await env.sandbox.control.createEvents([
			{
				type: 'run.completed',
				createdOn: new Date(nowMs - 7 * DAY + 60_000).toISOString(),
				data: { n: 0 },
			},
			{ type: 'run.completed', createdOn: new Date(nowMs - DAY).toISOString(), data: { n: 1 } },
			{
				type: 'run.completed',
				createdOn: new Date(nowMs - DAY + 1000).toISOString(),
				data: { n: 2 },
			},
		]);
		expect(
			(await env.sandbox.control.setSettings({ eventPageClockAdvanceMs: 120_000 }))
				.eventPageClockAdvanceMs,
		).toBe(120_000);
		const first = (
			await get<{ count: number; data: Array<{ data: { n: number } }> }>(env.sandbox, '/events', {
				query: { pageSize: 1 },
			})
		).body;
		expect(first.count).toBe(3);
		expect(first.data[0].data.n).toBe(0);
		// The page moved the clock 2 minutes on: the oldest event has left the window.
		expect((await env.sandbox.control.getClock()).nowMs).toBeGreaterThanOrEqual(nowMs + 120_000);
		const second = (
			await get<{ count: number; data: Array<{ data: { n: number } }> }>(env.sandbox, '/events', {
				query: { pageSize: 1 },
			})
		).body;
		expect(second.count).toBe(2);
		expect(second.data[0].data.n).toBe(1);
		await env.sandbox.control.reset();
		expect((await env.sandbox.control.setSettings({})).eventPageClockAdvanceMs).toBe(0);
	});
});
