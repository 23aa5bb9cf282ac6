'use strict';
/**
 * The end-to-end suite for one n8n line: a real n8n with the packed package installed in its
 * community-nodes folder, the in-process sandbox, the example workflows executed through
 * `n8n execute`, the webhook trigger active and receiving the sandbox's deliveries, and the
 * polling trigger activated and followed across scheduled polls and a
 * restart. Used by 01-n8n2.e2e.test.js and 02-n8n1.e2e.test.js.
 */
const crypto = require('node:crypto');
const path = require('node:path');
const e2e = require('../../scripts/e2e/n8n');
const fixtures = require('../../scripts/e2e/fixtures');
const {
	lines,
	latestTgz,
	startSandbox,
	waitFor,
	waitUntilSettled,
	outputOf,
} = require('./helpers');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TRIGGER_EVENTS = ['run.completed', 'run.failed', 'review.created'];
const WEBHOOK_EVENTS = ['run.completed', 'run.failed'];
const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');

function defineN8nSuite(major, { port }) {
	const info = e2e.versionInfo(major);
	const run = lines().includes(major) ? describe : describe.skip;

	run(`n8n ${info.version} (Node ${info.nodeMajor}) with the packed package`, () => {
		let sandbox;
		let n8n;
		let vars;
		const examples = {};
		/** (d)'s organization, key, credential and workflow (made by beforeAll). */
		let polling;
		/** (f)'s: the same for its workflow, and for its saved version 1 copy (`…V1`). */
		let webhook;
		/**
		 * (f)'s two workflows: published by (d) before its own, so that (d)'s restart activates them
		 * too (n8n 1.x activates only at a start); `started` once n8n has started since.
		 */
		const webhookActivation = { published: false, started: false };
		const publishWebhooks = async () => {
			for (const workflow of [webhook.workflow, webhook.workflowV1])
				await n8n.activateWorkflow(workflow.id);
			webhookActivation.published = true;
		};

		beforeAll(async () => {
			sandbox = await startSandbox();
			vars = await fixtures.createExampleWorkflows(sandbox.control);
			n8n = new e2e.N8nInstance({
				major,
				userFolder: path.join(e2e.CACHE, `test-n8n${major}`),
				port,
				fresh: true,
			});
			e2e.installPackageInto(n8n.userFolder, latestTgz());
			await n8n.start();
			await n8n.setupOwner();
			for (const { file, workflow } of e2e.loadExamples(vars))
				examples[file.replace(/\.json$/, '')] = workflow;
			// (d)'s and (f)'s organizations, keys, credentials and workflows, made here so that the import
			// test imports them with the examples, one CLI run per import for all (each n8n CLI command
			// boots a whole n8n). Nothing either test checks depends on when they were made: no event
			// exists in these organizations before the test creates it, nothing is active before it is
			// published, and (d)'s trigger is still published just before (d)'s restart, which activates
			// it as before ((f)'s webhooks too: see webhookActivation).
			polling = await triggerOrg('trigger', 'dwTriggerCred001');
			polling.workflow = withCredential(examples['trigger-on-run-events'], polling.credential);
			webhook = await triggerOrg('webhook', 'dwWebhookCred001');
			webhook.workflow = withCredential(examples['webhook-trigger'], webhook.credential);
			// The same workflow as saved before version 2 existed (typeVersion 1), in its own
			// organization, with its own Production URL.
			const v1 = await triggerOrg('webhook v1', 'dwWebhookCredV01');
			const workflowV1 = withCredential(webhook.workflow, v1.credential);
			workflowV1.id = e2e.n8nId();
			workflowV1.name = `${webhook.workflow.name} (node version 1)`;
			const triggerV1 = workflowV1.nodes.find((n) => n.type === e2e.NODE_TYPES[2]);
			triggerV1.typeVersion = 1;
			triggerV1.webhookId = crypto.randomUUID();
			Object.assign(webhook, {
				orgV1: v1.org,
				keyV1: v1.key,
				credentialV1: v1.credential,
				workflowV1,
			});
		});

		/**
		 * A separate organization, so only one test's events are visible to its trigger's key; its
		 * credential as `n8n import:credentials` takes it.
		 */
		async function triggerOrg(label, credId) {
			const c = sandbox.control;
			const org = await c.createOrg({ name: `e2e ${label} ${info.version}` });
			const key = await c.createKey({ orgId: org.id, name: `e2e ${label}` });
			const credential = e2e.documentWorkflowCredential({
				id: credId,
				name: `Document Workflow API (${label} org)`,
				baseUrl: sandbox.baseUrl,
				apiKey: key.key,
			});
			return { org, key, credential };
		}

		/** A copy of `workflow` whose trigger of this package uses `credential`. */
		function withCredential(workflow, credential) {
			const copy = JSON.parse(JSON.stringify(workflow));
			const trigger = copy.nodes.find((n) => e2e.NODE_TYPES.slice(1).includes(n.type));
			trigger.credentials = {
				documentWorkflowApi: { id: credential.id, name: credential.name },
			};
			return copy;
		}

		afterAll(async () => {
			if (n8n) await n8n.stop();
			if (sandbox) await sandbox.stop();
		});

		test('the package loads: node and credential types registered, no load errors in the log', async () => {
			const types = await n8n.loadedTypes();
			for (const t of e2e.NODE_TYPES) expect(types.nodes).toContain(t);
			expect(types.credentials).toContain(e2e.CREDENTIAL_TYPE);
			const action = types.nodeDescriptions.find((d) => d.name === e2e.NODE_TYPES[0]);
			expect(action.displayName).toBe('Document Workflow');
			const resource = action.properties.find((p) => p.name === 'resource');
			expect(resource.options.map((o) => o.value).sort()).toEqual([
				'document',
				'event',
				'reviewTask',
				'run',
				'workflow',
			]);
			// The webhook trigger offers both versions (saved workflows keep 1), new nodes get 2.
			const webhook = types.nodeDescriptions.filter((d) => d.name === e2e.NODE_TYPES[2]);
			expect(webhook.flatMap((d) => [d.version].flat()).sort()).toEqual([1, 2]);
			expect(webhook.every((d) => d.defaultVersion === 2)).toBe(true);
			expect(n8n.packageLoadErrors()).toEqual([]);
		});

		test('the credential and every example workflow import', async () => {
			// One CLI run per import, for the examples and for what (d) and (f) use, which they imported
			// themselves before (four CLI runs more): the two trigger examples as (d) and (f) imported
			// them over the examples (the same ids, each with its organization's credential), and (f)'s
			// version 1 copy.
			await n8n.importCredentials([
				e2e.documentWorkflowCredential({
					id: fixtures.CREDENTIAL_ID,
					name: fixtures.CREDENTIAL_NAME,
					baseUrl: sandbox.baseUrl,
					apiKey: sandbox.apiKey,
				}),
				polling.credential,
				webhook.credential,
				webhook.credentialV1,
			]);
			await n8n.importWorkflows([
				...Object.values({
					...examples,
					'trigger-on-run-events': polling.workflow,
					'webhook-trigger': webhook.workflow,
				}),
				webhook.workflowV1,
			]);
			const workflows = await n8n.rest('GET', '/rest/workflows');
			const ids = (Array.isArray(workflows) ? workflows : workflows.data || workflows.results).map(
				(w) => w.id,
			);
			for (const wf of Object.values(examples)) expect(ids).toContain(wf.id);
			expect(ids).toContain(webhook.workflowV1.id);
			const credentials = await n8n.rest('GET', '/rest/credentials');
			expect(credentials.map((c) => c.type)).toContain(e2e.CREDENTIAL_TYPE);
			for (const { id } of [polling.credential, webhook.credential, webhook.credentialV1])
				expect(credentials.map((c) => c.id)).toContain(id);
			expect(n8n.packageLoadErrors()).toEqual([]);
		});

		test('(a) submit a file, wait, read its JSON output', async () => {
			const res = await n8n.execute(examples['submit-and-wait-json'].id);
			expect(res.ok ? '' : res.stdout + res.stderr).toBe('');
			const [file] = outputOf(res.run, 'Make a PDF');
			const [waited] = outputOf(res.run, 'Submit and wait');
			expect(waited.json).toMatchObject({
				status: 'completed',
				finished: true,
				workflowId: vars.SANDBOX_WORKFLOW_ID,
				reference: 'example-json-invoice-001.pdf',
			});
			expect(waited.json.runId).toMatch(UUID);
			expect(waited.json.documentId).toMatch(UUID);
			const [out] = outputOf(res.run, 'Get output');
			expect(out.json).toMatchObject({
				runId: waited.json.runId,
				kind: 'json',
				contentType: 'application/json',
				filename: 'invoice.json',
			});
			expect(out.json.output).toEqual(fixtures.JSON_OUTPUT);
			expect(out.binary).toBeUndefined();

			// What the sandbox received: the Code node's bytes, name and reference.
			const doc = await sandbox.control.getDocument(waited.json.documentId);
			expect(doc).toMatchObject({
				filename: 'invoice-001.pdf',
				reference: 'example-json-invoice-001.pdf',
				format: 'pdf',
			});
			expect(doc.sha256).toBe(sha256(n8n.binaryBuffer(file.binary.data)));
		});

		test('(b) submit a file, wait, read its file output (bytes and file name)', async () => {
			const res = await n8n.execute(examples['submit-and-wait-binary'].id);
			expect(res.ok ? '' : res.stdout + res.stderr).toBe('');
			const [waited] = outputOf(res.run, 'Submit and wait');
			expect(waited.json).toMatchObject({
				status: 'completed',
				workflowId: vars.SANDBOX_BINARY_WORKFLOW_ID,
				reference: 'example-binary',
			});
			const [out] = outputOf(res.run, 'Get output file');
			expect(out.json).toMatchObject({
				runId: waited.json.runId,
				kind: 'binary',
				contentType: fixtures.BINARY_OUTPUT_CONTENT_TYPE,
				filename: fixtures.BINARY_OUTPUT_FILENAME,
			});
			expect(out.json.output).toBeUndefined();
			const binary = out.binary.data;
			expect(binary.fileName).toBe(fixtures.BINARY_OUTPUT_FILENAME);
			expect(binary.mimeType).toBe(fixtures.BINARY_OUTPUT_CONTENT_TYPE);
			const bytes = n8n.binaryBuffer(binary);
			expect(bytes.length).toBe(fixtures.BINARY_OUTPUT_BYTES.length);
			expect(bytes.equals(fixtures.BINARY_OUTPUT_BYTES)).toBe(true);
		});

		test('(c) batch: several files submitted, waited on together, results collected', async () => {
			const res = await n8n.execute(examples['batch-submit'].id);
			expect(res.ok ? '' : res.stdout + res.stderr).toBe('');
			const waited = outputOf(res.run, 'Submit and wait');
			expect(waited).toHaveLength(3);
			const [summary] = outputOf(res.run, 'Collect results');
			expect(summary.json.count).toBe(3);
			const names = ['invoice-001.pdf', 'invoice-002.pdf', 'orders.csv'];
			expect(summary.json.results.map((r) => r.fileName)).toEqual(names);
			for (const r of summary.json.results) {
				expect(r.status).toBe('completed');
				expect(r.runId).toMatch(UUID);
				expect(r.output).toMatchObject({
					kind: 'json',
					runId: r.runId,
					output: fixtures.JSON_OUTPUT,
				});
			}
			expect(new Set(summary.json.results.map((r) => r.runId)).size).toBe(3);
			// Exactly one document per file in the sandbox (no duplicate submissions).
			const docs = (
				await sandbox.control.listDocuments({ workflowId: vars.SANDBOX_WORKFLOW_ID })
			).filter((d) => String(d.reference).startsWith('batch-'));
			expect(docs.map((d) => d.reference).sort()).toEqual(names.map((n) => `batch-${n}`).sort());
		});

		test("(e) download a document's original file", async () => {
			const res = await n8n.execute(examples['download-original'].id);
			expect(res.ok ? '' : res.stdout + res.stderr).toBe('');
			const [file] = outputOf(res.run, 'Make a PDF');
			const [submitted] = outputOf(res.run, 'Submit');
			expect(submitted.json.documentId).toMatch(UUID);
			const [original] = outputOf(res.run, 'Download original');
			const binary = original.binary.data;
			expect(binary.fileName).toBe('invoice-001.pdf');
			expect(binary.mimeType).toMatch(/^application\/pdf/);
			expect(n8n.binaryBuffer(binary).equals(n8n.binaryBuffer(file.binary.data))).toBe(true);
			// The link's host never gets the API key.
			expect(await sandbox.control.fileOriginSawApiKey()).toBe(false);
		});

		test('(d) the trigger emits every selected event exactly once across scheduled polls and a restart', async () => {
			const c = sandbox.control;
			// A separate organization, so only this test's events are visible to the trigger: made by
			// beforeAll, its credential and this workflow imported by the import test.
			const { org, key, workflow: wf } = polling;
			const trigger = wf.nodes.find((n) => n.type === e2e.NODE_TYPES[1]);
			expect(trigger.parameters.events).toEqual(TRIGGER_EVENTS);
			expect(trigger.credentials.documentWorkflowApi.id).toBe(polling.credential.id);
			// (f)'s two webhook workflows first, so that this test's restart activates them too and (f)
			// needs no restart of its own; their activation reads only their own organizations' lists.
			// This trigger's publish stays the last step before the restart, as before.
			await publishWebhooks();
			await n8n.activateWorkflow(wf.id);

			// This trigger's reads only (its organization's key): no other reader can pass for its poll.
			const pollSeq = async () => {
				const reqs = (await c.getRequests({ pathPrefix: '/events' })).filter(
					(r) => r.headers['x-api-key'] === key.key,
				);
				return reqs.length ? reqs[reqs.length - 1].seq : 0;
			};
			/**
			 * Resolves once a poll that started after `afterSeq` is over: a request to /events, then
			 * 5 s without any (the same gap that separates polls in the summary below).
			 */
			const waitForPoll = async (afterSeq, what) => {
				await waitFor(async () => (await pollSeq()) > afterSeq, {
					timeoutMs: 150000,
					intervalMs: 500,
					what,
				});
				let last = await pollSeq();
				let quietSince = Date.now();
				while (Date.now() - quietSince < 5000) {
					await e2e.sleep(500);
					const now = await pollSeq();
					if (now !== last) {
						last = now;
						quietSince = Date.now();
					}
				}
				return last;
			};
			const create = async (events) =>
				(await c.createEvents(events, { orgId: org.id, returnIds: true })).ids;
			const emitted = async () => {
				const items = [];
				for (const ex of await n8n.listExecutions(wf.id)) {
					const full = await n8n.getExecution(ex.id);
					items.push(...(e2e.N8nInstance.nodeOutput({ data: full.data }, trigger.name) || []));
				}
				return items.map((i) => i.json);
			};
			const emittedIds = async () => (await emitted()).map((e) => e.id);
			const expected = [];
			const t0 = Date.now();

			// Activation: n8n polls once when the workflow is activated at start.
			let seq = await pollSeq();
			await n8n.restart();
			webhookActivation.started = true;
			seq = await waitForPoll(seq, 'the poll at activation');

			// Batch 1: selected types, two unselected ones, and one that commits 75 s late.
			const now = Date.now();
			const batch1 = await create([
				{ type: 'run.completed', data: { runId: crypto.randomUUID(), n: 1 } },
				{ type: 'run.failed', data: { runId: crypto.randomUUID(), n: 2 } },
				{ type: 'review.created', data: { reviewTaskId: crypto.randomUUID(), n: 3 } },
				{ type: 'document.received', data: { n: 4 } },
				{ type: 'run.cancelled', data: { n: 5 } },
				{ type: 'run.completed', data: { n: 6, late: '75s' }, commitDelayMs: 75000 },
			]);
			expected.push(batch1[0], batch1[1], batch1[2], batch1[5]);
			const unselected = [batch1[3], batch1[4]];
			// A poll that starts after the events exist (counted from now, not from before the create: a
			// scheduled poll can come seconds after the activation poll, n8n picks its second at random).
			// Should one have been under way, reading before them, the next one (a minute on) emits them.
			seq = await waitForPoll(await pollSeq(), 'scheduled poll 1');
			await waitFor(
				async () => {
					const ids = await emittedIds();
					return [batch1[0], batch1[1], batch1[2]].every((id) => ids.includes(id));
				},
				{ what: 'batch 1 in the executions', timeoutMs: 90000, intervalMs: 2000 },
			);

			// Committed late with a lower id than events already read.
			const [late1] = await create([
				{
					type: 'review.created',
					data: { n: 7, late: 'lower id' },
					createdOn: new Date(now - 1000).toISOString(),
				},
			]);
			expect(late1 < batch1[0]).toBe(true);
			expect(Date.now() - (now - 1000)).toBeLessThan(4 * 60 * 1000);
			expected.push(late1);
			// A poll after late1 exists: counted from now, not from poll 1, which a slow save of poll 1's
			// execution can leave behind more than a minute (poll 2 would then have read before late1).
			seq = await waitForPoll(await pollSeq(), 'scheduled poll 2');
			await waitFor(async () => (await emittedIds()).includes(late1), {
				what: 'the late event after poll 2',
				timeoutMs: 90000,
				intervalMs: 2000,
			});

			// An event created just before a restart; after the poll at restart, a late one with a lower id.
			const beforeRestart = Date.now();
			const [e8] = await create([{ type: 'run.failed', data: { n: 8 } }]);
			expected.push(e8);
			const restartAt = Date.now();
			// The poll at the restart is the first read after n8n is down: a scheduled poll between e8's
			// creation and the stop (which one emits e8 is up to n8n's random second, both are right)
			// cannot pass for it, so late2 below is surely created after the restart's poll.
			await n8n.stop();
			const downAt = Date.now();
			const seqWhileDown = await pollSeq();
			await n8n.start();
			await n8n.login();
			seq = await waitForPoll(seqWhileDown, 'the poll at the restart');
			const [late2, e10] = await create([
				{
					type: 'run.completed',
					data: { n: 9, late: 'lower id, after restart' },
					createdOn: new Date(beforeRestart - 500).toISOString(),
				},
				{ type: 'review.created', data: { n: 10 } },
			]);
			expect(late2 < e8).toBe(true);
			// Within the trigger's 5-minute overlap, however slow the restart was (later is not emitted, documented).
			expect(Date.now() - (beforeRestart - 500)).toBeLessThan(4 * 60 * 1000);
			expected.push(late2, e10);
			// Wait for a poll more than a minute after the restart: surely a scheduled one (the next one
			// can come seconds after the poll at start, n8n picks a random second for "every minute").
			// By then every late commit (75 s after batch 1) is due too.
			const restartedAt = Date.now();
			await waitFor(async () => Date.now() > Math.max(now + 76000, restartedAt + 61000), {
				what: 'a minute after the restart',
				timeoutMs: 150000,
			});
			seq = await waitForPoll(await pollSeq(), 'a scheduled poll after the restart');
			await waitFor(
				async () => {
					const ids = await emittedIds();
					return expected.every((id) => ids.includes(id));
				},
				{ what: 'every expected event in the executions', timeoutMs: 90000, intervalMs: 3000 },
			);
			// The poll that emitted the last of them is over and its execution saved, however slow n8n is.
			await waitUntilSettled(n8n, c, { workflowId: wf.id, apiKey: key.key, quietMs: 5000 });

			const events = await emitted();
			const ids = events.map((e) => e.id);
			// Each expected event exactly once; nothing else (unselected types never).
			expect([...ids].sort()).toEqual([...expected].sort());
			for (const id of unselected) expect(ids).not.toContain(id);
			// The polls n8n made (requests to /events less than 5 s apart are one poll).
			const polls = [];
			const requests = (await c.getRequests({ pathPrefix: '/events' })).filter(
				(r) => r.realTimeMs >= t0 && r.headers['x-api-key'] === key.key,
			);
			for (const r of requests) {
				if (r.realTimeMs < t0) continue;
				const last = polls[polls.length - 1];
				if (last && r.realTimeMs - last.end < 5000) last.end = r.realTimeMs;
				else polls.push({ start: r.realTimeMs, end: r.realTimeMs });
			}
			const at = (ms) => `${((ms - t0) / 1000).toFixed(0)} s`;
			e2e.log(
				`trigger test: ${events.length} events over ${at(Date.now())}; polls at ${polls.map((p) => at(p.start)).join(', ')}; restarts at 0 s and ${at(restartAt)}; requests at ${requests.map((r) => ((r.realTimeMs - t0) / 1000).toFixed(1)).join(' ')}`,
			);
			// Activation poll + two scheduled polls before the second restart; after it (n8n down), the
			// poll at start and a scheduled one more than a minute later.
			expect(polls.filter((p) => p.start < restartAt).length).toBeGreaterThanOrEqual(3);
			expect(polls.filter((p) => p.start > downAt).length).toBeGreaterThanOrEqual(2);
			expect(polls.some((p) => p.start > restartedAt + 60000)).toBe(true);
			// Each item is the event exactly as the API returns it.
			const api = await fetch(`${sandbox.baseUrl}/events?pageSize=100`, {
				headers: { 'X-Api-Key': key.key },
			}).then((r) => r.json());
			const byId = new Map(api.data.map((e) => [e.id, e]));
			for (const ev of events) expect(ev).toEqual(byId.get(ev.id));
			expect(n8n.packageLoadErrors()).toEqual([]);
		});

		test('(f) the webhook trigger, active, starts once per listed event from real deliveries; forged, pings, repeats and malformed bodies start nothing; a saved version 1 still receives deliveries', async () => {
			const c = sandbox.control;
			// A separate organization, so only this test's events are listed for the trigger's key; and
			// the same workflow as saved before version 2 existed (typeVersion 1), in its own
			// organization, with its own Production URL. Made by beforeAll, imported by the import test.
			const { org, key, workflow: wf, orgV1, keyV1, workflowV1: wfV1 } = webhook;
			const trigger = wf.nodes.find((n) => n.type === e2e.NODE_TYPES[2]);
			expect(trigger.parameters.events).toEqual(WEBHOOK_EVENTS);
			expect(trigger.typeVersion).toBe(2);
			expect(trigger.credentials.documentWorkflowApi.id).toBe(webhook.credential.id);
			const triggerV1 = wfV1.nodes.find((n) => n.type === e2e.NODE_TYPES[2]);
			expect(triggerV1.typeVersion).toBe(1);
			expect(triggerV1.credentials.documentWorkflowApi.id).toBe(webhook.credentialV1.id);
			// Both published by (d) and activated by its restart (again at its later start), so no restart
			// here; should (d) not have got that far, here as before. Each webhook is waited for below
			// until it answers (400 to a malformed body) before anything is sent to it.
			if (!webhookActivation.published) await publishWebhooks();
			if (!webhookActivation.started || !n8n.running) await n8n.restart();
			else if (!n8n.cookie) await n8n.login();
			const url = `${n8n.baseUrl}/webhook/${trigger.webhookId}/webhook`;
			const urlV1 = `${n8n.baseUrl}/webhook/${triggerV1.webhookId}/webhook`;
			const postTo = (target, body) =>
				fetch(target, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify(body),
				});
			const post = (body) => postTo(url, body);

			// The node answers a malformed body itself: 400, naming what was wrong.
			await waitFor(async () => (await post({ id: 'not-an-id' })).status === 400, {
				what: 'the active webhook',
				timeoutMs: 60000,
			});
			const bad = await post([{ id: 'not-an-id', type: 'run.completed' }]);
			expect(bad.status).toBe(400);
			expect((await bad.json()).error).toMatch(
				/Event 0 of the delivery has the id "not-an-id", which is not an event id/,
			);

			// Real deliveries: each sent twice, held back up to 300 ms (out of order), a test ping every 3 events.
			await c.addSubscription({
				url,
				orgId: org.id,
				repeats: 1,
				maxDelayMs: 300,
				pingEvery: 3,
				seed: 5,
			});
			const t0 = Date.now();
			const created = (
				await c.createEvents(
					[
						{ type: 'run.completed', data: { n: 1 } },
						{ type: 'run.failed', data: { n: 2 } },
						{ type: 'document.received', data: { n: 3 } },
						{ type: 'run.completed', data: { n: 4 } },
						{ type: 'review.created', data: { n: 5 } },
						{ type: 'run.completed', data: { n: 6, late: '2s' }, commitDelayMs: 2000 },
					],
					{ orgId: org.id, returnIds: true },
				)
			).ids;
			const expected = [created[0], created[1], created[3], created[5]];
			// A forged delivery: an id in the right form that the API does not list.
			const forged = `${Date.now()
				.toString(16)
				.padStart(12, '0')
				.replace(/^(.{8})(.{4})$/, '$1-$2')}-7abc-8def-${crypto.randomBytes(6).toString('hex')}`;
			expect(
				(await post({ id: forged, type: 'run.completed', data: { forged: true } })).status,
			).toBe(202);

			const emitted = async (workflow = wf) => {
				const items = [];
				for (const ex of await n8n.listExecutions(workflow.id)) {
					const full = await n8n.getExecution(ex.id);
					items.push(...(e2e.N8nInstance.nodeOutput({ data: full.data }, trigger.name) || []));
				}
				return items.map((i) => i.json);
			};
			await waitFor(
				async () => {
					const ids = (await emitted()).map((e) => e.id);
					return expected.every((id) => ids.includes(id));
				},
				{ what: 'every selected event in the executions', timeoutMs: 60000 },
			);
			const allEmittedAt = Date.now() - t0;
			// Past the look-for window (4 s) of the ping and the forged id, the node's last look for
			// them over, however late a slow n8n makes it: nothing more may start.
			await sandbox.subscriptions.settled();
			await waitUntilSettled(n8n, c, { workflowId: wf.id, apiKey: key.key, quietMs: 8000 });
			const events = await emitted();
			expect(events.map((e) => e.id).sort()).toEqual([...expected].sort());
			// Each item is the event exactly as the API lists it.
			const api = await fetch(`${sandbox.baseUrl}/events?pageSize=100`, {
				headers: { 'X-Api-Key': key.key },
			}).then((r) => r.json());
			const byId = new Map(api.data.map((e) => [e.id, e]));
			for (const ev of events) expect(ev).toEqual(byId.get(ev.id));
			// Every delivery (pings and repeats too) answered 202.
			const deliveries = await c.getDeliveries();
			const ours = deliveries.filter(
				(d) => d.eventIds.some((id) => created.includes(id)) || d.ping,
			);
			expect(ours.length).toBeGreaterThanOrEqual(12);
			expect(ours.filter((d) => d.ping).length).toBeGreaterThanOrEqual(2);
			expect(ours.every((d) => d.status === 202)).toBe(true);
			const answers = ours.map((d) => d.answeredAtMs - d.sentAtMs).sort((a, b) => a - b);
			e2e.log(
				`webhook test: ${ours.length} deliveries (${ours.filter((d) => d.ping).length} pings), answered in ${answers.join(', ')} ms; all ${expected.length} events emitted ${allEmittedAt} ms after creation`,
			);

			// The saved version 1 workflow: a malformed body answered 400 by the node, each listed event
			// of its selected types emitted once (its deliveries are sent twice), as the API lists it.
			await waitFor(async () => (await postTo(urlV1, { id: 'not-an-id' })).status === 400, {
				what: 'the active version 1 webhook',
				timeoutMs: 60000,
			});
			await c.addSubscription({ url: urlV1, orgId: orgV1.id, repeats: 1 });
			const createdV1 = (
				await c.createEvents(
					[
						{ type: 'run.failed', data: { v1: true } },
						{ type: 'document.received', data: { v1: true } },
					],
					{ orgId: orgV1.id, returnIds: true },
				)
			).ids;
			await waitFor(async () => (await emitted(wfV1)).some((e) => e.id === createdV1[0]), {
				what: 'the event in the version 1 workflow',
				timeoutMs: 60000,
			});
			await sandbox.subscriptions.settled();
			// Past the look-for window, the last look over: the repeat and the unselected event start nothing.
			await waitUntilSettled(n8n, c, { workflowId: wfV1.id, apiKey: keyV1.key, quietMs: 6000 });
			const eventsV1 = await emitted(wfV1);
			expect(eventsV1.map((e) => e.id)).toEqual([createdV1[0]]);
			const apiV1 = await fetch(`${sandbox.baseUrl}/events?pageSize=100`, {
				headers: { 'X-Api-Key': keyV1.key },
			}).then((r) => r.json());
			expect(eventsV1[0]).toEqual(apiV1.data.find((e) => e.id === createdV1[0]));
			expect(
				(await c.getDeliveries())
					.filter((d) => d.eventIds.some((id) => createdV1.includes(id)))
					.every((d) => d.status === 202),
			).toBe(true);

			// The answer follows the read and n8n's save: with every read of the list taking 12 s, each
			// delivery is answered only after a read that looked for its event (so an answered delivery
			// survives a stop of n8n), and the event is emitted once.
			const READ_DELAY_MS = 12000;
			await c.addFault({ pathPrefix: '/events', kind: 'latency', ms: READ_DELAY_MS });
			const [slowRead] = (
				await c.createEvents([{ type: 'run.failed', data: { slowRead: true } }], {
					orgId: org.id,
					returnIds: true,
				})
			).ids;
			await waitFor(async () => (await emitted()).some((e) => e.id === slowRead), {
				what: 'the event read slowly',
				timeoutMs: 90000,
			});
			const slowDelivery = (await c.getDeliveries()).filter((d) => d.eventIds.includes(slowRead));
			// Copies are held back at random (up to 300 ms): the first read follows whichever copy was sent
			// first. This webhook's reads only: the trigger of (d), still active, polls the list too, and
			// a poll of it just after the delivery would pass for an earlier read.
			const firstSent = Math.min(...slowDelivery.map((d) => d.sentAtMs));
			const firstRead = (await c.getRequests({ pathPrefix: '/events' })).find(
				(r) => r.realTimeMs >= firstSent && r.headers['x-api-key'] === key.key,
			);
			for (const d of slowDelivery) {
				expect(d.status).toBe(202);
				expect(d.answeredAtMs).toBeGreaterThanOrEqual(firstRead.realTimeMs + READ_DELAY_MS);
			}
			e2e.log(
				`webhook test, 12 s reads: answered in ${slowDelivery.map((d) => d.answeredAtMs - d.sentAtMs).join(', ')} ms`,
			);
			await c.clearFaults();
			expect(n8n.packageLoadErrors()).toEqual([]);
		});
	});
}

module.exports = { defineN8nSuite };
