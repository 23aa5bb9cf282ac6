'use strict';
/**
 * The trigger in a real n8n 2.41.1, with n8n's durable poll cursors off (the default) and on
 * (`N8N_POLLER_DURABLE_CURSORS_ENABLED` with the scheduler and publication service), both at
 * once (two n8n processes, two sandboxes) so the file takes about five minutes:
 *
 * - "Start From: Now": events created between activation and the first scheduled poll are
 *   emitted (with durable cursors n8n drops what the activation poll wrote), nothing older;
 * - a burst larger than one poll can read (the sandbox answers each page in 2 s, so a 36 s
 *   durable poll reads about a dozen pages of 100) is delivered exactly once, over several
 *   polls with durable cursors;
 * - n8n SIGKILLed right after a poll emits (as soon as the REST API shows the execution it
 *   started): which events are emitted again after the restart (asserted: none with durable
 *   cursors; at most that poll's, and reported, in the default mode).
 */
const path = require('node:path');
const e2e = require('../../scripts/e2e/n8n');
const { PORTS } = require('../../scripts/e2e/ports');
const { lines, latestTgz, startSandbox, waitFor, waitUntilSettled } = require('./helpers');

const DURABLE_ENV = {
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
	N8N_SCHEDULER_ENABLED: 'true',
	N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
	N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'true',
};
const MODES = [
	{ name: 'default', port: PORTS.e2eTriggerDurableDefault, env: {} },
	{ name: 'durable', port: PORTS.e2eTriggerDurable, env: DURABLE_ENV },
];
const BURST = 2000;
const PAGE_LATENCY_MS = 2000;
const AFTER_ACTIVATION = 50;
const KILL_BATCH = 30;
const MINUTE = 60_000;
const TRIGGER_NAME = 'Document Workflow Trigger';

const run = lines().includes('2') ? describe : describe.skip;

/** One mode, end to end; returns what happened, for the tests below to assert. */
async function scenario(mode) {
	const sandbox = await startSandbox();
	const c = sandbox.control;
	const n8n = new e2e.N8nInstance({
		major: '2',
		userFolder: path.join(e2e.CACHE, `test-trigger-${mode.name}`),
		port: mode.port,
		fresh: true,
		env: mode.env,
	});
	const report = { mode: mode.name };
	try {
		e2e.installPackageInto(n8n.userFolder, latestTgz());
		// Imported and published before n8n's first start (as 05-agent and 07 do), so that start
		// activates the trigger: one n8n start instead of a start and a restart. The history below is
		// still created before that start, and every later event after the activation poll is over.
		await n8n.importCredentials([
			e2e.documentWorkflowCredential({
				id: 'dwTriggerCred002',
				name: 'Document Workflow API',
				baseUrl: sandbox.baseUrl,
				apiKey: sandbox.apiKey,
			}),
		]);
		const workflow = {
			id: `trigger${mode.name === 'durable' ? 'Durable' : 'Default'}01`,
			name: `Trigger e2e (${mode.name})`,
			active: false,
			settings: { executionOrder: 'v1' },
			connections: {},
			nodes: [
				{
					id: '9b1f6c1e-3c7e-4d59-9a59-2f3b1e1d0a01',
					name: TRIGGER_NAME,
					type: e2e.NODE_TYPES[1],
					typeVersion: 1,
					position: [0, 0],
					parameters: {
						pollTimes: { item: [{ mode: 'everyMinute' }] },
						events: [],
						options: { overlapMinutes: 1 },
					},
					credentials: {
						documentWorkflowApi: { id: 'dwTriggerCred002', name: 'Document Workflow API' },
					},
				},
			],
		};
		await n8n.importWorkflows([workflow]);
		await n8n.activateWorkflow(workflow.id);

		const lastSeq = async () => {
			const requests = await c.getRequests({ pathPrefix: '/events' });
			return requests.length ? requests[requests.length - 1].seq : 0;
		};
		// The events each execution started with: the trigger's output, or, for an execution a crash
		// stopped before the trigger's output was recorded, the items waiting on its execution stack.
		const emittedIds = async () => {
			const ids = [];
			for (const execution of await n8n.listExecutions(workflow.id)) {
				const full = await n8n.getExecution(execution.id);
				let items = e2e.N8nInstance.nodeOutput({ data: full.data }, TRIGGER_NAME);
				if (!items)
					items = full.data?.executionData?.nodeExecutionStack?.find(
						(entry) => entry.node?.name === TRIGGER_NAME,
					)?.data?.main?.[0];
				ids.push(...(items || []).map((item) => item.json.id));
			}
			return ids;
		};

		// History from before activation: never emitted with "Start From: Now".
		const now = (await c.getClock()).nowMs;
		report.history = (
			await c.createEvents(
				Array.from({ length: 20 }, (_, n) => ({
					type: 'run.completed',
					createdOn: new Date(now - 3 * MINUTE + n * 1000).toISOString(),
					data: { history: n },
				})),
				{ returnIds: true },
			)
		).ids;

		// Activation: n8n polls once at start (its first start: the workflow was published before it).
		let seq = await lastSeq();
		await n8n.start();
		await n8n.setupOwner();
		await waitFor(async () => (await lastSeq()) > seq, {
			what: `the activation poll (${mode.name})`,
			timeoutMs: 120_000,
			intervalMs: 200,
		});
		// The activation poll is over (its requests done, 2 s without another), however slow n8n is.
		await waitUntilSettled(n8n, c, { workflowId: workflow.id, quietMs: 2000 });
		const activatedAt = Date.now();
		const seqAfterActivation = await lastSeq();
		// Every page answered in 2 s from now on: set before the events, so that no poll can read
		// them at full speed in between (20 pages of 2 s are more than a 36 s durable poll reads).
		await c.setSettings({ eventPageLatencyMs: PAGE_LATENCY_MS });
		// Events between activation and the first scheduled poll, then a burst larger than a 36 s poll reads.
		report.afterActivation = (
			await c.createEvents(
				Array.from({ length: AFTER_ACTIVATION }, (_, n) => ({
					type: 'review.created',
					data: { n },
				})),
				{ returnIds: true },
			)
		).ids;
		// n8n picks the second of its "every minute" at random: the first scheduled poll may come before
		// these events (then a later poll emits them, asserted the same). Which order ran is reported.
		const afterActivationAt = Date.now();
		const burstAt = (await c.getClock()).nowMs;
		report.burst = (
			await c.createEvents(
				Array.from({ length: BURST }, (_, n) => ({
					type: 'run.completed',
					createdOn: new Date(burstAt + Math.floor((n * 1000) / BURST)).toISOString(),
					data: { n },
				})),
				{ returnIds: true },
			)
		).ids;
		const expected = [...report.afterActivation, ...report.burst];
		await waitFor(
			async () => {
				const ids = new Set(await emittedIds());
				return expected.every((id) => ids.has(id));
			},
			{
				what: `the burst in the executions (${mode.name})`,
				timeoutMs: 6 * MINUTE,
				intervalMs: 5000,
			},
		);
		report.burstSeconds = (Date.now() - activatedAt) / 1000;
		report.executionsForBurst = (await n8n.listExecutions(workflow.id)).length;
		report.afterBurst = await emittedIds();
		const firstScheduled = (
			await c.getRequests({ pathPrefix: '/events', afterSeq: seqAfterActivation })
		)[0];
		const firstScheduledMs = firstScheduled ? firstScheduled.realTimeMs - afterActivationAt : null;
		report.firstScheduledPoll =
			firstScheduledMs === null
				? 'none'
				: `${(Math.abs(firstScheduledMs) / 1000).toFixed(1)} s ${firstScheduledMs >= 0 ? 'after' : 'before'} the events created after activation`;
		await c.setSettings({ eventPageLatencyMs: 0 });

		// A crash right after a poll emits: SIGKILL as soon as n8n shows the execution that poll started.
		seq = await lastSeq();
		const executionsBefore = (await n8n.listExecutions(workflow.id)).length;
		report.killBatch = (
			await c.createEvents(
				Array.from({ length: KILL_BATCH }, (_, n) => ({ type: 'run.failed', data: { n } })),
				{ returnIds: true },
			)
		).ids;
		const started = await waitFor(
			async () => {
				const executions = await n8n.listExecutions(workflow.id);
				return executions.length > executionsBefore ? executions[0] : null;
			},
			{
				what: `the execution of the poll that read the batch (${mode.name})`,
				timeoutMs: 2 * MINUTE,
				intervalMs: 20,
			},
		);
		await n8n.kill();
		const killedAt = Date.now();
		const answered = (await c.getRequests({ pathPrefix: '/events', afterSeq: seq })).find(
			(request) => request.status === 200,
		);
		report.killedMsAfterAnswer = answered ? killedAt - answered.realTimeMs : null;
		report.statusAtKill = started.status;
		// n8n is down: the next read of the list is the poll at the restart.
		const seqWhileDown = await lastSeq();
		await n8n.startAfterKill();
		await n8n.login();
		// The poll at the restart is over before the "scheduled poll" below is counted: the batch can
		// show before it (the killed execution keeps it on its stack), and a fast restart would then
		// let the poll at start pass for the scheduled one, whose read is the one that could repeat it.
		await waitFor(async () => (await lastSeq()) > seqWhileDown, {
			what: `the poll at the restart (${mode.name})`,
			timeoutMs: 2 * MINUTE,
			intervalMs: 200,
		});
		await waitUntilSettled(n8n, c, { workflowId: workflow.id, quietMs: 2000 });
		await waitFor(
			async () => {
				const ids = new Set(await emittedIds());
				return report.killBatch.every((id) => ids.has(id));
			},
			{
				what: `the batch after the restart (${mode.name})`,
				timeoutMs: 3 * MINUTE,
				intervalMs: 3000,
			},
		).catch((error) => {
			if (mode.name === 'durable') throw error;
			e2e.log(
				`trigger e2e (${mode.name}): not every event of the batch was emitted after the restart`,
			);
		});
		// One more poll, after the poll at the restart, so a scheduled one: anything it would emit
		// again shows up too.
		seq = await lastSeq();
		await waitFor(async () => (await lastSeq()) > seq, {
			what: `a scheduled poll after the restart (${mode.name})`,
			timeoutMs: 2 * MINUTE,
			intervalMs: 1000,
		});
		// That poll is over and what it started is saved, however slow n8n is.
		await waitUntilSettled(n8n, c, { workflowId: workflow.id, quietMs: 5000 });
		report.final = await emittedIds();
		report.statuses = (await n8n.listExecutions(workflow.id)).map((execution) => execution.status);
		report.loadErrors = n8n.packageLoadErrors();
		e2e.log(
			`trigger e2e (${mode.name}): burst of ${BURST} + ${AFTER_ACTIVATION} emitted ${report.burstSeconds.toFixed(0)} s after activation in ${report.executionsForBurst} execution(s); SIGKILL ${report.killedMsAfterAnswer} ms after the poll's request, its execution then "${report.statusAtKill}"`,
		);
		return report;
	} finally {
		await n8n.stop();
		await sandbox.stop();
	}
}

const count = (ids) => {
	const counts = new Map();
	for (const id of ids) counts.set(id, (counts.get(id) || 0) + 1);
	return counts;
};

run('n8n 2.41.1: the trigger with durable poll cursors off and on', () => {
	const reports = {};

	beforeAll(async () => {
		const results = await Promise.all(MODES.map((mode) => scenario(mode)));
		for (const result of results) reports[result.mode] = result;
	}, 15 * MINUTE);

	describe.each(MODES.map((mode) => mode.name))('%s mode', (name) => {
		test('Start From: Now: every event created between activation and the first scheduled poll is emitted, nothing from before', () => {
			const report = reports[name];
			e2e.log(`trigger e2e (${name}): first scheduled poll ${report.firstScheduledPoll}`);
			const emitted = count(report.afterBurst);
			expect(report.afterActivation.filter((id) => !emitted.has(id))).toEqual([]);
			expect(report.history.filter((id) => emitted.has(id))).toEqual([]);
		});

		test('a burst larger than one poll can read: every event exactly once', () => {
			const report = reports[name];
			const emitted = count(report.afterBurst);
			expect(report.burst.filter((id) => emitted.get(id) !== 1)).toEqual([]);
			expect([...emitted.values()].filter((n) => n > 1)).toEqual([]);
			// 20 pages of 2 s: more than a 36 s durable poll reads, so durable mode needed several polls.
			if (name === 'durable') expect(report.executionsForBurst).toBeGreaterThan(1);
		});

		test('SIGKILL right after a poll emits: with durable cursors each is emitted exactly once; in the default mode at most twice (reported)', () => {
			const report = reports[name];
			const emitted = count(report.final);
			const repeated = report.killBatch.filter((id) => emitted.get(id) > 1);
			e2e.log(
				`trigger e2e (${name}): after SIGKILL ${report.killedMsAfterAnswer} ms after the poll's request (execution "${report.statusAtKill}"), ${repeated.length} of ${KILL_BATCH} events emitted again`,
			);
			const lost = report.killBatch.filter((id) => !emitted.has(id));
			e2e.log(
				`trigger e2e (${name}): ${lost.length} of ${KILL_BATCH} events never emitted; executions: ${JSON.stringify(report.statuses)}`,
			);
			if (name === 'durable') {
				// The cursor and the execution are one transaction: each event once, whatever the moment of the crash.
				expect(lost).toEqual([]);
				expect(repeated).toEqual([]);
			} else {
				// Static data and the execution are saved separately: at most that poll's events again.
				expect(report.killBatch.filter((id) => emitted.get(id) > 2)).toEqual([]);
			}
			expect(report.loadErrors).toEqual([]);
		});
	});
});
