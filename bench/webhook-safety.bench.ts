/**
 * The webhook trigger's public URL under abuse, and its answered deliveries across a restart, in a
 * real n8n 2.41.1 (issue 33): forged deliveries naming thousands of ids spread over a populated
 * week, a steady flood of forged ids carrying the current time, and n8n SIGTERMed and started again
 * while answered events are not listed yet. Writes `.bench-results/webhook-safety.json`. Alone:
 * `BENCH_SUITES=webhook-safety npx jest -c bench/jest.bench.config.js` (about 6 minutes).
 */
import { EVENT_TYPES, startSandbox } from '../sandbox/src';
import type { EventInfo, Sandbox } from '../sandbox/src';
import type { Goal, Section } from './results';
import { median, writeSuiteResults } from './results';
import {
	countBetween,
	e2e,
	forgedId,
	makeTarget,
	n8nWithTargets,
	newN8n,
	packOnce,
	post,
	productionUrl,
	readsBy,
	seconds,
	sleep,
	timesEmitted,
	waitForEmissions,
	waitUntilActive,
	emissions,
} from './webhook-n8n';
import type { Emission, RunningN8n, Target } from './webhook-n8n';

const { PORTS } = require('../scripts/e2e/ports');

const WEEK_MS = 7 * 24 * 3600_000;
const WEEK_EVENTS = Number(process.env.BENCH_WEEK_EVENTS ?? 30_000);
const SPREAD = { deliveries: 40, idsPerDelivery: 50 };
const NOW_FLOOD = { perSecond: 5, idsPerDelivery: 10, seconds: 20, realEvents: 5 };
/** Reads after the flood ends are counted from this long after its last delivery, for 20 s. */
const TAIL = { graceMs: 10_000, windowMs: 20_000 };
const GOALS = { spreadReads: 10 };

const began = Date.now();
const log = (text: string) =>
	process.stderr.write(`[webhook-safety ${seconds(Date.now() - began)}] ${text}\n`);

/** The body a subscription delivers for a listed event (the sandbox's control copy less its own fields). */
const deliveredBody = (event: EventInfo) => ({
	id: event.id,
	type: event.type,
	createdOn: event.createdOn,
	environment: event.environment,
	data: event.data,
});

async function create(
	sb: Sandbox,
	target: Target,
	events: Array<{ type?: string; commitDelayMs?: number; createdOn?: string; data?: object }>,
): Promise<string[]> {
	const result = await sb.control.createEvents(
		events.map((event) => ({ type: 'run.completed', data: {}, ...event })) as never,
		{ orgId: target.orgId, returnIds: true },
	);
	return result.ids!;
}

/** One real event delivered and emitted: the trigger has seen its list before the row starts. */
async function warmUp(sb: Sandbox, n8n: RunningN8n, target: Target): Promise<void> {
	const [id] = await create(sb, target, [{ data: { warmUp: true } }]);
	const list = await waitForEmissions(n8n, target, (l) => timesEmitted(l).has(id), 60_000);
	if (!timesEmitted(list).has(id))
		throw new Error(`${target.name}: the warm-up event was never emitted`);
	// Whatever the warm-up scheduled is over before the row counts reads.
	await sleep(6000);
}

/** Resolves once the key has made no read for `quietMs` since `since` or later, or at `deadline`; true when it went quiet. */
async function untilQuiet(
	sb: Sandbox,
	target: Target,
	quietMs: number,
	since: number,
	deadline: number,
): Promise<boolean> {
	for (;;) {
		const reads = await readsBy(sb, target.apiKey);
		const last = Math.max(since, ...reads);
		if (Date.now() - last >= quietMs) return true;
		if (Date.now() > deadline) return false;
		await sleep(1000);
	}
}

const extraExecutions = (list: Emission[], expected: Set<string>) =>
	list.filter(
		(execution) => execution.ids.length === 0 || execution.ids.some((id) => !expected.has(id)),
	).length;

/** Forged deliveries naming ids spread over the week the list keeps, in an account with a full week. */
async function spreadFlood(sb: Sandbox, n8n: RunningN8n, target: Target) {
	await sb.control.addSubscription({ url: productionUrl(n8n, target), orgId: target.orgId });
	await warmUp(sb, n8n, target);
	const before = emissions(n8n, target.workflowId, target.triggerName).length;
	const now = Date.now();
	const bodies = Array.from({ length: SPREAD.deliveries }, () =>
		Array.from({ length: SPREAD.idsPerDelivery }, () => {
			const at = now - WEEK_MS + 3600_000 + Math.random() * (WEEK_MS - 3600_000 - 60_000);
			return {
				id: forgedId(at),
				type: 'run.completed',
				createdOn: new Date(at).toISOString(),
				environment: 'prod',
				data: { forged: true },
			};
		}),
	);
	const start = Date.now();
	const answers = await Promise.all(
		bodies.map(async (body, n) => {
			await sleep(n * 50);
			return post(productionUrl(n8n, target), body);
		}),
	);
	const lastPost = Date.now();
	const quiet = await untilQuiet(sb, target, 10_000, lastPost, lastPost + 90_000);
	const reads = countBetween(await readsBy(sb, target.apiKey), start);
	const after = emissions(n8n, target.workflowId, target.triggerName).slice(before);
	log(`spread flood: ${reads} reads, ${after.length} executions, quiet: ${quiet}`);
	return {
		reads,
		quiet,
		measuredMs: Date.now() - start,
		executions: after.length,
		answered: answers.filter((a) => a.status === 202).length,
		answerMedianMs: median(answers.map((a) => a.ms)),
	};
}

/** A steady flood of forged ids carrying the current time, with a few real events among them. */
async function nowFlood(sb: Sandbox, n8n: RunningN8n, target: Target) {
	const url = productionUrl(n8n, target);
	await sb.control.addSubscription({ url, orgId: target.orgId });
	await warmUp(sb, n8n, target);
	const before = emissions(n8n, target.workflowId, target.triggerName).length;
	const total = NOW_FLOOD.perSecond * NOW_FLOOD.seconds;
	const realEvery = Math.floor(total / NOW_FLOOD.realEvents);
	const real: string[] = [];
	const answers: Array<Promise<{ status: number; ms: number }>> = [];
	const start = Date.now();
	for (let n = 0; n < total; n++) {
		const at = start + (n * 1000) / NOW_FLOOD.perSecond;
		if (at > Date.now()) await sleep(at - Date.now());
		answers.push(
			post(
				url,
				Array.from({ length: NOW_FLOOD.idsPerDelivery }, () => ({
					id: forgedId(),
					type: 'run.completed',
					createdOn: new Date().toISOString(),
					environment: 'prod',
					data: { forged: true },
				})),
			),
		);
		if (n % realEvery === realEvery / 2)
			real.push(...(await create(sb, target, [{ data: { n } }])));
	}
	const lastPost = Date.now();
	const settled = await Promise.all(answers);
	await sleep(TAIL.graceMs + TAIL.windowMs - (Date.now() - lastPost));
	const reads = await readsBy(sb, target.apiKey);
	const during = countBetween(reads, start, lastPost + 1000);
	const tail = countBetween(
		reads,
		lastPost + TAIL.graceMs,
		lastPost + TAIL.graceMs + TAIL.windowMs,
	);
	const lastRead = Math.max(...reads);
	const list = emissions(n8n, target.workflowId, target.triggerName).slice(before);
	const counts = timesEmitted(list);
	const floodSeconds = (lastPost - start) / 1000;
	log(`now flood: ${during} reads in ${floodSeconds} s, ${tail} in the tail`);
	return {
		floodSeconds,
		during,
		tail,
		lastReadAfterMs: lastRead - lastPost,
		realEmittedOnce: real.filter((id) => counts.get(id) === 1).length,
		realCount: real.length,
		extra: extraExecutions(list, new Set(real)),
		answered: settled.filter((a) => a.status === 202).length,
		total,
	};
}

/**
 * Answered events not listed yet when n8n is SIGTERMed: 5 committed 3 s after their delivery, one
 * 60 s after; n8n started again; the next deliveries, then repeats of every delivery so far.
 */
async function restart(sb: Sandbox, n8n: RunningN8n, target: Target) {
	const url = productionUrl(n8n, target);
	const subscription = await sb.control.addSubscription({ url, orgId: target.orgId, repeats: 1 });
	const emittedNow = () => timesEmitted(emissions(n8n, target.workflowId, target.triggerName));
	const waitEmitted = (ids: string[], timeoutMs: number) =>
		waitForEmissions(
			n8n,
			target,
			(l) => {
				const counts = timesEmitted(l);
				return ids.every((id) => counts.has(id));
			},
			timeoutMs,
		);
	const bodiesOf = async (ids: string[]) =>
		(await sb.control.listEvents({ orgId: target.orgId }))
			.filter((event) => ids.includes(event.id))
			.map(deliveredBody);
	const repeat = async (ids: string[]) => {
		const answers = await Promise.all((await bodiesOf(ids)).map((body) => post(url, body)));
		return answers.filter((a) => a.status === 202).length;
	};

	const emittedFirst = await create(
		sb,
		target,
		Array.from({ length: 5 }, (_, n) => ({ data: { before: n } })),
	);
	await waitEmitted(emittedFirst, 60_000);
	const createdAt = Date.now();
	const late3 = await create(
		sb,
		target,
		Array.from({ length: 5 }, (_, n) => ({ commitDelayMs: 3000, data: { late3: n } })),
	);
	const [late60] = await create(sb, target, [{ commitDelayMs: 60_000, data: { late60: true } }]);
	await sb.subscriptions.settled();
	const lateDeliveries = (
		await sb.control.getDeliveries({ subscriptionId: subscription.id })
	).filter((d) => d.eventIds.some((id) => id === late60 || late3.includes(id)));
	const answeredAtMs = Math.max(...lateDeliveries.map((d) => d.answeredAtMs)) - createdAt;
	await n8n.stop();
	const stoppedAtMs = Date.now() - createdAt;
	const listedAtStop = (
		await sb.control.listEvents({ orgId: target.orgId, includeUncommitted: false })
	).filter((event) => late3.includes(event.id) || event.id === late60).length;
	await n8n.start();
	await waitUntilActive(url);
	const startedAtMs = Date.now() - createdAt;
	log(`restart: stopped ${stoppedAtMs} ms after creation, up again at ${startedAtMs} ms`);

	// The next delivery: its read brings the events answered before the restart.
	const [next] = await create(sb, target, [{ data: { next: true } }]);
	await waitEmitted([next, ...late3], 30_000);
	await sleep(5000);
	let counts = emittedNow();
	const late3LostAfterNext = late3.filter((id) => !counts.has(id)).length;
	// Repeats of every delivery so far, after the restart.
	const repeated = await repeat([...emittedFirst, ...late3, next]);
	await sleep(8000);

	// The 60 s event: the next delivery after it is listed.
	const due = createdAt + 61_000 - Date.now();
	if (due > 0) await sleep(due);
	const [afterLate] = await create(sb, target, [{ data: { afterLate: true } }]);
	await waitEmitted([afterLate, late60], 30_000);
	await sleep(5000);
	counts = emittedNow();
	const late60LostAfterNext = counts.has(late60) ? 0 : 1;
	const repeatedLate = await repeat([late60, afterLate, ...emittedFirst]);
	await sleep(8000);

	const list = emissions(n8n, target.workflowId, target.triggerName);
	counts = timesEmitted(list);
	const all = [...emittedFirst, ...late3, late60, next, afterLate];
	const twice = (ids: string[]) => ids.filter((id) => (counts.get(id) ?? 0) > 1).length;
	return {
		answeredAtMs,
		stoppedAtMs,
		startedAtMs,
		listedAtStop,
		late3LostAfterNext,
		late3Lost: late3.filter((id) => !counts.has(id)).length,
		late3Twice: twice([...emittedFirst, ...late3, next]),
		late60LostAfterNext,
		late60Twice: twice([late60, afterLate]),
		extra: extraExecutions(list, new Set(all)),
		repeats: repeated + repeatedLate,
		deliveries: (await sb.control.getDeliveries({ subscriptionId: subscription.id })).length,
	};
}

test('the webhook trigger in a real n8n: forged floods, and answered events across a restart', async () => {
	e2e.ensureInstalled('2');
	const tgz = packOnce();
	const sb: Sandbox = await startSandbox();
	const n8n = newN8n(
		'safety',
		PORTS.benchWebhookSafety,
		{ N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: 'true' },
		true,
	);
	try {
		const [week, flood, restarted] = [
			await makeTarget(sb, 'forged over a week'),
			await makeTarget(sb, 'forged now'),
			await makeTarget(sb, 'restart'),
		];
		// A populated week: WEEK_EVENTS events spread over the 7 days the list keeps.
		const nowMs = (await sb.control.getClock()).nowMs;
		for (let from = 0; from < WEEK_EVENTS; from += 10_000)
			await create(
				sb,
				week,
				Array.from({ length: Math.min(10_000, WEEK_EVENTS - from) }, (_, n) => ({
					type: EVENT_TYPES[(from + n) % EVENT_TYPES.length],
					createdOn: new Date(
						nowMs - WEEK_MS + 600_000 + ((from + n) * (WEEK_MS - 1_200_000)) / WEEK_EVENTS,
					).toISOString(),
					data: { history: from + n },
				})),
			);
		await n8nWithTargets(n8n, tgz, [week, flood, restarted]);
		await n8n.start();
		for (const target of [week, flood, restarted])
			await waitUntilActive(productionUrl(n8n, target));
		log('n8n up, three triggers active');

		const spread = await spreadFlood(sb, n8n, week);
		const now = await nowFlood(sb, n8n, flood);
		const rs = await restart(sb, n8n, restarted);
		log(`restart: ${JSON.stringify(rs)}`);

		const version = e2e.versionInfo('2').version;
		const ids = SPREAD.deliveries * SPREAD.idsPerDelivery;
		const goals: Goal[] = [
			{
				goal: `${SPREAD.deliveries} forged deliveries naming ${ids.toLocaleString('en-US')} ids spread over a week of ${WEEK_EVENTS.toLocaleString('en-US')} listed events: at most ${GOALS.spreadReads} API reads in all (catches a trigger that looks each delivered id up)`,
				figure: `${spread.reads}${spread.quiet ? '' : ' (still reading when measuring stopped)'}`,
				met: spread.quiet && spread.reads <= GOALS.spreadReads,
			},
			{
				goal: 'forged ids spread over a week start 0 executions',
				figure: String(spread.executions),
				met: spread.executions === 0,
			},
			{
				goal: `forged ids carrying the current time, ${NOW_FLOOD.perSecond} deliveries a second for ${NOW_FLOOD.seconds} s: at most one API read a second while they come (catches a trigger whose reads follow the deliveries)`,
				figure: `${now.during} reads in ${now.floodSeconds.toFixed(1)} s`,
				met: now.during <= Math.ceil(now.floodSeconds) + 1,
			},
			{
				goal: `forged ids carrying the current time: no API read from ${TAIL.graceMs / 1000} s after the last one, for ${TAIL.windowMs / 1000} s (catches a trigger that keeps looking for what was never listed)`,
				figure: `${now.tail} (last read ${seconds(now.lastReadAfterMs)} after the last delivery)`,
				met: now.tail === 0,
			},
			{
				goal: 'during the flood of forged ids: every real event emitted once, the forged ones start nothing',
				figure: `${now.realEmittedOnce} of ${now.realCount} once; ${now.extra} other executions`,
				met: now.realEmittedOnce === now.realCount && now.extra === 0,
			},
			{
				goal: 'n8n SIGTERMed with 5 answered events committed 3 s after their delivery, then started: 0 lost after the next delivery (catches state kept only in memory)',
				figure: `${rs.late3LostAfterNext} of 5 lost (${rs.listedAtStop} of 6 late events listed when n8n had stopped)`,
				met: rs.late3LostAfterNext === 0,
			},
			{
				goal: 'after the restart, repeats of every delivery included: 0 events started twice (catches emitted ids kept only in memory)',
				figure: `${rs.late3Twice} started twice; ${rs.extra} other executions`,
				met: rs.late3Twice === 0 && rs.extra === 0,
			},
			{
				goal: 'an event committed 60 s after its answered delivery, n8n restarted meanwhile: emitted by the next delivery after it is listed, once, repeats included (catches a look-for window that drops it)',
				figure: `${rs.late60LostAfterNext ? 'lost' : 'emitted'}; started twice: ${rs.late60Twice}`,
				met: rs.late60LostAfterNext === 0 && rs.late60Twice === 0,
			},
		];
		for (const goal of goals) log(`${goal.met ? 'met' : 'MISSED'}: ${goal.goal}: ${goal.figure}`);
		const sections: Section[] = [
			{
				heading: 'Forged deliveries, and answered events across a restart',
				text: `n8n ${version} (regular mode, one process, SQLite, \`N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true\`) with the packed package installed in its community-nodes folder; three copies of the example workflow \`webhook-trigger.json\` (node version ${week.typeVersion}, on run.completed and run.failed), active, each with its own organization and API key in the in-process sandbox, and each first sent one real event (its delivery emitted) so the trigger has read its list before a row starts. Reads: every \`GET /events\` the sandbox answered for that trigger's key from the row's first forged delivery on. **Spread over a week**: the organization holds ${WEEK_EVENTS.toLocaleString('en-US')} events spread evenly over the 7 days the list keeps; ${SPREAD.deliveries} deliveries 50 ms apart, each an array of ${SPREAD.idsPerDelivery} events in the listed shape whose ids carry random times of that week (so the API lists none), stated type run.completed; reads counted until none came for 10 s (at most 90 s after the last delivery). **Current time**: ${NOW_FLOOD.perSecond} deliveries a second for ${NOW_FLOOD.seconds} s, each naming ${NOW_FLOOD.idsPerDelivery} new ids carrying the current time, with ${NOW_FLOOD.realEvents} real events created (and delivered by the sandbox) among them. **Restart**: a subscription delivering every event twice; 5 events emitted first; then 5 events committed 3 s after their creation and one 60 s after, created together and delivered at once (answered 202), n8n stopped with SIGTERM as soon as the deliveries were answered, started again, then one new event (its delivery is "the next delivery"); then every delivery so far posted again; 61 s after the late events' creation one more new event, then the 60 s event's delivery and others posted again.`,
				table: {
					columns: ['figure', 'measured'],
					rows: [
						[
							'spread over a week: forged deliveries answered 202 / answer median',
							`${spread.answered} of ${SPREAD.deliveries} / ${spread.answerMedianMs} ms`,
						],
						[
							'spread over a week: API reads / executions started',
							`${spread.reads}${spread.quiet ? '' : ' (still reading)'} in ${seconds(spread.measuredMs)} / ${spread.executions}`,
						],
						['current time: forged deliveries answered 202', `${now.answered} of ${now.total}`],
						[
							'current time: API reads while they came / in the tail window / last read after the last delivery',
							`${now.during} in ${now.floodSeconds.toFixed(1)} s / ${now.tail} / ${seconds(now.lastReadAfterMs)}`,
						],
						[
							'current time: real events emitted once / other executions',
							`${now.realEmittedOnce} of ${now.realCount} / ${now.extra}`,
						],
						[
							'restart: late deliveries answered / n8n stopped / up again (after their creation)',
							`${seconds(rs.answeredAtMs)} / ${seconds(rs.stoppedAtMs)} / ${seconds(rs.startedAtMs)}`,
						],
						[
							'restart: 3 s events lost after the next delivery / at the end',
							`${rs.late3LostAfterNext} / ${rs.late3Lost} of 5`,
						],
						[
							'restart: events started twice (5 before, 5 late, the next) / the 60 s event and the one after it',
							`${rs.late3Twice} / ${rs.late60Twice}`,
						],
						[
							'restart: the 60 s event after the next delivery / other executions',
							`${rs.late60LostAfterNext ? 'not emitted' : 'emitted'} / ${rs.extra}`,
						],
						[
							'restart: deliveries by the sandbox / repeats posted after the restart',
							`${rs.deliveries} / ${rs.repeats}`,
						],
					],
				},
			},
		];
		writeSuiteResults({
			suite: 'webhook-safety',
			title: 'Webhook trigger in a real n8n: forged deliveries and restarts',
			sections: [
				...sections,
				{
					heading: 'How long this suite took',
					text: `${seconds(Date.now() - began)} (build, pack, n8n start and imports included).`,
				},
			],
			goals,
		});
		expect(goals.filter((goal) => !goal.met)).toEqual([]);
	} finally {
		await n8n.stop();
		await sb.stop();
	}
});
