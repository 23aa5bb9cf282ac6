/** No duplicate documents: Idempotency-Key per item, reuse on Retry On Fail, a clear 409. */
import {
	expectPaired,
	pdfItem,
	pdfItems,
	requests,
	submitParams,
	useSandbox,
	waitParams,
} from '../../harness/sandbox';

describe('idempotent submissions', () => {
	const env = useSandbox();
	const wf = () => env.sandbox.defaultWorkflowId;

	it('a dropped response is retried with the same key: exactly one document, and a clear error', async () => {
		await env.sandbox.control.addFault({
			origin: 'api',
			method: 'POST',
			pathPrefix: '/workflows/',
			kind: 'dropAfterProcess',
			count: 1,
		});
		const result = await env.run(submitParams(wf()), { items: [pdfItem(0)] });
		expect(result.error?.message).toBe(
			'This document was already accepted by an earlier attempt with the same idempotency key (409)',
		);
		expect(result.error?.description).toContain('No second document was created');
		expect(result.error?.description).toContain('does not return the earlier result');
		expect(result.error?.description).toMatch(/Correlation ID: \S+/);
		expect(await env.sandbox.control.countDocuments()).toBe(1);
		const posts = await requests(env, { method: 'POST' });
		expect(posts.map((p) => [p.dropped, p.processedStatus])).toEqual([
			[true, 202],
			[false, 409],
		]);
		expect(posts[0].headers['idempotency-key']).toBe(posts[1].headers['idempotency-key']);
	});

	it('with Continue On Fail the lost response becomes an error item, the other items go on', async () => {
		await env.sandbox.control.addFault({
			origin: 'api',
			method: 'POST',
			pathPrefix: '/workflows/',
			kind: 'dropAfterProcess',
			count: 1,
		});
		const result = await env.run(submitParams(wf(), {}, { concurrency: 1 }), {
			items: pdfItems(2),
			continueOnFail: true,
		});
		expectPaired(result, [0, 1]);
		expect(result.items[0].json.error).toMatch(/already accepted/);
		expect(result.items[0].json.httpCode).toBe('409');
		expect(result.items[0].json.traceId).toEqual(expect.any(String));
		expect(result.items[0].json.correlationId).toEqual(expect.any(String));
		expect(result.items[1].json.status).toBe('queued');
		expect(await env.sandbox.control.countDocuments()).toBe(2);
	});

	it('Retry On Fail reuses the first submission instead of creating a second document', async () => {
		await env.sandbox.control.updateWorkflow(wf(), {
			script: [{ status: 'running', ms: 1200 }, { status: 'completed' }],
		});
		// First try: the wait hits its time limit (error); n8n retries the node in the same execution.
		const result = await env.run(waitParams(wf(), { maxWaitMinutes: 0.01 }), {
			items: [pdfItem(0)],
			retryOnFail: true,
			maxTries: 3,
			waitBetweenTries: 1000,
		});
		expect(result.error).toBeUndefined();
		expect(result.items[0].json).toMatchObject({ status: 'completed', waitOutcome: 'completed' });
		expect(await env.sandbox.control.countDocuments()).toBe(1);
		expect(await requests(env, { method: 'POST' })).toHaveLength(1);
	});

	it('the automatic key is derived from execution, node and item: the same execution cannot submit twice', async () => {
		const same = { executionId: '777', nodeId: '5a0e7c39-0a53-4c1e-9d67-0c8f1f2b7a11' };
		const first = await env.run(submitParams(wf()), { items: [pdfItem(0)], ...same });
		expect(first.error).toBeUndefined();
		const again = await env.run(submitParams(wf()), { items: [pdfItem(0)], ...same });
		expect(again.error?.httpCode).toBe('409');
		const other = await env.run(submitParams(wf()), {
			items: [pdfItem(0)],
			executionId: '778',
			nodeId: same.nodeId,
		});
		expect(other.error).toBeUndefined();
		expect(await env.sandbox.control.countDocuments()).toBe(2);
		const keys = (await requests(env, { method: 'POST' })).map((p) => p.headers['idempotency-key']);
		expect(keys[0]).toBe(keys[1]);
		expect(keys[2]).not.toBe(keys[0]);
	});

	it('a custom key is sent as given; items sharing one get one document', async () => {
		const key = '0f6e1d2c-3b4a-4958-8776-a5b4c3d2e1f0';
		const result = await env.run(
			submitParams(
				wf(),
				{},
				{ idempotencyKeyMode: 'custom', customIdempotencyKey: '={{ $json.key }}' },
			),
			{ items: [pdfItem(0, { key }), pdfItem(1, { key })] },
		);
		expect(result.error).toBeUndefined();
		expectPaired(result, [0, 1]);
		expect(result.items[0].json.documentId).toBe(result.items[1].json.documentId);
		const posts = await requests(env, { method: 'POST' });
		expect(posts).toHaveLength(1);
		expect(posts[0].headers['idempotency-key']).toBe(key);
	});

	it('rejects a custom key that is no GUID before any request', async () => {
		const result = await env.run(
			submitParams(wf(), {}, { idempotencyKeyMode: 'custom', customIdempotencyKey: 'order-17' }),
			{ items: [pdfItem(0)] },
		);
		expect(result.error?.message).toBe('The custom idempotency key "order-17" is not a GUID');
		expect(await requests(env)).toHaveLength(0);
	});

	it('with the key turned off sends none, and does not retry an upload whose response was lost', async () => {
		await env.sandbox.control.addFault({
			origin: 'api',
			method: 'POST',
			pathPrefix: '/workflows/',
			kind: 'dropAfterProcess',
			count: 1,
		});
		const result = await env.run(submitParams(wf(), {}, { idempotencyKeyMode: 'off' }), {
			items: [pdfItem(0)],
		});
		expect(result.error?.message).toMatch(/Could not reach the Document Workflow API/);
		const posts = await requests(env, { method: 'POST' });
		expect(posts).toHaveLength(1);
		expect(posts[0].headers['idempotency-key']).toBeUndefined();
	});
});
