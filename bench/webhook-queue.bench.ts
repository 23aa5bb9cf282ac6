/**
 * The webhook trigger in n8n's queue mode with two webhook processes (`n8n webhook`) behind one
 * URL (issues 33, item 5, and 43, item 6): Redis and PostgreSQL as scripts/e2e/queue.js starts
 * them, a main (not serving production webhooks) and one worker; a small proxy
 * (scripts/e2e/webhook-processes.js) in front of the two webhook processes. Two routings: every
 * delivery at both processes (the service sends each delivery twice, one copy to each; the copies
 * together, or up to 3 s apart), and a load balancer's (each delivery to one process in turn, the
 * service repeating one delivery in twenty, the repeat at once or up to 3 s later). Events lost
 * (goal 0) and started twice. Writes `.bench-results/webhook-queue.json`. Alone:
 * `BENCH_SUITES=webhook-queue npx jest -c bench/jest.bench.config.js` (needs redis-server and
 * PostgreSQL, as scripts/e2e/ci-queue.sh installs them).
 */
import { join } from 'node:path';

import { startSandbox } from '../sandbox/src';
import type { Sandbox } from '../sandbox/src';
import type { Goal } from './results';
import { median, writeSuiteResults } from './results';
import { e2e, makeTarget, packOnce, readsBy, seconds, sleep, timesEmitted } from './webhook-n8n';
import type { Emission, Target } from './webhook-n8n';

// The queue-mode launcher of the end-to-end suites and its webhook processes (plain CommonJS).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const queue = require('../scripts/e2e/queue');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startDeliveryProxy, startWebhookProcess } = require('../scripts/e2e/webhook-processes');

const EVENTS = Number(process.env.BENCH_QUEUE_WEBHOOK_EVENTS ?? 100);
const SPAN_MS = 10_000;
/** Load-balanced rows: the service repeats one delivery in this many (those of every n-th event). */
const REPEAT_ONE_IN = 20;

interface Variant {
	key: string;
	label: string;
	/** `both`: each delivery sent twice, one copy to each process; `round-robin`: each request to the next process. */
	routing: 'both' | 'round-robin';
	maxDelayMs: number;
}

const VARIANTS: Variant[] = [
	{ key: 'together', label: 'the two copies sent at once', routing: 'both', maxDelayMs: 0 },
	{ key: 'apart', label: 'each copy held back a random 0–3 s', routing: 'both', maxDelayMs: 3000 },
	{
		key: 'balanced',
		label: `each delivery to one process in turn, one in ${REPEAT_ONE_IN} repeated at once`,
		routing: 'round-robin',
		maxDelayMs: 0,
	},
	{
		key: 'balanced-later',
		label: `each delivery to one process in turn, one in ${REPEAT_ONE_IN} repeated 0–3 s later`,
		routing: 'round-robin',
		maxDelayMs: 3000,
	},
];
// Its own ports: scripts/e2e/queue-bench.js takes 5710.
const { PORTS: TABLE } = require('../scripts/e2e/ports');
const PORTS = {
	main: TABLE.benchWebhookQueueMain,
	webhooks: [TABLE.benchWebhookQueueWebhook1, TABLE.benchWebhookQueueWebhook2],
};

const began = Date.now();
const log = (text: string) =>
	process.stderr.write(`[webhook-queue ${seconds(Date.now() - began)}] ${text}\n`);

interface WebhookProcess {
	name: string;
	baseUrl: string;
	stop: () => Promise<unknown>;
}

interface Proxy {
	url: string;
	counts: number[];
	close: () => Promise<void>;
}

interface Outcome {
	variant: Variant;
	lost: number;
	twice: number;
	executions: number;
	deliveries: number;
	notAccepted: number;
	reads: number;
	medianMs: number;
	perProcess: number[];
}

test('the webhook trigger in queue mode with two webhook processes: every delivery at both, and one at a time behind a load balancer', async () => {
	e2e.ensureInstalled('2');
	const tgz = packOnce();
	const sb: Sandbox = await startSandbox();
	const cluster = new queue.QueueCluster({
		tgz,
		mainPort: PORTS.main,
		workers: 1,
		dir: join(e2e.CACHE, 'hookbench-queue'),
		env: { N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: 'true' },
	});
	const webhooks: WebhookProcess[] = [];
	try {
		const target: Target = await makeTarget(sb, 'queue two webhook processes');
		await cluster.startServices();
		const main = cluster.main;
		// The main serves the editor and the REST API; production webhooks go to the webhook processes.
		main.extraEnv = { ...main.extraEnv, N8N_DISABLE_PRODUCTION_MAIN_PROCESS: 'true' };
		await main.importCredentials([target.credential]);
		await main.importWorkflows([target.workflow]);
		await main.activateWorkflow(target.workflowId);
		await cluster.startMain();
		await cluster.startWorkers();
		for (const [n, port] of PORTS.webhooks.entries())
			webhooks.push(
				await startWebhookProcess({
					name: `webhook${n + 1}`,
					dir: join(e2e.CACHE, 'hookbench-queue'),
					env: cluster.env,
					port,
					tgz,
				}),
			);
		for (const w of webhooks) {
			const direct = `${w.baseUrl}/webhook/${target.webhookId}/webhook`;
			await queue.waitUntil(
				async () =>
					(
						await fetch(direct, {
							method: 'POST',
							headers: { 'content-type': 'application/json' },
							body: '{"id":"warm-up"}',
						})
					).status === 400,
				{ timeoutMs: 90_000, intervalMs: 1000, what: `the trigger on ${w.name}` },
			);
		}
		log(`cluster up: main, worker, ${webhooks.length} webhook processes`);

		const emitted = async (): Promise<Emission[]> => {
			const list: Emission[] = [];
			for (const summary of await main.listExecutions(target.workflowId)) {
				const full = await main.getExecution(summary.id);
				const items: Array<{ json: { id: unknown } }> =
					e2e.N8nInstance.nodeOutput({ data: full.data }, target.triggerName) ?? [];
				list.push({
					id: String(summary.id),
					startedAtMs: Date.parse(full.startedAt ?? full.createdAt),
					ids: items.map((item) => String(item.json.id)),
				});
			}
			return list;
		};

		const outcomes: Outcome[] = [];
		for (const variant of VARIANTS) {
			const proxy: Proxy = await startDeliveryProxy(
				webhooks.map((w) => w.baseUrl),
				{ mode: variant.routing },
			);
			const url = `${proxy.url}/webhook/${target.webhookId}/webhook`;
			const balanced = variant.routing === 'round-robin';
			// Every delivery twice (one copy to each process), or, behind the load balancer, every
			// delivery once and those of every twentieth event (its only run.failed) a second time, by
			// a second subscription of the same URL: the repeat goes round robin like any request.
			const subscriptions = balanced
				? [
						await sb.control.addSubscription({ url, orgId: target.orgId, seed: 7 }),
						await sb.control.addSubscription({
							url,
							orgId: target.orgId,
							eventTypes: ['run.failed'],
							maxDelayMs: variant.maxDelayMs,
							seed: 7,
						}),
					]
				: [
						await sb.control.addSubscription({
							url,
							orgId: target.orgId,
							repeats: 1,
							maxDelayMs: variant.maxDelayMs,
							seed: 7,
						}),
					];
			const readsBefore = (await readsBy(sb, target.apiKey)).length;
			const before = new Set((await emitted()).map((execution) => execution.id));
			const ids: string[] = [];
			const start = Date.now();
			for (let n = 0; n < EVENTS; n++) {
				const at = start + (n * SPAN_MS) / EVENTS;
				if (at > Date.now()) await sleep(at - Date.now());
				const repeated = balanced && n % REPEAT_ONE_IN === REPEAT_ONE_IN - 1;
				ids.push(
					(
						await sb.control.createEvents(
							[{ type: repeated ? 'run.failed' : 'run.completed', data: { n } }],
							{ orgId: target.orgId, returnIds: true },
						)
					).ids![0],
				);
			}
			await sb.subscriptions.settled();
			// Until every event is emitted and 10 s more passed, or nothing new for 20 s (at most 3 minutes).
			let list: Emission[] = [];
			let lastCount = -1;
			let stillSince = Date.now();
			const deadline = Date.now() + 180_000;
			for (;;) {
				await sleep(2000);
				list = (await emitted()).filter((execution) => !before.has(execution.id));
				const counts = timesEmitted(list);
				const found = ids.filter((id) => counts.has(id)).length;
				if (found !== lastCount) {
					lastCount = found;
					stillSince = Date.now();
				}
				const quietFor = Date.now() - stillSince;
				if (
					(found === ids.length && quietFor >= 10_000) ||
					quietFor >= 20_000 ||
					Date.now() > deadline
				)
					break;
			}
			const counts = timesEmitted(list);
			const deliveries = [];
			for (const subscription of subscriptions) {
				deliveries.push(...(await sb.control.getDeliveries({ subscriptionId: subscription.id })));
				await sb.control.removeSubscription(subscription.id);
			}
			await proxy.close();
			const createdAt = new Map(deliveries.map((d) => [d.eventIds[0], d.createdAtMs]));
			const firstStart = new Map<string, number>();
			for (const execution of [...list].sort((a, b) => a.startedAtMs - b.startedAtMs))
				for (const id of execution.ids)
					if (!firstStart.has(id)) firstStart.set(id, execution.startedAtMs);
			const latencies = ids
				.filter((id) => firstStart.has(id) && createdAt.has(id))
				.map((id) => firstStart.get(id)! - createdAt.get(id)!);
			const outcome: Outcome = {
				variant,
				lost: ids.filter((id) => !counts.has(id)).length,
				twice: ids.filter((id) => (counts.get(id) ?? 0) > 1).length,
				executions: list.filter((execution) => execution.ids.some((id) => ids.includes(id))).length,
				deliveries: deliveries.length,
				notAccepted: deliveries.filter((d) => d.status !== 202).length,
				reads: (await readsBy(sb, target.apiKey)).length - readsBefore,
				medianMs: latencies.length ? median(latencies) : NaN,
				perProcess: proxy.counts,
			};
			log(`${variant.key}: ${JSON.stringify({ ...outcome, variant: undefined })}`);
			outcomes.push(outcome);
		}

		const version = e2e.versionInfo('2').version;
		const everyToBoth = outcomes.find((o) => o.variant.key === 'together')!;
		const goals: Goal[] = outcomes.map((outcome) =>
			outcome.variant.routing === 'both'
				? {
						goal: `queue mode, two webhook processes each receiving every delivery (${outcome.variant.label}): 0 events lost (catches a trigger whose state in one process hides events from the other)`,
						figure: `${outcome.lost} of ${EVENTS} lost; ${outcome.twice} started twice (reported, no goal)`,
						met: outcome.lost === 0,
					}
				: {
						goal: `queue mode, two webhook processes behind a load balancer (${outcome.variant.label}): 0 events lost (catches a trigger that counts on seeing every delivery, or on the process that saw the last one)`,
						figure: `${outcome.lost} of ${EVENTS} lost; ${outcome.twice} started twice (reported, no goal; every delivery at both, sent at once: ${everyToBoth.twice})`,
						met: outcome.lost === 0,
					},
		);
		writeSuiteResults({
			suite: 'webhook-queue',
			title: 'Webhook trigger in queue mode with two webhook processes',
			sections: [
				{
					heading:
						'Every delivery at both webhook processes, and one at a time behind a load balancer',
					text: `n8n ${version} in queue mode on this machine (scripts/e2e/queue.js): Redis, PostgreSQL, a main (\`N8N_DISABLE_PRODUCTION_MAIN_PROCESS=true\`), one worker and two \`n8n webhook\` processes, each with the packed package in its own user folder, all with \`N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true\`. A copy of the example \`webhook-trigger.json\` is active; the sandbox's subscriptions point at a small proxy (scripts/e2e/webhook-processes.js) in front of the two webhook processes. ${EVENTS} events created over ${SPAN_MS / 1000} s in each column. **Every delivery at both**: the subscription delivers each event twice, and the proxy sends the first copy to the next webhook process in turn and the second to the other, so each process receives every delivery once; once with both copies sent at once, once with each copy held back a random 0–3 s. **Behind a load balancer**: the proxy sends each request to the next webhook process in turn, whatever it holds, and the service repeats one delivery in ${REPEAT_ONE_IN}: every ${REPEAT_ONE_IN}th event is a \`run.failed\` (the others \`run.completed\`, both selected by the trigger), which a second subscription of the same URL delivers again, at once or held back a random 0–3 s; the repeat goes round robin too, so it usually reaches the other process. Lost: events no execution emitted. Started twice: events emitted by more than one execution. Latency: from an event's creation to the start of the first execution that emitted it (n8n's \`startedAt\`, on the worker). Reads: the trigger key's \`GET /events\`, both processes together.`,
					table: {
						columns: [
							'figure',
							...outcomes.map(
								(o) =>
									`${o.variant.routing === 'both' ? 'every delivery at both: ' : 'load balancer: '}${o.variant.label}`,
							),
						],
						rows: [
							['events lost', ...outcomes.map((o) => `${o.lost} of ${EVENTS}`)],
							['events started twice', ...outcomes.map((o) => `${o.twice} of ${EVENTS}`)],
							['executions with these events', ...outcomes.map((o) => String(o.executions))],
							[
								'deliveries / not answered 202',
								...outcomes.map((o) => `${o.deliveries} / ${o.notAccepted}`),
							],
							[
								'deliveries at webhook process 1 / 2',
								...outcomes.map((o) => o.perProcess.join(' / ')),
							],
							['API reads (GET /events)', ...outcomes.map((o) => String(o.reads))],
							[
								'creation → first execution start, median',
								...outcomes.map((o) => seconds(o.medianMs)),
							],
						],
					},
				},
				{
					heading: 'How long this suite took',
					text: `${seconds(Date.now() - began)} (build, pack, Redis, PostgreSQL, every n8n process's start and imports included).`,
				},
			],
			goals,
		});
		expect(goals.filter((goal) => !goal.met)).toEqual([]);
	} finally {
		for (const w of webhooks) await w.stop();
		await cluster.stopAll();
		await sb.stop();
		await queue.stopEverything();
	}
});
