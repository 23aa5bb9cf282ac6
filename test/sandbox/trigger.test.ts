/** Conformance: Trigger a workflow (rules 1-5), held documents, States and transitions fact 1. */
import { randomUUID } from 'node:crypto';

import {
	PDF,
	UUID_RE,
	expectProblem,
	get,
	slowTrigger,
	trigger,
	triggerOk,
	until,
} from './helpers';
import { useSandbox } from '../harness/sandbox';

const env = useSandbox({ nodes: false });

describe('Trigger a workflow', () => {
	test('Trigger rule 1: the document is accepted (202) and processed asynchronously', async () => {
		const r = await trigger(env.sandbox, env.sandbox.defaultWorkflowId, { reference: 'order-42' });
		expect(r.status).toBe(202);
		expect(r.body).toEqual({
			documentId: expect.stringMatching(UUID_RE),
			runId: expect.stringMatching(UUID_RE),
			status: 'queued',
			reference: 'order-42',
		});
		expect(r.headers.get('x-correlation-id')).toMatch(UUID_RE);
		// Processed asynchronously: the run starts queued and completes later.
		const run0 = await get(env.sandbox, `/runs/${r.body.runId}`);
		expect(run0.status).toBe(200);
		expect(['queued', 'running', 'completed']).toContain(run0.body.status);
		await env.sandbox.control.advanceClock(5_000);
		expect((await get(env.sandbox, `/runs/${r.body.runId}`)).body.status).toBe('completed');
	});

	test('Trigger result: reference is echoed (null when not sent) and kept on the run', async () => {
		const a = await triggerOk(env.sandbox);
		expect(a.reference).toBeNull();
		const b = await triggerOk(env.sandbox, env.sandbox.defaultWorkflowId, { reference: 'ref-ü-1' });
		expect(b.reference).toBe('ref-ü-1');
		expect((await get(env.sandbox, `/runs/${b.runId}`)).body.reference).toBe('ref-ü-1');
	});

	test('Trigger: the file name and content type are kept as sent', async () => {
		const t = await triggerOk(env.sandbox, env.sandbox.defaultWorkflowId, {
			filename: 'Rechnung März 2024.pdf',
			contentType: 'application/pdf',
		});
		const doc = await env.sandbox.control.getDocument(t.documentId);
		expect(doc.filename).toBe('Rechnung März 2024.pdf');
		expect(doc.contentType).toBe('application/pdf');
		expect(doc.sizeBytes).toBe(PDF.length);
		expect((await get(env.sandbox, `/documents/${t.documentId}`)).body).toEqual(
			expect.objectContaining({
				id: t.documentId,
				filename: 'Rechnung März 2024.pdf',
				workflowId: env.sandbox.defaultWorkflowId,
			}),
		);
	});

	test('Trigger: the form field "file" is required (400)', async () => {
		const r = await trigger(env.sandbox, env.sandbox.defaultWorkflowId, {
			noFile: true,
			reference: 'x',
		});
		expectProblem(r, 400);
		expect(r.body.errors.file).toBeDefined();
		expect(await env.sandbox.control.countDocuments()).toBe(0);
	});

	test('Trigger: an unknown workflow answers 404', async () => {
		expectProblem(await trigger(env.sandbox, randomUUID()), 404);
	});

	test('Trigger rule 5: a format not in triggerFormats is rejected with 400 that lists the accepted formats', async () => {
		const wf = await env.sandbox.control.createWorkflow({ triggerFormats: ['pdf', 'png'] });
		const r = await trigger(env.sandbox, wf.id, {
			filename: 'sheet.xlsx',
			contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
		});
		expectProblem(r, 400);
		expect(r.body.detail).toMatch(/xlsx/);
		expect(r.body.detail).toMatch(/pdf, png/);
		expect(await env.sandbox.control.countDocuments()).toBe(0);
		expect(
			(await trigger(env.sandbox, wf.id, { filename: 'a.png', contentType: 'image/png' })).status,
		).toBe(202);
	});

	test('Trigger rule 5: the format comes from the extension, or from the content type when the name has none', async () => {
		const wf = await env.sandbox.control.createWorkflow({ triggerFormats: ['jpeg', 'tiff'] });
		expect(
			(
				await trigger(env.sandbox, wf.id, {
					filename: 'photo.JPG',
					contentType: 'application/octet-stream',
				})
			).status,
		).toBe(202);
		expect(
			(
				await trigger(env.sandbox, wf.id, {
					filename: 'scan.tif',
					contentType: 'application/octet-stream',
				})
			).status,
		).toBe(202);
		expect(
			(await trigger(env.sandbox, wf.id, { filename: 'scan', contentType: 'image/jpeg' })).status,
		).toBe(202);
		expectProblem(
			await trigger(env.sandbox, wf.id, {
				filename: 'scan',
				contentType: 'application/octet-stream',
			}),
			400,
		);
		expectProblem(
			await trigger(env.sandbox, wf.id, { filename: 'doc.pdf', contentType: 'application/pdf' }),
			400,
		);
	});

	test('Workflow triggerFormats: empty means the trigger rejects every document (400)', async () => {
		const wf = await env.sandbox.control.createWorkflow({ triggerFormats: [] });
		expect((await get(env.sandbox, `/workflows/${wf.id}`)).body.triggerFormats).toEqual([]);
		const r = await trigger(env.sandbox, wf.id);
		expectProblem(r, 400);
		expect(r.body.detail).toMatch(/none/);
	});

	test('Workflow triggerFormats: always reflects the current graph', async () => {
		const wf = await env.sandbox.control.createWorkflow({ triggerFormats: ['pdf'] });
		expect(
			(await trigger(env.sandbox, wf.id, { filename: 'a.gif', contentType: 'image/gif' })).status,
		).toBe(400);
		await env.sandbox.control.updateWorkflow(wf.id, { triggerFormats: ['pdf', 'gif'] });
		expect((await get(env.sandbox, `/workflows/${wf.id}`)).body.triggerFormats).toEqual([
			'pdf',
			'gif',
		]);
		expect(
			(await trigger(env.sandbox, wf.id, { filename: 'a.gif', contentType: 'image/gif' })).status,
		).toBe(202);
	});

	test('Trigger rule 2: without an Idempotency-Key, or with one that is not a GUID, requests are processed without protection', async () => {
		expect((await trigger(env.sandbox, env.sandbox.defaultWorkflowId)).status).toBe(202);
		expect((await trigger(env.sandbox, env.sandbox.defaultWorkflowId)).status).toBe(202);
		expect(
			(await trigger(env.sandbox, env.sandbox.defaultWorkflowId, { idempotencyKey: 'not-a-guid' }))
				.status,
		).toBe(202);
		expect(
			(await trigger(env.sandbox, env.sandbox.defaultWorkflowId, { idempotencyKey: 'not-a-guid' }))
				.status,
		).toBe(202);
		expect(await env.sandbox.control.countDocuments()).toBe(4);
	});

	test('Trigger rule 3: a repeated Idempotency-Key after completion gets 409', async () => {
		const key = randomUUID();
		expect(
			(await trigger(env.sandbox, env.sandbox.defaultWorkflowId, { idempotencyKey: key })).status,
		).toBe(202);
		const again = await trigger(env.sandbox, env.sandbox.defaultWorkflowId, {
			idempotencyKey: key,
		});
		expectProblem(again, 409);
		expect(await env.sandbox.control.countDocuments()).toBe(1);
	});

	test('Trigger rule 3: a repeated Idempotency-Key while in flight gets 409', async () => {
		const key = randomUUID();
		const first = slowTrigger(env.sandbox, env.sandbox.defaultWorkflowId, key);
		// Wait until the sandbox has received the first request's headers.
		await until(async () =>
			(await env.sandbox.control.getRequests({ method: 'POST' })).length ? true : undefined,
		);
		const second = await trigger(env.sandbox, env.sandbox.defaultWorkflowId, {
			idempotencyKey: key,
		});
		expectProblem(second, 409);
		expect(second.body.detail).toMatch(/still being processed/);
		const done = await first.finish();
		expect(done.status).toBe(202);
		expect(await env.sandbox.control.countDocuments()).toBe(1);
	});

	test('Trigger rule 4: a failed request releases its key, and the same key can be retried', async () => {
		const key = randomUUID();
		const wf = await env.sandbox.control.createWorkflow({ triggerFormats: ['pdf'] });
		expect(
			(
				await trigger(env.sandbox, wf.id, {
					idempotencyKey: key,
					filename: 'a.png',
					contentType: 'image/png',
				})
			).status,
		).toBe(400);
		expect((await trigger(env.sandbox, wf.id, { idempotencyKey: key })).status).toBe(202);
		expect((await trigger(env.sandbox, wf.id, { idempotencyKey: key })).status).toBe(409);
	});

	test('Trigger rule 4: a 5xx releases the key too', async () => {
		const key = randomUUID();
		await env.sandbox.control.addFault({
			kind: 'status5xx',
			status: 503,
			pathPrefix: '/workflows/',
			count: 1,
		});
		expect(
			(await trigger(env.sandbox, env.sandbox.defaultWorkflowId, { idempotencyKey: key })).status,
		).toBe(503);
		expect(
			(await trigger(env.sandbox, env.sandbox.defaultWorkflowId, { idempotencyKey: key })).status,
		).toBe(202);
	});

	test('Trigger rule 4: an upload aborted by the client releases its key and creates nothing', async () => {
		const key = randomUUID();
		const first = slowTrigger(env.sandbox, env.sandbox.defaultWorkflowId, key);
		await until(async () =>
			(await env.sandbox.control.getRequests({ method: 'POST' })).length ? true : undefined,
		);
		first.abort();
		const retried = await until(async () => {
			const r = await trigger(env.sandbox, env.sandbox.defaultWorkflowId, { idempotencyKey: key });
			return r.status === 409 ? undefined : r;
		});
		expect(retried.status).toBe(202);
		expect(await env.sandbox.control.countDocuments()).toBe(1);
	});

	test('Trigger rule 3: idempotency keys are per organization', async () => {
		const key = randomUUID();
		const org = await env.sandbox.control.createOrg({});
		const k = await env.sandbox.control.createKey({ orgId: org.id });
		const wf = await env.sandbox.control.createWorkflow({ orgId: org.id });
		expect(
			(await trigger(env.sandbox, env.sandbox.defaultWorkflowId, { idempotencyKey: key })).status,
		).toBe(202);
		expect((await trigger(env.sandbox, wf.id, { idempotencyKey: key, key: k.key })).status).toBe(
			202,
		);
	});
});

describe('Held documents', () => {
	test('State fact 1: with the automatic-run setting off the trigger answers held with runId null; the document is held', async () => {
		const wf = await env.sandbox.control.createWorkflow({ autoRun: false });
		const t = await triggerOk(env.sandbox, wf.id, { reference: 'h1' });
		expect(t).toEqual({
			documentId: expect.stringMatching(UUID_RE),
			runId: null,
			status: 'held',
			reference: 'h1',
		});
		const doc = await get(env.sandbox, `/documents/${t.documentId}`);
		expect(doc.body.status).toBe('held');
		expect((await get(env.sandbox, `/documents/${t.documentId}/runs`)).body).toEqual({ data: [] });
	});

	test('Document runs: used to find the run of a held document once someone runs it', async () => {
		const wf = await env.sandbox.control.createWorkflow({ autoRun: false });
		const t = await triggerOk(env.sandbox, wf.id);
		const run = await env.sandbox.control.startHeldDocument(t.documentId);
		const list = await get(env.sandbox, `/documents/${t.documentId}/runs`);
		expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([run.id]);
		await env.sandbox.control.advanceClock(5_000);
		expect((await get(env.sandbox, `/documents/${t.documentId}`)).body.status).toBe('completed');
	});

	test('Trigger on a disabled workflow: accepted, but the run never starts; the document says failed (workflow_disabled)', async () => {
		const wf = await env.sandbox.control.createWorkflow({ isEnabled: false });
		const t = await triggerOk(env.sandbox, wf.id);
		expect(t.status).toBe('queued');
		expect(t.runId).toMatch(UUID_RE);
		await env.sandbox.control.advanceClock(60_000);
		expectProblem(await get(env.sandbox, `/runs/${t.runId}`), 404);
		const doc = (await get(env.sandbox, `/documents/${t.documentId}`)).body;
		expect(doc.status).toBe('failed');
		expect(doc.statusReason).toBe('workflow_disabled');
	});
});
