/**
 * Submit Document at its edges: a 429 on an upload without a key, an upload that outlives its
 * timeout while the API still holds its key, the upload timeout, and the size of what the node
 * keeps in the saved execution for a large batch.
 */
import { stringify } from 'flatted';
import { request as httpRequest } from 'node:http';
import type { ClientRequest } from 'node:http';
import { uploadTimeoutMs } from '../../../nodes/DocumentWorkflow/helpers/multipartUpload';
import {
	pdfItem,
	pdfItems,
	requests,
	submitParams,
	useSandbox,
	waitParams,
} from '../../harness/sandbox';

describe('Submit Document edges', () => {
	const env = useSandbox();
	const wf = () => env.sandbox.defaultWorkflowId;

	it('retries a 429 on an upload sent without an idempotency key (a 429 was not processed)', async () => {
		await env.sandbox.control.addFault({
			origin: 'api',
			method: 'POST',
			pathPrefix: '/workflows/',
			kind: 'rate429',
			retryAfter: 1,
			count: 1,
		});
		const result = await env.run(submitParams(wf(), {}, { idempotencyKeyMode: 'off' }), {
			items: [pdfItem(0)],
		});
		expect(result.error).toBeUndefined();
		expect(result.items[0].json).toMatchObject({
			status: 'queued',
			documentId: expect.any(String),
		});
		const posts = await requests(env, { method: 'POST' });
		expect(posts.map((p) => p.status)).toEqual([429, 202]);
		expect(posts.every((p) => p.headers['idempotency-key'] === undefined)).toBe(true);
		expect(await env.sandbox.control.countDocuments()).toBe(1);
	});

	it('Upload Timeout ends an attempt that takes longer, with a clear error', async () => {
		await env.sandbox.control.addFault({
			origin: 'api',
			method: 'POST',
			pathPrefix: '/workflows/',
			kind: 'latency',
			ms: 4000,
			count: 1,
		});
		const result = await env.run(
			submitParams(wf(), {}, { idempotencyKeyMode: 'off', uploadTimeoutSeconds: 1 }),
			{ items: [pdfItem(0)] },
		);
		expect(result.error?.message).toBe(
			'Could not reach the Document Workflow API: the request timed out',
		);
		expect(await requests(env, { method: 'POST' })).toHaveLength(1);
	});

	it('sizes the upload timeout to the file: 5 minutes plus 8 s per MB', () => {
		expect(uploadTimeoutMs(0)).toBe(300_000);
		expect(uploadTimeoutMs(200 * 1024 ** 2)).toBe(300_000 + 1_600_000);
		expect(uploadTimeoutMs(undefined)).toBeGreaterThan(uploadTimeoutMs(1024 ** 3));
	});

	describe('a 409 while the first attempt may still be in flight', () => {
		let holder: ClientRequest | undefined;
		afterEach(() => holder?.destroy());

		/** Starts an upload with `key` and leaves it unfinished, so the API holds the key "in flight". */
		async function holdKey(key: string): Promise<void> {
			const url = new URL(`${env.sandbox.baseUrl}/workflows/${wf()}/trigger`);
			holder = httpRequest(url, {
				method: 'POST',
				headers: {
					'X-Api-Key': env.sandbox.apiKey,
					'Idempotency-Key': key,
					'Content-Type': 'multipart/form-data; boundary=held',
				},
			});
			holder.on('error', () => {});
			holder.write(
				'--held\r\nContent-Disposition: form-data; name="file"; filename="slow.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n',
			);
			// The key is held once a second request with it gets 409.
			for (;;) {
				const probe = await fetch(url, {
					method: 'POST',
					headers: {
						'X-Api-Key': env.sandbox.apiKey,
						'Idempotency-Key': key,
						'Content-Type': 'multipart/form-data; boundary=p',
					},
					body: '--p--\r\n',
				});
				await probe.arrayBuffer();
				if (probe.status === 409) return;
				await new Promise((resolve) => setTimeout(resolve, 20));
			}
		}

		it('after our own upload timed out, the 409 says the first attempt may still be in progress, not that it was accepted', async () => {
			const key = '7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
			await holdKey(key);
			// The node's first attempt outlives its 1 s timeout; the retry with the same key meets the held key.
			await env.sandbox.control.addFault({
				origin: 'api',
				method: 'POST',
				pathPrefix: '/workflows/',
				kind: 'latency',
				ms: 3000,
				count: 1,
			});
			const result = await env.run(
				waitParams(wf(), {
					idempotencyKeyMode: 'custom',
					customIdempotencyKey: key,
					uploadTimeoutSeconds: 1,
				}),
				{ items: [pdfItem(0)], continueOnFail: true },
			);
			expect(result.error).toBeUndefined();
			const item = result.items[0].json;
			expect(item.error).toBe(
				'An earlier attempt with the same idempotency key may still be in progress (409)',
			);
			expect(String(item.description)).toContain('No document ID is known yet');
			expect(String(item.description)).not.toContain('was accepted');
			expect(item).toMatchObject({
				httpCode: '409',
				submission: 'inFlight',
				waitOutcome: 'submissionInFlight',
			});
			expect(await env.sandbox.control.countDocuments()).toBe(0);
		});

		it('Retry On Fail after the upload kept timing out: the next run sees a 409 that also says the first attempt may still be in progress', async () => {
			const key = '2b3c4d5e-6f70-4a81-9b2c-3d4e5f6a7b8c';
			await holdKey(key);
			// Every attempt of the node's first run (1 + 4 retries) outlives its 1 s timeout; n8n then retries the node.
			await env.sandbox.control.addFault({
				origin: 'api',
				method: 'POST',
				pathPrefix: '/workflows/',
				kind: 'latency',
				ms: 2500,
				count: 5,
			});
			const result = await env.run(
				submitParams(
					wf(),
					{},
					{ idempotencyKeyMode: 'custom', customIdempotencyKey: key, uploadTimeoutSeconds: 1 },
				),
				{ items: [pdfItem(0)], retryOnFail: true, maxTries: 2, waitBetweenTries: 100 },
			);
			expect(result.error?.message).toBe(
				'An earlier attempt with the same idempotency key may still be in progress (409)',
			);
			const posts = await requests(env, {
				method: 'POST',
				pathPrefix: `/workflows/${wf()}/trigger`,
			});
			expect(posts.filter((p) => p.fault === 'latency')).toHaveLength(5);
		}, 60_000);

		it('a 409 with no attempt of ours left unanswered still reads as accepted', async () => {
			await env.sandbox.control.addFault({
				origin: 'api',
				method: 'POST',
				pathPrefix: '/workflows/',
				kind: 'dropAfterProcess',
				count: 1,
			});
			const result = await env.run(waitParams(wf()), { items: [pdfItem(0)], continueOnFail: true });
			expect(result.items[0].json).toMatchObject({
				error:
					'This document was already accepted by an earlier attempt with the same idempotency key (409)',
				submission: 'accepted',
				waitOutcome: 'alreadySubmitted',
			});
		});
	});

	it('keeps only what a retry needs in the saved execution: bounded per item for 1,000 items with long references', async () => {
		// A distinct 1 KB reference per item (n8n's flatted format stores repeated strings once).
		const reference = '={{ $json.index + "-" + "r".repeat(1000) }}';
		const result = await env.run(submitParams(wf(), { reference }, { concurrency: 50 }), {
			items: pdfItems(1000),
		});
		expect(String(result.items[999].json.reference)).toHaveLength(1004);
		expect(result.error).toBeUndefined();
		expect(result.items).toHaveLength(1000);
		const context = result.run.data.executionData?.contextData ?? {};
		const contextBytes = Buffer.byteLength(JSON.stringify(context));
		// n8n saves an execution's data with flatted; this is what goes into the database.
		const savedBytes = Buffer.byteLength(stringify(result.run.data));
		console.log('saved execution for 1,000 items', {
			contextBytes,
			savedBytes,
			contextBytesPerItem: contextBytes / 1000,
		});
		expect(contextBytes / 1000).toBeLessThan(150);
	}, 120_000);
});
