/**
 * Bounded under abuse: whatever is posted to the public URL, the reads a trigger makes depend on
 * the events the API has and on time. Forged ids spread over a populated week cost a handful of
 * reads in all; forged ids of the current time at most one read a second while they come, and
 * none once their last looks are over; open requests, ids looked for and log lines stay bounded;
 * no timer is left running.
 */
import {
	FRESH_START_LOOK_BACK_MS,
	MAX_HELD,
	MAX_OWED,
	WebhookReaders,
} from '../../../nodes/DocumentWorkflowWebhookTrigger/reader';
import { uuid7 } from '../../../sandbox/src/ids';
import { DAY, captureWarnings, seeded, spreadEvents } from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';
import { eventReads, forgedId, readTimes, settle, useHosts, wait } from './helpers';

const env = useSandbox();
const newHost = useHosts(env);

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

describe('Document Workflow Webhook Trigger: bounded under abuse', () => {
	test('forged deliveries naming 40,000 ids spread over a week of 30,000 listed events cost at most 10 reads in all, and start nothing', async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		// The newest event a minute older than the activation's look-back: forged ids of the last two
		// minutes are newer than anything read.
		await env.sandbox.control.createEvents(
			spreadEvents(30_000, now - 7 * DAY + 60_000, now - FRESH_START_LOOK_BACK_MS - 60_000),
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
			// All at once, not each after the answer of the one before (a forger need not wait).
			await Promise.all(bodies.map(async (body) => await host.post(body)));
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

	test('forged ids of the current time, with real events among them: at most one read a second while they come, none once their looks are over; the real events once', async () => {
		const host = await newHost();
		await env.sandbox.control.addSubscription({ url: host.url });
		const timersBefore = timers();
		const posts: Array<Promise<unknown>> = [];
		const real: string[] = [];
		const start = Date.now();
		for (let tick = 0; Date.now() - start < 5000; tick++) {
			posts.push(
				host.post(Array.from({ length: 10 }, () => ({ id: forgedId(), type: 'run.completed' }))),
			);
			if (tick % 10 === 5)
				real.push(
					...(await env.sandbox.control.createEvents([{ type: 'run.failed' }], { returnIds: true }))
						.ids!,
				);
			await wait(100);
		}
		const stoppedAt = Date.now();
		await Promise.all(posts);
		await settle(env.sandbox, host);
		const times = await readTimes(env.sandbox);
		// Requests of the event list: one a second while forged ids come (the first read comes at once).
		expect(times.filter((at) => at < stoppedAt).length).toBeLessThanOrEqual(
			Math.ceil((stoppedAt - start) / 1000) + 1,
		);
		// Then, still a second apart, the last ids' own read and the looks again of the last 4 s
		// (each id's end 4 s after its delivery); nothing after.
		expect(times.filter((at) => at >= stoppedAt).length).toBeLessThanOrEqual(5);
		expect(Math.max(...times)).toBeLessThan(stoppedAt + 5000);
		const settledReads = times.length;
		await wait(2000);
		expect(await eventReads(env.sandbox)).toBe(settledReads);
		expect(host.emitted().map((event) => event.id)).toEqual(real);
		expect(WebhookReaders.getInstance().size().held).toBe(0);
		expect(timers()).toBeLessThanOrEqual(timersBefore);
	});

	test(`whatever is posted at once: at most ${MAX_HELD} requests held open per trigger and ${MAX_OWED} ids looked for; real events still come out`, async () => {
		const host = await newHost();
		const bodies = Array.from({ length: 100 }, () =>
			Array.from({ length: 200 }, () => ({ id: forgedId(), type: 'run.completed' })),
		);
		let maxPending = 0;
		const watch = setInterval(() => {
			maxPending = Math.max(maxPending, WebhookReaders.getInstance().size().mostOwed);
		}, 20);
		try {
			const answers = await Promise.all(bodies.map(async (body) => await host.post(body)));
			expect(answers.every((answer) => answer.status === 202)).toBe(true);
			const [real] = (
				await env.sandbox.control.createEvents([{ type: 'run.completed' }], { returnIds: true })
			).ids!;
			await host.post({ id: real, type: 'run.completed' });
			await host.settled();
			expect(host.maxOpen).toBeLessThanOrEqual(MAX_HELD + 1);
			expect(maxPending).toBeLessThanOrEqual(MAX_OWED);
			expect(host.emitted().map((event) => event.id)).toEqual([real]);
		} finally {
			clearInterval(watch);
		}
	});
});
