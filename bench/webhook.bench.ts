/**
 * The webhook trigger's benchmark: 1,000 events delivered within 10 s to the trigger active in
 * a real n8n 2.41.1 (the packed package installed as users install it), each delivery sent
 * twice, a test ping every 50 events and forged deliveries among them; the same burst twice, in
 * two n8n configurations: n8n's defaults, and N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true. Measured:
 * from each event's creation in the sandbox to the start of the execution it started (n8n's own
 * `startedAt`), the API reads the trigger made, the executions that forged deliveries, pings and
 * repeats started, and the CPU time n8n's main process spent per delivery. Writes
 * `.bench-results/webhook.json` (rendered by `scripts/bench/report.js`). Alone:
 * `BENCH_SUITES=webhook npx jest -c bench/jest.bench.config.js` (add `BENCH_SKIP_BUILD=1` to pack
 * the current dist/).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { startSandbox } from '../sandbox/src';
import type { Sandbox } from '../sandbox/src';
import { median, round, writeSuiteResults } from './results';
import type { Goal } from './results';
import { cpuMs, forgedId } from './webhook-n8n';

// The real-n8n launcher the end-to-end suites use (plain CommonJS).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const e2e = require('../scripts/e2e/n8n');
const { PORTS } = require('../scripts/e2e/ports');

/** The goals are for 1,000; BENCH_WEBHOOK_EVENTS runs the same row with fewer, e.g. to see where n8n keeps up. */
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 1000);
const SPAN_MS = 10_000;
const BATCHES = 100;
const FORGED = Math.max(1, Math.round(EVENTS / 20));
const PING_EVERY = 50;
/** Past the trigger's look-for window (5 s): whatever a ping or a forged id could start has started by then. */
const SETTLE_MS = 8000;
const TYPES = ['run.completed', 'run.failed'];

const GOALS = { eventsPerRead: 10 };

/**
 * The two n8n configurations, run one after the other in the same n8n (restarted between them),
 * each with its own organization, credential and copy of the example workflow.
 */
const CONFIGS = [
	{ key: 'defaults', label: "n8n's defaults", env: {} },
	{
		key: 'lazy',
		label: 'N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true',
		env: { N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: 'true' },
	},
] as const;
type Config = (typeof CONFIGS)[number];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

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
async function mapLimit<T, R>(
	items: T[],
	limit: number,
	fn: (item: T) => Promise<R>,
): Promise<R[]> {
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

/** One configuration's copy of the example workflow, active in n8n. */
interface Target {
	config: Config;
	orgId: string;
	workflowId: string;
	webhookId: string;
	triggerName: string;
	typeVersion: number;
}

/** The parts of the e2e launcher's N8nInstance a burst uses. */
interface RunningN8n {
	baseUrl: string;
	proc: { pid: number };
	listExecutions(workflowId: string): Promise<unknown[]>;
	getExecution(id: string): Promise<unknown>;
}

/** What one burst measured: the table's column and the goals. */
interface Outcome {
	column: string[];
	goals: Goal[];
	cpuPerDeliveryMs: number;
	answeredPerSecond: number;
	sentPerSecond: number;
}

const FIGURES = [
	'events created / delivered in',
	'deliveries (with repeats and pings) / forged',
	'deliveries n8n did not answer 202 (connection refused, timed out, or an error status)',
	'answer to a delivery: median / slowest',
	'deliveries sent a second / answered a second (from the first event to the last answer)',
	"CPU time of n8n's main process per delivery (from the first event to the last answer)",
	'forged deliveries answered',
	'creation → execution start: median / 90th percentile / worst',
	'executions started',
	'API reads (GET /events)',
];

/** How many deliveries were not answered 202, and what they got instead (status 0: no answer, with the error). */
function notAccepted(deliveries: Array<{ status: number; error?: string }>): string {
	const kinds = new Map<string, number>();
	for (const d of deliveries)
		if (d.status !== 202) {
			const kind = d.status === 0 ? `no answer (${d.error ?? 'unknown'})` : `status ${d.status}`;
			kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
		}
	const total = [...kinds.values()].reduce((sum, n) => sum + n, 0);
	return total === 0
		? '0'
		: `${total}: ${[...kinds].map(([kind, n]) => `${n} × ${kind}`).join(', ')}`;
}

/** The burst: events created over 10 s in the target's organization, each delivered at once to its Production URL. */
async function burst(sb: Sandbox, n8n: RunningN8n, target: Target): Promise<Outcome> {
	const url = `${n8n.baseUrl}/webhook/${target.webhookId}/webhook`;
	const post = (body: unknown) =>
		fetch(url, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(body),
		});
	for (
		let tries = 0;
		(await post({ id: 'warm-up' }).then(
			(r) => r.status,
			() => 0,
		)) !== 400;
		tries++
	) {
		if (tries > 60) throw new Error(`the webhook (${target.config.label}) never became active`);
		await sleep(1000);
	}

	const subscription = await sb.control.addSubscription({
		url,
		orgId: target.orgId,
		repeats: 1,
		pingEvery: PING_EVERY,
	});
	await sb.control.clearRequests();
	const created: string[] = [];
	const forged: string[] = [];
	const forgedAnswers: Array<Promise<number>> = [];
	const cpuAtStart = cpuMs(n8n.proc.pid);
	const start = Date.now();
	for (let batch = 0; batch < BATCHES; batch++) {
		const at = start + (batch * SPAN_MS) / BATCHES;
		if (at > Date.now()) await sleep(at - Date.now());
		const events = Array.from({ length: EVENTS / BATCHES }, (_, n) => ({
			type: TYPES[(batch + n) % 2],
			data: { batch, n },
		}));
		created.push(
			...(await sb.control.createEvents(events, { orgId: target.orgId, returnIds: true })).ids!,
		);
		if (batch % (BATCHES / FORGED) === 0) {
			const id = forgedId();
			forged.push(id);
			forgedAnswers.push(
				post({ id, type: 'run.completed', data: { forged: true } }).then(
					(r) => r.status,
					() => 0,
				),
			);
		}
	}
	const deliveredInMs = Date.now() - start;
	await sb.subscriptions.settled();
	const forgedStatuses = await Promise.all(forgedAnswers);
	const cpuAnswered = cpuMs(n8n.proc.pid) - cpuAtStart;
	// Until every event started an execution, or the count stood still for the look-for window (at most 3 minutes).
	const settle = async (): Promise<string[]> => {
		const deadline = Date.now() + 180_000;
		let seen: string[] = [];
		let stillSince = Date.now();
		for (;;) {
			const listed = (await retrying<unknown[]>(() =>
				n8n.listExecutions(target.workflowId),
			)) as Array<{ id: string }>;
			if (listed.length !== seen.length) [seen, stillSince] = [listed.map((e) => e.id), Date.now()];
			if (
				(listed.length >= EVENTS && Date.now() - stillSince >= SETTLE_MS) ||
				Date.now() - stillSince >= 2 * SETTLE_MS ||
				Date.now() > deadline
			)
				return seen;
			await sleep(1000);
		}
	};
	const burstExecutions = new Set(await settle());

	const deliveries = (await sb.control.getDeliveries({ subscriptionId: subscription.id })).filter(
		(d) => !d.ping || d.sentAtMs >= start,
	);
	const reads = (await sb.control.getRequests({ origin: 'api', pathPrefix: '/events' })).length;
	// One more event, delivered as the service delivers every event: events whose deliveries n8n
	// never answered (an overloaded n8n) come out with its read, since the cursor has not passed them.
	const [next] = (await sb.control.createEvents([{ type: TYPES[0] }], {
		orgId: target.orgId,
		returnIds: true,
	}))!.ids!;
	await sb.subscriptions.settled();
	await settle();
	await sb.control.removeSubscription(subscription.id);
	const pings = deliveries.filter((d) => d.ping).length;
	const repeats = deliveries.filter((d) => d.copy > 0).length;
	const createdAt = new Map<string, number>();
	for (const d of deliveries)
		if (!d.ping)
			for (const id of d.eventIds)
				createdAt.set(id, Math.min(createdAt.get(id) ?? Infinity, d.createdAtMs));

	const summaries = (await retrying<unknown[]>(() =>
		n8n.listExecutions(target.workflowId),
	)) as Array<{ id: string; startedAt?: string; createdAt?: string }>;
	const executions = await mapLimit(summaries, 4, async (summary) => {
		const full = (await retrying<unknown>(() => n8n.getExecution(summary.id))) as {
			data: unknown;
			startedAt?: string;
			createdAt: string;
		};
		const items: Array<{ json: { id: string } }> =
			e2e.N8nInstance.nodeOutput({ data: full.data }, target.triggerName) ?? [];
		return {
			startedAtMs: Date.parse(full.startedAt ?? summary.startedAt ?? full.createdAt),
			ids: items.map((item) => String(item.json.id)),
			inBurst: burstExecutions.has(summary.id),
		};
	});
	const perEvent = new Map<string, number>();
	const emittedInBurst = new Set<string>();
	let unexpected = 0;
	const latencies: number[] = [];
	for (const execution of executions) {
		for (const id of execution.ids) {
			perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
			if (execution.inBurst) emittedInBurst.add(id);
			if (id === next) continue;
			if (!createdAt.has(id)) unexpected++;
			else if (perEvent.get(id) === 1) latencies.push(execution.startedAtMs - createdAt.get(id)!);
		}
	}
	const duplicates = [...perEvent.values()].filter((n) => n > 1).reduce((sum, n) => sum + n - 1, 0);
	const emptyExecutions = executions.filter((execution) => execution.ids.length === 0).length;
	const extraExecutions = unexpected + duplicates + emptyExecutions;
	const emitted = created.filter((id) => perEvent.has(id)).length;
	// Events of the burst with a delivery n8n answered 202.
	const answered = new Set(
		deliveries.filter((d) => !d.ping && d.status === 202).flatMap((d) => d.eventIds),
	);
	const answeredOut = created.filter((id) => answered.has(id) && emittedInBurst.has(id)).length;
	const answeredCount = created.filter((id) => answered.has(id)).length;
	const med = latencies.length ? median(latencies) : NaN;
	const worst = latencies.length ? Math.max(...latencies) : NaN;
	const answers = deliveries.map((d) => d.answeredAtMs - d.sentAtMs);
	const lastAnswerMs = Math.max(...deliveries.map((d) => d.answeredAtMs)) - start;
	const lastSentMs = Math.max(...deliveries.map((d) => d.sentAtMs)) - start;
	// Forged deliveries are requests n8n answered too.
	const requests = deliveries.length + forged.length;
	const cpuPerDeliveryMs = cpuAnswered / requests;
	const answeredPerSecond = requests / (lastAnswerMs / 1000);
	const sentPerSecond = requests / (lastSentMs / 1000);

	const label = target.config.label;
	// No latency goal here: a burst this dense measures n8n's own per-request ceiling, which no
	// community node can lift (issue 33); webhook-latency.bench.ts sets the latency goal beside n8n's own Webhook node.
	const goals: Goal[] = [
		{
			goal: `${label}: API reads ≤ one per ${GOALS.eventsPerRead} events`,
			figure: `${reads} reads for ${EVENTS} events (${round(EVENTS / Math.max(reads, 1), 1)} events per read)`,
			met: reads * GOALS.eventsPerRead <= EVENTS,
		},
		{
			goal: `${label}: forged deliveries, test pings and repeats start 0 executions`,
			figure: `${extraExecutions} (${forged.length} forged, ${pings} pings, ${repeats} repeats)`,
			met: extraExecutions === 0,
		},
		{
			goal: `${label}: every event whose delivery n8n answered 202 is emitted before any later delivery (catches a read that stops before the end and is not carried on)`,
			figure: `${answeredOut} of ${answeredCount} (of ${EVENTS} events, ${emittedInBurst.size} emitted in all by then)`,
			met: answeredOut === answeredCount,
		},
		{
			goal: `${label}: after one more delivery, every event of the burst is emitted, once (catches a cursor that passed events whose deliveries n8n never answered)`,
			figure: `${emitted} of ${EVENTS}, ${duplicates} started twice; the next event ${perEvent.has(next) ? 'emitted' : 'not emitted'}`,
			met: emitted === EVENTS && duplicates === 0 && perEvent.has(next),
		},
	];
	const column = [
		`${EVENTS} / ${seconds(deliveredInMs)}`,
		`${deliveries.length} / ${forged.length}`,
		notAccepted(deliveries),
		`${median(answers)} ms / ${Math.max(...answers)} ms`,
		`${Math.round(sentPerSecond)} / ${Math.round(answeredPerSecond)}`,
		`${round(cpuPerDeliveryMs, 1)} ms (${round(cpuAnswered / 1000, 1)} s for ${requests} requests)`,
		`${forgedStatuses.filter((s) => s === 202).length} × 202`,
		`${seconds(med)} / ${seconds([...latencies].sort((a, b) => a - b)[Math.floor(latencies.length * 0.9)] ?? NaN)} / ${seconds(worst)}`,
		`${executions.length} (events emitted: ${emitted}; extra: ${extraExecutions})`,
		`${reads} (${round(EVENTS / Math.max(reads, 1), 1)} events per read)`,
	];
	for (const goal of goals)
		process.stderr.write(
			`[webhook bench] ${goal.met ? 'met' : 'MISSED'}: ${goal.goal}: ${goal.figure}\n`,
		);
	return { column, goals, cpuPerDeliveryMs, answeredPerSecond, sentPerSecond };
}

test(`${EVENTS} events delivered in 10 s to the webhook trigger in a real n8n, with n8n's defaults and with N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true`, async () => {
	e2e.ensureInstalled('2');
	const tgz = e2e.buildAndPack({ build: process.env.BENCH_SKIP_BUILD !== '1' });
	const sb: Sandbox = await startSandbox();
	const userFolder = join(e2e.CACHE, 'bench-webhook');
	const instance = (env: Record<string, string>, fresh = false) =>
		new e2e.N8nInstance({ major: '2', userFolder, fresh, port: PORTS.benchN8nExecutions, env });
	let n8n = instance({}, true);
	try {
		// Each configuration gets its own organization, key, credential and copy of the example
		// (its own workflow id and Production URL), all set up before the first burst.
		const targets: Target[] = [];
		const credentials: unknown[] = [];
		const workflows: Array<{ id: string }> = [];
		for (const config of CONFIGS) {
			const org = await sb.control.createOrg({ name: `bench webhook ${config.key}` });
			const key = await sb.control.createKey({
				orgId: org.id,
				name: `bench webhook ${config.key}`,
			});
			const credentialId = e2e.n8nId();
			credentials.push(
				e2e.documentWorkflowCredential({
					id: credentialId,
					name: `Document Workflow API (bench, ${config.key})`,
					baseUrl: sb.baseUrl,
					apiKey: key.key,
				}),
			);
			const example = e2e
				.loadExamples({
					CREDENTIAL_ID: credentialId,
					CREDENTIAL_NAME: `Document Workflow API (bench, ${config.key})`,
				})
				.find((entry: { file: string }) => entry.file === 'webhook-trigger.json');
			const workflow = example.workflow;
			workflow.name = `${workflow.name} (${config.label})`;
			const trigger = workflow.nodes.find(
				(node: { type: string }) => node.type === e2e.NODE_TYPES[2],
			);
			if (JSON.stringify(trigger.parameters.events) !== JSON.stringify(TYPES))
				throw new Error(
					`the example's Events changed: ${JSON.stringify(trigger.parameters.events)}`,
				);
			trigger.webhookId = randomUUID();
			workflows.push(workflow);
			targets.push({
				config,
				orgId: org.id,
				workflowId: workflow.id,
				webhookId: trigger.webhookId,
				triggerName: trigger.name,
				typeVersion: trigger.typeVersion,
			});
		}
		e2e.installPackageInto(n8n.userFolder, tgz);
		await n8n.start();
		await n8n.setupOwner();
		await n8n.importCredentials(credentials);
		await n8n.importWorkflows(workflows);
		for (const workflow of workflows) await n8n.activateWorkflow(workflow.id);
		await n8n.stop();

		const outcomes: Outcome[] = [];
		for (const target of targets) {
			n8n = instance(target.config.env);
			await n8n.start();
			await n8n.setupOwner();
			outcomes.push(await burst(sb, n8n, target));
			await n8n.stop();
		}

		const [byDefault, lazy] = outcomes;
		const version = e2e.versionInfo('2').version;
		const goals = outcomes.flatMap((outcome) => outcome.goals);
		writeSuiteResults({
			suite: 'webhook',
			title: 'Webhook trigger in a real n8n (subscription deliveries)',
			sections: [
				{
					heading: `${EVENTS.toLocaleString('en-US')} events delivered in 10 s, in two n8n configurations`,
					text: `n8n ${version} (regular mode, one process, SQLite) with the packed package installed in its community-nodes folder, run twice: with n8n's defaults, then restarted with \`N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true\`. Each run has its own copy of the example workflow \`webhook-trigger.json\` (Document Workflow Webhook Trigger, node version ${targets[0].typeVersion}, on run.completed and run.failed → No Operation), active, with its own organization and API key. The in-process sandbox creates ${EVENTS} events in ${BATCHES} batches over ${SPAN_MS / 1000} s and delivers each at once to the copy's Production URL, every delivery twice, with a test ping after every ${PING_EVERY} events; the benchmark posts ${FORGED} forged deliveries (ids in the right form that the API does not list) among them. Latency: from each event's creation (real time, in the sandbox) to the start of the execution that emitted it (n8n's \`startedAt\`); events one read finds are the items of one execution. Reads: every \`GET /events\` the sandbox answered during the run. CPU time: user and system time of n8n's main process (\`/proc\`) from the first event to the last answer, divided by the requests it answered (deliveries and forged ones).`,
					table: {
						columns: ['figure', ...CONFIGS.map((config) => config.label)],
						rows: FIGURES.map((figure, i) => [
							figure,
							...outcomes.map((outcome) => outcome.column[i]),
						]),
					},
				},
				{
					heading: 'What a delivery costs in n8n with its defaults',
					text: `With its defaults, n8n 2.x evaluates expressions in an isolated-vm engine (\`N8N_EXPRESSION_ENGINE=vm\`) and, for every production webhook request whose workflow does not start with n8n's own Webhook node, acquires an expression isolate before it hands the request to the node and disposes of it afterwards, building a new one (\`LiveWebhooks\` in n8n's \`webhooks/live-webhooks.js\`): each delivery pays for an isolate, whatever the node does with it. Measured here: n8n's main process spent ${round(byDefault.cpuPerDeliveryMs, 1)} ms of CPU per delivery with the defaults and ${round(lazy.cpuPerDeliveryMs, 1)} ms with \`N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true\`; it answered ${Math.round(byDefault.answeredPerSecond)} and ${Math.round(lazy.answeredPerSecond)} deliveries a second while they were sent at ${Math.round(byDefault.sentPerSecond)} and ${Math.round(lazy.sentPerSecond)} a second. Deliveries n8n has not answered yet wait in its queue, and each event's execution starts only after its deliveries are answered, so the latency goals depend on n8n answering as fast as the service sends. With \`N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true\`, n8n builds an isolate only when an expression is evaluated. For a start node of version 1, n8n evaluates one on every request (\`$parameter["options"]["binaryData"]\`, \`parseRequestBody\` in \`webhooks/webhook-helpers.js\`, kept for version 1 of its own Webhook node), so the trigger's version 2, which the example uses, is what lets a delivery go without an isolate; a workflow saved with version 1 of the trigger is not measured here.`,
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
