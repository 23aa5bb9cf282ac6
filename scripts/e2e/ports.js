'use strict';
/**
 * Every n8n editor port this repository's tests, benchmarks and `npm run dev` use, in one table,
 * so that processes running at the same time (the e2e files run side by side) never share one.
 * E2E_PORT_OFFSET moves them all (each checkout its own offset). Everything else an n8n needs (its
 * task broker, Redis, PostgreSQL, the sandbox, a worker's health port) takes a free port.
 */
const PORTS = {
	dev: 5678, // npm run dev (--port= moves it; its sandbox and other servers take free ports)
	e2eN8n2: 5690, // test/e2e/01-n8n2
	e2eTriggerDurableDefault: 5691, // test/e2e/04-trigger-durable, default mode
	e2eN8n1: 5692, // test/e2e/02-n8n1
	e2eRenameDefault: 5693, // test/e2e/06-trigger-rename, default mode
	e2eBrowser: 5694, // test/e2e/03-browser
	e2eTriggerDurable: 5695, // test/e2e/04-trigger-durable, durable cursors
	e2eAgent: 5696, // test/e2e/05-agent
	e2eRenameDurable: 5699, // test/e2e/06-trigger-rename, durable cursors
	e2eWebhookRestartN8n2: 5685, // test/e2e/07-webhook-restart, n8n 2
	e2eWebhookRestartN8n1: 5686, // test/e2e/07-webhook-restart, n8n 1
	queueMain: 5700, // test/e2e-queue (E2E_QUEUE_PORT moves it)
	queueWebhook1: 5701, // test/e2e-queue, the first `n8n webhook` process (the exactly-once example)
	queueWebhook2: 5702, // test/e2e-queue, the second
	// The benchmarks (npm run bench runs them one after another; they write these numbers themselves).
	benchN8nBaseline: 5697, // scripts/bench/n8n-baseline.js
	benchN8nExecutions: 5698, // scripts/bench/n8n-executions.js, bench/webhook.bench.ts
	benchQueue: 5710, // scripts/e2e/queue-bench.js
	benchQueueLimited: 5730, // scripts/bench/queue-limited.js (npm run bench:queue)
	benchN8nBacklog: 5740, // scripts/bench/n8n-backlog.js (npm run bench:backlog)
	benchWebhookSafety: 5681, // bench/webhook-safety.bench.ts
	benchWebhookLatency: 5682, // bench/webhook-latency.bench.ts
	benchWebhookQueueMain: 5720, // bench/webhook-queue.bench.ts, the main
	benchWebhookQueueWebhook1: 5721, // bench/webhook-queue.bench.ts, the first `n8n webhook` process
	benchWebhookQueueWebhook2: 5722, // bench/webhook-queue.bench.ts, the second
};

/** n8n's task broker listens on 5679 unless told otherwise: no instance may take it. */
const N8N_BROKER_DEFAULT_PORT = 5679;

/** The port a process really listens on: the table's, moved by E2E_PORT_OFFSET. */
const withPortOffset = (port) => port + Number(process.env.E2E_PORT_OFFSET || 0);

module.exports = { PORTS, N8N_BROKER_DEFAULT_PORT, withPortOffset };
