#!/usr/bin/env node
'use strict';
/**
 * `npm run dev`: a real n8n with this package installed, wired to the local sandbox.
 *
 *   1. checks the Node running it (package.json "engines") and that the editor's port is free;
 *   2. installs the pinned n8n 2.x (Node 24; scripts/e2e/n8n-versions.json) into the user-level
 *      cache if it is not there (several minutes, once per machine, with its progress);
 *   3. starts the sandbox (compiled cli, on free ports), creates the example workflows in it and
 *      one completed run (the run the AI agent example's question names);
 *   4. builds, packs and installs this package into the dev user folder .e2e/dev/;
 *   5. starts n8n, creates the owner, imports a credential pointing at the sandbox and the
 *      example workflows (examples/*.json), wired to it: the sandbox workflow in each empty
 *      Workflow ID, the credentials on their nodes (wireExample in scripts/e2e/n8n.js);
 *   6. serves a sample PDF for the README's first workflow (its HTTP Request node's URL);
 *   7. prints the editor URL and login; Ctrl-C stops n8n and the sandbox.
 *
 * Options: --port=5678 (the editor's; E2E_PORT_OFFSET moves it too)  --n8n=2|1 (n8n line; 1 = the
 * pinned 1.x on Node 22)  --fresh (empty the dev user folder first)  --no-build (pack the current
 * dist/ as it is). Everything it writes is under .e2e/ (E2E_CACHE moves it), made when missing.
 * Re-running keeps your own workflows; the example workflows and the sandbox credential are
 * re-imported (same ids), so edits to the examples themselves are overwritten.
 */
// First, before any other module loads: a Node too old for the rest says so, and nothing else.
const nodeProblem = require('./node-version').unsupportedNodeMessage();
if (nodeProblem) {
	console.error(`npm run dev cannot start.\n${nodeProblem}`);
	process.exit(1);
}

const path = require('node:path');
const fs = require('node:fs');
const crypto = require('node:crypto');
const { spawnSync } = require('node:child_process');
const n8n = require('./e2e/n8n');
const { ensureInstallTimed } = require('./e2e/n8n-install');
const { PORTS, withPortOffset } = require('./e2e/ports');
const { startSandboxProcess } = require('./e2e/sandbox');
const fixtures = require('./e2e/fixtures');
const openAi = require('./e2e/openai-standin');

/** A failure the message explains in full (what happened, what to do): printed without a stack. */
class DevError extends Error {}

function parseArgs(argv) {
	const opts = { port: PORTS.dev, major: '2', fresh: false, build: true };
	for (const a of argv) {
		if (a.startsWith('--port=')) {
			opts.port = Number(a.slice(7));
			if (!Number.isInteger(opts.port) || opts.port < 1 || opts.port > 65535)
				throw new DevError(`--port=${a.slice(7)} is not a port number (1 to 65535)`);
		} else if (a.startsWith('--n8n=')) opts.major = a.slice(6);
		else if (a === '--fresh') opts.fresh = true;
		else if (a === '--no-build') opts.build = false;
		else if (a === '--help' || a === '-h') {
			console.log(fs.readFileSync(__filename, 'utf8').split('*/')[0]);
			process.exit(0);
		} else throw new DevError(`unknown option ${a}; the options: npm run dev -- --help`);
	}
	return opts;
}

const OWNER = {
	email: 'dev@example.com',
	firstName: 'Dev',
	lastName: 'User',
	password: 'DevPassw0rd',
};

async function main() {
	const opts = parseArgs(process.argv.slice(2));
	const devDir = path.join(n8n.CACHE, opts.major === '2' ? 'dev' : `dev-n8n${opts.major}`);
	let sandbox = null;
	let instance = null;
	let model = null;
	let sampleFile = null;
	let stopping = false;

	async function shutdown(code) {
		if (stopping) return;
		stopping = true;
		if (!instance && !sandbox && !model && !sampleFile) process.exit(code);
		console.log('\nStopping n8n and the sandbox...');
		const results = await Promise.allSettled([
			instance?.stop(),
			sandbox?.stop(),
			model?.stop(),
			sampleFile?.stop(),
		]);
		const failed = results.filter((r) => r.status === 'rejected');
		for (const { reason } of failed) console.error(`Could not stop: ${reason?.stack || reason}`);
		// The line scripts/dev-check.js reads: npm hides dev's exit code after a Ctrl-C.
		console.log(failed.length ? 'Stopped, with the errors above.' : 'Stopped.');
		process.exit(failed.length ? 1 : code);
	}
	process.on('SIGINT', () => shutdown(0));
	process.on('SIGTERM', () => shutdown(0));

	try {
		// The one fixed port (the sandbox and the other local servers take free ones): checked before
		// the install, which can take minutes.
		const editorPort = withPortOffset(opts.port);
		if (!(await n8n.portIsFree(editorPort))) throw new DevError(portTakenMessage(editorPort));

		// The n8n install can take minutes the first time: before anything else runs. The installer
		// prints its progress, and why it failed (e.g. no network): its message is the user's.
		try {
			ensureInstallTimed(opts.major);
		} catch (err) {
			throw new DevError(err.message);
		}

		console.log('Starting the sandbox...');
		sandbox = await startSandboxProcess({
			logFile: path.join(n8n.CACHE, 'dev-sandbox.log'),
			env: { SANDBOX_PORT: '0', SANDBOX_FILES_PORT: '0', SANDBOX_CONTROL_PORT: '0' },
		});
		sandbox.exited.then((e) => {
			if (!stopping) {
				console.error(`The sandbox exited unexpectedly (${JSON.stringify(e)}).`);
				shutdown(1);
			}
		});
		const vars = await fixtures.createExampleWorkflows(sandbox.control);
		// A run the sandbox holds, for the agent example's question (its Get run tool reads it).
		vars.AGENT_RUN_ID = await fixtures.finishedRun(
			{ ...sandbox.info, control: sandbox.control },
			vars.SANDBOX_WORKFLOW_ID,
		);
		// The AI agent example's model: a local stand-in that calls the example's tools as scripted.
		model = await openAi.startOpenAiStandin({ calls: openAi.AGENT_EXAMPLE_CALLS });
		vars.OPENAI_CREDENTIAL_ID = openAi.OPENAI_CREDENTIAL_ID;
		vars.OPENAI_CREDENTIAL_NAME = openAi.OPENAI_CREDENTIAL_NAME;
		// The file the README's first workflow fetches with HTTP Request.
		sampleFile = await fixtures.startSampleFileServer();

		const tgz = n8n.buildAndPack({ build: opts.build });
		instance = new n8n.N8nInstance({
			major: opts.major,
			userFolder: devDir,
			port: opts.port,
			fresh: opts.fresh,
			logFile: path.join(devDir, 'n8n.log'),
		});
		n8n.installPackageInto(devDir, tgz);
		await instance.start();
		instance.exited.then((e) => {
			if (!stopping) {
				console.error(`n8n exited unexpectedly (${JSON.stringify(e)}); see ${instance.logFile}`);
				shutdown(1);
			}
		});
		await instance.setupOwner(OWNER);

		const errors = instance.packageLoadErrors();
		if (errors.length)
			console.warn(`n8n reported problems loading the package:\n  ${errors.join('\n  ')}`);

		await instance.importCredentials([
			n8n.documentWorkflowCredential({
				id: fixtures.CREDENTIAL_ID,
				name: fixtures.CREDENTIAL_NAME,
				baseUrl: sandbox.info.baseUrl,
				apiKey: sandbox.info.apiKey,
			}),
			openAi.openAiStandinCredential(model),
		]);
		// Stable ids per example file, so a re-run updates the examples instead of duplicating them.
		const examples = n8n.loadExamples(vars).map(({ file, workflow }) => {
			workflow.id = 'dwEx' + crypto.createHash('sha1').update(file).digest('hex').slice(0, 12);
			return workflow;
		});
		await instance.importWorkflows(examples);
		// The webhook trigger example: the sandbox delivers its events to the example's Production URL
		// (what a user sets up by hand in the service); deliveries start it once it is activated.
		const webhookUrls = [];
		for (const workflow of examples) {
			for (const node of workflow.nodes.filter((n) => n.type === n8n.NODE_TYPES[2])) {
				const url = `${instance.baseUrl}/webhook/${node.webhookId}/webhook`;
				await sandbox.control.addSubscription({ url, eventTypes: node.parameters.events || [] });
				webhookUrls.push(url);
			}
		}

		console.log(`
────────────────────────────────────────────────────────────
 n8n ${instance.info.version} with n8n-nodes-document-workflow is running.

   Editor:    ${instance.editorUrl}
   Email:     ${OWNER.email}
   Password:  ${OWNER.password}

   Sandbox API:   ${sandbox.info.baseUrl}
   Sandbox key:   ${sandbox.info.apiKey}
   Control API:   ${sandbox.info.controlUrl}
   Credential:    "${fixtures.CREDENTIAL_NAME}" (already set up)
   AI model:      "${openAi.OPENAI_CREDENTIAL_NAME}", a scripted stand-in at ${model.baseUrl}
   Examples:      ${examples.map((w) => w.name.replace(/^Document Workflow: /, '')).join('; ')}
   Sandbox workflows: JSON output ${vars.SANDBOX_WORKFLOW_ID}, file output ${vars.SANDBOX_BINARY_WORKFLOW_ID}
   A file to submit (the README's first workflow): ${sampleFile.url}
   Subscriptions: the sandbox delivers events to ${webhookUrls.join(', ') || 'nothing'} (activate the webhook example to receive them)

   n8n log:  ${path.relative(process.cwd(), instance.logFile)}
   Press Ctrl-C to stop everything.
────────────────────────────────────────────────────────────`);
	} catch (err) {
		console.error(`\n${failureText(err)}`);
		await shutdown(1);
	}
}

/** What holds a port, as `ss` tells it (e.g. `"node",pid=123`), or '' where ss cannot say. */
function portHolder(port) {
	const r = spawnSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' });
	const users = /users:\(\((.*?)\)\)/.exec(r.stdout || '');
	return users ? users[1] : '';
}

function portTakenMessage(port) {
	const holder = portHolder(port);
	return [
		`port ${port}, where n8n's editor would listen, is already in use${holder ? ` (by ${holder})` : ''}.`,
		'Another npm run dev or n8n may still be running: stop it (Ctrl-C in its terminal), or start',
		`on another port: npm run dev -- --port=<port>${process.env.E2E_PORT_OFFSET ? ` (E2E_PORT_OFFSET=${process.env.E2E_PORT_OFFSET} is added to it)` : ''}.`,
	].join('\n');
}

const failureText = (err) =>
	`npm run dev failed: ${err instanceof DevError ? err.message : err.stack || err}`;

main().catch((err) => {
	console.error(failureText(err));
	process.exit(1);
});
