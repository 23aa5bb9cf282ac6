'use strict';
/**
 * The action node as a tool of n8n's AI Agent, in a real n8n 2.41.1 (which wraps every node with
 * `usableAsTool` as a `…Tool` node type, community ones included).
 *
 * The example workflow examples/agent-tools.json (Manual Trigger → Question → AI Agent with an
 * OpenAI Chat Model and three Document Workflow tools) runs against the sandbox, its model being
 * a local stand-in of the OpenAI API (scripts/e2e/openai-standin.js) that calls the tools as scripted:
 * Run → Get for a run id, Review Task → Get Many with a status, Event → Get Many with a type,
 * Review Task → Get Many with a status no task has; then it answers from the tool results it
 * received. It runs with the Agent at 3.1 (what users get today) and 2.2, on both OpenAI APIs,
 * started the ways users start workflows: `n8n execute`, and a webhook in a running n8n
 * (answering at the end, or streaming). Each time the test checks that every tool call reached the
 * sandbox with the parameters the model chose, that the model received the API's data, and that
 * the API key is in nothing the model received.
 */
const path = require('node:path');
const crypto = require('node:crypto');
const e2e = require('../../scripts/e2e/n8n');
const { PORTS } = require('../../scripts/e2e/ports');
const fixtures = require('../../scripts/e2e/fixtures');
const { lines, latestTgz, startSandbox, waitFor } = require('./helpers');
const {
	startOpenAiStandin,
	openAiStandinCredential,
	AGENT_EXAMPLE_CALLS,
	OPENAI_CREDENTIAL_ID,
} = require('../../scripts/e2e/openai-standin');

/** n8n names a node's tool after the node: spaces (and anything not `[A-Za-z0-9_-]`) become `_`. */
const TOOLS = { run: 'Get_run', reviewTasks: 'Find_review_tasks', events: 'Find_events' };
const REVIEW_TASKS = 12; // more than the example's limit of 10, so the list says there is more
const FAILED_EVENTS = 2;

/**
 * Agent version × the OpenAI API the model node uses × how the workflow starts. Agent 3.1 and the
 * model node's Responses API are what users get today; Agent 2.2 refuses a Responses API model
 * ("This model is not supported in 2.2 version of the Agent node"), so it runs with Chat
 * Completions. `stream`: a webhook that streams the answer, so the agent streams from the model.
 */
const CASES = [
	{
		key: 'exec-3.1-responses',
		label: 'the example as it is: Agent 3.1, Responses API, n8n execute',
		agent: 3.1,
		api: 'responses',
		start: 'execute',
	},
	{
		key: 'exec-2.2-chat',
		label: 'Agent 2.2, Chat Completions, n8n execute',
		agent: 2.2,
		api: 'chat',
		start: 'execute',
	},
	{
		key: 'hook-3.1-responses',
		label: 'Agent 3.1, Responses API, webhook',
		agent: 3.1,
		api: 'responses',
		start: 'webhook',
	},
	{
		key: 'hook-3.1-chat',
		label: 'Agent 3.1, Chat Completions, webhook',
		agent: 3.1,
		api: 'chat',
		start: 'webhook',
	},
	{
		key: 'stream-3.1-responses',
		label: 'Agent 3.1, Responses API, streaming webhook',
		agent: 3.1,
		api: 'responses',
		start: 'stream',
	},
	{
		key: 'stream-3.1-chat',
		label: 'Agent 3.1, Chat Completions, streaming webhook',
		agent: 3.1,
		api: 'chat',
		start: 'stream',
	},
	{
		key: 'hook-2.2-chat',
		label: 'Agent 2.2, Chat Completions, webhook',
		agent: 2.2,
		api: 'chat',
		start: 'webhook',
	},
];

const run = lines().includes('2') ? describe : describe.skip;

run('n8n 2.41.1: the node as a tool of the AI Agent', () => {
	let sandbox;
	let standin;
	let n8n;
	let runId;
	let example;
	const workflows = {};

	beforeAll(async () => {
		sandbox = await startSandbox();
		const vars = await fixtures.createExampleWorkflows(sandbox.control);
		runId = await fixtures.finishedRun(sandbox, vars.SANDBOX_WORKFLOW_ID);
		await pendingReviewTasks(sandbox, REVIEW_TASKS);
		await sandbox.control.createEvents(
			Array.from({ length: FAILED_EVENTS }, (_, i) => ({
				type: 'run.failed',
				data: {
					runId: crypto.randomUUID(),
					error: { code: 'extraction_failed', message: `no text on page ${i + 1}` },
				},
			})),
		);

		standin = await startOpenAiStandin({
			// The example's calls (the run named in the question, pending tasks, failed runs), then a list with no match.
			calls: [...AGENT_EXAMPLE_CALLS, { tool: TOOLS.reviewTasks, args: { status: 'rejected' } }],
			finalAnswer,
		});

		n8n = new e2e.N8nInstance({
			major: '2',
			userFolder: path.join(e2e.CACHE, 'test-agent-n8n2'),
			port: PORTS.e2eAgent,
			fresh: true,
		});
		e2e.installPackageInto(n8n.userFolder, latestTgz());
		await n8n.importCredentials([
			e2e.documentWorkflowCredential({
				id: fixtures.CREDENTIAL_ID,
				name: fixtures.CREDENTIAL_NAME,
				baseUrl: sandbox.baseUrl,
				apiKey: sandbox.apiKey,
			}),
			openAiStandinCredential(standin),
		]);
		// Wired as npm run dev wires it: its question names the run the sandbox holds.
		const loaded = e2e
			.loadExamples({ ...vars, OPENAI_CREDENTIAL_ID, AGENT_RUN_ID: runId })
			.find((x) => x.file === 'agent-tools.json');
		example = loaded.workflow;
		expect(
			example.nodes.find((n) => n.name === 'Question').parameters.assignments.assignments[0].value,
		).toContain(runId);
		// The first case runs the example as it is (its Agent, model settings and Manual Trigger).
		for (const c of CASES) workflows[c.key] = c === CASES[0] ? example : variant(example, c);
		await n8n.importWorkflows(Object.values(workflows));
		for (const c of CASES)
			if (c.start !== 'execute') await n8n.activateWorkflow(workflows[c.key].id);
		await n8n.start();
		await n8n.setupOwner();
		// The webhook cases call production webhooks, which n8n registers after it starts answering.
		await n8n.waitForActivation();
	});

	afterAll(async () => {
		if (n8n) await n8n.stop();
		if (standin) await standin.stop();
		if (sandbox) await sandbox.stop();
	});

	test('n8n offers the node as a tool node type, and the example imported with its tools', async () => {
		const types = await n8n.loadedTypes();
		expect(types.nodes).toContain(`${e2e.NODE_TYPES[0]}Tool`);
		const stored = await n8n.rest('GET', `/rest/workflows/${example.id}`);
		const toolNodes = stored.nodes
			.filter((n) => n.type === `${e2e.NODE_TYPES[0]}Tool`)
			.map((n) => n.name);
		expect(toolNodes.sort()).toEqual(['Find events', 'Find review tasks', 'Get run']);
		expect(n8n.packageLoadErrors()).toEqual([]);
	});

	test.each(CASES)(
		'$label: the tools reach the API with the model’s parameters and the model receives the API’s data',
		async (c) => {
			const wf = workflows[c.key];
			expect(wf.nodes.find((n) => n.name === 'AI Agent').typeVersion).toBe(c.agent);
			standin.reset();
			const seq = await lastSeq(sandbox);
			const answer = await ANSWER[c.start](n8n, wf);

			// The model was reached the way this case means (API, streaming or not).
			expect(standin.requests.map((r) => `${r.api}${r.stream ? ' streamed' : ''}`)).toEqual(
				Array(5).fill(`${c.api}${c.start === 'stream' ? ' streamed' : ''}`),
			);

			// The model was offered the three tools as the example describes them, parameters included.
			const offered = Object.fromEntries(standin.requests[0].tools.map((t) => [t.name, t]));
			expect(Object.keys(offered).sort()).toEqual(Object.values(TOOLS).sort());
			for (const node of wf.nodes.filter((n) => n.type === `${e2e.NODE_TYPES[0]}Tool`)) {
				const tool = offered[node.name.replace(/ /g, '_')];
				expect(tool.description).toBe(node.parameters.toolDescription);
				const [, key, about] = JSON.stringify(node.parameters).match(
					/\$fromAI\('(\w+)', '([^']+)'/,
				);
				expect(tool.parameters.properties[key]).toMatchObject({
					type: 'string',
					description: about,
				});
			}

			// Each tool call reached the sandbox with the parameters the model chose.
			const apiCalls = (await sandbox.control.getRequests({ origin: 'api', afterSeq: seq })).map(
				(r) => `${r.method} ${r.path}`,
			);
			expect(apiCalls).toEqual([
				`GET /runs/${runId}`,
				'GET /review-tasks?status=pending&page=1&pageSize=10',
				'GET /events?type=run.failed&page=1&pageSize=20',
				'GET /review-tasks?status=rejected&page=1&pageSize=10',
			]);

			// What the model received is the API's data.
			const results = standin.toolResults();
			expect(results.map((r) => r.name)).toEqual([
				TOOLS.run,
				TOOLS.reviewTasks,
				TOOLS.events,
				TOOLS.reviewTasks,
			]);
			// Both APIs hand a tool's result to the model as one JSON string (n8n: the items' JSON, as an array).
			for (const r of results) expect(typeof r.raw).toBe('string');
			const [runResult, tasksResult, eventsResult, noTasksResult] = results.map((r) =>
				parseToolOutput(r),
			);
			expect(runResult).toEqual([await api(sandbox, `/runs/${runId}`)]);
			const tasks = await api(sandbox, '/review-tasks?status=pending&pageSize=100');
			expect(tasksResult).toEqual([
				{
					results: tasks.data.slice(0, 10),
					returned: 10,
					total: REVIEW_TASKS,
					hasMore: true,
					note: expect.any(String),
				},
			]);
			const events = await api(sandbox, '/events?type=run.failed&pageSize=100');
			expect(eventsResult).toEqual([
				{ results: events.data, returned: FAILED_EVENTS, total: FAILED_EVENTS, hasMore: false },
			]);
			// A list with no match is still an answer (a tool that outputs no item gives the model "").
			expect(noTasksResult).toEqual([{ results: [], returned: 0, total: 0, hasMore: false }]);

			// The API key is in nothing the model received (prompts, tool definitions, tool results).
			for (const r of standin.requests) expect(r.rawBody.includes(sandbox.apiKey)).toBe(false);

			// The agent's answer is the one the model built from those results.
			expect(answer).toBe(finalAnswer(results));
		},
	);
});

// ---------- the scripted model's final answer ----------

function parseToolOutput(result) {
	try {
		return JSON.parse(result.output);
	} catch {
		throw new Error(
			`the model received a tool result that is not JSON from ${result.name}: ${JSON.stringify(result.output).slice(0, 300)}`,
		);
	}
}

/** What the scripted model answers, from the four tool results it received. */
function finalAnswer(results) {
	const [runOut, tasksOut, eventsOut, noTasksOut] = results.map((r) => {
		try {
			return JSON.parse(r.output);
		} catch {
			return r.output;
		}
	});
	const runJson = Array.isArray(runOut) ? runOut[0] : undefined;
	const tasks = Array.isArray(tasksOut) ? tasksOut[0] : undefined;
	const events = Array.isArray(eventsOut) ? eventsOut[0] : undefined;
	const noTasks = Array.isArray(noTasksOut) ? noTasksOut[0] : undefined;
	return [
		runJson?.status
			? `Run ${runJson.id} is ${runJson.status}.`
			: `No run data (received ${JSON.stringify(runOut)}).`,
		tasks?.results
			? `${tasks.returned} of ${tasks.total} pending review tasks listed${tasks.hasMore ? ', more exist' : ''}.`
			: `No review tasks (received ${JSON.stringify(tasksOut)}).`,
		events?.results
			? `${events.total} runs failed: ${events.results.map((e) => e.data.error.message).join('; ')}.`
			: `No events (received ${JSON.stringify(eventsOut)}).`,
		noTasks?.results
			? `${noTasks.total} tasks were rejected.`
			: `No answer about rejected tasks (received ${JSON.stringify(noTasksOut)}).`,
	].join(' ');
}

// ---------- sandbox data ----------

async function submit(sandbox, workflowId, name) {
	const form = new FormData();
	form.append(
		'file',
		new Blob([`%PDF-1.4\n% ${name}\n%%EOF\n`], { type: 'application/pdf' }),
		name,
	);
	const res = await fetch(`${sandbox.baseUrl}/workflows/${workflowId}/trigger`, {
		method: 'POST',
		headers: { 'X-Api-Key': sandbox.apiKey },
		body: form,
	});
	if (res.status !== 202) throw new Error(`trigger answered ${res.status}: ${await res.text()}`);
	return await res.json();
}

/** `count` runs waiting in review, each with a pending review task. */
async function pendingReviewTasks(sandbox, count) {
	const wf = await sandbox.control.createWorkflow({
		name: 'Needs review',
		triggerFormats: ['pdf'],
		script: [{ status: 'running', ms: 20 }, { status: 'review' }],
	});
	for (let i = 0; i < count; i++) await submit(sandbox, wf.id, `review-${i}.pdf`);
	await waitFor(
		async () => (await sandbox.control.listReviewTasks({ status: 'pending' })).length === count,
		{ what: `${count} pending review tasks`, intervalMs: 200 },
	);
}

async function api(sandbox, urlPath) {
	const res = await fetch(`${sandbox.baseUrl}${urlPath}`, {
		headers: { 'X-Api-Key': sandbox.apiKey },
	});
	return await res.json();
}

async function lastSeq(sandbox) {
	const all = await sandbox.control.getRequests();
	return all.length ? all[all.length - 1].seq : 0;
}

// ---------- workflows ----------

/** The example with the case's Agent version, model API and start (a copy with its own ids). */
function variant(wf, c) {
	const copy = JSON.parse(JSON.stringify(wf));
	copy.id = e2e.n8nId();
	copy.name = `${wf.name} (${c.label})`;
	for (const n of copy.nodes) n.id = crypto.randomUUID();
	copy.nodes.find((n) => n.name === 'AI Agent').typeVersion = c.agent;
	copy.nodes.find((n) => n.name === 'OpenAI Chat Model').parameters.responsesApiEnabled =
		c.api === 'responses';
	if (c.start !== 'execute')
		startByWebhook(copy, c.key, c.start === 'stream' ? 'streaming' : 'lastNode');
	return copy;
}

/** Replaces the Manual Trigger by a webhook (POST /webhook/<path>) that answers with the agent's output. */
function startByWebhook(wf, webhookPath, responseMode) {
	const manual = wf.nodes.find((n) => n.type === 'n8n-nodes-base.manualTrigger');
	const webhook = {
		id: crypto.randomUUID(),
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2.1,
		position: manual.position,
		webhookId: crypto.randomUUID(),
		parameters: { httpMethod: 'POST', path: webhookPath, responseMode, options: {} },
	};
	wf.nodes = wf.nodes.map((n) => (n === manual ? webhook : n));
	wf.connections.Webhook = wf.connections[manual.name];
	delete wf.connections[manual.name];
	wf.webhookPath = webhookPath;
}

async function executeAndGetAnswer(n8n, wf) {
	const res = await n8n.execute(wf.id);
	if (!res.ok)
		throw new Error(`n8n execute failed:\n${res.stdout.slice(-3000)}\n${res.stderr.slice(-3000)}`);
	const [item] = e2e.N8nInstance.nodeOutput(res.run, 'AI Agent') || [];
	return item?.json?.output;
}

async function callWebhook(n8n, wf) {
	const res = await fetch(`${n8n.baseUrl}/webhook/${wf.webhookPath}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: '{}',
	});
	const text = await res.text();
	if (res.status !== 200) throw new Error(`webhook answered ${res.status}: ${text.slice(0, 2000)}`);
	return text;
}

/** The agent's answer, however the case starts the workflow. */
const ANSWER = {
	execute: executeAndGetAnswer,
	webhook: async (n8n, wf) => JSON.parse(await callWebhook(n8n, wf)).output,
	// A streaming webhook answers with one JSON chunk a line; the agent's text comes in `item` chunks.
	stream: async (n8n, wf) =>
		(await callWebhook(n8n, wf))
			.split('\n')
			.filter((line) => line.trim())
			.map((line) => JSON.parse(line))
			.filter((chunk) => chunk.type === 'item' && chunk.metadata?.nodeName === 'AI Agent')
			.map((chunk) => chunk.content)
			.join(''),
};
