/**
 * Exactly once, under everything at the same time: more than 10,000 events over many polls,
 * bursts of thousands of events within a minute (more than a small budget can read),
 * commit delays up to the overlap window (late events with lower ids), random 5xx and
 * dropped connections, 429s (waited out, or beyond the budget), polls failing half-way,
 * n8n 1.x and 2.x polls with budgets from tiny to none, and n8n restarts that reload the
 * static data as last saved (only after polls that emitted, and after activation).
 * Checked against the sandbox's own record of every event.
 */
import type { IDataObject } from 'n8n-workflow';

import type { EventInput } from '../../../sandbox/src';
import { MINUTE, TriggerHost, compareDelivered, seeded } from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

const TYPES = [
	'document.received',
	'run.completed',
	'run.failed',
	'run.cancelled',
	'review.created',
	'review.completed',
];
const OVERLAP = 5 * MINUTE;

interface SimulationReport {
	created: number;
	late: number;
	bursts: number;
	polls: number;
	failedPolls: number;
	partialPolls: number;
	restarts: number;
	maxRememberedIds: number;
}

async function simulate(
	seed: number,
	parameters: IDataObject,
	accept: (type: string) => boolean,
): Promise<SimulationReport> {
	const rand = seeded(seed);
	const pick = <T>(list: T[]): T => list[Math.floor(rand() * list.length)];
	const host = new TriggerHost(env.sandbox, parameters);
	const report: SimulationReport = {
		created: 0,
		late: 0,
		bursts: 0,
		polls: 0,
		failedPolls: 0,
		partialPolls: 0,
		restarts: 0,
		maxRememberedIds: 0,
	};

	// Background faults for the whole run: some 5xx and dropped connections, retried by the transport.
	await env.sandbox.control.addFault({
		pathPrefix: '/events',
		kind: 'status5xx',
		status: 503,
		probability: 0.03,
		seed,
	});
	await env.sandbox.control.addFault({
		pathPrefix: '/events',
		kind: 'drop',
		probability: 0.01,
		seed: seed + 1,
	});

	// A history before activation, which must not be emitted.
	const start = (await env.sandbox.control.getClock()).nowMs;
	const history: EventInput[] = [];
	for (let i = 0; i < 2000; i++)
		history.push({
			type: pick(TYPES),
			createdOn: new Date(start - 3 * 60 * MINUTE + i * 5000).toISOString(),
			data: { history: i },
		});
	await env.sandbox.control.createEvents(history);
	const historyIds = new Set((await env.sandbox.control.listEvents()).map((event) => event.id));
	expect((await host.activate()).error).toBeUndefined();

	const poll = async (quiet = false) => {
		if (!quiet && rand() < 0.12) {
			host.restart();
			report.restarts++;
		}
		// A poll fails half-way: the read limit lets 1-8 requests through, then answers 429 with a
		// Retry-After of minutes (a poll that finds something entered counts and goes over what it
		// read before first: a few requests before the new events).
		const halfWay = !quiet && rand() < 0.12;
		if (halfWay)
			await env.sandbox.control.setRateLimits({
				reads: { limit: 1 + Math.floor(rand() * 8), windowMs: 10 * MINUTE },
			});
		// Now and then a short 429 that the poll waits out (1 s of real time each).
		if (!quiet && rand() < 0.03)
			await env.sandbox.control.addFault({
				pathPrefix: '/events',
				kind: 'rate429',
				retryAfter: 1,
				count: 1,
			});
		// Half the polls run as on n8n 2.x with a budget from tiny to ample, half as on 1.x.
		const pollBudgetMs = quiet || rand() < 0.5 ? undefined : pick([150, 400, 1500, 30_000]);
		const failedBefore = host.failedPolls;
		const result = await host.poll({ pollBudgetMs });
		if (host.failedPolls > failedBefore)
			expect(result.error?.message).toMatch(/429|server error|Could not reach|time to retry/);
		if (halfWay) {
			if (result.items && !result.error) report.partialPolls++;
			await env.sandbox.control.setRateLimits({ reads: null });
		}
		const remembered = host.memory().ids;
		if (remembered > report.maxRememberedIds) report.maxRememberedIds = remembered;
		return result;
	};

	// About 10,500 events over 70 minutes of sandbox time, one poll a minute.
	const TICK = MINUTE;
	while (report.created < 14_000) {
		const now = (await env.sandbox.control.getClock()).nowMs;
		const batch: EventInput[] = [];
		// Now and then a burst: thousands of events within the minute, more than a small budget reads in one poll.
		const burst = rand() < 0.05;
		if (burst) report.bursts++;
		const count = burst ? 1500 + Math.floor(rand() * 1500) : 120 + Math.floor(rand() * 60);
		for (let i = 0; i < count; i++) {
			const createdOn = now + Math.floor(rand() * TICK);
			// Most commit at once; some late, up to the whole overlap window (the stated bound).
			const r = rand();
			const commitDelayMs =
				r < 0.7 ? Math.floor(rand() * 2000) : r < 0.95 ? Math.floor(rand() * OVERLAP) : OVERLAP;
			if (commitDelayMs > TICK) report.late++;
			batch.push({
				type: pick(TYPES),
				createdOn: new Date(createdOn).toISOString(),
				commitDelayMs,
				data: { seq: report.created + i },
			});
		}
		await env.sandbox.control.createEvents(batch);
		report.created += count;
		await env.sandbox.control.advanceClock(TICK);
		await poll();
		if (rand() < 0.1) await poll(); // an extra poll (e.g. right after an n8n start)
	}

	// Let everything commit, then poll without faults until nothing new comes.
	await env.sandbox.control.clearFaults();
	await env.sandbox.control.setRateLimits({ reads: null });
	for (let i = 0; i < 8; i++) {
		await env.sandbox.control.advanceClock(TICK);
		await poll(true);
	}
	const last = await poll(true);
	expect(last.items).toBeNull();

	report.polls = host.polls;
	report.failedPolls = host.failedPolls;

	const all = await env.sandbox.control.listEvents();
	expect(all.every((event) => event.committed)).toBe(true);
	const expected = all.filter((event) => !historyIds.has(event.id) && accept(event.type));
	const check = compareDelivered(host.delivered, expected);
	expect({
		duplicates: check.duplicates.length,
		lost: check.lost.length,
		unexpected: check.unexpected.length,
	}).toEqual({ duplicates: 0, lost: 0, unexpected: 0 });
	expect(host.delivered).toHaveLength(expected.length);
	return report;
}

describe('exactly once', () => {
	test('10,000+ events, late commits, faults, half-way failures and restarts: every event emitted once (all types)', async () => {
		const report = await simulate(42, {}, () => true);
		// The run really exercised what it claims to.
		expect(report.created).toBeGreaterThanOrEqual(10_000);
		expect(report.late).toBeGreaterThan(500);
		expect(report.bursts).toBeGreaterThan(0);
		expect(report.restarts).toBeGreaterThan(3);
		expect(report.failedPolls).toBeGreaterThan(0);
		expect(report.partialPolls).toBeGreaterThan(0);
		// Memory stays within what one overlap window holds: about 150 events a minute, window 5 minutes plus a poll, and a burst or two.
		expect(report.maxRememberedIds).toBeLessThan(180 * 8 + 2 * 3000);
		console.log('simulation (all types)', report);
	});

	test('the same with several types selected (filtered in the node)', async () => {
		const selected = ['run.failed', 'review.created', 'document.received'];
		const report = await simulate(7, { events: selected }, (type) => selected.includes(type));
		expect(report.created).toBeGreaterThanOrEqual(10_000);
		console.log('simulation (several types)', report);
	});
});
