/** The read operations: workflow, run, output, document, review tasks, events; validation and error details. */
import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import {
	expectPaired,
	pathOf,
	pdf,
	pdfItems,
	requests,
	submitParams,
	useSandbox,
	waitParams,
} from '../../harness/sandbox';

describe('read operations', () => {
	const env = useSandbox();
	const wf = () => env.sandbox.defaultWorkflowId;

	async function completedRun(
		outputs?: Parameters<typeof env.sandbox.control.updateWorkflow>[1]['outputs'],
	): Promise<{ runId: string; documentId: string }> {
		if (outputs) await env.sandbox.control.updateWorkflow(wf(), { outputs });
		const result = await env.run(waitParams(wf()), { items: pdfItems(1) });
		expect(result.items[0].json.status).toBe('completed');
		return {
			runId: result.items[0].json.runId as string,
			documentId: result.items[0].json.documentId as string,
		};
	}

	it('workflow: get returns the workflow with its accepted formats', async () => {
		const result = await env.run({ resource: 'workflow', operation: 'get', workflowId: wf() });
		expect(result.items[0].json).toMatchObject({
			id: wf(),
			name: 'Invoice extraction',
			isEnabled: true,
		});
		expect(result.items[0].json.triggerFormats).toContain('pdf');
	});

	it('run: get returns the run; a 404 carries advice, trace id and correlation id', async () => {
		const { runId, documentId } = await completedRun();
		const result = await env.run({ resource: 'run', operation: 'get', runId });
		expect(result.items[0].json).toMatchObject({
			id: runId,
			documentId,
			status: 'completed',
			workflowId: wf(),
		});

		const missing = await env.run({
			resource: 'run',
			operation: 'get',
			runId: '11111111-2222-4333-8444-555555555555',
		});
		expect(missing.error?.message).toBe('The run was not found (404)');
		expect(missing.error?.httpCode).toBe('404');
		expect(missing.error?.description).toContain('Run → Wait for Completion');
		expect(missing.error?.description).toMatch(/Trace ID: \S+/);
		const [entry] = await requests(env, { pathPrefix: '/runs/11111111' });
		expect(missing.error?.description).toContain(`Correlation ID: ${entry.correlationId}`);
	});

	it('run: getOutput returns JSON under "output", text as a string, a file as binary, chosen by node id', async () => {
		const { runId } = await completedRun([
			{
				nodeId: 'json',
				kind: 'json',
				contentType: 'application/json',
				filename: 'r.json',
				value: [{ a: 1 }, { a: 2 }],
			},
			{
				nodeId: 'xml',
				kind: 'text',
				contentType: 'application/xml',
				filename: 'r.xml',
				value: '<r a="1"/>',
			},
			{
				nodeId: 'img',
				kind: 'binary',
				contentType: 'image/png',
				filename: 'page.png',
				base64: Buffer.from('PNGDATA').toString('base64'),
			},
		]);
		const base = { resource: 'run', operation: 'getOutput', runId, binaryPropertyName: 'out' };
		const json = await env.run({ ...base, nodeId: 'json' });
		expect(json.items[0].json).toEqual({
			runId,
			nodeId: 'json',
			contentType: 'application/json',
			filename: 'r.json',
			kind: 'json',
			output: [{ a: 1 }, { a: 2 }],
		});
		const text = await env.run({ ...base, nodeId: 'xml' });
		expect(text.items[0].json).toMatchObject({
			kind: 'text',
			output: '<r a="1"/>',
			contentType: 'application/xml',
		});
		const file = await env.run({ ...base, nodeId: 'img' });
		expect(file.items[0].json).toMatchObject({
			kind: 'binary',
			filename: 'page.png',
			fileSize: 7,
			binaryPropertyName: 'out',
		});
		expect(file.items[0].json.output).toBeUndefined();
		expect(file.items[0].binary!.out).toMatchObject({
			fileName: 'page.png',
			mimeType: 'image/png',
		});
		expect(
			(await Container.get(BinaryDataService).getAsBuffer(file.items[0].binary!.out)).toString(),
		).toBe('PNGDATA');
		// Without a node id: the most recently started Download Output node answers.
		const latest = await env.run({ ...base, nodeId: '' });
		expect(latest.error).toBeUndefined();
		expect(latest.items[0].json.nodeId).toBeUndefined();
		const q = (await requests(env, { pathPrefix: `/runs/${runId}/output` })).map((e) => e.path);
		expect(q).toContain(`/runs/${runId}/output?nodeId=json`);
		expect(q).toContain(`/runs/${runId}/output`);
	});

	it('run: getOutput explains 409 (not completed / no output), 413 (over 10 MB) and 404 (unknown node id)', async () => {
		await env.sandbox.control.setNextScripts(wf(), [{ status: 'running' }]);
		const submitted = await env.run(submitParams(wf()), { items: pdfItems(1) });
		const running = submitted.items[0].json.runId as string;
		await new Promise((resolve) => setTimeout(resolve, 100));
		const notDone = await env.run({
			resource: 'run',
			operation: 'getOutput',
			runId: running,
			binaryPropertyName: 'data',
		});
		expect(notDone.error?.message).toBe('The run has no output to return yet (409)');
		expect(notDone.error?.description).toContain(
			'has not completed yet, or it completed without capturing any output',
		);

		const { runId } = await completedRun([
			{
				nodeId: 'big',
				kind: 'binary',
				contentType: 'application/pdf',
				filename: 'big.pdf',
				sizeBytes: 11 * 1024 * 1024,
			},
		]);
		const tooBig = await env.run({
			resource: 'run',
			operation: 'getOutput',
			runId,
			binaryPropertyName: 'data',
		});
		expect(tooBig.error?.message).toBe(
			'The run output is larger than 10 MB and cannot be returned through the API (413)',
		);
		const unknownNode = await env.run({
			resource: 'run',
			operation: 'getOutput',
			runId,
			nodeId: 'nope',
			binaryPropertyName: 'data',
		});
		expect(unknownNode.error?.message).toBe(
			'The run or the requested output node was not found (404)',
		);
	});

	it('document: get and getRuns (one item per top-level run, newest first)', async () => {
		const { runId, documentId } = await completedRun();
		const doc = await env.run({ resource: 'document', operation: 'get', documentId });
		expect(doc.items[0].json).toMatchObject({ id: documentId, status: expect.any(String) });
		const restart = await env.sandbox.control.createRun(documentId, {
			kind: 'restart_from_node',
			sourceRunId: runId,
		});
		const runs = await env.run(
			{ resource: 'document', operation: 'getRuns', documentId },
			{ items: [{ json: {} }, { json: {} }] },
		);
		expect(runs.items.map((item) => item.json.id)).toEqual([restart.id, runId, restart.id, runId]);
		expectPaired(runs, [0, 0, 1, 1]);
		expect(runs.items[0].json).toMatchObject({
			kind: 'restart_from_node',
			sourceRunId: runId,
			documentId,
		});
	});

	it('reviewTask: get and getMany with filters, limit and every page', async () => {
		await env.sandbox.control.updateWorkflow(wf(), { script: [{ status: 'review' }] });
		const submitted = await env.run(submitParams(wf(), {}, { concurrency: 20 }), {
			items: pdfItems(103),
		});
		expect(submitted.error).toBeUndefined();
		let tasks = await env.sandbox.control.listReviewTasks();
		for (let i = 0; i < 50 && tasks.length < 103; i++) {
			await new Promise((resolve) => setTimeout(resolve, 50));
			tasks = await env.sandbox.control.listReviewTasks();
		}
		expect(tasks).toHaveLength(103);
		await env.sandbox.control.decideReviewTask(tasks[0].id, 'rejected');
		await env.sandbox.control.clearRequests();

		const all = await env.run({ resource: 'reviewTask', operation: 'getMany', returnAll: true });
		expect(all.items).toHaveLength(103);
		const created = all.items.map((item) => Date.parse(item.json.createdOn as string));
		expect([...created].sort((a, b) => b - a)).toEqual(created);
		expect((await requests(env, { pathPrefix: '/review-tasks' })).map((e) => e.path)).toEqual([
			'/review-tasks?page=1&pageSize=100',
			'/review-tasks?page=2&pageSize=100',
		]);

		const limited = await env.run({
			resource: 'reviewTask',
			operation: 'getMany',
			returnAll: false,
			limit: 7,
		});
		expect(limited.items).toHaveLength(7);
		const rejected = await env.run({
			resource: 'reviewTask',
			operation: 'getMany',
			returnAll: true,
			filters: { status: 'rejected' },
		});
		expect(rejected.items.map((item) => item.json.id)).toEqual([tasks[0].id]);
		const byRun = await env.run({
			resource: 'reviewTask',
			operation: 'getMany',
			limit: 50,
			filters: { runId: tasks[5].runId, workflowId: wf() },
		});
		expect(byRun.items.map((item) => item.json.id)).toEqual([tasks[5].id]);

		const one = await env.run({
			resource: 'reviewTask',
			operation: 'get',
			reviewTaskId: tasks[0].id,
		});
		expect(one.items[0].json).toMatchObject({
			id: tasks[0].id,
			status: 'rejected',
			decision: 'rejected',
		});
	});

	it('event: getMany pages through every event oldest first, filters by type and after', async () => {
		const bulk = await env.sandbox.control.createEvents(
			Array.from({ length: 230 }, (_, i) => ({
				type: i % 2 ? 'run.completed' : 'run.failed',
				data: { n: i },
			})),
			{ returnIds: true },
		);
		const all = await env.run({ resource: 'event', operation: 'getMany', returnAll: true });
		expect(all.items).toHaveLength(230);
		expect(all.items.map((item) => item.json.id)).toEqual(bulk.ids);
		expect(all.items[0].json).toMatchObject({
			type: 'run.failed',
			data: { n: 0 },
			environment: 'prod',
		});
		expect((await requests(env, { pathPrefix: '/events' })).map((e) => e.path)).toEqual([
			'/events?page=1&pageSize=100',
			'/events?page=2&pageSize=100',
			'/events?page=3&pageSize=100',
		]);

		const typed = await env.run({
			resource: 'event',
			operation: 'getMany',
			limit: 3,
			filters: { type: 'run.completed' },
		});
		expect(typed.items.map((item) => (item.json.data as { n: number }).n)).toEqual([1, 3, 5]);
		const after = await env.run({
			resource: 'event',
			operation: 'getMany',
			returnAll: true,
			filters: { after: bulk.ids![227] },
		});
		expect(after.items.map((item) => item.json.id)).toEqual(bulk.ids!.slice(228));
	});

	it.each([
		[
			{ resource: 'event', operation: 'getMany', limit: 0 },
			'Limit must be a whole number from 1 to 100, not "0"',
		],
		[
			{ resource: 'event', operation: 'getMany', limit: 101 },
			'Limit must be a whole number from 1 to 100, not "101"',
		],
		[
			{
				resource: 'event',
				operation: 'getMany',
				limit: 5,
				filters: { type: '={{ "run.started" }}' },
			},
			'"run.started" is not a valid event type filter',
		],
		[
			{ resource: 'event', operation: 'getMany', limit: 5, filters: { after: 'latest' } },
			'"After Event ID" must be an event ID (a UUID), not "latest"',
		],
		[
			{
				resource: 'reviewTask',
				operation: 'getMany',
				limit: 5,
				filters: { status: '={{ "open" }}' },
			},
			'"open" is not a valid review task status filter',
		],
		[
			{ resource: 'reviewTask', operation: 'getMany', limit: 5, filters: { runId: 'run-1' } },
			'The Run ID "run-1" is not a valid UUID',
		],
		[
			{ resource: 'reviewTask', operation: 'get', reviewTaskId: 'task 7' },
			'The Review Task ID "task 7" is not a valid UUID',
		],
		[
			{ resource: 'document', operation: 'getOriginal', documentId: '42' },
			'The Document ID "42" is not a valid UUID',
		],
		[
			{ resource: 'run', operation: 'getOutput', runId: 'x/../y', binaryPropertyName: 'data' },
			'The Run ID "x/../y" is not a valid UUID',
		],
	])('validates %j before any request', async (parameters, message) => {
		const result = await env.run(parameters);
		expect(result.error?.message).toBe(message);
		expect(await requests(env)).toHaveLength(0);
	});

	it('with Continue On Fail, failing reads become paired error items with the API ids', async () => {
		const { runId } = await completedRun();
		const result = await env.run(
			{ resource: 'run', operation: 'get', runId: '={{ $json.runId }}' },
			{
				items: [
					{ json: { runId: '11111111-2222-4333-8444-555555555555' } },
					{ json: { runId } },
					{ json: { runId: 'bad' } },
				],
				continueOnFail: true,
			},
		);
		expectPaired(result, [0, 1, 2]);
		expect(result.items[0].json).toMatchObject({
			error: 'The run was not found (404)',
			httpCode: '404',
			traceId: expect.any(String),
			correlationId: expect.any(String),
		});
		expect(result.items[1].json.id).toBe(runId);
		expect(result.items[2].json.error).toBe('The Run ID "bad" is not a valid UUID');
		// A path segment, not a substring: a random run id may hold "bad" (hex digits).
		expect(
			(await requests(env, { pathPrefix: '/runs/' }))
				.map(pathOf)
				.filter((p) => p.split('/').includes('bad')),
		).toHaveLength(0);
	});

	it('obeys Retry-After on 429 for reads', async () => {
		await env.sandbox.control.addFault({
			origin: 'api',
			method: 'GET',
			pathPrefix: '/workflows/',
			kind: 'rate429',
			retryAfter: 1,
			count: 1,
		});
		const result = await env.run({ resource: 'workflow', operation: 'get', workflowId: wf() });
		expect(result.error).toBeUndefined();
		expect((await requests(env, { pathPrefix: '/workflows/' })).map((e) => e.status)).toEqual([
			429, 200,
		]);
	});

	it('builds a binary-less item for getOriginal and keeps input order across items', async () => {
		const submitted = await env.run(submitParams(wf()), { items: pdfItems(3) });
		const ids = submitted.items.map((item) => item.json.documentId as string);
		const result = await env.run(
			{ resource: 'document', operation: 'getOriginal', documentId: '={{ $json.documentId }}' },
			{ items: ids.map((documentId) => ({ json: { documentId } })) },
		);
		expect(result.items.map((item) => item.json.documentId)).toEqual(ids);
		expectPaired(result, [0, 1, 2]);
		expect(result.items.every((item) => item.binary === undefined)).toBe(true);
		void pdf;
	});
});
