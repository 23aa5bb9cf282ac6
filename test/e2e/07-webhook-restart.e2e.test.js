'use strict';
/**
 * The webhook trigger across a restart of a real n8n (issue 33), on each n8n line of E2E_N8N, each
 * in an n8n of its own (the test stops and starts it): a delivery answered 202 whose event the
 * API lists only seconds later, n8n SIGTERMed before that and started again; the next delivery
 * emits that event exactly once, and repeats of the old deliveries start nothing (about 2 minutes
 * per line).
 */
const crypto = require('node:crypto');
const path = require('node:path');
const e2e = require('../../scripts/e2e/n8n');
const { lines, latestTgz, startSandbox, waitFor } = require('./helpers');

const PORTS = { 2: 5685, 1: 5686 };
/** Long enough for n8n to stop before the event is listed (it stops in a few seconds). */
const COMMIT_DELAY_MS = 8000;

const testedLines = ['2', '1'].filter((major) => lines().includes(major));
const run = testedLines.length ? describe : describe.skip;

run.each(testedLines.length ? testedLines : ['2'])(
	'n8n line %s: the webhook trigger across a restart',
	(major) => {
		const info = e2e.versionInfo(major);
		let sandbox;
		let n8n;

		beforeAll(async () => {
			sandbox = await startSandbox();
			n8n = new e2e.N8nInstance({
				major,
				userFolder: path.join(e2e.CACHE, `test-webhook-restart-n8n${major}`),
				port: PORTS[major],
				fresh: true,
			});
			e2e.installPackageInto(n8n.userFolder, latestTgz());
			await n8n.start();
			await n8n.setupOwner();
		});

		afterAll(async () => {
			if (n8n) await n8n.stop();
			if (sandbox) await sandbox.stop();
		});

		test(`n8n ${info.version}: an event answered before a SIGTERM and listed after it is emitted once by the next delivery; repeats start nothing`, async () => {
			const c = sandbox.control;
			const org = await c.createOrg({ name: `e2e webhook restart ${info.version}` });
			const key = await c.createKey({ orgId: org.id, name: 'e2e webhook restart' });
			const credential = e2e.documentWorkflowCredential({
				name: 'Document Workflow API (webhook restart)',
				baseUrl: sandbox.baseUrl,
				apiKey: key.key,
			});
			const { workflow } = e2e
				.loadExamples({ CREDENTIAL_ID: credential.id, CREDENTIAL_NAME: credential.name })
				.find((entry) => entry.file === 'webhook-trigger.json');
			const trigger = workflow.nodes.find((node) => node.type === e2e.NODE_TYPES[2]);
			trigger.webhookId = crypto.randomUUID();
			await n8n.importCredentials([credential]);
			await n8n.importWorkflows([workflow]);
			await n8n.activateWorkflow(workflow.id);
			await n8n.restart();

			const url = `${n8n.baseUrl}/webhook/${trigger.webhookId}/webhook`;
			const post = (body) =>
				fetch(url, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify(body),
				}).then((res) => res.status);
			const waitUntilActive = () =>
				waitFor(async () => (await post({ id: 'not-an-id' }).catch(() => 0)) === 400, {
					what: 'the active webhook',
					timeoutMs: 90_000,
				});
			const emitted = async () => {
				const ids = [];
				for (const execution of await n8n.listExecutions(workflow.id)) {
					const full = await n8n.getExecution(execution.id);
					const items = e2e.N8nInstance.nodeOutput({ data: full.data }, trigger.name) || [];
					ids.push(items.map((item) => item.json.id));
				}
				return ids; // one array of ids per execution
			};
			const waitEmitted = (wanted, what) =>
				waitFor(
					async () => {
						const ids = (await emitted()).flat();
						return wanted.every((id) => ids.includes(id));
					},
					{ what, timeoutMs: 60_000, intervalMs: 1000 },
				);
			const create = async (events) =>
				(await c.createEvents(events, { orgId: org.id, returnIds: true })).ids;
			/** The body the service delivered for each event, to post it again as a repeat would be. */
			const bodies = async (ids) =>
				(await c.listEvents({ orgId: org.id }))
					.filter((event) => ids.includes(event.id))
					.map(({ id, type, createdOn, environment, data }) => ({
						id,
						type,
						createdOn,
						environment,
						data,
					}));

			await waitUntilActive();
			// Every event delivered twice, as the service may.
			await c.addSubscription({ url, orgId: org.id, repeats: 1 });
			const [before] = await create([{ type: 'run.completed', data: { before: true } }]);
			await waitEmitted([before], 'the event emitted before the restart');

			// Answered at once, listed only COMMIT_DELAY_MS later; n8n stops before that.
			const createdAt = Date.now();
			const [late] = await create([
				{ type: 'run.failed', data: { late: true }, commitDelayMs: COMMIT_DELAY_MS },
			]);
			await sandbox.subscriptions.settled();
			const lateDeliveries = (await c.getDeliveries()).filter((d) => d.eventIds.includes(late));
			expect(lateDeliveries.map((d) => d.status)).toEqual([202, 202]);
			await n8n.stop();
			const stoppedAfterMs = Date.now() - createdAt;
			expect(stoppedAfterMs).toBeLessThan(COMMIT_DELAY_MS);
			await n8n.start();
			await n8n.login();
			await waitUntilActive();

			// The next delivery reads the list: the late event comes out with it.
			const [next] = await create([{ type: 'run.completed', data: { next: true } }]);
			await waitEmitted([next, late], 'the late event after the next delivery');
			// Repeats of every delivery so far, after the restart, start nothing.
			for (const body of await bodies([before, late, next])) expect(await post(body)).toBe(202);
			await e2e.sleep(10_000);
			const executions = await emitted();
			e2e.log(
				`webhook restart (n8n ${info.version}): stopped ${stoppedAfterMs} ms after the late event's creation; executions: ${JSON.stringify(executions)}`,
			);
			expect(executions.flat().sort()).toEqual([before, late, next].sort());
			expect(executions.filter((ids) => ids.length === 0)).toEqual([]);
			expect(n8n.packageLoadErrors()).toEqual([]);
		});
	},
);
