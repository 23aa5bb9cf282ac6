/**
 * The trigger under faults (the action node's fault suite is faults.test.ts): with latency,
 * lost responses, 502s and a 429 on /events, restarts, and a burst read over several
 * small-budget polls, every event is emitted exactly once. The long simulation with 5xx,
 * drops, 429s, restarts and budgets is test/nodes/DocumentWorkflowTrigger/exactly-once.test.ts.
 * Slow tier (test/tiers.js): after the 429, the read pacer holds reads to the rate the API let
 * through, in real time, so the later polls take seconds each (about 80 s in all).
 */
import type { EventInput } from '../../sandbox/src';
import { MINUTE, TriggerHost, compareDelivered, seeded } from '../harness/triggerHost';
import { useSandbox } from '../harness/sandbox';

const env = useSandbox();

describe('the trigger under faults', () => {
	test('emits every event exactly once with latency, lost responses and 502s on /events, and a burst read over several small-budget polls', async () => {
		const rand = seeded(3);
		const host = new TriggerHost(env.sandbox, {});
		await env.sandbox.control.setFaults([
			{ pathPrefix: '/events', kind: 'latency', ms: 100, probability: 0.2, seed: 21 },
			{ pathPrefix: '/events', kind: 'dropAfterProcess', probability: 0.08, seed: 22 },
			{ pathPrefix: '/events', kind: 'status5xx', status: 502, probability: 0.05, seed: 23 },
			{ pathPrefix: '/events', kind: 'rate429', retryAfter: 1, probability: 0.01, seed: 24 },
		]);
		expect((await host.activate()).error).toBeUndefined();
		let created = 0;
		let burstFrom = -1;
		// Per poll from the burst on: how many of the burst's events it emitted.
		const burstPerPoll: number[] = [];
		for (let poll = 0; poll < 25; poll++) {
			const now = (await env.sandbox.control.getClock()).nowMs;
			// Poll 12 brings a burst of 3,000 events; it and the next polls have a budget too small to read it at once.
			const burst = poll === 12;
			const batch: EventInput[] = Array.from(
				{ length: burst ? 3000 : 100 + Math.floor(rand() * 150) },
				(_, i) => ({
					type: 'run.completed',
					createdOn: new Date(now + Math.floor(rand() * MINUTE)).toISOString(),
					commitDelayMs: rand() < 0.2 ? Math.floor(rand() * 4 * MINUTE) : 0,
					data: { n: created + i },
				}),
			);
			await env.sandbox.control.createEvents(batch);
			if (burst) burstFrom = created;
			created += batch.length;
			await env.sandbox.control.advanceClock(MINUTE);
			if (rand() < 0.1) host.restart();
			const small = poll >= 12 && poll < 16;
			const result = await host.poll({
				pollBudgetMs: small ? 400 : rand() < 0.5 ? undefined : 30_000,
			});
			if (burstFrom >= 0)
				burstPerPoll.push(
					(result.items ?? []).filter(({ json }) => {
						const n = (json.data as { n: number }).n;
						return n >= burstFrom && n < burstFrom + 3000;
					}).length,
				);
		}
		await env.sandbox.control.clearFaults();
		for (let i = 0; i < 7; i++) {
			await env.sandbox.control.advanceClock(MINUTE);
			await host.poll();
		}
		const expected = (await env.sandbox.control.listEvents()) as Array<{ id: string }>;
		const check = compareDelivered(host.delivered, expected);
		expect({
			duplicates: check.duplicates.length,
			lost: check.lost.length,
			unexpected: check.unexpected.length,
		}).toEqual({ duplicates: 0, lost: 0, unexpected: 0 });
		expect(host.delivered).toHaveLength(created);
		const events = await env.sandbox.control.getRequests({ pathPrefix: '/events' });
		expect(events.filter((e) => e.fault === 'dropAfterProcess').length).toBeGreaterThan(0);
		// The burst really came out over more than one poll (a loaded machine may leave one of the
		// small-budget polls empty: which ones emit is not asserted).
		expect(burstPerPoll.filter((n) => n > 0).length).toBeGreaterThan(1);
		expect(Math.max(...burstPerPoll)).toBeLessThan(3000);
	}, 240_000); // tens of polls with injected latency: slow on a loaded 2-core machine, never a timed assertion
});
