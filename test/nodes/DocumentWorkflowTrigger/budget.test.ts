/** The poll budget (n8n 2.x's getPollBudgetMs, a default on 1.x) and 429 handling. */
import { pollBudgetMs } from '../../../nodes/DocumentWorkflowTrigger/eventList';
import {
	DAY,
	MINUTE,
	TriggerHost,
	captureWarnings,
	compareDelivered,
	deepCopy,
	eventRequests,
	spreadEvents,
} from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

async function backlog(count: number) {
	const now = (await env.sandbox.control.getClock()).nowMs;
	await env.sandbox.control.createEvents(spreadEvents(count, now - 6 * DAY, now - 1000));
	return await env.sandbox.control.listEvents();
}

describe('poll budget', () => {
	test('n8n 2.x: stops reading before getPollBudgetMs and leaves the rest to the next polls, losing nothing', async () => {
		const expected = await backlog(3000);
		// A budget of seconds, not n8n's minutes, scaled with the page latency so each poll reads about
		// 17 pages: the node's 30% reserve is then over a second, more than a busy machine's stalls.
		await env.sandbox.control.addFault({ pathPrefix: '/events', kind: 'latency', ms: 160 });
		const host = new TriggerHost(env.sandbox, { options: { startFrom: 'oldest' } });
		const budget = 4000;
		const sizes: number[] = [];
		// As many polls as it takes (a busy machine reads fewer pages per budget), but each one must deliver part of the backlog.
		while (host.delivered.length < expected.length) {
			const started = Date.now();
			const result =
				sizes.length === 0
					? await host.activate({ pollBudgetMs: budget })
					: await host.poll({ pollBudgetMs: budget });
			expect(result.error).toBeUndefined();
			expect(Date.now() - started).toBeLessThan(budget);
			sizes.push(result.items?.length ?? 0);
			expect(sizes[sizes.length - 1]).toBeGreaterThan(0);
		}
		// More than one poll was needed, each one emitted part of the backlog.
		expect(sizes.length).toBeGreaterThan(1);
		expect(sizes[0]).toBeGreaterThan(0);
		expect(sizes[0]).toBeLessThan(expected.length);
		await env.sandbox.control.clearFaults();
		expect((await host.poll({ pollBudgetMs: budget })).items).toBeNull();
		expect(compareDelivered(host.delivered, expected)).toEqual({
			duplicates: [],
			lost: [],
			unexpected: [],
		});
		expect(host.delivered.map((event) => event.id)).toEqual(expected.map((event) => event.id));
	});

	test('n8n 1.x (no getPollBudgetMs): works, with a 60 s default budget', async () => {
		const expected = await backlog(3000);
		const host = new TriggerHost(env.sandbox, { options: { startFrom: 'oldest' } });
		const result = await host.activate();
		expect(result.error).toBeUndefined();
		expect(result.items).toHaveLength(3000);
		expect(compareDelivered(host.delivered, expected)).toEqual({
			duplicates: [],
			lost: [],
			unexpected: [],
		});
		// The presence check: no getPollBudgetMs → the default; a function → its value.
		expect(pollBudgetMs({} as never)).toBe(60_000);
		expect(pollBudgetMs({ getPollBudgetMs: () => 1234 } as never)).toBe(1234);
	});
});

describe('429 Too Many Requests', () => {
	test('waits for Retry-After when it fits in the budget, then reads on', async () => {
		const host = new TriggerHost(env.sandbox);
		await host.activate();
		const now = (await env.sandbox.control.getClock()).nowMs;
		await env.sandbox.control.createEvents(spreadEvents(150, now - 10_000, now - 1000));
		await env.sandbox.control.addFault({
			pathPrefix: '/events',
			kind: 'rate429',
			retryAfter: 1,
			count: 1,
		});
		await env.sandbox.control.clearRequests();
		const started = Date.now();
		const result = await host.poll({ pollBudgetMs: 10_000 });
		expect(Date.now() - started).toBeGreaterThanOrEqual(900);
		expect(result.error).toBeUndefined();
		expect(result.items).toHaveLength(150);
		expect((await eventRequests(env.sandbox)).map((r) => r.status)).toEqual([429, 200, 200]);
	});

	test('a Retry-After beyond the budget: emits what was read, with a consistent cursor; with nothing read, a clear error and no state change', async () => {
		const host = new TriggerHost(env.sandbox);
		await host.activate();
		const now = (await env.sandbox.control.getClock()).nowMs;
		const created = await env.sandbox.control.createEvents(
			spreadEvents(250, now - 20_000, now - 1000),
			{ returnIds: true },
		);
		// The read limit allows one request per 10 minutes of the sandbox clock: Retry-After is far beyond any budget.
		await env.sandbox.control.setRateLimits({ reads: { limit: 1, windowMs: 10 * MINUTE } });
		const warnings = captureWarnings();
		try {
			const first = await host.poll({ pollBudgetMs: 5000 });
			expect(first.error).toBeUndefined();
			expect(first.items?.map((item) => item.json.id)).toEqual(created.ids!.slice(0, 100));
			expect(
				warnings.messages.some(
					(message) => /stopped after 2 request/.test(message) && /429/.test(message),
				),
			).toBe(true);
		} finally {
			warnings.restore();
		}

		const before = deepCopy(host.live);
		const second = await host.poll({ pollBudgetMs: 5000 });
		expect(second.items).toBeNull();
		expect(second.error?.message).toMatch(/rate limit was exceeded \(429\)/);
		expect(second.error?.description).toMatch(/Retry-After/);
		expect(deepCopy(host.live)).toEqual(before);

		// n8n restarts in between: the saved state is the one that went with the emitted items.
		host.restart();
		await env.sandbox.control.advanceClock(11 * MINUTE);
		await env.sandbox.control.setRateLimits({ reads: null });
		const third = await host.poll();
		expect(third.items?.map((item) => item.json.id)).toEqual(created.ids!.slice(100));
		expect(
			compareDelivered(
				host.delivered,
				created.ids!.map((id) => ({ id })),
			),
		).toEqual({ duplicates: [], lost: [], unexpected: [] });
	});
});
