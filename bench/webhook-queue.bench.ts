/**
 * The webhook trigger in n8n's queue mode with two webhook processes (`n8n webhook`) behind one
 * URL (issue 33, item 5): Redis and PostgreSQL as scripts/e2e/queue.js starts them, a main (not
 * serving production webhooks) and one worker; a small proxy here sends each delivery's two
 * copies one to each webhook process. Events lost (goal 0) and started twice, with the copies
 * arriving together and up to 3 s apart. Writes `.bench-results/webhook-queue.json`. Alone:
 * `BENCH_SUITES=webhook-queue npx jest -c bench/jest.bench.config.js` (needs redis-server and
 * PostgreSQL, as scripts/e2e/ci-queue.sh installs them).
 */
import { createServer, request } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { startSandbox } from '../sandbox/src';
import type { Sandbox } from '../sandbox/src';
import type { Goal } from './results';
import { median, writeSuiteResults } from './results';
import { e2e, makeTarget, packOnce, readsBy, seconds, sleep, timesEmitted } from './webhook-n8n';
import type { Emission, Target } from './webhook-n8n';

// The queue-mode launcher of the end-to-end suites (plain CommonJS).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const queue = require('../scripts/e2e/queue');

const EVENTS = Number(process.env.BENCH_QUEUE_WEBHOOK_EVENTS ?? 100);
const SPAN_MS = 10_000;
const VARIANTS = [
	{ key: 'together', label: 'the two copies sent at once', maxDelayMs: 0 },
	{ key: 'apart', label: 'each copy held back a random 0–3 s', maxDelayMs: 3000 },
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

/** An `n8n webhook` process with the package installed in its own user folder, ready once /healthz answers. */
async function startWebhookProcess(
	name: string,
	env: Record<string, string>,
	port: number,
	tgz: string,
) {
	const inst = new e2e.N8nInstance({
		userFolder: join(e2e.CACHE, 'hookbench-queue', name),
		port,
		env,
		fresh: true,
		encryptionKey: queue.ENCRYPTION_KEY,
	});
	e2e.installPackageInto(inst.userFolder, tgz);
	await inst.ensureBrokerPort();
	const proc = queue.spawnOwned(name, inst.info.nodeBin, [inst.info.n8nBin, 'webhook'], {
		env: inst.env(),
		cwd: inst.userFolder,
		logFile: join(inst.userFolder, 'webhook.log'),
	});
	await queue.waitUntil(async () => (await fetch(`${inst.baseUrl}/healthz`)).status === 200, {
		timeoutMs: 180_000,
		intervalMs: 500,
		what: `${name} /healthz`,
		proc,
	});
	log(`${name} ready on ${inst.baseUrl} (pid ${proc.pid})`);
	return { name, baseUrl: inst.baseUrl as string, proc, stop: () => queue.stopProc(proc) };
}

/**
 * One URL in front of the webhook processes: the first copy of a body goes to the next process in
 * turn, each later copy of the same body to the other one, so every delivery reaches both.
 */
async function startProxy(backends: string[]) {
	const seen = new Map<string, number>();
	const counts = backends.map(() => 0);
	let turn = 0;
	const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const body = Buffer.concat(chunks);
			const key = body.toString('utf8');
			const last = seen.get(key);
			const index = last === undefined ? turn++ % backends.length : (last + 1) % backends.length;
			seen.set(key, index);
			counts[index]++;
			const forward = request(
				`${backends[index]}${req.url}`,
				{ method: req.method, headers: { ...req.headers, host: new URL(backends[index]).host } },
				(answer) => {
					res.writeHead(answer.statusCode ?? 502, answer.headers);
					answer.pipe(res);
				},
			);
			forward.on('error', () => {
				res.writeHead(502);
				res.end();
			});
			forward.end(body);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		counts,
		close: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}

interface Outcome {
	variant: (typeof VARIANTS)[number];
	lost: number;
	twice: number;
	executions: number;
	deliveries: number;
	notAccepted: number;
	reads: number;
	medianMs: number;
	perProcess: number[];
}

test('the webhook trigger in queue mode with two webhook processes, every delivery reaching both', async () => {
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
	const webhooks: Array<Awaited<ReturnType<typeof startWebhookProcess>>> = [];
	let proxy: Awaited<ReturnType<typeof startProxy>> | undefined;
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
			webhooks.push(await startWebhookProcess(`webhook${n + 1}`, cluster.env, port, tgz));
		proxy = await startProxy(webhooks.map((w) => w.baseUrl));
		const url = `${proxy.url}/webhook/${target.webhookId}/webhook`;
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
		log(`cluster up: main, worker, ${webhooks.length} webhook processes behind ${proxy.url}`);

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
			const subscription = await sb.control.addSubscription({
				url,
				orgId: target.orgId,
				repeats: 1,
				maxDelayMs: variant.maxDelayMs,
				seed: 7,
			});
			const perProcessBefore = [...proxy.counts];
			const readsBefore = (await readsBy(sb, target.apiKey)).length;
			const ids: string[] = [];
			const start = Date.now();
			for (let n = 0; n < EVENTS; n++) {
				const at = start + (n * SPAN_MS) / EVENTS;
				if (at > Date.now()) await sleep(at - Date.now());
				ids.push(
					(
						await sb.control.createEvents([{ type: 'run.completed', data: { n } }], {
							orgId: target.orgId,
							returnIds: true,
						})
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
				list = await emitted();
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
			const deliveries = await sb.control.getDeliveries({ subscriptionId: subscription.id });
			await sb.control.removeSubscription(subscription.id);
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
				perProcess: proxy.counts.map((count, i) => count - perProcessBefore[i]),
			};
			log(`${variant.key}: ${JSON.stringify({ ...outcome, variant: undefined })}`);
			outcomes.push(outcome);
		}

		const version = e2e.versionInfo('2').version;
		const goals: Goal[] = outcomes.map((outcome) => ({
			goal: `queue mode, two webhook processes each receiving every delivery (${outcome.variant.label}): 0 events lost (catches a trigger whose state in one process hides events from the other)`,
			figure: `${outcome.lost} of ${EVENTS} lost; ${outcome.twice} started twice (reported, no goal)`,
			met: outcome.lost === 0,
		}));
		writeSuiteResults({
			suite: 'webhook-queue',
			title: 'Webhook trigger in queue mode with two webhook processes',
			sections: [
				{
					heading: 'Every delivery at both webhook processes',
					text: `n8n ${version} in queue mode on this machine (scripts/e2e/queue.js): Redis, PostgreSQL, a main (\`N8N_DISABLE_PRODUCTION_MAIN_PROCESS=true\`), one worker and two \`n8n webhook\` processes, each with the packed package in its own user folder, all with \`N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true\`. A copy of the example \`webhook-trigger.json\` is active; the sandbox's subscription points at a small proxy in the benchmark that sends the first copy of each delivery to the next webhook process in turn and the second copy to the other, so each process receives every delivery once. ${EVENTS} events created over ${SPAN_MS / 1000} s, each delivered twice; once with both copies sent at once, once with each copy held back a random 0–3 s. Lost: events no execution emitted. Started twice: events emitted by more than one execution. Latency: from an event's creation to the start of the first execution that emitted it (n8n's \`startedAt\`, on the worker). Reads: the trigger key's \`GET /events\`, both processes together.`,
					table: {
						columns: ['figure', ...outcomes.map((o) => o.variant.label)],
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
		if (proxy) await proxy.close();
		for (const w of webhooks) await w.stop();
		await cluster.stopAll();
		await sb.stop();
		await queue.stopEverything();
	}
});
