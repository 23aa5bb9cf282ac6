/**
 * The trigger's benchmark: requests per idle poll, a poll with 1,000 new events, the first
 * activation over 50,000 events, static data after 24 hours of polling, bursts larger
 * than one poll can read (polls to catch up, memory and static data during and after), a
 * Start From: Oldest read of 50,000 events while the oldest expire, and a burst from an API
 * without a `Date` header (reads per poll until caught up, then per idle poll).
 *
 * Rows can be run alone with jest's name filter, e.g.
 * `node --expose-gc ./node_modules/jest/bin/jest.js -c bench/jest.bench.config.js bench/trigger.bench.ts -t 'Oldest over|without a Date'`
 * (the results file then holds only those rows: run the whole bench for docs/benchmarks.md).
 *
 * Runs the trigger through n8n-core's PollContext with the static data kept as n8n keeps it
 * (`test/harness/triggerHost.ts`) against the in-process sandbox. Writes
 * `.bench-results/trigger.json` (see BENCH-FORMAT: `scripts/bench/report.js` renders it).
 */
import { startSandbox } from '../sandbox/src';
import type { EventInput, Sandbox } from '../sandbox/src';
import {
	DAY,
	MINUTE,
	TriggerHost,
	burstEvents,
	compareDelivered,
	spreadEvents,
} from '../test/harness/triggerHost';
import type { Goal, Section } from './results';
import { writeSuiteResults } from './results';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const BURST = 100_000;
/** Real time is scaled down tenfold for the bursts: 3.6 s of budget and 10 ms a page stand for 36 s and 100 ms. */
const SCALE = 10;
const DURABLE_BUDGET_MS = 36_000;
const PAGE_LATENCY_MS = 100;

let sb: Sandbox;

beforeAll(async () => {
	sb = await startSandbox();
});
afterAll(async () => {
	await sb.stop();
});

const sections: Section[] = [];
const goals: Goal[] = [];

const median = (values: number[]) =>
	[...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function eventRequestCount(): Promise<number> {
	return (await sb.control.getRequests({ pathPrefix: '/events' })).length;
}

/** Samples the process's heap (V8 heap + Buffers) every 10 ms while `fn` runs; returns the peak growth. */
async function heapGrowth<T>(fn: () => Promise<T>): Promise<{ value: T; peakGrowth: number }> {
	global.gc?.();
	const base = process.memoryUsage();
	const baseline = base.heapUsed + base.external;
	let peak = baseline;
	const timer = setInterval(() => {
		const now = process.memoryUsage();
		peak = Math.max(peak, now.heapUsed + now.external);
	}, 10);
	try {
		const value = await fn();
		return { value, peakGrowth: peak - baseline };
	} finally {
		clearInterval(timer);
	}
}

test('idle polls, 1,000 new events, first activation over 50,000 events, 24 hours of polling', async () => {
	const idle: number[] = [];
	const thousandRequests: number[] = [];
	const thousandMs: number[] = [];
	const activation: number[] = [];
	const activationMs: number[] = [];
	for (let repeat = 0; repeat < REPEATS; repeat++) {
		await sb.control.reset();
		const now = (await sb.control.getClock()).nowMs;
		const history: EventInput[] = Array.from({ length: 50_000 }, (_, i) => ({
			type: 'run.completed',
			createdOn: new Date(now - 6 * DAY + i * 10_000).toISOString(),
			data: { i },
		}));
		await sb.control.createEvents(history);
		const host = new TriggerHost(sb, {});
		await sb.control.clearRequests();
		let started = Date.now();
		const activated = await host.activate();
		if (activated.error) throw activated.error;
		activationMs.push(Date.now() - started);
		activation.push(await eventRequestCount());

		await sb.control.advanceClock(MINUTE);
		await host.poll();
		await sb.control.clearRequests();
		for (let i = 0; i < 5; i++) {
			await sb.control.advanceClock(MINUTE);
			await host.poll();
		}
		idle.push((await eventRequestCount()) / 5);

		const at = (await sb.control.getClock()).nowMs;
		await sb.control.createEvents(
			Array.from({ length: 1000 }, (_, i) => ({
				type: 'run.completed',
				createdOn: new Date(at + i * 50).toISOString(),
				data: { n: i },
			})),
		);
		await sb.control.advanceClock(MINUTE);
		await sb.control.clearRequests();
		const before = host.delivered.length;
		started = Date.now();
		await host.poll();
		thousandMs.push(Date.now() - started);
		if (host.delivered.length - before !== 1000)
			throw new Error(`expected 1000 events, got ${host.delivered.length - before}`);
		thousandRequests.push(await eventRequestCount());
	}

	// 24 hours of polls once a minute, 100 events a minute.
	await sb.control.reset();
	const host = new TriggerHost(sb, {});
	await host.activate();
	let maxBytes = 0;
	for (let minute = 0; minute < 24 * 60; minute++) {
		const at = (await sb.control.getClock()).nowMs;
		await sb.control.createEvents(
			Array.from({ length: 100 }, (_, i) => ({
				type: 'run.completed',
				createdOn: new Date(at + i * 600).toISOString(),
				data: { minute, i },
			})),
		);
		await sb.control.advanceClock(MINUTE);
		await host.poll();
		maxBytes = Math.max(maxBytes, host.memory().bytes);
	}
	const settled = host.memory();
	sections.push({
		heading: 'Trigger: regular polls',
		text: `Median of ${REPEATS} runs; requests counted in the sandbox's request log; default settings (overlap window 5 minutes).`,
		table: {
			columns: ['measure', 'figure'],
			rows: [
				['requests per idle poll (mean of 5 idle polls)', `${median(idle)}`],
				['a poll with 1,000 new events: requests', `${median(thousandRequests)}`],
				['a poll with 1,000 new events: time', seconds(median(thousandMs))],
				['first activation over 50,000 events of history: requests', `${median(activation)}`],
				['first activation over 50,000 events of history: time', seconds(median(activationMs))],
				[
					`static data after 24 h of polls once a minute at 100 events a minute (${host.delivered.length} events emitted)`,
					`${kb(settled.bytes)} as JSON, ${settled.ids} ids remembered (largest during the run: ${kb(maxBytes)})`,
				],
			],
		},
	});
	goals.push({
		goal: 'trigger: exactly 1 request per idle poll',
		figure: `${median(idle)}`,
		met: median(idle) === 1,
	});
	goals.push({
		goal: 'trigger: first activation over 50,000 events in at most 2 requests',
		figure: `${median(activation)}`,
		met: median(activation) <= 2,
	});
});

describe('bursts larger than one poll can read', () => {
	test.each([1, 5])(
		'100,000 events within one minute, overlap %i minute(s)',
		async (overlapMinutes) => {
			await sb.control.reset();
			const host = new TriggerHost(sb, { options: { overlapMinutes } });
			const budget = DURABLE_BUDGET_MS / SCALE;
			await host.activate({ pollBudgetMs: budget });
			const start = (await sb.control.getClock()).nowMs;
			await sb.control.createEvents(
				burstEvents(BURST, start + 1000, MINUTE, { seed: 3, lateShare: 0.01, maxLateMs: MINUTE }),
			);
			await sb.control.setSettings({ eventPageLatencyMs: PAGE_LATENCY_MS / SCALE });
			await sb.control.clearRequests();
			const perPoll: number[] = [];
			let peakIds = 0;
			let peakBytes = 0;
			const { peakGrowth } = await heapGrowth(async () => {
				while (host.delivered.length < BURST && perPoll.length < 100) {
					await sb.control.advanceClock(MINUTE);
					const result = await host.poll({ pollBudgetMs: budget });
					if (result.error) throw result.error;
					perPoll.push(result.items?.length ?? 0);
					peakIds = Math.max(peakIds, host.memory().ids);
					peakBytes = Math.max(peakBytes, host.memory().bytes);
				}
			});
			const requests = await eventRequestCount();
			for (let i = 0; i < overlapMinutes + 2; i++) {
				await sb.control.advanceClock(MINUTE);
				await host.poll({ pollBudgetMs: budget });
			}
			const settled = host.memory();
			const check = compareDelivered(host.delivered, await sb.control.listEvents());
			const repeated = check.duplicates.length;
			const lost = check.lost.length;
			const everyPollEmitted = perPoll.every((count) => count > 0);
			// The stated bound: the ids of what the polls of one overlap window (polls a minute apart) read.
			const bound = (overlapMinutes + 1) * Math.max(...perPoll);
			sections.push({
				heading: `Trigger: a burst of 100,000 events within one minute, overlap window ${overlapMinutes} minute(s)`,
				text:
					`n8n 2.41's durable-cursor poll budget (36 s) against an API that takes ${PAGE_LATENCY_MS} ms a page, with real time scaled down ${SCALE}-fold ` +
					`(${budget / 1000} s of budget, the sandbox adds ${PAGE_LATENCY_MS / SCALE} ms a page); the sandbox clock moves one minute between polls. ` +
					'1% of the burst is committed up to one minute late. The bound on remembered ids is what the polls of one overlap window read: (overlap in minutes + 1) × the most one poll read.',
				table: {
					columns: ['measure', 'figure'],
					rows: [
						['polls to catch up', `${perPoll.length}`],
						['events per poll until caught up', perPoll.join(', ')],
						['requests to /events until caught up', `${requests}`],
						['remembered ids: peak / bound / settled', `${peakIds} / ${bound} / ${settled.ids}`],
						['static data: peak / settled', `${kb(peakBytes)} / ${kb(settled.bytes)}`],
						['process heap + Buffers growth while catching up (sandbox included)', mb(peakGrowth)],
						['events lost / repeated', `${lost} / ${repeated}`],
					],
				},
			});
			goals.push({
				goal: `trigger burst (overlap ${overlapMinutes} min): every event of 100,000 exactly once`,
				figure: `${lost} lost, ${repeated} repeated`,
				met: lost === 0 && repeated === 0,
			});
			goals.push({
				goal: `trigger burst (overlap ${overlapMinutes} min): every poll emits new events until caught up`,
				figure: `${perPoll.length} polls, fewest ${Math.min(...perPoll)} events`,
				met: everyPollEmitted,
			});
			goals.push({
				goal: `trigger burst (overlap ${overlapMinutes} min): remembered ids within the stated bound, none once settled`,
				figure: `peak ${peakIds} ≤ ${bound}, settled ${settled.ids}`,
				met: peakIds <= bound && settled.ids === 0,
			});
		},
	);
});

test('Start From: Oldest over 50,000 events while the oldest leave the 7-day window during the read', async () => {
	await sb.control.reset();
	const now = (await sb.control.getClock()).nowMs;
	// 25,000 events in the oldest 250 minutes of the window (100 a minute); each page (100 events) moves the sandbox clock 3 minutes on, so they expire faster than they are read.
	const expiring = await sb.control.createEvents(
		spreadEvents(25_000, now - 7 * DAY + MINUTE, now - 7 * DAY + 250 * MINUTE),
		{ returnIds: true },
	);
	const recent = await sb.control.createEvents(
		spreadEvents(25_000, now - 5 * DAY, now - 10 * MINUTE),
		{ returnIds: true },
	);
	await sb.control.setSettings({ eventPageClockAdvanceMs: 3 * MINUTE });
	await sb.control.clearRequests();
	const host = new TriggerHost(sb, { options: { startFrom: 'oldest' } });
	const started = Date.now();
	const activation = await host.activate();
	if (activation.error) throw activation.error;
	let polls = 1;
	for (let quiet = 0; quiet < 2 && polls < 30; polls++) {
		await sb.control.advanceClock(MINUTE);
		const result = await host.poll();
		if (result.error) throw result.error;
		quiet = result.items ? 0 : quiet + 1;
	}
	const elapsed = Date.now() - started;
	await sb.control.setSettings({ eventPageClockAdvanceMs: 0 });
	const requests = await eventRequestCount();
	const check = compareDelivered(
		host.delivered,
		recent.ids!.map((id) => ({ id })),
	);
	const lost = check.lost.length;
	const repeated = check.duplicates.length;
	const expiredEmitted = check.unexpected.filter((id) => expiring.ids!.includes(id)).length;
	const other = check.unexpected.length - expiredEmitted;
	sections.push({
		heading: 'Trigger: Start From: Oldest over 50,000 events while the oldest expire',
		text:
			'25,000 events in the oldest 250 minutes of the 7-day window and 25,000 recent ones; every page the sandbox answers moves its clock 3 minutes on, ' +
			'so the old ones leave the window while the trigger reads (each shift moves every later page back). Default settings, n8n 1.x budget (60 s), polls a minute apart until two in a row emit nothing.',
		table: {
			columns: ['measure', 'figure'],
			rows: [
				['recent events lost / repeated', `${lost} / ${repeated}`],
				[
					'expiring events emitted before they left (the rest left first)',
					`${expiredEmitted} of 25,000`,
				],
				[
					'requests to /events, polls (activation included), time',
					`${requests}, ${polls}, ${seconds(elapsed)}`,
				],
			],
		},
	});
	goals.push({
		goal: 'trigger Start From: Oldest while events expire: 0 of 25,000 recent events lost',
		figure: `${lost} lost`,
		met: lost === 0,
	});
	goals.push({
		goal: 'trigger Start From: Oldest while events expire: 0 events repeated',
		figure: `${repeated} repeated${other ? `, ${other} unexpected` : ''}`,
		met: repeated === 0 && other === 0,
	});
});

test('a burst from an API without a Date header: reads per poll until caught up, then per idle poll', async () => {
	await sb.control.reset();
	await sb.control.setSettings({ sendDateHeader: false });
	const budget = DURABLE_BUDGET_MS / SCALE;
	const host = new TriggerHost(sb, {});
	await host.activate({ pollBudgetMs: budget });
	const count = 15_000;
	const start = (await sb.control.getClock()).nowMs;
	await sb.control.createEvents(burstEvents(count, start + 1000, MINUTE, { seed: 4 }));
	// 250 ms a page, scaled down like the bursts above.
	await sb.control.setSettings({ eventPageLatencyMs: 250 / SCALE });
	const catchUp: number[] = [];
	while (host.delivered.length < count && catchUp.length < 30) {
		await sb.control.advanceClock(MINUTE);
		const before = await eventRequestCount();
		const result = await host.poll({ pollBudgetMs: budget });
		if (result.error) throw result.error;
		catchUp.push((await eventRequestCount()) - before);
	}
	const idle: number[] = [];
	for (let i = 0; i < 5; i++) {
		await sb.control.advanceClock(MINUTE);
		const before = await eventRequestCount();
		const result = await host.poll({ pollBudgetMs: budget });
		if (result.error) throw result.error;
		idle.push((await eventRequestCount()) - before);
	}
	await sb.control.setSettings({ eventPageLatencyMs: 0, sendDateHeader: true });
	const check = compareDelivered(host.delivered, await sb.control.listEvents());
	const most = Math.max(...idle);
	sections.push({
		heading: 'Trigger: a burst of 15,000 events from an API without a Date header',
		text:
			`15,000 events within one minute; the API sends no \`Date\` header and takes 250 ms a page; n8n 2.41's durable-cursor budget (36 s); real time scaled down ${SCALE}-fold as above. ` +
			'Then five quiet minutes, a poll each.',
		table: {
			columns: ['measure', 'figure'],
			rows: [
				['reads per poll until caught up', catchUp.join(', ')],
				['reads per idle poll', idle.join(', ')],
				['events lost / repeated', `${check.lost.length} / ${check.duplicates.length}`],
			],
		},
	});
	goals.push({
		goal: 'trigger without Date: at most 2 reads per idle poll after a burst',
		figure: `${most} at most`,
		met: most <= 2,
	});
	goals.push({
		goal: 'trigger without Date: every event of 15,000 exactly once',
		figure: `${check.lost.length} lost, ${check.duplicates.length} repeated`,
		met: check.lost.length === 0 && check.duplicates.length === 0,
	});
});

afterAll(() => {
	const result = { suite: 'trigger', title: 'Trigger: bursts and idle polls', sections, goals };
	writeSuiteResults(result);
	process.stdout.write(`trigger benchmark: ${JSON.stringify(result, null, 1)}\n`);
});
