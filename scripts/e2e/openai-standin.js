'use strict';
/**
 * A small local stand-in of the OpenAI API, for the agent end-to-end test (test/e2e/05-agent)
 * and `npm run dev`: n8n's OpenAI Chat Model node talks to it through its credential's Base URL,
 * so an AI Agent can run in a real n8n without a real model.
 *
 * The "model" follows a script: it answers the first request with the script's first tool call,
 * the next request (which carries that call's result) with the second, and so on; once every
 * scripted call has a result, it answers with a final text built from the results it received.
 * It works out where it is from the conversation in each request (the number of tool results in
 * it), so it keeps no state between requests and serves any number of executions.
 *
 * It speaks both APIs n8n's OpenAI Chat Model node may use: Chat Completions
 * (`POST /chat/completions`, versions up to 1.2 and 1.3 with "Use Responses API" off) and the
 * Responses API (`POST /responses`, the default of version 1.3), each with and without
 * streaming (`stream: true`, server-sent events). `GET /models` lists one model, for the editor.
 *
 * Everything it receives is recorded (`requests`), with the tools offered and the tool results
 * parsed out of the conversation, so a test can check what the model was given.
 */
const http = require('node:http');
const crypto = require('node:crypto');

const MODEL_ID = 'standin-model';
const OPENAI_CREDENTIAL_ID = 'dwOpenAiStandin1';
const OPENAI_CREDENTIAL_NAME = 'OpenAI (stand-in)';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/**
 * The calls the model makes with the tools of examples/agent-tools.json (n8n names a node's tool
 * after the node, spaces as `_`): the run whose ID the question names, the pending review tasks,
 * the failed runs' events.
 */
const AGENT_EXAMPLE_CALLS = [
	{
		tool: 'Get_run',
		args: ({ prompt }) => ({ runId: (prompt.match(UUID) || ['no run ID in the question'])[0] }),
	},
	{ tool: 'Find_review_tasks', args: { status: 'pending' } },
	{ tool: 'Find_events', args: { type: 'run.failed' } },
];

/**
 * @typedef {{ tool: string, args: object | ((conversation: { prompt: string, toolResults: ToolResult[] }) => object) }} ScriptedCall
 *   a tool call: the tool's name as the model sees it (n8n: the node name, spaces as `_`) and its
 *   arguments, or a function of the conversation (the user's question and the results so far)
 * @typedef {{ callId: string, name: string, args: object, output: string, raw: unknown }} ToolResult
 * @param {object} options
 * @param {ScriptedCall[]} options.calls the tool calls, in order
 * @param {(results: ToolResult[]) => string} [options.finalAnswer] the last answer, from the tool results received (default: each call and what it returned)
 * @param {string} [options.apiKey] the key the credential must send as `Authorization: Bearer <key>`
 */
async function startOpenAiStandin({
	calls,
	finalAnswer = describeToolResults,
	apiKey = `sk-standin-${crypto.randomBytes(8).toString('hex')}`,
}) {
	const requests = [];
	const server = http.createServer((req, res) => {
		handle(req, res).catch((error) => {
			if (!res.headersSent)
				sendJson(res, 500, {
					error: { message: `stand-in failed: ${error.message}`, type: 'server_error' },
				});
			else res.end();
		});
	});

	async function handle(req, res) {
		const url = new URL(req.url, 'http://localhost');
		const body = await readBody(req);
		if (req.headers.authorization !== `Bearer ${apiKey}`) {
			sendJson(res, 401, {
				error: {
					message: 'Incorrect API key provided (stand-in).',
					type: 'invalid_request_error',
					code: 'invalid_api_key',
				},
			});
			return;
		}
		if (req.method === 'GET' && /\/models$/.test(url.pathname)) {
			sendJson(res, 200, {
				object: 'list',
				data: [{ id: MODEL_ID, object: 'model', created: 1700000000, owned_by: 'stand-in' }],
			});
			return;
		}
		if (req.method !== 'POST') {
			sendJson(res, 404, {
				error: { message: `no route ${req.method} ${url.pathname}`, type: 'invalid_request_error' },
			});
			return;
		}
		const json = body ? JSON.parse(body) : {};
		const api = /\/chat\/completions$/.test(url.pathname)
			? 'chat'
			: /\/responses$/.test(url.pathname)
				? 'responses'
				: null;
		if (!api) {
			sendJson(res, 404, {
				error: { message: `no route POST ${url.pathname}`, type: 'invalid_request_error' },
			});
			return;
		}
		const conversation =
			api === 'chat' ? readChatConversation(json) : readResponsesConversation(json);
		const reply = nextReply(conversation);
		requests.push({
			api,
			path: url.pathname,
			stream: json.stream === true,
			body: json,
			rawBody: body,
			tools: conversation.tools,
			toolResults: conversation.toolResults,
			reply,
		});
		const send = {
			chat: { false: sendChat, true: streamChat },
			responses: { false: sendResponses, true: streamResponses },
		};
		send[api][String(json.stream === true)](res, json.model || MODEL_ID, reply);
	}

	/** The scripted call whose turn it is, or the final answer once every call has a result. */
	function nextReply({ toolResults, tools, prompt }) {
		const step = toolResults.length;
		if (step < calls.length) {
			const call = calls[step];
			const offered = tools.map((t) => t.name);
			if (!offered.includes(call.tool)) {
				return {
					text: `STAND-IN ERROR: the tool "${call.tool}" was not offered; offered: ${offered.join(', ') || 'none'}`,
				};
			}
			const args = typeof call.args === 'function' ? call.args({ prompt, toolResults }) : call.args;
			return {
				toolCall: {
					id: `call_${step + 1}_${crypto.randomBytes(6).toString('hex')}`,
					name: call.tool,
					args,
				},
			};
		}
		return { text: finalAnswer(toolResults) };
	}

	await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address();
	return {
		baseUrl: `http://127.0.0.1:${port}/v1`,
		apiKey,
		model: MODEL_ID,
		requests,
		/** Every tool result the model received, in order, across all requests (each once). */
		toolResults() {
			const seen = new Map();
			for (const r of requests)
				for (const t of r.toolResults) if (!seen.has(t.callId)) seen.set(t.callId, t);
			return [...seen.values()];
		},
		reset() {
			requests.length = 0;
		},
		stop: () => new Promise((resolve) => server.close(() => resolve())),
	};
}

// ---------- reading the conversation ----------

/** Chat Completions: tools are `{type:'function', function:{name, description, parameters}}`; results are `role: 'tool'` messages. */
function readChatConversation(body) {
	const tools = (body.tools || []).map((t) => ({
		name: t.function?.name,
		description: t.function?.description,
		parameters: t.function?.parameters,
	}));
	const calls = new Map();
	const toolResults = [];
	const prompt = textOf(
		[...(body.messages || [])].reverse().find((m) => m.role === 'user')?.content,
	);
	for (const m of body.messages || []) {
		if (m.role === 'assistant')
			for (const c of m.tool_calls || [])
				calls.set(c.id, { name: c.function?.name, args: parseArgs(c.function?.arguments) });
		if (m.role === 'tool') toolResults.push(toolResult(m.tool_call_id, calls, m.content));
	}
	return { tools, toolResults, prompt };
}

/** Responses API: tools are `{type:'function', name, description, parameters}`; results are `function_call_output` items. */
function readResponsesConversation(body) {
	const tools = (body.tools || [])
		.filter((t) => t.type === 'function')
		.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
	const calls = new Map();
	const toolResults = [];
	const input = Array.isArray(body.input) ? body.input : [];
	const prompt = textOf([...input].reverse().find((item) => item.role === 'user')?.content);
	for (const item of input) {
		if (item.type === 'function_call')
			calls.set(item.call_id, { name: item.name, args: parseArgs(item.arguments) });
		if (item.type === 'function_call_output')
			toolResults.push(toolResult(item.call_id, calls, item.output));
	}
	return { tools, toolResults, prompt };
}

/** A tool result: `output` as text, `raw` as it came (a string, or content parts). */
function toolResult(callId, calls, raw) {
	const call = calls.get(callId) || {};
	return { callId, name: call.name, args: call.args, output: textOf(raw), raw };
}

/** A message or output's text: a string as it is, content parts joined. */
function textOf(content) {
	if (typeof content === 'string') return content;
	if (Array.isArray(content))
		return content.map((p) => (typeof p === 'string' ? p : (p?.text ?? ''))).join('');
	return content === undefined || content === null ? '' : JSON.stringify(content);
}

function parseArgs(text) {
	try {
		return typeof text === 'string' ? JSON.parse(text) : text;
	} catch {
		return text;
	}
}

/** The default final answer: each tool call and (the start of) what it returned. */
function describeToolResults(results) {
	return results
		.map(
			(r) =>
				`${r.name} ${JSON.stringify(r.args)} returned: ${r.output.length > 400 ? `${r.output.slice(0, 400)}…` : r.output}`,
		)
		.join('\n');
}

/** A credential of type openAiApi pointing at the stand-in, as `n8n import:credentials` expects it. */
function openAiStandinCredential(
	standin,
	{ id = OPENAI_CREDENTIAL_ID, name = OPENAI_CREDENTIAL_NAME } = {},
) {
	const now = new Date().toISOString();
	return {
		id,
		name,
		type: 'openAiApi',
		data: { apiKey: standin.apiKey, url: standin.baseUrl, header: false },
		createdAt: now,
		updatedAt: now,
	};
}

// ---------- answering ----------

const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function chatMessage(reply) {
	return reply.toolCall
		? {
				role: 'assistant',
				content: null,
				tool_calls: [
					{
						id: reply.toolCall.id,
						type: 'function',
						function: { name: reply.toolCall.name, arguments: JSON.stringify(reply.toolCall.args) },
					},
				],
			}
		: { role: 'assistant', content: reply.text };
}

function sendChat(res, model, reply) {
	sendJson(res, 200, {
		id: `chatcmpl-${crypto.randomBytes(6).toString('hex')}`,
		object: 'chat.completion',
		created: Math.floor(Date.now() / 1000),
		model,
		choices: [
			{
				index: 0,
				message: chatMessage(reply),
				logprobs: null,
				finish_reason: reply.toolCall ? 'tool_calls' : 'stop',
			},
		],
		usage,
	});
}

function streamChat(res, model, reply) {
	const base = {
		id: `chatcmpl-${crypto.randomBytes(6).toString('hex')}`,
		object: 'chat.completion.chunk',
		created: Math.floor(Date.now() / 1000),
		model,
	};
	const delta = reply.toolCall
		? {
				role: 'assistant',
				content: null,
				tool_calls: [
					{
						index: 0,
						id: reply.toolCall.id,
						type: 'function',
						function: { name: reply.toolCall.name, arguments: JSON.stringify(reply.toolCall.args) },
					},
				],
			}
		: { role: 'assistant', content: reply.text };
	sse(res, [
		{ data: { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] } },
		{
			data: {
				...base,
				choices: [
					{
						index: 0,
						delta: {},
						logprobs: null,
						finish_reason: reply.toolCall ? 'tool_calls' : 'stop',
					},
				],
				usage,
			},
		},
		{ raw: '[DONE]' },
	]);
}

function responsesOutputItem(reply) {
	return reply.toolCall
		? {
				type: 'function_call',
				id: `fc_${crypto.randomBytes(6).toString('hex')}`,
				call_id: reply.toolCall.id,
				name: reply.toolCall.name,
				arguments: JSON.stringify(reply.toolCall.args),
				status: 'completed',
			}
		: {
				type: 'message',
				id: `msg_${crypto.randomBytes(6).toString('hex')}`,
				role: 'assistant',
				status: 'completed',
				content: [{ type: 'output_text', text: reply.text, annotations: [] }],
			};
}

function responsesBody(model, output, status = 'completed') {
	return {
		id: `resp_${crypto.randomBytes(6).toString('hex')}`,
		object: 'response',
		created_at: Math.floor(Date.now() / 1000),
		status,
		model,
		output,
		parallel_tool_calls: true,
		tool_choice: 'auto',
		usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
	};
}

function sendResponses(res, model, reply) {
	sendJson(res, 200, responsesBody(model, [responsesOutputItem(reply)]));
}

function streamResponses(res, model, reply) {
	const item = responsesOutputItem(reply);
	const done = responsesBody(model, [item]);
	const started = { ...done, status: 'in_progress', output: [], usage: null };
	const events = [
		{ type: 'response.created', response: started },
		{ type: 'response.in_progress', response: started },
	];
	if (item.type === 'function_call') {
		events.push(
			{
				type: 'response.output_item.added',
				output_index: 0,
				item: { ...item, arguments: '', status: 'in_progress' },
			},
			{
				type: 'response.function_call_arguments.delta',
				output_index: 0,
				item_id: item.id,
				delta: item.arguments,
			},
			{
				type: 'response.function_call_arguments.done',
				output_index: 0,
				item_id: item.id,
				arguments: item.arguments,
			},
			{ type: 'response.output_item.done', output_index: 0, item },
		);
	} else {
		const text = item.content[0].text;
		events.push(
			{
				type: 'response.output_item.added',
				output_index: 0,
				item: { ...item, content: [], status: 'in_progress' },
			},
			{
				type: 'response.content_part.added',
				output_index: 0,
				item_id: item.id,
				content_index: 0,
				part: { type: 'output_text', text: '', annotations: [] },
			},
			{
				type: 'response.output_text.delta',
				output_index: 0,
				item_id: item.id,
				content_index: 0,
				delta: text,
			},
			{
				type: 'response.output_text.done',
				output_index: 0,
				item_id: item.id,
				content_index: 0,
				text,
			},
			{
				type: 'response.content_part.done',
				output_index: 0,
				item_id: item.id,
				content_index: 0,
				part: item.content[0],
			},
			{ type: 'response.output_item.done', output_index: 0, item },
		);
	}
	events.push({ type: 'response.completed', response: done });
	sse(
		res,
		events.map((e, i) => ({ event: e.type, data: { ...e, sequence_number: i } })),
	);
}

// ---------- HTTP ----------

function sse(res, events) {
	res.writeHead(200, {
		'content-type': 'text/event-stream',
		'cache-control': 'no-cache',
		connection: 'keep-alive',
	});
	for (const e of events) {
		if (e.event) res.write(`event: ${e.event}\n`);
		res.write(`data: ${e.raw ?? JSON.stringify(e.data)}\n\n`);
	}
	res.end();
}

function sendJson(res, status, body) {
	const text = JSON.stringify(body);
	res.writeHead(status, {
		'content-type': 'application/json',
		'content-length': Buffer.byteLength(text),
	});
	res.end(text);
}

function readBody(req) {
	return new Promise((resolve, reject) => {
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
		req.on('error', reject);
	});
}

module.exports = {
	startOpenAiStandin,
	openAiStandinCredential,
	describeToolResults,
	AGENT_EXAMPLE_CALLS,
	MODEL_ID,
	OPENAI_CREDENTIAL_ID,
	OPENAI_CREDENTIAL_NAME,
};
