/** Files in and out: multipart upload in both binary modes, format errors, original-file links. */
import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import { createHash, randomBytes } from 'node:crypto';
import { useBinaryMode } from '../../harness/n8n';
import { pdf, pdfItem, requests, submitParams, useSandbox } from '../../harness/sandbox';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('uploads', () => {
	const env = useSandbox();
	const wf = () => env.sandbox.defaultWorkflowId;
	afterEach(async () => await useBinaryMode('default'));

	it.each(['default', 'filesystem'] as const)(
		'uploads a 20 MB file intact in %s binary mode (streamed from disk in filesystem mode)',
		async (mode) => {
			await useBinaryMode(mode);
			const data = Buffer.concat([pdf('big'), randomBytes(20 * 1024 * 1024)]);
			const result = await env.run(submitParams(wf()), {
				items: [
					{
						json: {},
						binary: { data: { data, fileName: 'big scan.pdf', mimeType: 'application/pdf' } },
					},
				],
			});
			expect(result.error).toBeUndefined();
			const doc = await env.sandbox.control.getDocument(result.items[0].json.documentId as string);
			expect(doc.sizeBytes).toBe(data.length);
			expect(doc.sha256).toBe(sha256(data));
			expect(doc.filename).toBe('big scan.pdf');
			const [post] = await requests(env, { method: 'POST' });
			if (mode === 'filesystem') expect(post.headers['transfer-encoding']).toBe('chunked');
			else expect(Number(post.headers['content-length'])).toBeGreaterThan(data.length);
		},
	);

	it('sends the file name (non-ASCII and quotes too) and media type', async () => {
		await useBinaryMode('filesystem');
		const fileName = 'Rechnung "März" €.pdf';
		const result = await env.run(submitParams(wf()), {
			items: [
				{ json: {}, binary: { data: { data: pdf('x'), fileName, mimeType: 'application/pdf' } } },
			],
		});
		const doc = await env.sandbox.control.getDocument(result.items[0].json.documentId as string);
		expect(doc.filename).toBe('Rechnung %22März%22 €.pdf');
		expect(doc.contentType).toBe('application/pdf');
	});

	it('explains a format the workflow does not accept, listing the accepted formats', async () => {
		await env.sandbox.control.updateWorkflow(wf(), { triggerFormats: ['pdf', 'png'] });
		const result = await env.run(submitParams(wf()), {
			items: [
				{
					json: {},
					binary: {
						data: { data: Buffer.from('hello'), fileName: 'notes.txt', mimeType: 'text/plain' },
					},
				},
			],
		});
		expect(result.error?.message).toBe('The workflow did not accept this document (400)');
		expect(result.error?.description).toContain('The file "notes.txt" (text/plain) was rejected');
		expect(result.error?.description).toContain('The workflow accepts: pdf, png.');
		expect(result.error?.description).toMatch(/Trace ID: \S+/);
		expect(result.error?.description).toMatch(/Correlation ID: \S+/);
		expect(await env.sandbox.control.countDocuments()).toBe(0);
	});

	it('names a missing binary property and the ones the item has, before any request', async () => {
		const result = await env.run(submitParams(wf(), { binaryPropertyName: 'document' }), {
			items: [pdfItem(0)],
		});
		expect(result.error?.message).toBe(
			'The item has no file in binary property "document" to upload: Submit Document sends a file that an earlier node put into the item, never one given as a parameter',
		);
		expect(result.error?.description).toContain('"data"');
		expect(await requests(env)).toHaveLength(0);
	});

	it('refuses an empty file and a workflow id that is no UUID, before any request', async () => {
		const empty = await env.run(submitParams(wf()), {
			items: [
				{
					json: {},
					binary: {
						data: { data: Buffer.alloc(0), fileName: 'empty.pdf', mimeType: 'application/pdf' },
					},
				},
			],
		});
		expect(empty.error?.message).toBe('The file in binary property "data" is empty');
		const badId = await env.run(submitParams('../events'), { items: [pdfItem(0)] });
		expect(badId.error?.message).toBe('The Workflow ID "../events" is not a valid UUID');
		expect(await requests(env)).toHaveLength(0);
	});
});

describe('Document → Get Original File', () => {
	const env = useSandbox();
	afterEach(async () => await useBinaryMode('default'));

	async function submitted(fileName: string, data: Buffer): Promise<string> {
		const result = await env.run(submitParams(env.sandbox.defaultWorkflowId), {
			items: [{ json: {}, binary: { data: { data, fileName, mimeType: 'application/pdf' } } }],
		});
		return result.items[0].json.documentId as string;
	}

	it('returns the short-lived link', async () => {
		const documentId = await submitted('a.pdf', pdf('a'));
		const result = await env.run({ resource: 'document', operation: 'getOriginal', documentId });
		expect(result.error).toBeUndefined();
		expect(result.items[0].json).toMatchObject({
			documentId,
			url: expect.stringContaining(env.sandbox.fileBaseUrl),
		});
		expect(Date.parse(result.items[0].json.expiresOn as string)).toBeGreaterThan(Date.now());
	});

	it.each(['default', 'filesystem'] as const)(
		'downloads the file under its original name without sending the API key (%s mode)',
		async (mode) => {
			await useBinaryMode(mode);
			const data = pdf('original content ü');
			const documentId = await submitted('Vertrag ü.pdf', data);
			const result = await env.run({
				resource: 'document',
				operation: 'getOriginal',
				documentId,
				download: true,
				binaryPropertyName: 'original',
			});
			expect(result.error).toBeUndefined();
			const file = result.items[0].binary!.original;
			expect(file).toMatchObject({ fileName: 'Vertrag ü.pdf', mimeType: 'application/pdf' });
			expect((await Container.get(BinaryDataService).getAsBuffer(file)).equals(data)).toBe(true);
			expect(result.items[0].json).toMatchObject({
				documentId,
				fileName: 'Vertrag ü.pdf',
				linkRequests: 1,
			});
			expect(result.items[0].pairedItem).toEqual({ item: 0 });

			expect(await env.sandbox.control.fileOriginSawApiKey()).toBe(false);
			const fileRequests = await requests(env, { origin: 'files' });
			expect(fileRequests).toHaveLength(1);
			expect(fileRequests[0].headers['x-api-key']).toBeUndefined();
			const apiRequests = await requests(env, { origin: 'api', pathPrefix: '/documents/' });
			expect(apiRequests[0].headers['x-api-key']).toBe(env.credentials.apiKey);
		},
	);

	it('requests a new link once when the first has expired', async () => {
		const documentId = await submitted('late.pdf', pdf('late'));
		await env.sandbox.control.setSettings({ originalLinkTtlMs: 300 });
		await env.sandbox.control.addFault({ origin: 'files', kind: 'latency', ms: 700, count: 1 });
		const result = await env.run({
			resource: 'document',
			operation: 'getOriginal',
			documentId,
			download: true,
			binaryPropertyName: 'data',
		});
		expect(result.error).toBeUndefined();
		expect(result.items[0].json.linkRequests).toBe(2);
		expect((await requests(env, { origin: 'files' })).map((e) => e.status)).toEqual([410, 200]);
		expect(
			await requests(env, { origin: 'api', pathPrefix: `/documents/${documentId}/original` }),
		).toHaveLength(2);
	});

	it('fails clearly when the fresh link fails too, after exactly one new link', async () => {
		const documentId = await submitted('gone.pdf', pdf('gone'));
		await env.sandbox.control.setSettings({ originalLinkTtlMs: 0 });
		await env.sandbox.control.addFault({ origin: 'files', kind: 'latency', ms: 20 });
		const result = await env.run({
			resource: 'document',
			operation: 'getOriginal',
			documentId,
			download: true,
			binaryPropertyName: 'data',
		});
		expect(result.error?.message).toBe('Downloading the original file failed (HTTP 410)');
		expect(result.error?.description).toContain('even with a freshly requested link');
		expect(await requests(env, { origin: 'files' })).toHaveLength(2);
		expect(
			await requests(env, { origin: 'api', pathPrefix: `/documents/${documentId}/original` }),
		).toHaveLength(2);
	});

	describe("errors from the file host carry the path, never the link's signature", () => {
		async function failedDownload(fault: Record<string, unknown>) {
			const documentId = await submitted('secret.pdf', pdf('secret'));
			await env.sandbox.control.addFault({ origin: 'files', ...fault } as never);
			const result = await env.run({
				resource: 'document',
				operation: 'getOriginal',
				documentId,
				download: true,
				binaryPropertyName: 'data',
			});
			const [fileRequest] = await requests(env, { origin: 'files' });
			const link = new URL(fileRequest.path, env.sandbox.fileBaseUrl);
			const shown = JSON.stringify({
				message: result.error?.message,
				description: result.error?.description,
				error: result.error,
				items: result.items,
			});
			return { result, link, shown };
		}

		it('a server error', async () => {
			const { result, link, shown } = await failedDownload({
				kind: 'status5xx',
				status: 502,
				count: 1,
			});
			expect(result.error?.message).toBe('Downloading the original file failed (HTTP 502)');
			expect(result.error?.description).toContain(`Request: GET ${link.origin}${link.pathname}`);
			expect(link.searchParams.get('sig')).toEqual(expect.any(String));
			expect(shown).not.toContain(link.searchParams.get('sig'));
		});

		it('a connection dropped without an answer', async () => {
			const { result, link, shown } = await failedDownload({ kind: 'drop', count: 1 });
			expect(result.error?.message).toBe(
				'Could not download the original file: the file host gave no answer',
			);
			expect(result.error?.description).toContain(`GET ${link.origin}${link.pathname}`);
			expect(shown).not.toContain(link.searchParams.get('sig'));
			expect(shown).not.toContain(link.search);
		});
	});
});
