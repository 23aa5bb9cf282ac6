'use strict';
/**
 * Renaming the trigger of an active workflow in a real n8n 2.41.1, with durable poll cursors
 * off (the default) and on, both at once (two n8n processes, two sandboxes; about four
 * minutes). The rename goes through n8n's REST API as the editor does it: PATCH the workflow
 * with the renamed node (and its connections), then publish the saved version
 * (`POST /rest/workflows/:id/activate` with its `versionId`). Events come before, around and
 * after the rename; each must be emitted exactly once (issue 19, path 1).
 */
const path = require('node:path');
const e2e = require('../../scripts/e2e/n8n');
const { PORTS } = require('../../scripts/e2e/ports');
const { lines, latestTgz, startSandbox, waitFor, waitUntilSettled } = require('./helpers');

const DURABLE_ENV = {
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
	N8N_SCHEDULER_ENABLED: 'true',
	N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
	N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'true',
};
const MODES = [
	{ name: 'default', port: PORTS.e2eRenameDefault, env: {} },
	{ name: 'durable', port: PORTS.e2eRenameDurable, env: DURABLE_ENV },
];
const MINUTE = 60_000;
const OLD_NAME = 'Document Workflow Trigger';
const NEW_NAME = 'Documents Arrived';

const run = lines().includes('2') ? describe : describe.skip;

async function scenario(mode) {
	const sandbox = await startSandbox();
	const c = sandbox.control;
	const n8n = new e2e.N8nInstance({
		major: '2',
		userFolder: path.join(e2e.CACHE, `test-trigger-rename-${mode.name}`),
		port: mode.port,
		fresh: true,
		env: mode.env,
	});
	const report = { mode: mode.name };
	try {
		e2e.installPackageInto(n8n.userFolder, latestTgz());
		// Imported and published before n8n's first start (as 05-agent and 07 do), so that start
		// activates the trigger: one n8n start instead of a start and a restart. Every event is created
		// after the activation poll is over, as before.
		await n8n.importCredentials([
			e2e.documentWorkflowCredential({
				id: 'dwRenameCred0001',
				name: 'Document Workflow API',
				baseUrl: sandbox.baseUrl,
				apiKey: sandbox.apiKey,
			}),
		]);
		const workflow = {
			id: `rename${mode.name === 'durable' ? 'Durable' : 'Default'}0001`,
			name: `Trigger rename e2e (${mode.name})`,
			active: false,
			settings: { executionOrder: 'v1' },
			connections: {},
			nodes: [
				{
					id: '5d0c2a3e-7f41-4a8e-9c1d-6b2e4f8a1c02',
					name: OLD_NAME,
					type: e2e.NODE_TYPES[1],
					typeVersion: 1,
					position: [0, 0],
					parameters: { pollTimes: { item: [{ mode: 'everyMinute' }] }, events: [] },
					credentials: {
						documentWorkflowApi: { id: 'dwRenameCred0001', name: 'Document Workflow API' },
					},
				},
			],
		};
		await n8n.importWorkflows([workflow]);
		await n8n.activateWorkflow(workflow.id);

		const lastSeq = async () => {
			const requests = await c.getRequests({ pathPrefix: '/events' });
			return requests.length ? requests[requests.length - 1].seq : 0;
		};
		const emittedIds = async () => {
			const ids = [];
			for (const execution of await n8n.listExecutions(workflow.id)) {
				const full = await n8n.getExecution(execution.id);
				const items =
					e2e.N8nInstance.nodeOutput({ data: full.data }, OLD_NAME) ||
					e2e.N8nInstance.nodeOutput({ data: full.data }, NEW_NAME);
				ids.push(...(items || []).map((item) => item.json.id));
			}
			return ids;
		};
		const batch = async (label, n) =>
			(
				await c.createEvents(
					Array.from({ length: n }, (_, i) => ({
						type: 'run.completed',
						data: { batch: label, i },
					})),
					{ returnIds: true },
				)
			).ids;
		const emitted = async (ids, what) => {
			await waitFor(
				async () => {
					const seen = new Set(await emittedIds());
					return ids.every((id) => seen.has(id));
				},
				{ what: `${what} (${mode.name})`, timeoutMs: 3 * MINUTE, intervalMs: 2000 },
			);
		};

		// Activation at n8n's first start, then two batches emitted by scheduled polls under the old name.
		let seq = await lastSeq();
		await n8n.start();
		await n8n.setupOwner();
		await waitFor(async () => (await lastSeq()) > seq, {
			what: `the activation poll (${mode.name})`,
			timeoutMs: 2 * MINUTE,
			intervalMs: 200,
		});
		// The activation poll is over, however slow n8n is.
		await waitUntilSettled(n8n, c, { workflowId: workflow.id, quietMs: 2000 });
		report.first = await batch('first', 5);
		await emitted(report.first, 'the first batch');
		report.second = await batch('second', 5);
		await emitted(report.second, 'the second batch');

		// The rename, as the editor saves and publishes it; events just before it, which no poll under
		// the old name may have read: the poll that emitted the second batch is over (its reads done),
		// so the next scheduled one is most of a minute away; that none came is checked below.
		await waitUntilSettled(n8n, c, { workflowId: workflow.id, quietMs: 1000 });
		const seqBeforeRename = await lastSeq();
		report.beforeRename = await batch('before-rename', 3);
		const current = await n8n.rest('GET', `workflows/${workflow.id}`);
		const nodes = current.nodes.map((node) =>
			node.name === OLD_NAME ? { ...node, name: NEW_NAME } : node,
		);
		const saved = await n8n.rest('PATCH', `workflows/${workflow.id}`, {
			name: current.name,
			nodes,
			connections: current.connections,
			settings: current.settings,
			versionId: current.versionId,
		});
		// Reads between the events' creation and the publish: a poll under the old name read them.
		report.readBeforePublish = (
			await c.getRequests({ pathPrefix: '/events', afterSeq: seqBeforeRename })
		).length;
		const published = await n8n.rest('POST', `workflows/${workflow.id}/activate`, {
			versionId: saved.versionId,
		});
		report.publishedActive = Boolean(published.active ?? published.activeVersionId);
		report.renamedAt = Date.now();
		await emitted(report.beforeRename, 'the events from just before the rename');
		report.afterRename = await batch('after-rename', 4);
		await emitted(report.afterRename, 'the events after the rename');
		// Two more scheduled polls: anything emitted again shows up too.
		for (let i = 0; i < 2; i++) {
			seq = await lastSeq();
			await waitFor(async () => (await lastSeq()) > seq, {
				what: `a scheduled poll after the rename (${mode.name})`,
				timeoutMs: 2 * MINUTE,
				intervalMs: 1000,
			});
			// That poll is over and what it started is saved, however slow n8n is.
			await waitUntilSettled(n8n, c, { workflowId: workflow.id, quietMs: 3000 });
		}
		report.final = await emittedIds();
		report.nodeNames = (await n8n.rest('GET', `workflows/${workflow.id}`)).nodes.map(
			(node) => node.name,
		);
		report.loadErrors = n8n.packageLoadErrors();
		e2e.log(
			`trigger rename e2e (${mode.name}): ${report.final.length} events emitted in all, renamed at ${new Date(report.renamedAt).toISOString()}`,
		);
		return report;
	} finally {
		await n8n.stop();
		await sandbox.stop();
	}
}

run(
	'n8n 2.41.1: renaming the trigger of an active workflow, durable poll cursors off and on',
	() => {
		const reports = {};

		beforeAll(async () => {
			const results = await Promise.all(MODES.map((mode) => scenario(mode)));
			for (const result of results) reports[result.mode] = result;
		}, 15 * MINUTE);

		describe.each(MODES.map((mode) => mode.name))('%s mode', (name) => {
			test('the rename was saved and published', () => {
				// The events just before the rename were still unread when it was published (else the
				// rename would have met no unread event and the test would not test it).
				expect(reports[name].readBeforePublish).toBe(0);
				expect(reports[name].nodeNames).toEqual([NEW_NAME]);
				expect(reports[name].publishedActive).toBe(true);
				expect(reports[name].loadErrors).toEqual([]);
			});

			test('every event before, around and after the rename emitted exactly once', () => {
				const report = reports[name];
				const counts = new Map();
				for (const id of report.final) counts.set(id, (counts.get(id) || 0) + 1);
				const expected = [
					...report.first,
					...report.second,
					...report.beforeRename,
					...report.afterRename,
				];
				const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
				const lost = expected.filter((id) => !counts.has(id));
				e2e.log(
					`trigger rename e2e (${name}): ${twice.length} emitted more than once, ${lost.length} of ${expected.length} never emitted`,
				);
				expect(twice).toEqual([]);
				expect(lost).toEqual([]);
				expect([...counts.keys()].filter((id) => !expected.includes(id))).toEqual([]);
			});
		});
	},
);
