'use strict';
/**
 * n8n workflows for the queue-mode test and benchmark. The batch workflow starts from a
 * production webhook (in queue mode the main receives the call and a worker runs the
 * execution), makes one small PDF per requested document, submits them all with the
 * Document Workflow node (submit-and-wait) and answers the webhook with a summary.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const e2e = require('../../scripts/e2e/n8n');

const PACKAGE = 'n8n-nodes-document-workflow';

function node(name, type, typeVersion, position, parameters, extra = {}) {
	return {
		id: crypto.randomUUID(),
		name,
		type,
		typeVersion,
		position: [position, 0],
		parameters,
		...extra,
	};
}

function chain(names) {
	const connections = {};
	for (let i = 0; i < names.length - 1; i++)
		connections[names[i]] = { main: [[{ node: names[i + 1], type: 'main', index: 0 }]] };
	return connections;
}

const MAKE_FILES = `// One small PDF per requested document: body.documents = [{ reference, idempotencyKey? }].
function pdf(text) {
  return ['%PDF-1.4', '1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj', '2 0 obj <</Type/Pages/Kids[3 0 R]/Count 1>> endobj',
    '3 0 obj <</Type/Page/Parent 2 0 R/MediaBox[0 0 300 100]>> endobj', '% ' + text, 'trailer <</Root 1 0 R>>', '%%EOF'].join('\\n');
}
const docs = $json.body.documents;
return docs.map((d) => ({
  json: { reference: d.reference, idempotencyKey: d.idempotencyKey || '' },
  binary: { data: { data: Buffer.from(pdf(d.reference)).toString('base64'), mimeType: 'application/pdf', fileName: d.reference + '.pdf' } },
}));`;

const SUMMARIZE = `const runs = $input.all().map((i) => ({ reference: i.json.reference, runId: i.json.runId, documentId: i.json.documentId, status: i.json.status }));
return [{ json: { count: runs.length, runs } }];`;

/**
 * @param {object} o
 * @param {string} o.id n8n workflow id
 * @param {string} o.path webhook path
 * @param {string} o.sandboxWorkflowId the sandbox workflow documents go to
 * @param {{id: string, name: string}} o.credential
 * @param {'automatic'|'custom'} [o.keyMode] idempotency key mode (custom: the caller's GUID per document)
 * @param {number} [o.pollIntervalMs] the node's wait poll interval, when set
 */
function batchWorkflow({ id, name, path, sandboxWorkflowId, credential, keyMode = 'automatic' }) {
	const options =
		keyMode === 'custom'
			? { idempotencyKeyMode: 'custom', customIdempotencyKey: '={{ $json.idempotencyKey }}' }
			: {};
	const nodes = [
		node(
			'Webhook',
			'n8n-nodes-base.webhook',
			2,
			0,
			{ httpMethod: 'POST', path, responseMode: 'lastNode', options: {} },
			{ webhookId: crypto.randomUUID() },
		),
		node('Make files', 'n8n-nodes-base.code', 2, 220, { jsCode: MAKE_FILES }),
		node(
			'Submit and wait',
			`${PACKAGE}.documentWorkflow`,
			1,
			440,
			{
				resource: 'workflow',
				operation: 'trigger',
				workflowId: sandboxWorkflowId,
				binaryPropertyName: 'data',
				reference: '={{ $json.reference }}',
				waitForCompletion: true,
				options,
			},
			{ credentials: { documentWorkflowApi: credential } },
		),
		node('Summarize', 'n8n-nodes-base.code', 2, 660, { jsCode: SUMMARIZE }),
	];
	return {
		id,
		name: name || `Queue batch (${keyMode} keys)`,
		nodes,
		connections: chain(nodes.map((n) => n.name)),
		active: false,
		settings: {
			executionOrder: 'v1',
			saveExecutionProgress: true,
			saveDataSuccessExecution: 'all',
			saveDataErrorExecution: 'all',
		},
		pinData: {},
	};
}

/** The trigger on the main: every selected event into a NoOp (items are read back from the executions). */
function triggerWorkflow({ id, credential, events }) {
	const nodes = [
		node(
			'Document Workflow Trigger',
			`${PACKAGE}.documentWorkflowTrigger`,
			1,
			0,
			{ pollTimes: { item: [{ mode: 'everyMinute' }] }, events },
			{ credentials: { documentWorkflowApi: credential } },
		),
		node('Handle event', 'n8n-nodes-base.noOp', 1, 240, {}),
	];
	return {
		id,
		name: 'Queue trigger',
		nodes,
		connections: chain(nodes.map((n) => n.name)),
		active: false,
		settings: { executionOrder: 'v1' },
		pinData: {},
	};
}

const EXACTLY_ONCE = path.join(e2e.ROOT, 'examples', 'queue-mode', 'webhook-exactly-once.json');

/**
 * The example examples/queue-mode/webhook-exactly-once.json as a user imports it, with the
 * credentials its sticky note asks for: the Document Workflow one on the trigger, a Postgres one on
 * both Postgres nodes. Nothing else changes.
 */
function exactlyOnceExample({ id, credential, postgres }) {
	const workflow = e2e.wireExample(
		'webhook-exactly-once.json',
		JSON.parse(fs.readFileSync(EXACTLY_ONCE, 'utf8')),
		{ CREDENTIAL_ID: credential.id, CREDENTIAL_NAME: credential.name },
	);
	for (const node of workflow.nodes)
		if (node.type === 'n8n-nodes-base.postgres') node.credentials = { postgres };
	return { ...workflow, id, active: false };
}

module.exports = { batchWorkflow, exactlyOnceExample, triggerWorkflow };
