/**
 * The trigger's event reads count against the same read limit as the action node's checks:
 * they go through the one read pacer of their API key in this n8n process
 * (nodes/shared/transport/readPacer.ts), so what one learns of the limit slows the other.
 */
import { START_RATE, limitScope, readPacerFor } from '../../../nodes/shared/transport';
import { DAY, TriggerHost, spreadEvents } from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

test('a 429 met by a poll teaches the read pacer that every read of the key shares', async () => {
	const now = (await env.sandbox.control.getClock()).nowMs;
	await env.sandbox.control.createEvents(spreadEvents(300, now - DAY, now - 1000));
	const pacer = readPacerFor(limitScope(env.sandbox.baseUrl, { apiKey: env.sandbox.apiKey }));
	expect(pacer.readsPerSecond).toBe(START_RATE);
	await env.sandbox.control.addFault({
		pathPrefix: '/events',
		kind: 'rate429',
		retryAfter: 1,
		count: 1,
	});
	const host = new TriggerHost(env.sandbox, { options: { startFrom: 'oldest' } });
	const result = await host.activate();
	expect(result.error).toBeUndefined();
	expect(host.delivered).toHaveLength(300);
	// The poll's 429 lowered the pace of every read made with this key, the action node's too.
	expect(pacer.readsPerSecond).toBeLessThan(START_RATE);
});
