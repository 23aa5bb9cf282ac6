/** Conformance: Get a run, run statuses, States and transitions facts 2-4, list the runs of a document, get a document, run output. */
import { randomUUID } from 'node:crypto';

import type { OutputNode } from '../../sandbox/src';
import { UUID_RE, expectProblem, get, triggerOk } from './helpers';
import { useSandbox } from '../harness/sandbox';

const env = useSandbox({ nodes: false });

const runOf = async (id: string) => (await get(env.sandbox, `/runs/${id}`)).body;

describe('Get a run', () => {
	test('Run: a completed run has every field of the spec', async () => {
		const t = await triggerOk(env.sandbox, env.sandbox.defaultWorkflowId, { reference: 'r-1' });
		await env.sandbox.control.advanceClock(5_000);
		const r = await get(env.sandbox, `/runs/${t.runId}`);
		expect(r.status).toBe(200);
		expect(r.body).toEqual({
			id: t.runId,
			workflowId: env.sandbox.defaultWorkflowId,
			documentId: t.documentId,
			kind: 'full',
			status: 'completed',
			startedOn: expect.any(String),
			completedOn: expect.any(String),
			billedCredits: 1,
			parentRunId: null,
			sourceRunId: null,
			reference: 'r-1',
		});
		expect(Date.parse(r.body.completedOn)).toBeGreaterThanOrEqual(Date.parse(r.body.startedOn));
	});

	test('Run statuses: a script goes queued → running → review → completed; review waits for the task to be decided', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'queued', ms: 60_000 },
			{ status: 'running', ms: 600_000 },
			{ status: 'review' },
			{ status: 'running', ms: 600_000 },
			{ status: 'completed', billedCredits: 7 },
		]);
		const t = await triggerOk(env.sandbox);
		const r0 = await runOf(t.runId!);
		expect(r0.status).toBe('queued');
		expect(r0.startedOn).toBeNull();
		await env.sandbox.control.advanceClock(60_000);
		expect((await runOf(t.runId!)).status).toBe('running');
		await env.sandbox.control.advanceClock(600_000);
		expect((await runOf(t.runId!)).status).toBe('review');
		await env.sandbox.control.advanceClock(3 * 3_600_000);
		expect((await runOf(t.runId!)).status).toBe('review');
		const [task] = await env.sandbox.control.listReviewTasks({ runId: t.runId! });
		await env.sandbox.control.decideReviewTask(task!.id, 'approved');
		expect((await runOf(t.runId!)).status).toBe('running');
		await env.sandbox.control.advanceClock(600_000);
		const done = await runOf(t.runId!);
		expect(done.status).toBe('completed');
		expect(done.billedCredits).toBe(7);
	});

	test('Run statuses: statuses are right when read right after a clock jump, with times of each step', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'queued', ms: 60_000 },
			{ status: 'running', ms: 120_000 },
			{ status: 'waiting', ms: 3_600_000 },
			{ status: 'running', ms: 60_000 },
			{ status: 'completed' },
		]);
		const t = await triggerOk(env.sandbox);
		const created = (await env.sandbox.control.getRun(t.runId!)).visibleOn;
		await env.sandbox.control.advanceClock(120_000);
		expect((await runOf(t.runId!)).status).toBe('running');
		await env.sandbox.control.advanceClock(120_000);
		expect((await runOf(t.runId!)).status).toBe('waiting');
		await env.sandbox.control.advanceClock(10 * 3_600_000);
		const r = await runOf(t.runId!);
		expect(r.status).toBe('completed');
		expect(Date.parse(r.startedOn) - Date.parse(created)).toBe(60_000);
		expect(Date.parse(r.completedOn) - Date.parse(created)).toBe(
			60_000 + 120_000 + 3_600_000 + 60_000,
		);
	});

	test('Run statuses: failed has error {code, message}; cancelled has error {code}', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'running', ms: 10 },
			{ status: 'failed', error: { code: 'ocr_failed', message: 'Page 2 unreadable' } },
		]);
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'cancelled', error: { code: 'cancelled_by_user' } },
		]);
		const a = await triggerOk(env.sandbox);
		const b = await triggerOk(env.sandbox);
		await env.sandbox.control.advanceClock(1_000);
		const failed = await runOf(a.runId!);
		expect(failed.status).toBe('failed');
		expect(failed.error).toEqual({ code: 'ocr_failed', message: 'Page 2 unreadable' });
		expect(failed.completedOn).toEqual(expect.any(String));
		const cancelled = await runOf(b.runId!);
		expect(cancelled.status).toBe('cancelled');
		expect(cancelled.error).toEqual({ code: 'cancelled_by_user' });
		const ok = await triggerOk(env.sandbox);
		await env.sandbox.control.advanceClock(1_000);
		expect((await runOf(ok.runId!)).error).toBeUndefined();
	});

	test('Versioning rule 2: an unknown status (e.g. paused_for_audit) is shown as is and is not final', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'running', ms: 10 },
			{ status: 'paused_for_audit' },
			{ status: 'completed' },
		]);
		const t = await triggerOk(env.sandbox);
		await env.sandbox.control.advanceClock(1_000);
		const r = await runOf(t.runId!);
		expect(r.status).toBe('paused_for_audit');
		expect(r.completedOn).toBeNull();
		await env.sandbox.control.advanceRun(t.runId!);
		expect((await runOf(t.runId!)).status).toBe('completed');
	});

	test('Versioning rule 2: new fields and enum values can appear (extraFields, unknown kind)', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, {
			steps: [{ status: 'completed' }],
			kind: 'replay',
			extraFields: { priority: 'high' },
		});
		const t = await triggerOk(env.sandbox);
		const r = await runOf(t.runId!);
		expect(r.kind).toBe('replay');
		expect(r.priority).toBe('high');
	});

	test('Run statuses: awaiting_children starts child runs (with parentRunId) and resumes when they are final', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'running', ms: 10 },
			{
				status: 'awaiting_children',
				children: [
					{
						kind: 'fan_out_child',
						script: [{ status: 'running', ms: 60_000 }, { status: 'completed' }],
					},
					{
						kind: 'sub_workflow_call',
						script: [{ status: 'running', ms: 600_000 }, { status: 'completed' }],
					},
				],
			},
			{ status: 'running', ms: 600_000 },
			{ status: 'completed' },
		]);
		const t = await triggerOk(env.sandbox);
		await env.sandbox.control.advanceClock(1_000);
		expect((await runOf(t.runId!)).status).toBe('awaiting_children');
		const info = await env.sandbox.control.getRun(t.runId!);
		expect(info.childRunIds).toHaveLength(2);
		const children = await Promise.all(info.childRunIds.map((id) => runOf(id)));
		expect(children.map((c) => c.kind).sort()).toEqual(['fan_out_child', 'sub_workflow_call']);
		for (const c of children) {
			expect(c.parentRunId).toBe(t.runId);
			expect(c.documentId).toBe(t.documentId);
		}
		await env.sandbox.control.advanceClock(120_000);
		expect((await runOf(children[0]!.id)).status).toBe('completed');
		expect((await runOf(t.runId!)).status).toBe('awaiting_children');
		await env.sandbox.control.advanceClock(500_000);
		expect((await runOf(t.runId!)).status).toBe('running');
		await env.sandbox.control.advanceClock(600_000);
		expect((await runOf(t.runId!)).status).toBe('completed');
	});

	test('Run statuses: waiting parks the run for ms (hours)', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'waiting', ms: 2 * 3_600_000 },
			{ status: 'completed' },
		]);
		const t = await triggerOk(env.sandbox);
		expect((await runOf(t.runId!)).status).toBe('waiting');
		await env.sandbox.control.advanceClock(3_600_000);
		expect((await runOf(t.runId!)).status).toBe('waiting');
		await env.sandbox.control.advanceClock(3_600_000);
		expect((await runOf(t.runId!)).status).toBe('completed');
	});
});

describe('States and transitions', () => {
	test('State fact 4: a runId can answer 404 briefly before the run is created', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, {
			steps: [{ status: 'running', ms: 10 }, { status: 'completed' }],
			startDelayMs: 30_000,
		});
		const t = await triggerOk(env.sandbox);
		expect(t.status).toBe('queued');
		expectProblem(await get(env.sandbox, `/runs/${t.runId}`), 404);
		expect((await get(env.sandbox, `/documents/${t.documentId}`)).body.status).toBe('queued');
		expect((await get(env.sandbox, `/documents/${t.documentId}/runs`)).body.data).toEqual([]);
		await env.sandbox.control.advanceClock(30_000);
		const r = await get(env.sandbox, `/runs/${t.runId}`);
		expect(r.status).toBe(200);
		expect(r.body.id).toBe(t.runId);
	});

	test.each(['failed', 'cancelled', 'held'] as const)(
		'State fact 4: a run that never starts stays 404 and the document status says why (%s)',
		async (why) => {
			await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, {
				steps: [],
				neverStarts: why,
				startDelayMs: 1_000,
			});
			const t = await triggerOk(env.sandbox);
			expect(t.runId).toMatch(UUID_RE);
			await env.sandbox.control.advanceClock(24 * 3_600_000);
			expectProblem(await get(env.sandbox, `/runs/${t.runId}`), 404);
			const doc = await get(env.sandbox, `/documents/${t.documentId}`);
			expect(doc.body.status).toBe(why);
			expect((await get(env.sandbox, `/documents/${t.documentId}/runs`)).body.data).toEqual([]);
		},
	);

	test('State fact 2: completed, failed and cancelled are final', async () => {
		for (const status of ['completed', 'failed', 'cancelled']) {
			await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
				{ status },
				{ status: 'running' },
			]);
			const t = await triggerOk(env.sandbox);
			await env.sandbox.control.advanceClock(10_000);
			expect((await runOf(t.runId!)).status).toBe(status);
		}
	});
});

describe('List the runs of a document', () => {
	test('Document runs: {data: [list items]} newest first, list item fields only, children not listed', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'awaiting_children', children: 3 },
			{ status: 'completed' },
		]);
		const t = await triggerOk(env.sandbox);
		await env.sandbox.control.advanceClock(1_000);
		await env.sandbox.control.advanceClock(1_000);
		const restart = await env.sandbox.control.createRun(t.documentId, {
			kind: 'restart_from_node',
			sourceRunId: t.runId!,
			script: [{ status: 'running' }],
		});
		const r = await get(env.sandbox, `/documents/${t.documentId}/runs`);
		expect(r.status).toBe(200);
		expect(Object.keys(r.body)).toEqual(['data']);
		expect(r.body.data.map((x: { id: string }) => x.id)).toEqual([restart.id, t.runId]);
		expect(r.body.data[0]).toEqual({
			id: restart.id,
			workflowId: env.sandbox.defaultWorkflowId,
			status: 'running',
			kind: 'restart_from_node',
			startedOn: expect.any(String),
			sourceRunId: t.runId,
			completedOn: null,
		});
		expect(Object.keys(r.body.data[1]).sort()).toEqual([
			'completedOn',
			'id',
			'kind',
			'sourceRunId',
			'startedOn',
			'status',
			'workflowId',
		]);
		// The three children exist but are not listed.
		expect((await env.sandbox.control.listRuns({ documentId: t.documentId })).length).toBe(5);
	});

	test('Document runs: unknown document answers 404', async () => {
		expectProblem(await get(env.sandbox, `/documents/${randomUUID()}/runs`), 404);
	});
});

describe('Get a document', () => {
	test('Get a document: returns id and status plus pass-through fields; follows the run', async () => {
		const t = await triggerOk(env.sandbox, env.sandbox.defaultWorkflowId, {
			filename: 'a.pdf',
			reference: 'doc-ref',
		});
		const d = await get(env.sandbox, `/documents/${t.documentId}`);
		expect(d.status).toBe(200);
		expect(d.body).toEqual(
			expect.objectContaining({
				id: t.documentId,
				status: expect.any(String),
				workflowId: env.sandbox.defaultWorkflowId,
				filename: 'a.pdf',
				reference: 'doc-ref',
				createdOn: expect.any(String),
			}),
		);
		await env.sandbox.control.advanceClock(5_000);
		expect((await get(env.sandbox, `/documents/${t.documentId}`)).body.status).toBe('completed');
	});

	test('Get a document: unknown or non-UUID ids answer 404', async () => {
		expectProblem(await get(env.sandbox, `/documents/${randomUUID()}`), 404);
		expectProblem(await get(env.sandbox, '/documents/xyz'), 404);
	});
});

describe('Get the output of a run', () => {
	const outputs = [
		{
			nodeId: 'json',
			kind: 'json' as const,
			contentType: 'application/json',
			filename: 'data.json',
			value: { total: 12.5, lines: [1, 2] },
		},
		{
			nodeId: 'csv',
			kind: 'text' as const,
			contentType: 'text/csv',
			filename: 'table.csv',
			value: 'a,b\n1,2\n',
		},
		{
			nodeId: 'png',
			kind: 'binary' as const,
			contentType: 'image/png',
			filename: 'page.png',
			base64: Buffer.from([137, 80, 78, 71, 1, 2, 3]).toString('base64'),
		},
	];

	async function completedRun(outs: OutputNode[] = outputs): Promise<string> {
		const wf = await env.sandbox.control.createWorkflow({
			outputs: outs,
			script: [{ status: 'completed' }],
		});
		const t = await triggerOk(env.sandbox, wf.id);
		return t.runId!;
	}

	test('Output rule 1: without nodeId the most recently started Download Output node answers (last in the list)', async () => {
		const runId = await completedRun();
		const r = await get(env.sandbox, `/runs/${runId}/output`);
		expect(r.status).toBe(200);
		expect(r.body).toEqual({
			contentType: 'image/png',
			filename: 'page.png',
			isBase64: true,
			output: outputs[2]!.base64,
		});
	});

	test('Run output: JSON arrives as a JSON value, text as a string, binary as base64', async () => {
		const runId = await completedRun();
		expect(
			(await get(env.sandbox, `/runs/${runId}/output`, { query: { nodeId: 'json' } })).body,
		).toEqual({
			contentType: 'application/json',
			filename: 'data.json',
			isBase64: false,
			output: { total: 12.5, lines: [1, 2] },
		});
		expect(
			(await get(env.sandbox, `/runs/${runId}/output`, { query: { nodeId: 'csv' } })).body,
		).toEqual({
			contentType: 'text/csv',
			filename: 'table.csv',
			isBase64: false,
			output: 'a,b\n1,2\n',
		});
		const bin = (await get(env.sandbox, `/runs/${runId}/output`, { query: { nodeId: 'png' } }))
			.body;
		expect(Buffer.from(bin.output, 'base64')).toEqual(Buffer.from([137, 80, 78, 71, 1, 2, 3]));
	});

	test('Output rule 2: a nodeId that is not a node of the run’s graph returns 404', async () => {
		const runId = await completedRun();
		expectProblem(
			await get(env.sandbox, `/runs/${runId}/output`, { query: { nodeId: 'nope' } }),
			404,
		);
	});

	test('Output rule 2: the graph is the one the run executed (later graph edits do not change it)', async () => {
		const wf = await env.sandbox.control.createWorkflow({
			outputs,
			script: [{ status: 'completed' }],
		});
		const t = await triggerOk(env.sandbox, wf.id);
		await env.sandbox.control.updateWorkflow(wf.id, {
			outputs: [{ nodeId: 'new', kind: 'text', value: 'x' }],
		});
		expect(
			(await get(env.sandbox, `/runs/${t.runId}/output`, { query: { nodeId: 'json' } })).status,
		).toBe(200);
		expect(
			(await get(env.sandbox, `/runs/${t.runId}/output`, { query: { nodeId: 'new' } })).status,
		).toBe(404);
	});

	test('Output rule 3: 409 when the run has not completed', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'running' },
		]);
		const t = await triggerOk(env.sandbox);
		const r = await get(env.sandbox, `/runs/${t.runId}/output`);
		expectProblem(r, 409);
		expect(r.body.detail).toMatch(/not completed/);
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [{ status: 'failed' }]);
		const f = await triggerOk(env.sandbox);
		expectProblem(await get(env.sandbox, `/runs/${f.runId}/output`), 409);
	});

	test('Output rule 3: 409 when the run captured no output', async () => {
		const runId = await completedRun([]);
		const r = await get(env.sandbox, `/runs/${runId}/output`);
		expectProblem(r, 409);
		expect(r.body.detail).toMatch(/no output/);
	});

	test('Output rule 4: 413 when the output exceeds 10 MB; exactly 10 MB is returned', async () => {
		const runId = await completedRun([
			{
				nodeId: 'exact',
				kind: 'binary',
				contentType: 'application/octet-stream',
				sizeBytes: 10 * 1024 * 1024,
			},
			{
				nodeId: 'big',
				kind: 'binary',
				contentType: 'application/pdf',
				filename: 'big.pdf',
				sizeBytes: 10 * 1024 * 1024 + 1,
			},
		]);
		const big = await get(env.sandbox, `/runs/${runId}/output`);
		expectProblem(big, 413);
		const exact = await get(env.sandbox, `/runs/${runId}/output`, { query: { nodeId: 'exact' } });
		expect(exact.status).toBe(200);
		const buf = Buffer.from(exact.body.output, 'base64');
		expect(buf.length).toBe(10 * 1024 * 1024);
		expect(buf[300]).toBe(300 % 251);
	});

	test('Run output: unknown run answers 404', async () => {
		expectProblem(await get(env.sandbox, `/runs/${randomUUID()}/output`), 404);
	});
});
