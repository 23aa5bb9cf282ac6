'use strict';
/**
 * Sandbox workflows the example workflows run against, shared by scripts/dev.js and the e2e
 * tests, and the values that wire examples/*.json to the sandbox (wireExample in n8n.js).
 */
const http = require('node:http');

/** The JSON a run of the "JSON output" workflow captures. */
const JSON_OUTPUT = {
	invoiceNumber: 'INV-001',
	supplier: { name: 'Example Supplies Ltd', vatId: 'GB123456789' },
	total: 42.5,
	currency: 'EUR',
	lines: [
		{ description: 'Paper, A4', quantity: 10, amount: 30 },
		{ description: 'Toner', quantity: 1, amount: 12.5 },
	],
};

/** The file a run of the "file output" workflow captures (a tiny PDF; bytes checked exactly). */
const BINARY_OUTPUT_FILENAME = 'summary.pdf';
const BINARY_OUTPUT_CONTENT_TYPE = 'application/pdf';
const BINARY_OUTPUT_BYTES = Buffer.from(
	'%PDF-1.4\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n2 0 obj <</Type/Pages/Kids[3 0 R]/Count 1>> endobj\n' +
		'3 0 obj <</Type/Page/Parent 2 0 R/MediaBox[0 0 300 100]>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n' +
		'\u0000\u0001\u0002\u00ff binary tail',
	'latin1',
);

const CREDENTIAL_ID = 'dwSandboxCred001';
const CREDENTIAL_NAME = 'Document Workflow API (sandbox)';

/**
 * Creates the sandbox workflows the examples use; returns the values that wire them
 * (`SANDBOX_WORKFLOW_ID`, `SANDBOX_BINARY_WORKFLOW_ID`, `CREDENTIAL_ID`, `CREDENTIAL_NAME`).
 * @param {{ createWorkflow(input: object): Promise<{id: string}> }} control sandbox control client
 */
async function createExampleWorkflows(control, { credentialId = CREDENTIAL_ID } = {}) {
	const steps = [
		{ status: 'queued', ms: 100 },
		{ status: 'running', ms: 400 },
		{ status: 'completed' },
	];
	const json = await control.createWorkflow({
		name: 'Invoice extraction (JSON output)',
		triggerFormats: ['pdf', 'csv', 'png', 'jpeg'],
		script: steps,
		outputs: [
			{
				nodeId: 'output',
				kind: 'json',
				contentType: 'application/json',
				filename: 'invoice.json',
				value: JSON_OUTPUT,
			},
		],
	});
	const binary = await control.createWorkflow({
		name: 'Summary PDF (file output)',
		triggerFormats: ['pdf'],
		script: steps,
		outputs: [
			{
				nodeId: 'summary',
				kind: 'binary',
				contentType: BINARY_OUTPUT_CONTENT_TYPE,
				filename: BINARY_OUTPUT_FILENAME,
				base64: BINARY_OUTPUT_BYTES.toString('base64'),
			},
		],
	});
	return {
		SANDBOX_WORKFLOW_ID: json.id,
		SANDBOX_BINARY_WORKFLOW_ID: binary.id,
		CREDENTIAL_ID: credentialId,
		CREDENTIAL_NAME,
	};
}

/**
 * A completed run of a sandbox workflow, submitted over the public API (so the sandbox also
 * records its events): the run the agent example's question names in `npm run dev` and the tests.
 * @param {{ baseUrl: string, apiKey: string, control: { getRun(id: string): Promise<{status: string}> } }} sandbox
 * @returns {Promise<string>} the run's id
 */
async function finishedRun(
	sandbox,
	workflowId,
	{ fileName = 'agent-invoice.pdf', timeoutMs = 60000 } = {},
) {
	const form = new FormData();
	form.append(
		'file',
		new Blob([`%PDF-1.4\n% ${fileName}\n%%EOF\n`], { type: 'application/pdf' }),
		fileName,
	);
	const res = await fetch(`${sandbox.baseUrl}/workflows/${workflowId}/trigger`, {
		method: 'POST',
		headers: { 'X-Api-Key': sandbox.apiKey },
		body: form,
	});
	if (res.status !== 202) throw new Error(`trigger answered ${res.status}: ${await res.text()}`);
	const { runId } = await res.json();
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const run = await sandbox.control.getRun(runId).catch(() => null);
		if (run?.status === 'completed') return runId;
		if (Date.now() > deadline)
			throw new Error(
				`run ${runId} did not complete within ${timeoutMs} ms (status ${run?.status})`,
			);
		await new Promise((r) => setTimeout(r, 200));
	}
}

/** The file the README's first workflow fetches with its HTTP Request node (npm run dev, the browser test). */
const SAMPLE_FILE_NAME = 'invoice-001.pdf';
const SAMPLE_FILE_BYTES = Buffer.from(
	[
		'%PDF-1.4',
		'1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj',
		'2 0 obj <</Type/Pages/Kids[3 0 R]/Count 1>> endobj',
		'3 0 obj <</Type/Page/Parent 2 0 R/MediaBox[0 0 300 100]/Contents 4 0 R>> endobj',
		'4 0 obj <</Length 35>> stream\nBT /F1 12 Tf 20 50 Td (Invoice 001) Tj ET\nendstream endobj',
		'trailer <</Root 1 0 R>>',
		'%%EOF',
	].join('\n'),
);

/**
 * A local web server with one file, SAMPLE_FILE_NAME (a PDF): "the address of a file" for the
 * README's first workflow where no real one is at hand. Resolves with `{ url, stop() }`.
 */
async function startSampleFileServer({ host = '127.0.0.1' } = {}) {
	const server = http.createServer((req, res) => {
		if (req.method === 'GET' && req.url === `/${SAMPLE_FILE_NAME}`) {
			res.writeHead(200, {
				'Content-Type': 'application/pdf',
				'Content-Length': SAMPLE_FILE_BYTES.length,
				'Content-Disposition': `inline; filename="${SAMPLE_FILE_NAME}"`,
			});
			res.end(SAMPLE_FILE_BYTES);
		} else {
			res.writeHead(404, { 'Content-Type': 'text/plain' });
			res.end(`only /${SAMPLE_FILE_NAME} here`);
		}
	});
	await new Promise((resolve) => server.listen(0, host, resolve));
	return {
		url: `http://${host}:${server.address().port}/${SAMPLE_FILE_NAME}`,
		stop: () => new Promise((resolve) => server.close(() => resolve())),
	};
}

module.exports = {
	JSON_OUTPUT,
	BINARY_OUTPUT_FILENAME,
	BINARY_OUTPUT_CONTENT_TYPE,
	BINARY_OUTPUT_BYTES,
	CREDENTIAL_ID,
	CREDENTIAL_NAME,
	createExampleWorkflows,
	finishedRun,
	SAMPLE_FILE_NAME,
	SAMPLE_FILE_BYTES,
	startSampleFileServer,
};
