/** Conformance: the public API's `Date` header follows the sandbox clock (as a real server's clock would), and the event page latency setting. */
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
		expect((await env.sandbox.control.setSettings({ eventPageLatencyMs: 25 })).eventPageLatencyMs).toBe(25);
		expect((await get(env.sandbox, '/events')).status).toBe(200);
		await env.sandbox.control.reset();
		expect((await env.sandbox.control.setSettings({})).eventPageLatencyMs).toBe(0);
	});
});
