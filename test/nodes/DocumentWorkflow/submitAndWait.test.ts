/**
 * Workflow → Submit Document with Wait for Completion, and Run → Wait for Completion:
 * the wait engine (nodes/DocumentWorkflow/waiting/) through n8n's WorkflowExecute against the sandbox.
 */
import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import { uploadParts } from '../../../nodes/DocumentWorkflow/actions/workflow/trigger.operation';
import { activeWatcherCount } from '../../../nodes/DocumentWorkflow/waiting/loop';
import { useBinaryMode } from '../../harness/n8n';
import {
	FAST_WAIT,
	expectPaired,
	pathOf,
	pdf,
	pdfItem,
	pdfItems,
	requests,
	submitParams,
	useSandbox,
	waitParams,
} from '../../harness/sandbox';

describe('Submit Document and wait', () => {
	const env = useSandbox();
	const wf = () => env.sandbox.defaultWorkflowId;

	it('returns the trigger result without waiting, with the file, name, type and reference sent', async () => {
		const result = await env.run(submitParams(wf(), { reference: 'invoice-42' }), {
			items: [pdfItem(0)],
		});
		expect(result.error).toBeUndefined();
		expect(result.items).toHaveLength(1);
		const json = result.items[0].json;
		expect(json.status).toBe('queued');
		expect(json.reference).toBe('invoice-42');
		expect(typeof json.runId).toBe('string');
		expectPaired(result, [0]);
		const doc = await env.sandbox.control.getDocument(json.documentId as string);
		expect(doc.filename).toBe('doc-0.pdf');
		expect(doc.contentType).toBe('application/pdf');
		expect(doc.reference).toBe('invoice-42');
		expect(Buffer.from(doc.headBase64, 'base64').toString()).toContain('document 0');
		const posts = await requests(env, { method: 'POST' });
		expect(posts).toHaveLength(1);
		expect(posts[0].headers['idempotency-key']).toMatch(
			/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
		);
	});

	it('waits for 50 runs together: every document submitted once, then polled concurrently, few requests each', async () => {
		await env.sandbox.control.updateWorkflow(wf(), {
			script: [
				{ status: 'queued', ms: 100 },
				{ status: 'running', ms: 2900 },
				{ status: 'completed' },
			],
		});
		// Default intervals (1 s growing ×1.5), as a user would run it.
		const result = await env.run(
			submitParams(wf(), { waitForCompletion: true }, { includeOutput: true, concurrency: 20 }),
			{
				items: pdfItems(50),
			},
		);
		expect(result.error).toBeUndefined();
		expect(result.items).toHaveLength(50);
		expectPaired(
			result,
			Array.from({ length: 50 }, (_, i) => i),
		);
		expect(
			result.items.every(
				(item) => item.json.status === 'completed' && item.json.waitOutcome === 'completed',
			),
		).toBe(true);
		expect(result.items.every((item) => (item.json.output as { pages?: number }).pages === 1)).toBe(
			true,
		);
		expect(new Set(result.items.map((item) => item.json.documentId)).size).toBe(50);
		expect(await env.sandbox.control.countDocuments({ workflowId: wf() })).toBe(50);

		const log = await requests(env, { origin: 'api' });
		const posts = log.filter((e) => e.method === 'POST');
		const polls = log.filter((e) => e.method === 'GET' && /^\/runs\/[^/]+$/.test(pathOf(e)));
		const outputs = log.filter((e) => /\/output$/.test(pathOf(e)));
		expect(posts).toHaveLength(50);
		expect(outputs).toHaveLength(50);
		// Waited as one batch: a few runs are watched to learn the run length, every other run
		// is checked once, when the batch is done (runs of equal length are all final by then).
		const runIds = result.items.map((item) => item.json.runId as string);
		const checksOf = (runId: string) => polls.filter((e) => pathOf(e) === `/runs/${runId}`).length;
		expect(runIds.every((runId) => checksOf(runId) >= 1)).toBe(true);
		expect(runIds.filter((runId) => checksOf(runId) === 1).length).toBeGreaterThanOrEqual(40);
		// Few requests per document (trigger, checks and output read all counted).
		expect(log.length / 50).toBeLessThanOrEqual(4);
	});

	/** Every upload takes `ms` longer. */
	const slowUploads = async (ms: number) =>
		await env.sandbox.control.addFault({
			kind: 'latency',
			ms,
			method: 'POST',
			pathPrefix: '/workflows/',
		});

	it('reads the first runs while later documents still upload, each item with its own run', async () => {
		// 40 documents, 5 uploads at once, each taking 200 ms: 1.6 s of uploads; runs of 300 ms.
		await env.sandbox.control.updateWorkflow(wf(), {
			script: [{ status: 'running', ms: 300 }, { status: 'completed' }],
		});
		await slowUploads(200);
		const result = await env.run(waitParams(wf(), { concurrency: 5 }), { items: pdfItems(40) });
		expect(result.error).toBeUndefined();
		expect(result.items.map((item) => item.json.waitOutcome)).toEqual(
			new Array(40).fill('completed'),
		);
		expectPaired(
			result,
			Array.from({ length: 40 }, (_, i) => i),
		);
		const log = await requests(env, { origin: 'api' });
		const posts = log.filter((e) => e.method === 'POST');
		const reads = log.filter((e) => e.method === 'GET' && /^\/runs\/[^/]+$/.test(pathOf(e)));
		expect(posts).toHaveLength(40);
		// Before, every upload came before the first read: the first runs waited for the last upload.
		const lastUpload = Math.max(...posts.map((e) => e.seq));
		expect(reads.filter((e) => e.seq < lastUpload).length).toBeGreaterThan(0);
		const runIds = result.items.map((item) => String(item.json.runId));
		expect(new Set(runIds).size).toBe(40);
	});

	it('a run that fails while later documents upload: the uploads not started stop, the node fails naming it, nothing waits on', async () => {
		// The first run fails at once; the others would run for a minute.
		await env.sandbox.control.updateWorkflow(wf(), {
			script: [{ status: 'running', ms: 60_000 }, { status: 'completed' }],
		});
		await env.sandbox.control.setNextScripts(wf(), [
			{ status: 'running', ms: 100 },
			{ status: 'failed', error: { code: 'BROKEN' } },
		]);
		await slowUploads(200);
		const result = await env.run(waitParams(wf(), { concurrency: 5 }), { items: pdfItems(100) });
		expect(result.error?.message).toMatch(/^Run [0-9a-f-]{36} failed: BROKEN/);
		const posts = (await requests(env, { origin: 'api' })).filter((e) => e.method === 'POST');
		// 100 uploads take 4 s; the failure is known within a second of the first.
		expect(posts.length).toBeLessThan(100);
		expect(activeWatcherCount()).toBe(0);
	});

	it('an upload that fails while earlier runs are waited on: the node fails naming its item, nothing waits on', async () => {
		await env.sandbox.control.updateWorkflow(wf(), {
			script: [{ status: 'running', ms: 60_000 }, { status: 'completed' }],
		});
		const items = pdfItems(30);
		// The 21st item has no file: its upload fails before any request, after the first part's runs began.
		delete items[20].binary;
		const started = Date.now();
		const result = await env.run(waitParams(wf(), { concurrency: 5 }), { items });
		expect(result.error?.message).toMatch(/binary|file/i);
		expect(Date.now() - started).toBeLessThan(30_000);
		expect(activeWatcherCount()).toBe(0);
	});

	it('keeps waiting through unknown statuses, and keeps unknown fields', async () => {
		await env.sandbox.control.setNextScripts(wf(), {
			steps: [{ status: 'paused_for_audit', ms: 400 }, { status: 'completed' }],
			extraFields: { futureField: 'kept' },
			kind: 'future_kind',
		});
		const result = await env.run(waitParams(wf()), { items: [pdfItem(0)] });
		expect(result.error).toBeUndefined();
		expect(result.items[0].json).toMatchObject({
			status: 'completed',
			waitOutcome: 'completed',
			futureField: 'kept',
			kind: 'future_kind',
		});
		const polls = (await requests(env, { method: 'GET', pathPrefix: '/runs/' })).filter(
			(e) => e.status === 200,
		);
		expect(polls.length).toBeGreaterThanOrEqual(2);
	});

	it('obeys Retry-After when polling is rate limited, and still completes', async () => {
		await env.sandbox.control.setNextScripts(wf(), [
			{ status: 'running', ms: 200 },
			{ status: 'completed' },
		]);
		await env.sandbox.control.addFault({
			origin: 'api',
			method: 'GET',
			pathPrefix: '/runs/',
			kind: 'rate429',
			retryAfter: 1,
			count: 1,
		});
		const result = await env.run(waitParams(wf()), { items: [pdfItem(0)] });
		expect(result.error).toBeUndefined();
		expect(result.items[0].json.status).toBe('completed');
		const polls = await requests(env, { method: 'GET', pathPrefix: '/runs/' });
		expect(polls[0].status).toBe(429);
		// The next poll waited for the window: Retry-After is 1 s on the sandbox clock.
		expect(polls[1].realTimeMs - polls[0].realTimeMs).toBeGreaterThanOrEqual(950);
	});

	it('waits out the 404 window of a run that does not exist yet', async () => {
		await env.sandbox.control.setNextScripts(wf(), {
			steps: [{ status: 'running', ms: 50 }, { status: 'completed' }],
			startDelayMs: 1500,
		});
		const result = await env.run(waitParams(wf(), { notFoundGraceSeconds: 5 }), {
			items: [pdfItem(0)],
		});
		expect(result.error).toBeUndefined();
		expect(result.items[0].json).toMatchObject({ status: 'completed', waitOutcome: 'completed' });
		const polls = await requests(env, { method: 'GET', pathPrefix: '/runs/' });
		expect(polls.filter((e) => e.status === 404).length).toBeGreaterThanOrEqual(1);
		expect(polls.filter((e) => e.status === 200).length).toBeGreaterThanOrEqual(1);
	});

	it.each([
		['failed', 'notStarted'],
		['cancelled', 'notStarted'],
		['held', 'held'],
	] as const)(
		'explains a run that never starts (document %s) after the grace period',
		async (documentStatus, outcome) => {
			await env.sandbox.control.setNextScripts(wf(), {
				steps: [{ status: 'completed' }],
				neverStarts: documentStatus,
			});
			const result = await env.run(
				waitParams(wf(), { notFoundGraceSeconds: 0.5, onFailed: 'item' }),
				{ items: [pdfItem(0)] },
			);
			expect(result.error).toBeUndefined();
			const json = result.items[0].json;
			expect(json).toMatchObject({ status: documentStatus, waitOutcome: outcome });
			expect(String(json.message)).toContain('never started');
			expect(String(json.message)).toContain(documentStatus);
			const docReads = await requests(env, {
				method: 'GET',
				pathPrefix: `/documents/${json.documentId as string}`,
			});
			expect(docReads.length).toBeGreaterThanOrEqual(1);
		},
	);

	it('fails clearly when a run never starts because its document failed (error mode)', async () => {
		await env.sandbox.control.setNextScripts(wf(), {
			steps: [{ status: 'completed' }],
			neverStarts: 'failed',
		});
		const result = await env.run(waitParams(wf(), { notFoundGraceSeconds: 0.3 }), {
			items: [pdfItem(0)],
		});
		expect(result.error?.message).toMatch(
			/never started .*the document failed before a run started/,
		);
	});

	it('returns a held trigger result at once, without polling', async () => {
		await env.sandbox.control.updateWorkflow(wf(), { autoRun: false });
		const result = await env.run(waitParams(wf()), { items: [pdfItem(0)] });
		expect(result.error).toBeUndefined();
		expect(result.items[0].json).toMatchObject({
			status: 'held',
			runId: null,
			waitOutcome: 'held',
		});
		expect(String(result.items[0].json.message)).toMatch(/waits until someone runs it/);
		expect(await requests(env, { method: 'GET', pathPrefix: '/runs/' })).toHaveLength(0);
	});

	it('stops early at review when asked, and otherwise waits through a review until it is decided', async () => {
		await env.sandbox.control.updateWorkflow(wf(), {
			script: [{ status: 'running', ms: 50 }, { status: 'review' }, { status: 'completed' }],
		});
		const early = await env.run(waitParams(wf(), { stopAt: ['review'] }), { items: [pdfItem(0)] });
		expect(early.error).toBeUndefined();
		expect(early.items[0].json).toMatchObject({
			status: 'review',
			waitOutcome: 'stoppedEarly',
			finished: false,
		});

		const waiting = env.run(waitParams(wf(), { maxWaitMinutes: 0 }), { items: [pdfItem(1)] });
		let task;
		for (let i = 0; i < 100 && !task; i++) {
			await new Promise((resolve) => setTimeout(resolve, 50));
			const tasks = await env.sandbox.control.listReviewTasks({ status: 'pending' });
			task = tasks.find((t) => t.runId !== early.items[0].json.runId);
		}
		expect(task).toBeDefined();
		await env.sandbox.control.decideReviewTask(task!.id, 'approved');
		const result = await waiting;
		expect(result.error).toBeUndefined();
		expect(result.items[0].json).toMatchObject({
			status: 'completed',
			waitOutcome: 'completed',
			runId: task!.runId,
		});
	});

	it('stops early at waiting when asked', async () => {
		await env.sandbox.control.setNextScripts(wf(), [{ status: 'waiting' }]);
		const result = await env.run(waitParams(wf(), { stopAt: ['review', 'waiting'] }), {
			items: [pdfItem(0)],
		});
		expect(result.items[0].json).toMatchObject({ status: 'waiting', waitOutcome: 'stoppedEarly' });
	});

	it('at the time limit fails naming the run and its status, or returns an item', async () => {
		await env.sandbox.control.updateWorkflow(wf(), { script: [{ status: 'running' }] });
		const failed = await env.run(waitParams(wf(), { maxWaitMinutes: 0.01 }), {
			items: [pdfItem(0)],
		});
		const runId = (await env.sandbox.control.listRuns({ workflowId: wf() }))[0].id;
		expect(failed.error?.message).toBe(
			`Run ${runId} was still "running" when the time limit of 0.6 s was reached.`,
		);

		const item = await env.run(waitParams(wf(), { maxWaitMinutes: 0.01, onTimeLimit: 'item' }), {
			items: [pdfItem(1)],
		});
		expect(item.error).toBeUndefined();
		expect(item.items[0].json).toMatchObject({
			status: 'running',
			waitOutcome: 'timeLimit',
			finished: false,
		});
		expect(String(item.items[0].json.message)).toContain('time limit');
	});

	it.each([
		[
			'failed',
			{ code: 'EXTRACTION_FAILED', message: 'The scan is unreadable' },
			'failed: EXTRACTION_FAILED: The scan is unreadable',
		],
		['cancelled', { code: 'CANCELLED_BY_USER' }, 'was cancelled: CANCELLED_BY_USER'],
	] as const)(
		'a %s run is an error by default, or an item to route on',
		async (status, error, text) => {
			await env.sandbox.control.updateWorkflow(wf(), {
				script: [
					{ status: 'running', ms: 50 },
					{ status, error },
				],
			});
			const failed = await env.run(waitParams(wf()), { items: [pdfItem(0)] });
			expect(failed.error?.message).toMatch(new RegExp(`^Run [0-9a-f-]{36} ${text}$`));
			expect(failed.error?.description).toContain('Return an Item');

			const routed = await env.run(waitParams(wf(), { onFailed: 'item', includeOutput: true }), {
				items: [pdfItem(1)],
			});
			expect(routed.error).toBeUndefined();
			expect(routed.items[0].json).toMatchObject({
				status,
				waitOutcome: status,
				finished: true,
				error,
			});
			expect(routed.items[0].json.output).toBeUndefined();
		},
	);

	it('includes text and binary outputs, in both binary modes', async () => {
		await env.sandbox.control.updateWorkflow(wf(), {
			outputs: [
				{
					nodeId: 'csv',
					kind: 'text',
					contentType: 'text/csv',
					filename: 'rows.csv',
					value: 'a,b\n1,2\n',
				},
				{
					nodeId: 'pdf',
					kind: 'binary',
					contentType: 'application/pdf',
					filename: 'stamped.pdf',
					base64: pdf('stamped').toString('base64'),
				},
			],
		});
		const text = await env.run(waitParams(wf(), { includeOutput: true, outputNodeId: 'csv' }), {
			items: [pdfItem(0)],
		});
		expect(text.items[0].json).toMatchObject({
			output: 'a,b\n1,2\n',
			outputKind: 'text',
			outputContentType: 'text/csv',
			outputFilename: 'rows.csv',
		});

		for (const mode of ['default', 'filesystem'] as const) {
			await useBinaryMode(mode);
			try {
				const binary = await env.run(
					waitParams(
						wf(),
						{ includeOutput: true, outputNodeId: 'pdf' },
						{ binaryPropertyName: 'file' },
					),
					{
						items: [
							{
								json: {},
								binary: {
									file: { data: pdf('in'), fileName: 'in.pdf', mimeType: 'application/pdf' },
								},
							},
						],
					},
				);
				expect(binary.error).toBeUndefined();
				expect(binary.items[0].json).toMatchObject({
					outputKind: 'binary',
					outputBinaryPropertyName: 'file',
					outputFilename: 'stamped.pdf',
				});
				const file = binary.items[0].binary!.file;
				expect(file).toMatchObject({ fileName: 'stamped.pdf', mimeType: 'application/pdf' });
				expect(Boolean(file.id)).toBe(mode === 'filesystem');
				const content = await Container.get(BinaryDataService).getAsBuffer(file);
				expect(content.equals(pdf('stamped'))).toBe(true);
			} finally {
				await useBinaryMode('default');
			}
		}
	});

	it('reports a missing output in the item instead of failing (409)', async () => {
		await env.sandbox.control.updateWorkflow(wf(), { outputs: [] });
		const result = await env.run(waitParams(wf(), { includeOutput: true }), {
			items: [pdfItem(0)],
		});
		expect(result.error).toBeUndefined();
		expect(result.items[0].json.output).toBeNull();
		expect(String(result.items[0].json.outputError)).toContain('(409)');
	});

	it('with Continue On Fail gives one error item per failed input and keeps the others, all paired', async () => {
		await env.sandbox.control.setNextScripts(wf(), [
			{ status: 'running', ms: 30 },
			{ status: 'failed', error: { code: 'BAD' } },
		]);
		const items = [
			pdfItem(0),
			{
				json: { index: 1 },
				binary: { other: { data: pdf('x'), fileName: 'x.pdf', mimeType: 'application/pdf' } },
			},
			pdfItem(2),
		];
		const result = await env.run(waitParams(wf()), { items, continueOnFail: true });
		expect(result.error).toBeUndefined();
		expect(result.items).toHaveLength(3);
		expectPaired(result, [0, 1, 2]);
		// Items 0 and 2 upload concurrently, so either one may receive the failing script.
		const [failed, completed] = result.items[0].json.error
			? [result.items[0], result.items[2]]
			: [result.items[2], result.items[0]];
		expect(failed.json.error).toMatch(/failed: BAD/);
		expect(completed.json).toMatchObject({ status: 'completed' });
		expect(result.items[1].json.error).toBe(
			'The item has no file in binary property "data" to upload: Submit Document sends a file that an earlier node put into the item, never one given as a parameter',
		);
		expect(result.items[1].json.description).toContain('"other"');
	});

	it('stops a wait promptly when the execution is cancelled, and polls no more', async () => {
		await env.sandbox.control.updateWorkflow(wf(), { script: [{ status: 'running' }] });
		const result = await env.run(waitParams(wf(), { maxWaitMinutes: 0 }), {
			items: pdfItems(3),
			cancelAfterMs: 800,
		});
		expect(result.items).toHaveLength(0);
		expect(result.run.status).toBe('canceled');
		// A check sent just before the cancel may reach the sandbox (in this process) after the node
		// returned on a busy machine: count from a moment later, then nothing more may come.
		await new Promise((resolve) => setTimeout(resolve, 300));
		const before = (await requests(env, { pathPrefix: '/runs/' })).length;
		expect(before).toBeGreaterThan(0);
		await new Promise((resolve) => setTimeout(resolve, 600));
		expect((await requests(env, { pathPrefix: '/runs/' })).length).toBe(before);
	});
});

describe('the parts Submit Document uploads in', () => {
	const sizes = (count: number, concurrency: number, wait = true) =>
		uploadParts(count, concurrency, wait).map(([from, to]) => to - from);

	it('without waiting: one part; with it: doubling from Concurrent Checks, no small last part', () => {
		expect(sizes(5000, 10, false)).toEqual([5000]);
		expect(sizes(1, 10)).toEqual([1]);
		expect(sizes(11, 10)).toEqual([11]);
		expect(sizes(30, 10)).toEqual([10, 20]);
		expect(sizes(5000, 10)).toEqual([10, 20, 40, 80, 160, 320, 640, 1280, 2450]);
		const parts = uploadParts(5000, 10, true);
		// Each part starts where the one before ended, and the last ends with the items.
		parts.forEach(([from], index) => expect(from).toBe(index === 0 ? 0 : parts[index - 1][1]));
		expect(parts[parts.length - 1][1]).toBe(5000);
	});
});

describe('Run → Wait for Completion', () => {
	const env = useSandbox();

	it('waits for existing runs (same engine), in item order, failed ones as items when chosen', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		await env.sandbox.control.setNextScripts(wf, [
			{ status: 'running', ms: 300 },
			{ status: 'completed' },
		]);
		await env.sandbox.control.setNextScripts(wf, [
			{ status: 'running', ms: 100 },
			{ status: 'failed', error: { code: 'X' } },
		]);
		// One upload at a time, so the first item's run surely takes the first script.
		const runIds: string[] = [];
		for (const item of pdfItems(2)) {
			const submitted = await env.run(submitParams(wf), { items: [item] });
			runIds.push(submitted.items[0].json.runId as string);
		}
		const result = await env.run(
			{
				resource: 'run',
				operation: 'wait',
				runId: '={{ $json.runId }}',
				options: { ...FAST_WAIT, onFailed: 'item' },
			},
			{ items: runIds.map((runId) => ({ json: { runId } })) },
		);
		expect(result.error).toBeUndefined();
		expectPaired(result, [0, 1]);
		expect(result.items.map((item) => [item.json.runId, item.json.status])).toEqual([
			[runIds[0], 'completed'],
			[runIds[1], 'failed'],
		]);
	});

	it('rejects a run id that is no UUID before any request', async () => {
		const result = await env.run({
			resource: 'run',
			operation: 'wait',
			runId: 'abc',
			options: FAST_WAIT,
		});
		expect(result.error?.message).toBe('The Run ID "abc" is not a valid UUID');
		expect(await requests(env)).toHaveLength(0);
	});

	it('explains a run id that stays 404 with no document to ask', async () => {
		const runId = '3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70';
		const result = await env.run({
			resource: 'run',
			operation: 'wait',
			runId,
			options: { ...FAST_WAIT, notFoundGraceSeconds: 0.3 },
		});
		expect(result.error?.message).toBe(`Run ${runId} was not found (404) for 0.3 s`);
	});
});
