'use strict';
/**
 * The n8n workflows the benchmarks run in a real n8n: the do-it-yourself loop users build
 * without this package (HTTP Request upload, Wait, HTTP Request status, IF back to the Wait,
 * HTTP Request for the output), started by a Manual Trigger for a batch or by a Webhook for one
 * document per execution; and the same one-document execution with this package's node
 * (Webhook → Code → Document Workflow "Submit Document", Wait for Completion, Include Output).
 * One module, so both benchmark scripts compare the same workflows.
 */
const crypto = require('node:crypto');

const PACKAGE = 'n8n-nodes-document-workflow';

const node = (name, type, typeVersion, parameters, position, extra = {}) => ({
	id: crypto.randomUUID(),
	name,
	type,
	typeVersion,
	position,
	parameters,
	...extra,
});

/** Code that makes one small PDF per document: `count` of them, or one named by the webhook's body. */
const batchFilesCode = (count) =>
	`const out = [];\nfor (let i = 0; i < ${count}; i++) {\n  const text = '%PDF-1.4\\n% document ' + i + '\\n%%EOF\\n';\n  out.push({ json: { index: i }, binary: { data: { data: Buffer.from(text).toString('base64'), mimeType: 'application/pdf', fileName: 'doc-' + i + '.pdf' } } });\n}\nreturn out;`;
const webhookFileCode = `const body = $json.body || {};\nconst text = '%PDF-1.4\\n% document ' + body.reference + '\\n%%EOF\\n';\nreturn [{ json: { ...body }, binary: { data: { data: Buffer.from(text).toString('base64'), mimeType: 'application/pdf', fileName: String(body.reference) + '.pdf' } } }];`;

const webhookNode = (path) =>
	node(
		'Webhook',
		'n8n-nodes-base.webhook',
		2,
		{ httpMethod: 'POST', path, responseMode: 'lastNode', options: {} },
		[0, 0],
		{ webhookId: crypto.randomUUID() },
	);

/**
 * The do-it-yourself loop: upload, Wait, read the run, IF final, else back to the Wait; then read
 * the output. `trigger: 'manual'` makes `documents` files in one execution (base URL, key and
 * API workflow typed in); `trigger: 'webhook'` makes one file per execution and takes the base
 * URL, key, API workflow and wait from the webhook's body (what a user types in once).
 */
function diyLoopWorkflow({
	id,
	trigger = 'manual',
	path,
	baseUrl,
	apiKey,
	workflowId,
	documents = 1,
	waitSeconds,
}) {
	const fromBody = trigger === 'webhook';
	// In the webhook form every value comes from the one item the Code node made.
	const value = (name, typed) => (fromBody ? `$('Files').first().json.${name}` : `'${typed}'`);
	const headers = {
		parameters: [{ name: 'X-Api-Key', value: fromBody ? `={{ ${value('apiKey')} }}` : apiKey }],
	};
	const first = fromBody
		? webhookNode(path)
		: node('Start', 'n8n-nodes-base.manualTrigger', 1, {}, [0, 0]);
	return {
		id,
		name: fromBody
			? `DIY: one document per execution (webhook ${path})`
			: `Upload, wait ${waitSeconds} s, read runs, loop (${documents} documents)`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			first,
			node(
				'Files',
				'n8n-nodes-base.code',
				2,
				{ jsCode: fromBody ? webhookFileCode : batchFilesCode(documents) },
				[200, 0],
			),
			node(
				'Upload',
				'n8n-nodes-base.httpRequest',
				4.2,
				{
					method: 'POST',
					url: `={{ ${value('baseUrl', baseUrl)} + '/workflows/' + ${value('workflowId', workflowId)} + '/trigger' }}`,
					sendHeaders: true,
					headerParameters: headers,
					sendBody: true,
					contentType: 'multipart-form-data',
					bodyParameters: {
						parameters: [
							{ parameterType: 'formBinaryData', name: 'file', inputDataFieldName: 'data' },
						],
					},
					options: {},
				},
				[400, 0],
			),
			node(
				'Wait',
				'n8n-nodes-base.wait',
				1.1,
				{ amount: fromBody ? `={{ ${value('waitSeconds')} }}` : waitSeconds, unit: 'seconds' },
				[600, 0],
			),
			node(
				'Read run',
				'n8n-nodes-base.httpRequest',
				4.2,
				{
					url: `={{ ${value('baseUrl', baseUrl)} + '/runs/' + ($json.runId ?? $json.id) }}`,
					sendHeaders: true,
					headerParameters: headers,
					options: {},
				},
				[800, 0],
			),
			node(
				'Final?',
				'n8n-nodes-base.if',
				2.2,
				{
					conditions: {
						options: { caseSensitive: true, leftValue: '', typeValidation: 'loose', version: 2 },
						conditions: [
							{
								id: 'final',
								leftValue: "={{ ['completed', 'failed', 'cancelled'].includes($json.status) }}",
								rightValue: true,
								operator: { type: 'boolean', operation: 'true', singleValue: true },
							},
						],
						combinator: 'and',
					},
					options: {},
				},
				[1000, 0],
			),
			node(
				'Read output',
				'n8n-nodes-base.httpRequest',
				4.2,
				{
					url: `={{ ${value('baseUrl', baseUrl)} + '/runs/' + $json.id + '/output' }}`,
					sendHeaders: true,
					headerParameters: headers,
					options: {},
				},
				[1200, -100],
			),
		],
		connections: {
			[first.name]: { main: [[{ node: 'Files', type: 'main', index: 0 }]] },
			Files: { main: [[{ node: 'Upload', type: 'main', index: 0 }]] },
			Upload: { main: [[{ node: 'Wait', type: 'main', index: 0 }]] },
			Wait: { main: [[{ node: 'Read run', type: 'main', index: 0 }]] },
			'Read run': { main: [[{ node: 'Final?', type: 'main', index: 0 }]] },
			'Final?': {
				main: [
					[{ node: 'Read output', type: 'main', index: 0 }],
					[{ node: 'Wait', type: 'main', index: 0 }],
				],
			},
		},
	};
}

/** The node's wait options in every benchmark workflow: its output read with its run. */
const WAIT_OPTIONS = { includeOutput: true };

/**
 * One document per execution with this package: Webhook → Code (the file) → Document Workflow
 * "Submit Document" with Wait for Completion and Include Output on, every other option at its
 * default. The webhook answers with the node's item once the execution ends. `reference`: the
 * document's reference (an expression; default the webhook body's). `documents`: a batch of
 * that many files in the one execution instead (a backfill).
 */
function nodeWebhookWorkflow({
	id,
	path,
	workflowId,
	credential,
	reference = '={{ $json.reference }}',
	documents,
}) {
	const nodes = [
		webhookNode(path),
		node(
			'Files',
			'n8n-nodes-base.code',
			2,
			{ jsCode: documents ? batchFilesCode(documents) : webhookFileCode },
			[200, 0],
		),
		node(
			'Submit and wait',
			`${PACKAGE}.documentWorkflow`,
			1,
			{
				resource: 'workflow',
				operation: 'trigger',
				workflowId,
				binaryPropertyName: 'data',
				reference,
				waitForCompletion: true,
				options: { ...WAIT_OPTIONS },
			},
			[400, 0],
			{ credentials: { documentWorkflowApi: credential } },
		),
	];
	return {
		id,
		name: `Document Workflow: one document per execution (webhook ${path})`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes,
		connections: {
			Webhook: { main: [[{ node: 'Files', type: 'main', index: 0 }]] },
			Files: { main: [[{ node: 'Submit and wait', type: 'main', index: 0 }]] },
		},
	};
}

module.exports = { WAIT_OPTIONS, diyLoopWorkflow, nodeWebhookWorkflow };
