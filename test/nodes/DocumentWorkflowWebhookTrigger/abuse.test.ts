/**
 * Bounded under abuse: whatever is posted to the public URL, the reads a trigger makes depend on
 * the events the API has and on time. Forged ids spread over a populated week cost a handful of
 * reads in all; forged ids of the current time at most one read a second while they come, and
 * none once their last looks are over; open requests, ids looked for and log lines stay bounded;
 * no timer is left running.
 */
import { MAX_PENDING_IDS } from '../../../nodes/DocumentWorkflowWebhookTrigger/bell';
import {
	MAX_WAITING_DELIVERIES,
	readerSize,
} from '../../../nodes/DocumentWorkflowWebhookTrigger/reader';
import { uuid7 } from '../../../sandbox/src/ids';
import { DAY, captureWarnings, seeded, spreadEvents } from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';
import { eventReads, forgedId, readTimes, useHosts, wait } from './helpers';

const env = useSandbox();
const newHost = useHosts(env);

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

describe('Document Workflow Webhook Trigger: bounded under abuse', () => {
	test('forged deliveries naming 40,000 ids spread over a week of 30,000 listed events cost at most 10 reads in all, and start nothing', async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		// The newest event a minute old: forged ids of the last minute are newer than anything read.
		await env.sandbox.control.createEvents(
			spreadEvents(30_000, now - 7 * DAY + 60_000, now - 60_000),
		);
		const host = await newHost();
		const warnings = captureWarnings();
		try {
			const random = seeded(7);
			const bodies = Array.from({ length: 40 }, () =>
				Array.from({ length: 1000 }, () => ({
					id: uuid7(now - Math.floor(random() * 7 * DAY)),
					type: 'run.completed',
				})),
			);
			for (let start = 0; start < bodies.length; start += 4)
				await Promise.all(
					bodies.slice(start, start + 4).map(async (body) => await host.post(body)),
				);
			await host.settled();
			expect(await eventReads(env.sandbox)).toBeLessThanOrEqual(10);
			expect(host.executions).toHaveLength(0);
			// One log line says so, with the counts (at most one a minute per trigger).
			expect(warnings.messages).toHaveLength(1);
			expect(warnings.messages[0]).toMatch(/start nothing/);
		} finally {
			warnings.restore();
		}
	});

	test('forged ids of the current time: at most one read a second while they come, none once their looks are over', async () => {
		const host = await newHost();
		const timersBefore = timers();
		const posts: Array<Promise<unknown>> = [];
		const start = Date.now();
		while (Date.now() - start < 5000) {
			posts.push(host.post({ id: forgedId(), type: 'run.completed' }));
			await wait(50);
		}
		const stoppedAt = Date.now();
		await Promise.all(posts);
		await host.settled();
		const times = await readTimes(env.sandbox);
		// About one a second while they come, never two within 0.95 s.
		const gaps = times.slice(1).map((at, index) => at - times[index]);
		expect(Math.min(...gaps)).toBeGreaterThanOrEqual(950);
		expect(times.filter((at) => at < stoppedAt).length).toBeLessThanOrEqual(6);
		// The last ids' looks again end 4 s after their delivery; nothing after.
		const after = times.filter((at) => at >= stoppedAt);
		expect(after.length).toBeLessThanOrEqual(4);
		expect(Math.max(...times)).toBeLessThan(stoppedAt + 5000);
		const settledReads = times.length;
		await wait(2000);
		expect(await eventReads(env.sandbox)).toBe(settledReads);
		expect(host.executions).toHaveLength(0);
		expect(readerSize().waiting).toBe(0);
		expect(timers()).toBeLessThanOrEqual(timersBefore);
		// Ids of deliveries that did not wait (bounded) are let go by later deliveries; a real event comes out.
		expect(readerSize().mostPending).toBeLessThanOrEqual(MAX_PENDING_IDS);
		const [real] = (
			await env.sandbox.control.createEvents([{ type: 'run.completed' }], { returnIds: true })
		).ids!;
		await host.post({ id: real, type: 'run.completed' });
		await host.settled();
		expect(host.emitted().map((event) => event.id)).toEqual([real]);
		expect(readerSize().waiting).toBe(0);
	});

	test(`whatever is posted at once: at most ${MAX_WAITING_DELIVERIES} requests held open per trigger and ${MAX_PENDING_IDS} ids looked for; real events still come out`, async () => {
		const host = await newHost();
		const bodies = Array.from({ length: 100 }, () =>
			Array.from({ length: 200 }, () => ({ id: forgedId(), type: 'run.completed' })),
		);
		let maxPending = 0;
		const watch = setInterval(() => {
			maxPending = Math.max(maxPending, readerSize().mostPending);
		}, 20);
		try {
			const answers = await Promise.all(bodies.map(async (body) => await host.post(body)));
			expect(answers.every((answer) => answer.status === 202)).toBe(true);
			const [real] = (
				await env.sandbox.control.createEvents([{ type: 'run.completed' }], { returnIds: true })
			).ids!;
			await host.post({ id: real, type: 'run.completed' });
			await host.settled();
			expect(host.maxOpen).toBeLessThanOrEqual(MAX_WAITING_DELIVERIES + 1);
			expect(maxPending).toBeLessThanOrEqual(MAX_PENDING_IDS);
			expect(host.emitted().map((event) => event.id)).toEqual([real]);
		} finally {
			clearInterval(watch);
		}
	});
});
