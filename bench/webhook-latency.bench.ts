/**
 * The webhook trigger's latency beside n8n's own Webhook node (version 2, answering at once, no
 * other node) in one real n8n 2.41.1, at rising delivery rates, with
 * N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true and with n8n's defaults (issue 33). At each rate, first
 * n8n's Webhook node gets that many requests a second, then the trigger that many deliveries.
 * Writes `.bench-results/webhook-latency.json`. Alone:
 * `BENCH_SUITES=webhook-latency npx jest -c bench/jest.bench.config.js`.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { join } from 'node:path';

import { startSandbox } from '../sandbox/src';
import type { Sandbox } from '../sandbox/src';
import type { Goal } from './results';
import { median, round, writeSuiteResults } from './results';
import {
	cpuMs,
	e2e,
	emissions,
	makeTarget,
	n8nWithTargets,
	newN8n,
	packOnce,
	productionUrl,
	seconds,
	sleep,
	waitUntilActive,
} from './webhook-n8n';
import type { RunningN8n, Target } from './webhook-n8n';

const { PORTS } = require('../scripts/e2e/ports');

const RATES = (process.env.BENCH_LATENCY_RATES ?? '2,5,10,20,40,80,160').split(',').map(Number);
const STEP_SECONDS = Number(process.env.BENCH_LATENCY_STEP_SECONDS ?? 10);
const GOAL_MEDIAN_MS = 500;
const SETTLE_MS = 3000;
const CONFIGS = [
	{
		key: 'lazy',
		label: 'N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true',
		env: { N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: 'true' },
	},
	{ key: 'defaults', label: "n8n's defaults", env: {} },
] as const;

const began = Date.now();
const log = (text: string) =>
	process.stderr.write(`[webhook-latency ${seconds(Date.now() - began)}] ${text}\n`);

/** n8n's own Webhook node, version 2, answering as soon as the request is received, and nothing else. */
function n8nWebhookWorkflow(name: string) {
	const path = randomUUID();
	return {
		path,
		workflow: {
			id: e2e.n8nId(),
			name: `n8n Webhook node (${name})`,
			active: false,
			settings: { executionOrder: 'v1' },
			connections: {},
			nodes: [
				{
					id: randomUUID(),
					name: 'Webhook',
					type: 'n8n-nodes-base.webhook',
					typeVersion: 2,
					position: [0, 0],
					webhookId: randomUUID(),
					parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
				},
			],
		},
	};
}

/** Requests the way the sandbox delivers: keep-alive, at most 50 connections at once. */
function poster() {
	const agent = new Agent({ keepAlive: true, maxSockets: 50 });
	return {
		post(url: string, body: unknown): Promise<{ status: number; sentAtMs: number; ms: number }> {
			const text = JSON.stringify(body);
			const sentAtMs = Date.now();
			return new Promise((resolve) => {
				const req = request(
					url,
					{
						agent,
						method: 'POST',
						headers: {
							'Content-Type': 'application/json',
							'Content-Length': Buffer.byteLength(text),
						},
						timeout: 30_000,
					},
					(res) => {
						res.resume();
						res.on('end', () =>
							resolve({ status: res.statusCode ?? 0, sentAtMs, ms: Date.now() - sentAtMs }),
						);
					},
				);
				req.on('timeout', () => req.destroy(new Error('timed out')));
				req.on('error', () => resolve({ status: 0, sentAtMs, ms: Date.now() - sentAtMs }));
				req.end(text);
			});
		},
		close: () => agent.destroy(),
	};
}

interface Step {
	rate: number;
	medianMs: number;
	/** Requests not answered 2xx, or events not emitted. */
	failed: number;
	count: number;
	cpuPerRequestMs: number;
	/** n8n's Webhook node: request to execution start, median. */
	startMedianMs?: number;
	executions?: number;
}

/** Starts of the n8n Webhook workflow's executions, by the request's `n` in the body. */
function webhookStarts(n8n: RunningN8n, workflowId: string): Map<number, number> {
	const starts = new Map<number, number>();
	const database = join(n8n.userFolder, '.n8n', 'database.sqlite');
	const out = execFileSync(
		'sqlite3',
		[
			'-json',
			'-cmd',
			'.timeout 10000',
			database,
			`select coalesce(e.startedAt, e.createdAt) as startedAt, d.data as data from execution_entity e join execution_data d on d.executionId = e.id where e.workflowId = '${workflowId}'`,
		],
		{ encoding: 'utf8', maxBuffer: 1 << 30 },
	).trim();
	for (const row of out ? (JSON.parse(out) as Array<{ startedAt: string; data: string }>) : []) {
		const items = e2e.N8nInstance.nodeOutput(n8n.unflatten(row.data), 'Webhook') ?? [];
		for (const item of items)
			if (typeof item.json?.body?.n === 'number')
				starts.set(item.json.body.n, Date.parse(`${row.startedAt.replace(' ', 'T')}Z`));
	}
	return starts;
}

let sequence = 0;

/** n8n's Webhook node at `rate` requests a second for STEP_SECONDS. */
async function n8nWebhookStep(
	n8n: RunningN8n,
	url: string,
	workflowId: string,
	rate: number,
): Promise<Step> {
	const client = poster();
	const count = rate * STEP_SECONDS;
	const answers: Array<Promise<{ status: number; sentAtMs: number; ms: number }>> = [];
	const numbers: number[] = [];
	const cpu0 = cpuMs(n8n.proc.pid);
	const start = Date.now();
	for (let i = 0; i < count; i++) {
		const at = start + (i * 1000) / rate;
		if (at > Date.now()) await sleep(at - Date.now());
		const n = ++sequence;
		numbers.push(n);
		answers.push(client.post(url, { n }));
	}
	const settled = await Promise.all(answers);
	const cpu = cpuMs(n8n.proc.pid) - cpu0;
	client.close();
	await sleep(SETTLE_MS);
	const starts = webhookStarts(n8n, workflowId);
	const toStart = numbers
		.map((n, i) => (starts.has(n) ? starts.get(n)! - settled[i].sentAtMs : NaN))
		.filter(Number.isFinite);
	return {
		rate,
		medianMs: median(settled.map((a) => a.ms)),
		failed: settled.filter((a) => a.status < 200 || a.status > 299).length,
		count,
		cpuPerRequestMs: cpu / count,
		startMedianMs: toStart.length ? median(toStart) : NaN,
		executions: toStart.length,
	};
}

/** The trigger at `rate` deliveries a second (each event created, then delivered once, by the sandbox). */
async function triggerStep(
	sb: Sandbox,
	n8n: RunningN8n,
	target: Target,
	rate: number,
): Promise<Step> {
	const subscription = await sb.control.addSubscription({
		url: productionUrl(n8n, target),
		orgId: target.orgId,
	});
	const count = rate * STEP_SECONDS;
	const ids: string[] = [];
	const cpu0 = cpuMs(n8n.proc.pid);
	const start = Date.now();
	for (let i = 0; i < count; i++) {
		const at = start + (i * 1000) / rate;
		if (at > Date.now()) await sleep(at - Date.now());
		const created = await sb.control.createEvents([{ type: 'run.completed', data: { rate, i } }], {
			orgId: target.orgId,
			returnIds: true,
		});
		ids.push(created.ids![0]);
	}
	await sb.subscriptions.settled();
	const cpu = cpuMs(n8n.proc.pid) - cpu0;
	// Until every event is emitted, or nothing new for 10 s (at most 3 minutes).
	const wanted = new Set(ids);
	const firstStart = new Map<string, number>();
	let stillSince = Date.now();
	const deadline = Date.now() + 180_000;
	while (
		firstStart.size < wanted.size &&
		Date.now() - stillSince < 10_000 &&
		Date.now() < deadline
	) {
		await sleep(500);
		const before = firstStart.size;
		for (const execution of emissions(n8n, target.workflowId, target.triggerName))
			for (const id of execution.ids)
				if (wanted.has(id) && !firstStart.has(id)) firstStart.set(id, execution.startedAtMs);
		if (firstStart.size !== before) stillSince = Date.now();
	}
	const deliveries = await sb.control.getDeliveries({ subscriptionId: subscription.id });
	await sb.control.removeSubscription(subscription.id);
	const createdAt = new Map(deliveries.map((d) => [d.eventIds[0], d.createdAtMs]));
	const latencies = ids
		.filter((id) => firstStart.has(id) && createdAt.has(id))
		.map((id) => firstStart.get(id)! - createdAt.get(id)!);
	await sleep(SETTLE_MS);
	return {
		rate,
		medianMs: latencies.length ? median(latencies) : NaN,
		failed:
			count - latencies.length + deliveries.filter((d) => d.status < 200 || d.status > 299).length,
		count,
		cpuPerRequestMs: cpu / count,
	};
}

const keeps = (step: Step | undefined) =>
	!!step && step.failed === 0 && step.medianMs <= GOAL_MEDIAN_MS;

test("the webhook trigger beside n8n's Webhook node at rising rates, in one real n8n", async () => {
	e2e.ensureInstalled('2');
	const tgz = packOnce();
	const sb: Sandbox = await startSandbox();
	let n8n = newN8n('latency', PORTS.benchWebhookLatency, {}, true);
	try {
		const targets: Target[] = [];
		const plain: Array<ReturnType<typeof n8nWebhookWorkflow>> = [];
		for (const config of CONFIGS) {
			targets.push(await makeTarget(sb, `latency ${config.key}`));
			plain.push(n8nWebhookWorkflow(config.key));
		}
		await n8nWithTargets(
			n8n,
			tgz,
			targets,
			plain.map((p) => p.workflow),
		);
		const sweeps: Array<{ webhook: Step[]; trigger: Step[] }> = [];
		for (const [index, config] of CONFIGS.entries()) {
			n8n = newN8n('latency', PORTS.benchWebhookLatency, { ...config.env });
			await n8n.start();
			const target = targets[index];
			const webhookUrl = `${n8n.baseUrl}/webhook/${plain[index].path}`;
			await waitUntilActive(productionUrl(n8n, target));
			const warmUp = poster();
			for (let tries = 0; (await warmUp.post(webhookUrl, { n: 0 })).status !== 200; tries++) {
				if (tries > 60) throw new Error("n8n's Webhook node never became active");
				await sleep(1000);
			}
			warmUp.close();
			const sweep = { webhook: [] as Step[], trigger: [] as Step[] };
			for (const rate of RATES) {
				const webhookKept = sweep.webhook.every(keeps);
				const triggerKept = sweep.trigger.every(keeps);
				if (!webhookKept && !triggerKept) break;
				if (webhookKept)
					sweep.webhook.push(await n8nWebhookStep(n8n, webhookUrl, plain[index].workflow.id, rate));
				if (triggerKept) sweep.trigger.push(await triggerStep(sb, n8n, target, rate));
				log(
					`${config.key} ${rate}/s: n8n's Webhook ${JSON.stringify(sweep.webhook.at(-1))}; trigger ${JSON.stringify(sweep.trigger.at(-1))}`,
				);
			}
			sweeps.push(sweep);
			await n8n.stop();
		}

		const highest = (steps: Step[]) => [...steps].filter(keeps).at(-1)?.rate;
		const [lazy, byDefault] = sweeps;
		const lazyWebhookRate = highest(lazy.webhook);
		const lazyTriggerAtRate = lazy.trigger.find((step) => step.rate === lazyWebhookRate);
		const version = e2e.versionInfo('2').version;
		const topTested = (steps: Step[]) =>
			steps.length && keeps(steps.at(-1)) && steps.at(-1)!.rate === RATES.at(-1)
				? ' (the highest tested)'
				: '';
		const goals: Goal[] = [
			{
				goal: `N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true: at the highest rate at which n8n's Webhook node answers within ${GOAL_MEDIAN_MS / 1000} s median, the trigger's executions start within ${GOAL_MEDIAN_MS / 1000} s median of the events' creation (catches a trigger that holds each delivery back)`,
				figure: lazyWebhookRate
					? `${lazyWebhookRate}/s${topTested(lazy.webhook)}: ${lazyTriggerAtRate ? seconds(lazyTriggerAtRate.medianMs) : 'not reached (the trigger missed at a lower rate)'}${lazyTriggerAtRate?.failed ? `, ${lazyTriggerAtRate.failed} not emitted or not answered` : ''}`
					: "n8n's Webhook node missed at every rate",
				met: lazyWebhookRate !== undefined && keeps(lazyTriggerAtRate),
			},
		];
		const rows = (steps: Step[], kind: 'webhook' | 'trigger') =>
			steps.map((step) => [
				`${step.rate}/s`,
				kind === 'webhook' ? "n8n's Webhook node" : 'Document Workflow Webhook Trigger',
				kind === 'webhook'
					? `${step.medianMs} ms (answer)`
					: `${seconds(step.medianMs)} (creation → execution start)`,
				kind === 'webhook' ? `${seconds(step.startMedianMs ?? NaN)}` : '',
				`${step.failed} of ${step.count}`,
				`${round(step.cpuPerRequestMs, 1)} ms`,
			]);
		writeSuiteResults({
			suite: 'webhook-latency',
			title: "Webhook trigger beside n8n's own Webhook node, at rising rates",
			sections: [
				{
					heading: 'Median latency at each rate, in one n8n',
					text: `n8n ${version} (regular mode, one process, SQLite) with the packed package installed; two workflows active in it: a copy of the example \`webhook-trigger.json\` (the trigger, node version ${targets[0].typeVersion}, → No Operation) and n8n's own Webhook node (version 2, POST, Respond: Immediately, no other node). At each rate, for ${STEP_SECONDS} s: first the benchmark posts that many requests a second to n8n's Webhook node (keep-alive, at most 50 connections, as the sandbox delivers); then the sandbox creates that many events a second in the trigger's organization and delivers each once, at once, to its Production URL. The rate rises until both have missed (median over ${GOAL_MEDIAN_MS / 1000} s, or a request not answered 2xx / an event not emitted); each stops at its first miss. n8n's Webhook node: median time to its answer, and from the request to the start of its execution (n8n's \`startedAt\`). The trigger: from each event's creation in the sandbox to the start of the execution that emitted it. CPU: n8n's main process, from the step's first request to its last answer, per request (n8n's own background work included, which weighs most at the lowest rates). Run once with \`N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true\`, then n8n restarted with its defaults.`,
				},
				...CONFIGS.map((config, index) => ({
					heading: config.label,
					text: `Highest rate with a median within ${GOAL_MEDIAN_MS / 1000} s: n8n's Webhook node ${highest(sweeps[index].webhook) ?? 'none'}/s${topTested(sweeps[index].webhook)}, the trigger ${highest(sweeps[index].trigger) ?? 'none'}/s${topTested(sweeps[index].trigger)}.`,
					table: {
						columns: [
							'rate',
							'node',
							'median',
							"n8n's Webhook: request → execution start",
							'failed',
							'CPU per request',
						],
						rows: RATES.flatMap((rate) => [
							...rows(
								sweeps[index].webhook.filter((s) => s.rate === rate),
								'webhook',
							),
							...rows(
								sweeps[index].trigger.filter((s) => s.rate === rate),
								'trigger',
							),
						]),
					},
				})),
				{
					heading: 'How long this suite took',
					text: `${seconds(Date.now() - began)} (build, pack, n8n starts and imports included).`,
				},
			],
			goals,
		});
		log(
			`byDefault: webhook ${highest(byDefault.webhook)}/s, trigger ${highest(byDefault.trigger)}/s`,
		);
		expect(goals.filter((goal) => !goal.met)).toEqual([]);
	} finally {
		await n8n.stop();
		await sb.stop();
	}
});
