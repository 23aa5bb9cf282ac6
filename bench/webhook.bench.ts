/**
 * The webhook trigger's benchmark: 1,000 events delivered within 10 s to the trigger active in
 * a real n8n 2.41.1 (the packed package installed as users install it), each delivery sent
 * twice, a test ping every 50 events and forged deliveries among them. Measured: from each
 * event's creation in the sandbox to the start of the execution it started (n8n's own
 * `startedAt`), the API reads the trigger made, and the executions that forged deliveries,
 * pings and repeats started. Writes `.bench-results/webhook.json` (rendered by
 * `scripts/bench/report.js`). Alone: `BENCH_SUITES=webhook npx jest -c bench/jest.bench.config.js` (add
 * `BENCH_SKIP_BUILD=1` to pack the current dist/).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import { startSandbox } from '../sandbox/src';
import type { Sandbox } from '../sandbox/src';
import { median, round, writeSuiteResults } from './results';
import type { Goal } from './results';

// The real-n8n launcher the end-to-end suites use (plain CommonJS).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const e2e = require('../scripts/e2e/n8n');

/** The goals are for 1,000; BENCH_WEBHOOK_EVENTS runs the same row with fewer, e.g. to see where n8n keeps up. */
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 1000);
const SPAN_MS = 10_000;
const BATCHES = 100;
const FORGED = Math.max(1, Math.round(EVENTS / 20));
const PING_EVERY = 50;
/** Past the trigger's look-for window (5 s): whatever a ping or a forged id could start has started by then. */
const SETTLE_MS = 8000;
const TYPES = ['run.completed', 'run.failed'];

const GOALS = { medianMs: 500, worstMs: 2000, eventsPerRead: 10 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function forgedId(): string {
	const t = Date.now().toString(16).padStart(12, '0');
	const r = randomBytes(10).toString('hex');
	return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${r.slice(0, 3)}-8${r.slice(3, 6)}-${r.slice(6, 18)}`;
}

/** `fn`, tried again (2 s apart) while n8n is too busy to answer its REST API. */
async function retrying<T>(fn: () => Promise<T>, tries = 10): Promise<T> {
	for (let attempt = 1; ; attempt++) {
		try {
			return await fn();
		} catch (error) {
			if (attempt >= tries) throw error;
			await sleep(2000);
		}
	}
}

/** Runs `fn` over `items`, `limit` at a time. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
	const out: R[] = new Array(items.length);
	let next = 0;
	await Promise.all(
		Array.from({ length: limit }, async () => {
			while (next < items.length) {
				const index = next++;
				out[index] = await fn(items[index]);
			}
		}),
	);
	return out;
}

test(`${EVENTS} events delivered in 10 s to the webhook trigger in a real n8n`, async () => {
	e2e.ensureInstalled('2');
	const tgz = e2e.buildAndPack({ build: process.env.BENCH_SKIP_BUILD !== '1' });
	const sb: Sandbox = await startSandbox();
	const n8n = new e2e.N8nInstance({ major: '2', userFolder: join(e2e.CACHE, 'bench-webhook'), fresh: true, port: 5698 });
	try {
		const org = await sb.control.createOrg({ name: 'bench webhook' });
		const key = await sb.control.createKey({ orgId: org.id, name: 'bench webhook' });
		e2e.installPackageInto(n8n.userFolder, tgz);
		await n8n.start();
		await n8n.setupOwner();
		const credentialId = 'dwBenchWebhook01';
		await n8n.importCredentials([e2e.documentWorkflowCredential({ id: credentialId, name: 'Document Workflow API (bench)', baseUrl: sb.baseUrl, apiKey: key.key })]);
		const example = e2e.loadExamples({ CREDENTIAL_ID: credentialId }).find((entry: { file: string }) => entry.file === 'webhook-trigger.json');
		const workflow = example.workflow;
		const trigger = workflow.nodes.find((node: { type: string }) => node.type === e2e.NODE_TYPES[2]);
		if (JSON.stringify(trigger.parameters.events) !== JSON.stringify(TYPES)) throw new Error(`the example's Events changed: ${JSON.stringify(trigger.parameters.events)}`);
		await n8n.importWorkflows([workflow]);
		await n8n.activateWorkflow(workflow.id);
		await n8n.restart();
		const url = `${n8n.baseUrl}/webhook/${trigger.webhookId}/webhook`;
		const post = (body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
		for (let tries = 0; (await post({ id: 'warm-up' })).status !== 400; tries++) {
			if (tries > 60) throw new Error('the webhook never became active');
			await sleep(1000);
		}

		const subscription = await sb.control.addSubscription({ url, orgId: org.id, repeats: 1, pingEvery: PING_EVERY });
		await sb.control.clearRequests();
		const created: string[] = [];
		const forged: string[] = [];
		const forgedAnswers: Array<Promise<number>> = [];
		const start = Date.now();
		for (let batch = 0; batch < BATCHES; batch++) {
			const at = start + (batch * SPAN_MS) / BATCHES;
			if (at > Date.now()) await sleep(at - Date.now());
			const events = Array.from({ length: EVENTS / BATCHES }, (_, n) => ({ type: TYPES[(batch + n) % 2], data: { batch, n } }));
			created.push(...(await sb.control.createEvents(events, { orgId: org.id, returnIds: true })).ids!);
			if (batch % (BATCHES / FORGED) === 0) {
				const id = forgedId();
				forged.push(id);
				forgedAnswers.push(post({ id, type: 'run.completed', data: { forged: true } }).then((r) => r.status, () => 0));
			}
		}
		const deliveredInMs = Date.now() - start;
		await sb.subscriptions.settled();
		// Until every event started an execution, or the count stood still for the look-for window (at most 3 minutes).
		const deadline = Date.now() + 180_000;
		let seen = -1;
		let stillSince = Date.now();
		for (;;) {
			const count = (await retrying<unknown[]>(() => n8n.listExecutions(workflow.id))).length;
			if (count !== seen) {
				seen = count;
				stillSince = Date.now();
			}
			if ((count >= EVENTS && Date.now() - stillSince >= SETTLE_MS) || Date.now() - stillSince >= 2 * SETTLE_MS || Date.now() > deadline) break;
			await sleep(1000);
		}

		const deliveries = (await sb.control.getDeliveries({ subscriptionId: subscription.id })).filter((d) => !d.ping || d.sentAtMs >= start);
		const pings = deliveries.filter((d) => d.ping).length;
		const repeats = deliveries.filter((d) => d.copy > 0).length;
		const createdAt = new Map<string, number>();
		for (const d of deliveries) if (!d.ping) for (const id of d.eventIds) createdAt.set(id, Math.min(createdAt.get(id) ?? Infinity, d.createdAtMs));
		const reads = (await sb.control.getRequests({ origin: 'api', pathPrefix: '/events' })).length;

		const summaries: Array<{ id: string; startedAt?: string; createdAt?: string }> = await retrying<Array<{ id: string; startedAt?: string; createdAt?: string }>>(() => n8n.listExecutions(workflow.id));
		const executions = await mapLimit(summaries, 4, async (summary) => {
			const full = await retrying<{ data: unknown; startedAt?: string; createdAt: string }>(() => n8n.getExecution(summary.id));
			const items: Array<{ json: { id: string } }> = e2e.N8nInstance.nodeOutput({ data: full.data }, trigger.name) ?? [];
			return { startedAtMs: Date.parse(full.startedAt ?? summary.startedAt ?? full.createdAt), ids: items.map((item) => String(item.json.id)) };
		});
		const perEvent = new Map<string, number>();
		let unexpected = 0;
		const latencies: number[] = [];
		for (const execution of executions) {
			for (const id of execution.ids) {
				perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
				if (!createdAt.has(id)) unexpected++;
				else if (perEvent.get(id) === 1) latencies.push(execution.startedAtMs - createdAt.get(id)!);
			}
		}
		const duplicates = [...perEvent.values()].filter((n) => n > 1).reduce((sum, n) => sum + n - 1, 0);
		const emptyExecutions = executions.filter((execution) => execution.ids.length === 0).length;
		const extraExecutions = unexpected + duplicates + emptyExecutions;
		const emitted = created.filter((id) => perEvent.has(id)).length;
		const med = latencies.length ? median(latencies) : NaN;
		const worst = latencies.length ? Math.max(...latencies) : NaN;
		const forgedStatuses = await Promise.all(forgedAnswers);
		const slowestAnswer = Math.max(...deliveries.map((d) => d.answeredAtMs - d.sentAtMs));

		const goals: Goal[] = [
			{ goal: `creation to the execution's start, median ≤ ${GOALS.medianMs / 1000} s`, figure: seconds(med), met: med <= GOALS.medianMs },
			{ goal: `creation to the execution's start, worst ≤ ${GOALS.worstMs / 1000} s`, figure: seconds(worst), met: worst <= GOALS.worstMs },
			{ goal: `API reads ≤ one per ${GOALS.eventsPerRead} events`, figure: `${reads} reads for ${EVENTS} events (${round(EVENTS / Math.max(reads, 1), 1)} events per read)`, met: reads * GOALS.eventsPerRead <= EVENTS },
			{ goal: 'forged deliveries, test pings and repeats start 0 executions', figure: `${extraExecutions} (${forged.length} forged, ${pings} pings, ${repeats} repeats)`, met: extraExecutions === 0 },
			{ goal: 'every event is emitted, once', figure: `${emitted} of ${EVENTS}`, met: emitted === EVENTS },
		];
		writeSuiteResults({
			suite: 'webhook',
			title: 'Webhook trigger in a real n8n (subscription deliveries)',
			sections: [
				{
					heading: `${EVENTS.toLocaleString('en-US')} events delivered in 10 s`,
					text: `n8n ${e2e.versionInfo('2').version} (regular mode, one process, SQLite) with the packed package installed in its community-nodes folder; the example workflow \`webhook-trigger.json\` (Document Workflow Webhook Trigger on run.completed and run.failed → No Operation) active. The in-process sandbox creates ${EVENTS} events in ${BATCHES} batches over ${SPAN_MS / 1000} s and delivers each at once to the Production URL, every delivery twice, with a test ping after every ${PING_EVERY} events; the benchmark posts ${FORGED} forged deliveries (ids in the right form that the API does not list) among them. Latency: from each event's creation (real time, in the sandbox) to the start of the execution that emitted it (n8n's \`startedAt\`); events one read finds are the items of one execution. Reads: every \`GET /events\` the sandbox answered during the run.`,
					table: {
						columns: ['figure', 'value'],
						rows: [
							['events created / delivered in', `${EVENTS} / ${seconds(deliveredInMs)}`],
							['deliveries (with repeats and pings) / forged', `${deliveries.length} / ${forged.length}`],
							['deliveries n8n did not answer 202 (connection refused, timed out, or an error status)', `${deliveries.filter((d) => d.status !== 202).length}`],
							['slowest answer to a delivery', `${slowestAnswer} ms`],
							['forged deliveries answered', `${forgedStatuses.filter((s) => s === 202).length} × 202`],
							['creation → execution start: median / 90th percentile / worst', `${seconds(med)} / ${seconds([...latencies].sort((a, b) => a - b)[Math.floor(latencies.length * 0.9)] ?? NaN)} / ${seconds(worst)}`],
							['executions started', `${executions.length} (events emitted: ${emitted}; extra: ${extraExecutions})`],
							['API reads (GET /events)', `${reads} (${round(EVENTS / Math.max(reads, 1), 1)} events per read)`],
						],
					},
				},
			],
			goals,
		});
		for (const goal of goals) process.stderr.write(`[webhook bench] ${goal.met ? 'met' : 'MISSED'}: ${goal.goal}: ${goal.figure}\n`);
		expect(goals.filter((goal) => !goal.met)).toEqual([]);
	} finally {
		await n8n.stop();
		await sb.stop();
	}
});
