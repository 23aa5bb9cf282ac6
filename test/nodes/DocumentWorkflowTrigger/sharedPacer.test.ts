/**
 * The trigger's event reads count against the same read limit as the action node's checks:
 * they go through the one read pacer of their API key in this n8n process
 * (nodes/shared/transport/readPacer.ts), so what one learns of the limit slows the other.
 */
import type { INode } from 'n8n-workflow';
import {
	BACK_OFF,
	START_RATE,
	limitScope,
	normalizeBaseUrl,
	readPacerFor,
} from '../../../nodes/shared/transport';
import { DAY, TriggerHost, spreadEvents } from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

test("a 429 met by a poll is learnt by the key's one read pacer: the registry's pacer for the key is the one the poll slowed", async () => {
	const now = (await env.sandbox.control.getClock()).nowMs;
	await env.sandbox.control.createEvents(spreadEvents(300, now - DAY, now - 1000));
	// The API's own read limit, so that the refused read follows reads of the poll's: a 429 on a
	// key's very first read teaches its pacer nothing (none of its reads were in that window).
	await env.sandbox.control.setRateLimits({ reads: { limit: 2, windowMs: 1000 } });
	const host = new TriggerHost(env.sandbox, { options: { startFrom: 'oldest' } });
	const result = await host.activate();
	expect(result.error).toBeUndefined();
	expect(host.delivered).toHaveLength(300);
	// Nothing in this test asked for the pacer before the poll, and no other node read with the
	// key: the key's pacer in the registry is the poll's, and it has slowed (a new one would not have).
	const scope = limitScope(normalizeBaseUrl({} as INode, env.sandbox.baseUrl), {
		apiKey: env.sandbox.apiKey,
	});
	const pacer = readPacerFor(scope);
	expect(pacer.readsPerSecond).toBeLessThanOrEqual(START_RATE * BACK_OFF);
	expect(readPacerFor(scope)).toBe(pacer);
});
