/**
 * The package in n8n's queue mode: Redis, PostgreSQL, an n8n main and two n8n workers on this
 * machine (scripts/e2e/queue.js), the packed package installed in every process's user folder,
 * and the sandbox API (compiled, in this process).
 *
 * One cluster for the whole file; the tests run in order and share it:
 *   1. the package loads on the main and on both workers;
 *   2. a batch of submit-and-wait executions (production webhooks) spreads over both workers,
 *      every document processed exactly once;
 *   3. a worker is SIGKILLed in the middle of a batch: n8n (2.41.1) fails its executions after
 *      the job's lock expires (Bull stall check, maxStalledCount 0) and never reruns them; the
 *      editor's Retry of such an execution runs no node; when the caller resends the work, the
 *      Custom idempotency key (the caller's GUID per document) creates no second document,
 *      while Automatic keys (per execution, as documented) do;
 *   4. the trigger, active on the main since the start, emitted every event exactly once
 *      (late commits, lower ids) while the workers ran the executions;
 *   5. the example examples/queue-mode/webhook-exactly-once.json (the webhook trigger → an atomic
 *      insert of the event id into PostgreSQL → only the execution that made the row goes on),
 *      active since the start: its table created by its own "run once" branch, two `n8n webhook`
 *      processes behind a proxy that sends every delivery to both (the trigger's worst case, where
 *      it starts some events twice), and each event passes the Postgres node once.
 *
 * Run: npm run test:e2e:queue (scripts/e2e/ci-queue.sh installs what it needs first).
 */
const crypto = require('node:crypto');
const path = require('node:path');
const e2e = require('../../scripts/e2e/n8n');
const { PORTS } = require('../../scripts/e2e/ports');
const sbx = require('../../scripts/e2e/sandbox');
const queue = require('../../scripts/e2e/queue');
const { startDeliveryProxy, startWebhookProcess } = require('../../scripts/e2e/webhook-processes');
const { batchWorkflow, exactlyOnceExample, triggerWorkflow } = require('./workflows');
const { waitFor, waitUntilSettled } = require('../e2e/helpers');

const TRIGGER_EVENTS = ['run.completed', 'run.failed', 'review.created'];
const MAIN_PORT = Number(process.env.E2E_QUEUE_PORT || PORTS.queueMain);
const WEBHOOK_EVENTS = ['run.completed', 'run.failed'];
const sleep = e2e.sleep;
const log = (...a) => e2e.log('[queue]', ...a);

/** Collects figures for the report at the end. */
const report = {};

/** POST to a production webhook of the main; resolves with { status, body, ms }. */
async function callWebhook(main, webhookPath, body, { timeoutMs = 240000 } = {}) {
	const t0 = Date.now();
	try {
		const res = await fetch(`${main.baseUrl}/webhook/${webhookPath}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(body),
			signal: AbortSignal.timeout(timeoutMs),
		});
		const text = await res.text();
		let json;
		try {
			json = JSON.parse(text);
		} catch {
			json = text;
		}
		return { status: res.status, body: json, ms: Date.now() - t0 };
	} catch (error) {
		return { status: 0, body: String(error.message || error), ms: Date.now() - t0 };
	}
}

describe('n8n 2.41.1 in queue mode: main + 2 workers, Redis, PostgreSQL', () => {
	let sandbox;
	let cluster;
	let main;
	let flows; // sandbox workflows
	let triggerOrg;
	let webhookOrg;
	const ids = {
		cred: 'dwQueueCred00001',
		triggerCred: 'dwQueueTrigCred1',
		batchAuto: 'qBatchAutoKeys01',
		batchCustom: 'qBatchCustomKey1',
		trigger: 'qTriggerEvents01',
		webhookCred: 'dwQueueHookCred1',
		postgresCred: 'dwQueuePgCred001',
		exactlyOnce: 'qWebhookOnce0001',
	};
	const trigger = { expected: [], unselected: [], createdAt: 0, lateDueAt: 0, apiKey: '' };

	beforeAll(async () => {
		const t0 = Date.now();
		e2e.ensureInstalled('2');
		const tgz = e2e.buildAndPack({
			build: process.env.E2E_SKIP_BUILD !== '1',
			destDir: path.join(e2e.CACHE, 'queue-pack'),
		});
		sbx.buildSandbox();
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const { startSandbox } = require(path.join(sbx.BUILD_DIR, 'sandbox', 'src', 'index.js'));
		sandbox = await startSandbox({});
		const c = sandbox.control;
		flows = {
			fast: await c.createWorkflow({
				name: 'Queue batch (1 s runs)',
				triggerFormats: ['pdf'],
				script: [
					{ status: 'queued', ms: 100 },
					{ status: 'running', ms: 900 },
					{ status: 'completed' },
				],
			}),
			slow: await c.createWorkflow({
				name: 'Queue kill (25 s runs)',
				triggerFormats: ['pdf'],
				script: [
					{ status: 'queued', ms: 100 },
					{ status: 'running', ms: 25000 },
					{ status: 'completed' },
				],
			}),
		};
		triggerOrg = await c.createOrg({ name: 'queue trigger org' });
		const triggerKey = await c.createKey({ orgId: triggerOrg.id, name: 'queue trigger' });
		webhookOrg = await c.createOrg({ name: 'queue webhook org' });
		const webhookKey = await c.createKey({ orgId: webhookOrg.id, name: 'queue webhook' });
		trigger.apiKey = triggerKey.key;

		cluster = new queue.QueueCluster({ tgz, mainPort: MAIN_PORT, workers: 2, concurrency: 10 });
		await cluster.startServices();
		main = cluster.main;
		const cred = { id: ids.cred, name: 'Document Workflow API (sandbox)' };
		const triggerCred = { id: ids.triggerCred, name: 'Document Workflow API (trigger org)' };
		await main.importCredentials([
			e2e.documentWorkflowCredential({ ...cred, baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey }),
			e2e.documentWorkflowCredential({
				...triggerCred,
				baseUrl: sandbox.baseUrl,
				apiKey: triggerKey.key,
			}),
			e2e.documentWorkflowCredential({
				id: ids.webhookCred,
				name: 'Document Workflow API (webhook org)',
				baseUrl: sandbox.baseUrl,
				apiKey: webhookKey.key,
			}),
			// The example's Postgres credential: the PostgreSQL queue mode runs on, as a user fills it in.
			{
				id: ids.postgresCred,
				name: 'PostgreSQL (queue mode)',
				type: 'postgres',
				data: {
					host: cluster.pg.host,
					port: cluster.pg.port,
					database: cluster.pg.database,
					user: cluster.pg.user,
					password: cluster.pg.password,
					ssl: 'disable',
				},
			},
		]);
		const workflows = [
			batchWorkflow({
				id: ids.batchAuto,
				path: 'dw-batch',
				sandboxWorkflowId: flows.fast.id,
				credential: cred,
			}),
			batchWorkflow({
				id: ids.batchCustom,
				path: 'dw-batch-custom',
				sandboxWorkflowId: flows.slow.id,
				credential: cred,
				keyMode: 'custom',
			}),
			batchWorkflow({
				id: 'qBatchSlowAuto01',
				name: 'Queue batch (slow, automatic keys)',
				path: 'dw-batch-slow',
				sandboxWorkflowId: flows.slow.id,
				credential: cred,
			}),
			triggerWorkflow({ id: ids.trigger, credential: triggerCred, events: TRIGGER_EVENTS }),
			exactlyOnceExample({
				id: ids.exactlyOnce,
				credential: { id: ids.webhookCred, name: 'Document Workflow API (webhook org)' },
				postgres: { id: ids.postgresCred, name: 'PostgreSQL (queue mode)' },
			}),
		];
		await main.importWorkflows(workflows);
		for (const wf of workflows) await main.activateWorkflow(wf.id);
		// The main activates the workflows (webhooks, the trigger's poller) when it starts.
		await cluster.startMain();
		await cluster.startWorkers();
		await cluster.waitForWebhooks(['dw-batch', 'dw-batch-custom', 'dw-batch-slow']);
		// The first test creates the trigger's first events: only once its poll at activation is over,
		// else that poll takes them as there before activation ("Start From: Now") and never emits
		// them. The webhooks' rows tell nothing of it (n8n activates one workflow after another).
		await waitFor(
			async () =>
				(await c.getRequests({ pathPrefix: '/events' })).some(
					(r) => r.headers['x-api-key'] === trigger.apiKey,
				),
			{ what: "the trigger's poll at activation", timeoutMs: 120000, intervalMs: 250 },
		);
		await waitUntilSettled(main, c, {
			workflowId: ids.trigger,
			apiKey: trigger.apiKey,
			quietMs: 2000,
		});
		report.startup = `${((Date.now() - t0) / 1000).toFixed(0)} s`;
		log(`cluster up in ${report.startup}`);
	});

	afterAll(async () => {
		if (cluster) {
			for (const w of cluster.workers)
				log(`${w.name} ran executions: ${w.startedExecutions().join(', ')}`);
			await cluster.stopAll();
		}
		if (sandbox) await sandbox.stop();
		await queue.stopEverything();
		log(`report: ${JSON.stringify(report, null, 2)}`);
	});

	const sandboxEvents = () => sandbox.control;

	test('the package loads on the main and on every worker', async () => {
		const types = await main.loadedTypes();
		for (const t of e2e.NODE_TYPES) expect(types.nodes).toContain(t);
		expect(types.credentials).toContain(e2e.CREDENTIAL_TYPE);
		expect(main.packageLoadErrors()).toEqual([]);
		for (const w of cluster.workers) {
			expect(w.running).toBe(true);
			expect(w.packageLoadErrors()).toEqual([]);
		}
		// The trigger's first events: created now, while the batches below run on the workers.
		const c = sandboxEvents();
		trigger.createdAt = Date.now();
		const created = (
			await c.createEvents(
				[
					{ type: 'run.completed', data: { n: 1 } },
					{ type: 'run.failed', data: { n: 2 } },
					{ type: 'review.created', data: { n: 3 } },
					{ type: 'document.received', data: { n: 4 } },
					{ type: 'run.cancelled', data: { n: 5 } },
					{
						type: 'run.completed',
						data: { n: 6, late: '70 s commit delay' },
						commitDelayMs: 70000,
					},
				],
				{ orgId: triggerOrg.id, returnIds: true },
			)
		).ids;
		trigger.expected.push(created[0], created[1], created[2], created[5]);
		trigger.unselected.push(created[3], created[4]);
		trigger.lateDueAt = Date.now() + 70000;
	});

	test('a batch of submit-and-wait executions spreads over both workers; every document exactly once', async () => {
		const EXECUTIONS = 20;
		const PER_EXECUTION = 5;
		const calls = [];
		const t0 = Date.now();
		for (let i = 0; i < EXECUTIONS; i++) {
			const documents = Array.from({ length: PER_EXECUTION }, (_, j) => ({
				reference: `batch-${i}-${j}`,
			}));
			calls.push(callWebhook(main, 'dw-batch', { documents }));
		}
		const results = await Promise.all(calls);
		const wallMs = Date.now() - t0;
		for (const r of results) {
			expect(r.status).toBe(200);
			expect(r.body.count).toBe(PER_EXECUTION);
			for (const run of r.body.runs) expect(run.status).toBe('completed');
		}
		// Every document exactly once in the API.
		const total = EXECUTIONS * PER_EXECUTION;
		expect(await sandbox.control.countDocuments({ workflowId: flows.fast.id })).toBe(total);
		const docs = await sandbox.control.listDocuments({ workflowId: flows.fast.id });
		const refs = docs.map((d) => d.reference).sort();
		const want = [];
		for (let i = 0; i < EXECUTIONS; i++)
			for (let j = 0; j < PER_EXECUTION; j++) want.push(`batch-${i}-${j}`);
		expect(refs).toEqual(want.sort());
		// Each n8n execution: stored once, success, run by exactly one worker; both workers ran some.
		const execs = cluster.executions(ids.batchAuto);
		expect(execs).toHaveLength(EXECUTIONS);
		for (const ex of execs)
			expect(ex).toMatchObject({ mode: 'webhook', status: 'success', finished: true });
		const byWorker = cluster.executionWorkers();
		const perWorker = {};
		for (const ex of execs) {
			expect(byWorker.get(ex.id)).toHaveLength(1);
			const w = byWorker.get(ex.id)[0];
			perWorker[w] = (perWorker[w] || 0) + 1;
		}
		log(
			`batch: ${total} documents in ${EXECUTIONS} executions, ${wallMs} ms; per worker ${JSON.stringify(perWorker)}`,
		);
		report.batch = { documents: total, executions: EXECUTIONS, wallMs, perWorker };
		expect(Object.keys(perWorker).sort()).toEqual(['worker1', 'worker2']);
		for (const n of Object.values(perWorker)) expect(n).toBeGreaterThan(0);
	});

	test('a worker killed (SIGKILL) mid-batch: n8n fails its executions and never reruns them; a resend with the same idempotency keys creates no second document', async () => {
		const c = sandbox.control;
		const CALLS = 8;
		const PER_CALL = 3;
		const before = await c.countDocuments({ workflowId: flows.slow.id });
		const startedBefore = new Set([...cluster.executionWorkers().keys()]);
		// Calls C C A A C C A A: C = the caller's stable GUID per document (Custom key), A = Automatic keys.
		const sent = [];
		const calls = [];
		for (let i = 0; i < CALLS; i++) {
			const custom = Math.floor(i / 2) % 2 === 0;
			const documents = Array.from({ length: PER_CALL }, (_, j) => {
				const d = { reference: `kill-${custom ? 'custom' : 'auto'}-${i}-${j}` };
				if (custom) d.idempotencyKey = crypto.randomUUID();
				return d;
			});
			const body = { documents };
			const hook = custom ? 'dw-batch-custom' : 'dw-batch-slow';
			sent.push({ hook, body, custom });
			calls.push(callWebhook(main, hook, body));
			await sleep(150);
		}
		const total = CALLS * PER_CALL;
		// Every document submitted (runs take 25 s): the executions are now waiting on their runs.
		await waitFor(
			async () => (await c.countDocuments({ workflowId: flows.slow.id })) - before === total,
			{
				what: 'every document of the kill batch submitted',
				timeoutMs: 60000,
				intervalMs: 250,
			},
		);
		// Only the kill batch's own executions: the trigger's executions start on the workers too,
		// whenever its polls find events, and may fall inside this window.
		const killBatchExecutions = () =>
			[...cluster.executions(ids.batchCustom), ...cluster.executions('qBatchSlowAuto01')].filter(
				(e) => !startedBefore.has(e.id) && !e.retryOf,
			);
		const killBatchIds = () => killBatchExecutions().map((e) => e.id);
		await waitFor(
			async () => {
				const started = cluster.executionWorkers();
				const batch = killBatchIds();
				return batch.length === CALLS && batch.every((id) => started.has(id));
			},
			{
				what: 'every execution of the kill batch started on a worker',
				timeoutMs: 30000,
				intervalMs: 250,
			},
		);
		const startedOn = cluster.executionWorkers();
		const running = new Map(killBatchIds().map((id) => [id, startedOn.get(id)[0]]));
		const wfOf = new Map(
			[...cluster.executions(ids.batchCustom), ...cluster.executions('qBatchSlowAuto01')].map(
				(e) => [e.id, e.workflowId],
			),
		);
		const mix = (w) => {
			const mine = [...running].filter(([, x]) => x === w.name).map(([id]) => wfOf.get(id));
			return {
				custom: mine.filter((x) => x === ids.batchCustom).length,
				auto: mine.filter((x) => x !== ids.batchCustom).length,
			};
		};
		const score = (w) => Math.min(mix(w).custom, mix(w).auto) * 100 + mix(w).custom + mix(w).auto;
		const victim =
			score(cluster.workers[0]) >= score(cluster.workers[1])
				? cluster.workers[0]
				: cluster.workers[1];
		const survivor = cluster.workers.find((w) => w !== victim);
		const killedIds = [...running].filter(([, w]) => w === victim.name).map(([id]) => id);
		log(
			`kill batch in flight: ${JSON.stringify(Object.fromEntries(running))}; killing ${victim.name} (${JSON.stringify(mix(victim))})`,
		);
		expect(mix(victim).custom).toBeGreaterThan(0);
		const tKill = Date.now();
		await victim.kill();

		const results = await Promise.all(
			calls.map((p) => p.then((r) => ({ ...r, afterKillMs: Date.now() - tKill }))),
		);
		log(
			`webhook answers after the kill: ${JSON.stringify(results.map((r) => [r.status, r.afterKillMs]))}`,
		);

		// What n8n did: the survivor's executions succeeded; the victim's failed and were not rerun.
		const batchExecs = killBatchExecutions();
		expect(batchExecs).toHaveLength(CALLS);
		const byId = new Map(batchExecs.map((e) => [e.id, e]));
		for (const id of killedIds) expect(byId.get(id).status).not.toBe('success');
		const survivorIds = batchExecs.filter((e) => !killedIds.includes(e.id)).map((e) => e.id);
		for (const id of survivorIds) expect(byId.get(id).status).toBe('success');
		for (const id of killedIds) expect(survivor.startedExecutions()).not.toContain(id);
		expect(cluster.executions().filter((e) => e.retryOf)).toEqual([]);
		expect(await c.countDocuments({ workflowId: flows.slow.id })).toBe(before + total);
		// The webhook callers of the killed executions got 500; the others 200.
		const failedCalls = [];
		results.forEach((r, i) => {
			if (r.status !== 200) failedCalls.push(i);
		});
		expect(failedCalls).toHaveLength(killedIds.length);
		const killedDetail = [];
		for (const id of killedIds) {
			const ex = await main.getExecution(id);
			const rd = ex?.data?.resultData || {};
			killedDetail.push({
				id,
				status: byId.get(id).status,
				workflow: wfOf.get(id),
				lastNodeExecuted: rd.lastNodeExecuted || null,
				nodesWithData: Object.keys(rd.runData || {}),
				error: rd.error ? String(rd.error.message).slice(0, 120) : null,
			});
		}
		report.kill = {
			victim: victim.name,
			killedExecutions: killedDetail,
			survivorExecutions: survivorIds.length,
			webhookAnswers: results.map(
				(r) => `${r.status} after ${(r.afterKillMs / 1000).toFixed(1)} s`,
			),
			documentsAfterKill: (await c.countDocuments({ workflowId: flows.slow.id })) - before,
		};

		// Executions -> Retry on each failed execution (what a user does in the editor).
		const retried = [];
		for (const id of killedIds) {
			const res = await main
				.rest('POST', `/rest/executions/${id}/retry`, { loadWorkflow: false })
				.catch((e) => ({ error: e.message }));
			retried.push({
				id,
				response:
					res && typeof res === 'object'
						? { finished: res.finished, status: res.status, error: res.error }
						: res,
			});
		}
		await waitFor(
			async () => {
				const retries = cluster
					.executions()
					.filter((e) => e.retryOf && killedIds.includes(e.retryOf));
				return (
					retries.length === killedIds.length &&
					retries.every((e) => !['new', 'running'].includes(e.status))
				);
			},
			{ what: 'the retries to finish', timeoutMs: 120000 },
		);
		const retryDetails = [];
		for (const r of cluster
			.executions()
			.filter((e) => e.retryOf && killedIds.includes(e.retryOf))) {
			const ex = await main.getExecution(r.id);
			const rd = ex?.data?.resultData || {};
			retryDetails.push({
				id: r.id,
				retryOf: r.retryOf,
				status: r.status,
				nodesRun: Object.keys(rd.runData || {}),
				error: rd.error ? String(rd.error.message).slice(0, 120) : null,
			});
		}
		log(`retries: ${JSON.stringify(retryDetails)}`);
		report.kill.retries = retryDetails;
		const afterRetry = (await c.countDocuments({ workflowId: flows.slow.id })) - before;
		report.kill.documentsAfterRetry = afterRetry;

		// The caller resends each failed call with the same documents (and the same GUIDs).
		const resent = await Promise.all(
			failedCalls.map((i) => callWebhook(main, sent[i].hook, sent[i].body)),
		);
		const docs = (await c.listDocuments({ workflowId: flows.slow.id })).filter((d) =>
			String(d.reference).startsWith('kill-'),
		);
		const perRef = {};
		for (const d of docs) perRef[d.reference] = (perRef[d.reference] || 0) + 1;
		const resentCustom = failedCalls.filter((i) => sent[i].custom);
		const resentAuto = failedCalls.filter((i) => !sent[i].custom);
		report.kill.resend = {
			answers: resent.map(
				(r, k) =>
					`${sent[failedCalls[k]].custom ? 'custom' : 'automatic'}: ${r.status}${r.status !== 200 ? ` ${JSON.stringify(r.body).slice(0, 100)}` : ''}`,
			),
			documentsPerReference: {
				custom: resentCustom.flatMap((i) => sent[i].body.documents.map((d) => perRef[d.reference])),
				automatic: resentAuto.flatMap((i) =>
					sent[i].body.documents.map((d) => perRef[d.reference]),
				),
			},
		};
		log(`resend: ${JSON.stringify(report.kill.resend)}`);
		// Custom keys: exactly one document per reference, whatever was retried or resent.
		for (const s of sent.filter((x) => x.custom))
			for (const d of s.body.documents) expect(perRef[d.reference]).toBe(1);
		// Automatic keys are per execution (documented): a resend is a new execution, so new documents.
		for (const i of resentAuto)
			for (const d of sent[i].body.documents) expect(perRef[d.reference]).toBe(2);
		expect(victim.running).toBe(false);
	});

	test('the trigger on the main emitted every event exactly once while workers ran the executions', async () => {
		const c = sandbox.control;
		const pollSeq = async () => {
			const reqs = await c.getRequests({ pathPrefix: '/events' });
			return reqs.length ? reqs[reqs.length - 1].seq : 0;
		};
		const waitForPoll = async (afterSeq, what) => {
			await waitFor(async () => (await pollSeq()) > afterSeq, {
				timeoutMs: 150000,
				intervalMs: 500,
				what,
			});
			// That poll is over and what it started has ended on a worker, however slow n8n is.
			await waitUntilSettled(main, c, {
				workflowId: ids.trigger,
				apiKey: trigger.apiKey,
				quietMs: 3000,
			});
			return await pollSeq();
		};
		const emitted = async () => {
			const items = [];
			for (const ex of await main.listExecutions(ids.trigger)) {
				const full = await main.getExecution(ex.id);
				items.push(
					...(e2e.N8nInstance.nodeOutput({ data: full.data }, 'Document Workflow Trigger') || []),
				);
			}
			return items.map((i) => i.json);
		};
		// The first three selected events have been emitted by a poll by now (or will be by the next).
		let seq = await pollSeq();
		await waitFor(
			async () => {
				const got = (await emitted()).map((e) => e.id);
				return trigger.expected.slice(0, 3).every((id) => got.includes(id));
			},
			{ what: 'the first events emitted', timeoutMs: 150000, intervalMs: 3000 },
		);
		// An event emitted now, then one committed late with a lower id. Its lateness is counted from
		// the emitted one, not from the suite's start: on a slow runner that is more than the 5-minute
		// overlap ago, and an event later than the overlap is not emitted (documented).
		const anchorCreatedAt = Date.now();
		const [anchorId] = (
			await c.createEvents([{ type: 'run.completed', data: { n: 9, anchor: true } }], {
				orgId: triggerOrg.id,
				returnIds: true,
			})
		).ids;
		trigger.expected.push(anchorId);
		await waitFor(async () => (await emitted()).some((e) => e.id === anchorId), {
			what: 'the anchor event emitted',
			timeoutMs: 150000,
			intervalMs: 3000,
		});
		const [lowerId] = (
			await c.createEvents(
				[
					{
						type: 'review.created',
						data: { n: 7, late: 'lower id' },
						createdOn: new Date(anchorCreatedAt - 1000).toISOString(),
					},
				],
				{ orgId: triggerOrg.id, returnIds: true },
			)
		).ids;
		expect(lowerId < anchorId).toBe(true);
		expect(Date.now() - (anchorCreatedAt - 1000)).toBeLessThan(4 * 60 * 1000);
		const [later] = (
			await c.createEvents([{ type: 'run.failed', data: { n: 8 } }], {
				orgId: triggerOrg.id,
				returnIds: true,
			})
		).ids;
		trigger.expected.push(lowerId, later);
		// Two scheduled polls after the last event is visible (the 70 s late commit included).
		seq = await pollSeq();
		await waitFor(async () => Date.now() > trigger.lateDueAt + 1000, {
			what: 'the 70 s commit delay',
			timeoutMs: 120000,
		});
		seq = await waitForPoll(Math.max(seq, await pollSeq()), 'a poll after every event is visible');
		seq = await waitForPoll(seq, 'one more poll');
		const events = await emitted();
		const got = events.map((e) => e.id);
		expect([...got].sort()).toEqual([...trigger.expected].sort());
		for (const id of trigger.unselected) expect(got).not.toContain(id);
		// Each item is the event exactly as the API returns it.
		const triggerKeyEvents = await c.listEvents({ orgId: triggerOrg.id });
		const byId = new Map(triggerKeyEvents.map((e) => [e.id, e]));
		for (const ev of events) expect(ev.type).toBe(byId.get(ev.id).type);
		// The trigger's executions ran on the workers (the main only polls and enqueues).
		const execs = cluster.executions(ids.trigger);
		const byWorker = cluster.executionWorkers();
		for (const ex of execs) {
			expect(ex.mode).toBe('trigger');
			expect(byWorker.get(ex.id)).toHaveLength(1);
		}
		const polls = (await c.getRequests({ pathPrefix: '/events' })).length;
		report.trigger = {
			events: got.length,
			executions: execs.map((e) => `${e.id}:${byWorker.get(e.id)[0]}:${e.status}`),
			pollRequests: polls,
			seconds: Math.round((Date.now() - trigger.createdAt) / 1000),
		};
		log(`trigger: ${JSON.stringify(report.trigger)}`);
		expect(main.packageLoadErrors()).toEqual([]);
	});
	test('the exactly-once example: two webhook processes receiving every delivery start some events twice, and each event passes the Postgres node once', async () => {
		const c = sandbox.control;
		const EVENTS = 40;
		// The worker killed above comes back: the example's executions run on both workers.
		await cluster.startWorkers();
		// The example's one-time set-up, as its sticky note asks: run "Run once to create the table"
		// (`n8n execute` starts from the Manual Trigger, as Execute workflow in the editor does).
		const setup = await main.execute(ids.exactlyOnce);
		expect({ ok: setup.ok, error: setup.run?.data?.resultData?.error?.message }).toEqual({
			ok: true,
			error: undefined,
		});
		expect(cluster.pg.query('select count(*) from processed_events')).toEqual([['0']]);

		const workflow = await main.rest('GET', `workflows/${ids.exactlyOnce}`);
		const trigger = workflow.nodes.find((node) => node.type === e2e.NODE_TYPES[2]);
		expect(trigger.parameters.events).toEqual(WEBHOOK_EVENTS);
		const webhooks = [];
		let proxy;
		try {
			// Two webhook processes (the setting the docs ask for on n8n 2.x), both receiving every delivery.
			for (const [n, port] of [PORTS.queueWebhook1, PORTS.queueWebhook2].entries())
				webhooks.push(
					await startWebhookProcess({
						name: `webhook${n + 1}`,
						dir: cluster.dir,
						env: { ...cluster.env, N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: 'true' },
						port,
						tgz: cluster.tgz,
					}),
				);
			const hookPath = `/webhook/${trigger.webhookId}/webhook`;
			// A process still starting may reset the connection (seen on a loaded machine): try again.
			const warmUp = async (w) =>
				await fetch(`${w.baseUrl}${hookPath}`, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: '{"id":"warm-up"}',
				}).catch(() => undefined);
			for (const w of webhooks)
				await waitFor(async () => (await warmUp(w))?.status === 400, {
					what: `the trigger on ${w.name}`,
					timeoutMs: 90000,
					intervalMs: 1000,
				});
			proxy = await startDeliveryProxy(
				webhooks.map((w) => w.baseUrl),
				{ mode: 'both' },
			);
			// Each delivery sent twice, at once: the proxy sends one copy to each webhook process.
			const subscription = await c.addSubscription({
				url: `${proxy.url}${hookPath}`,
				orgId: webhookOrg.id,
				repeats: 1,
				seed: 11,
			});
			const created = [];
			const t0 = Date.now();
			for (let n = 0; n < EVENTS; n++) {
				const at = t0 + n * 100;
				if (at > Date.now()) await sleep(at - Date.now());
				created.push(
					...(
						await c.createEvents([{ type: WEBHOOK_EVENTS[n % 5 === 4 ? 1 : 0], data: { n } }], {
							orgId: webhookOrg.id,
							returnIds: true,
						})
					).ids,
				);
			}
			await sandbox.subscriptions.settled();
			const deliveries = await c.getDeliveries({ subscriptionId: subscription.id });
			expect(deliveries.filter((d) => d.status !== 202)).toEqual([]);
			expect(proxy.counts).toEqual([EVENTS, EVENTS]);

			// Every event claimed, then the executions settle (nothing new for 10 s).
			const claimed = () => cluster.pg.query('select event_id from processed_events');
			await waitFor(async () => claimed().length >= EVENTS, {
				what: 'every event claimed in processed_events',
				timeoutMs: 120000,
				intervalMs: 1000,
			});
			let settled = '';
			await waitFor(
				async () => {
					const now = JSON.stringify(cluster.executions(ids.exactlyOnce));
					const quiet = now === settled;
					settled = now;
					return quiet && !/"status":"(new|running)"/.test(now);
				},
				{ what: 'the executions to settle', timeoutMs: 120000, intervalMs: 10000 },
			);

			const runs = [];
			for (const ex of cluster.executions(ids.exactlyOnce).filter((e) => e.mode === 'webhook')) {
				const full = await main.getExecution(ex.id);
				const out = (name) =>
					(e2e.N8nInstance.nodeOutput({ data: full.data }, name) || []).map((i) => i.json);
				runs.push({
					status: ex.status,
					trigger: out('Document Workflow Webhook Trigger').map((e) => e.id),
					claimed: out('Claim the event id'),
					passed: out('Only events claimed now').map((r) => r.event_id),
					events: out('The event, once'),
				});
			}
			const count = (list) => {
				const times = new Map();
				for (const id of list) times.set(id, (times.get(id) || 0) + 1);
				return times;
			};
			const triggered = count(runs.flatMap((r) => r.trigger));
			const startedTwice = created.filter((id) => triggered.get(id) > 1).length;
			report.exactlyOnce = {
				events: EVENTS,
				executions: runs.length,
				triggerItems: runs.reduce((n, r) => n + r.trigger.length, 0),
				startedTwice,
				rows: claimed().length,
				passed: runs.reduce((n, r) => n + r.passed.length, 0),
				deliveriesPerProcess: proxy.counts,
			};
			log(`exactly-once example: ${JSON.stringify(report.exactlyOnce)}`);

			for (const run of runs) expect(run.status).toBe('success');
			// The trigger started every event, some of them twice (two processes read the same new
			// events before either saw the other's cursor): the case the example is for.
			expect([...triggered.keys()].sort()).toEqual([...created].sort());
			expect(startedTwice).toBeGreaterThan(0);
			// The table holds each event once; each passed the Postgres node once, as the API lists it.
			expect(
				claimed()
					.map(([id]) => id)
					.sort(),
			).toEqual([...created].sort());
			const passed = runs.flatMap((r) => r.passed);
			expect(passed.sort()).toEqual([...created].sort());
			const events = runs.flatMap((r) => r.events);
			expect(events.map((e) => e.id).sort()).toEqual([...created].sort());
			const listed = new Map(
				(await c.listEvents({ orgId: webhookOrg.id })).map((e) => [e.id, e.type]),
			);
			for (const event of events) expect(event.type).toBe(listed.get(event.id));
			// A repeat's insert returned nothing: its execution carried on with no event.
			const claimedRows = runs.flatMap((r) => r.claimed).filter((row) => row.event_id);
			expect(claimedRows).toHaveLength(EVENTS);
			await c.removeSubscription(subscription.id);
		} finally {
			if (proxy) await proxy.close();
			for (const w of webhooks) await w.stop();
		}
	});
});
