/**
 * The catalogue of bad inputs: each entry is one thing a user, a credential or the server can
 * get wrong, and the exact, clear error the nodes must give for it. Every case runs through
 * n8n-core against the sandbox. Cases marked `noRequest` must be refused before anything is
 * sent; cases marked `maxMs` must end within that time (no hang).
 */
import type { IDataObject } from 'n8n-workflow';

import type { DocumentWorkflowCredentials, InputItem, NodeRunResult } from '../harness/n8n';
import { pollTrigger, runActionNode, testCredential } from '../harness/n8n';
import { FAST_WAIT, pdfItem, submitParams, useSandbox } from '../harness/sandbox';

const env = useSandbox();

const UUID = '3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70';
const document = pdfItem(0);
const wf = () => env.sandbox.defaultWorkflowId;
const submit = (extra: IDataObject = {}, options: IDataObject = {}): IDataObject =>
	submitParams(wf(), extra, options);

interface Outcome {
	message: string;
	description?: string | null;
}

async function node(
	parameters: IDataObject,
	items?: InputItem[],
	creds: Partial<DocumentWorkflowCredentials> = {},
): Promise<Outcome> {
	const result: NodeRunResult = await runActionNode({
		parameters,
		items,
		credentials: { ...env.credentials, ...creds },
	});
	if (!result.error)
		throw new Error(
			`expected an error, got ${JSON.stringify(result.items.map((i) => i.json)).slice(0, 300)}`,
		);
	return { message: result.error.message, description: result.error.description };
}

async function poll(
	parameters: IDataObject,
	creds: Partial<DocumentWorkflowCredentials> = {},
): Promise<Outcome> {
	try {
		await pollTrigger({
			parameters,
			credentials: { ...env.credentials, ...creds },
			staticData: {},
			activation: 'activate',
		});
	} catch (error) {
		const e = error as Error & { description?: string };
		return { message: e.message, description: e.description };
	}
	throw new Error('expected the poll to fail');
}

/** A completed run, with the workflow's outputs set first when given. */
async function completedRun(outputs?: unknown[]): Promise<string> {
	if (outputs) await env.sandbox.control.updateWorkflow(wf(), { outputs: outputs as never });
	await env.sandbox.control.setNextScripts(wf(), [{ status: 'completed' }]);
	const result = await runActionNode({
		parameters: submit({ waitForCompletion: true }, FAST_WAIT),
		items: [document],
		credentials: env.credentials,
	});
	expect(result.items[0]?.json.status).toBe('completed');
	await env.sandbox.control.clearRequests();
	return result.items[0].json.runId as string;
}

interface Case {
	name: string;
	run: () => Promise<Outcome>;
	message: string | RegExp;
	description?: RegExp;
	noRequest?: boolean;
	maxMs?: number;
}

const cases: Case[] = [
	// ---- identifiers: not UUIDs, or trying to escape the path ----
	{
		name: 'workflow id that is a name',
		run: () => node({ resource: 'workflow', operation: 'get', workflowId: 'invoice-flow' }),
		message: 'The Workflow ID "invoice-flow" is not a valid UUID',
		description: /must look like 3f0c1a9e-/,
		noRequest: true,
	},
	{
		name: 'run id escaping the path with ../',
		run: () => node({ resource: 'run', operation: 'get', runId: '../events' }),
		message: 'The Run ID "../events" is not a valid UUID',
		noRequest: true,
	},
	{
		name: 'document id with an encoded slash (%2F)',
		run: () => node({ resource: 'document', operation: 'get', documentId: '..%2Fevents' }),
		message: 'The Document ID "..%2Fevents" is not a valid UUID',
		noRequest: true,
	},
	{
		name: 'a UUID followed by %2F..%2F',
		run: () =>
			node({ resource: 'document', operation: 'getRuns', documentId: `${UUID}%2F..%2Fevents` }),
		message: `The Document ID "${UUID}%2F..%2Fevents" is not a valid UUID`,
		noRequest: true,
	},
	{
		name: 'a UUID followed by /../',
		run: () =>
			node({ resource: 'reviewTask', operation: 'get', reviewTaskId: `${UUID}/../../events` }),
		message: `The Review Task ID "${UUID}/../../events" is not a valid UUID`,
		noRequest: true,
	},
	{
		name: 'a UUID with a query string smuggled in',
		run: () =>
			node({
				resource: 'run',
				operation: 'getOutput',
				runId: `${UUID}?nodeId=x`,
				binaryPropertyName: 'data',
			}),
		message: `The Run ID "${UUID}?nodeId=x" is not a valid UUID`,
		noRequest: true,
	},
	{
		name: 'a UUID with a look-alike (full-width) digit',
		run: () =>
			node({ resource: 'run', operation: 'get', runId: '3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f7０' }),
		message: 'The Run ID "3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f7０" is not a valid UUID',
		noRequest: true,
	},
	{
		name: 'an id that an expression made a number',
		run: () => node({ resource: 'run', operation: 'wait', runId: '={{ 42 }}', options: FAST_WAIT }),
		message: 'The Run ID 42 is not a valid UUID',
		noRequest: true,
	},
	{
		name: 'a run id from an expression that found nothing',
		run: () =>
			node({ resource: 'run', operation: 'get', runId: '={{ $json.runId }}' }, [
				{ json: { other: 1 } },
			]),
		message: 'The Run ID is empty',
		description: /the expression found no value/,
		noRequest: true,
	},

	// ---- the file to submit ----
	{
		name: 'binary property missing (item has another)',
		run: () => node(submit({ binaryPropertyName: 'document' }), [document]),
		message:
			'The item has no file in binary property "document" to upload: Submit Document sends a file that an earlier node put into the item, never one given as a parameter',
		description: /binary properties: "data"/,
		noRequest: true,
	},
	{
		name: 'item without any binary data',
		run: () => node(submit(), [{ json: { a: 1 } }]),
		message:
			'The item has no file in binary property "data" to upload: Submit Document sends a file that an earlier node put into the item, never one given as a parameter',
		description: /no binary data at all/,
		noRequest: true,
	},
	{
		name: 'empty file',
		run: () =>
			node(submit(), [
				{
					json: {},
					binary: {
						data: { data: Buffer.alloc(0), fileName: 'empty.pdf', mimeType: 'application/pdf' },
					},
				},
			]),
		message: 'The file in binary property "data" is empty',
		description: /"empty.pdf" has 0 bytes/,
		noRequest: true,
	},
	{
		name: 'a format the workflow does not accept',
		run: async () => {
			await env.sandbox.control.updateWorkflow(wf(), { triggerFormats: ['pdf'] });
			return await node(submit(), [
				{
					json: {},
					binary: {
						data: { data: Buffer.from('a,b\n1,2\n'), fileName: 'rows.csv', mimeType: 'text/csv' },
					},
				},
			]);
		},
		message: 'The workflow did not accept this document (400)',
		description: /"rows.csv" \(text\/csv\) was rejected[\s\S]*The workflow accepts: pdf\./,
	},
	{
		name: 'a workflow without an API trigger (accepts no format)',
		run: async () => {
			await env.sandbox.control.updateWorkflow(wf(), { triggerFormats: [] });
			return await node(submit(), [document]);
		},
		message: 'The workflow did not accept this document (400)',
		description: /has no API trigger, so it rejects every document/,
	},
	{
		name: 'a custom idempotency key that is not a GUID',
		run: () =>
			node(submit({}, { idempotencyKeyMode: 'custom', customIdempotencyKey: 'order-17' }), [
				document,
			]),
		message: 'The custom idempotency key "order-17" is not a GUID',
		description: /silently give no protection/,
		noRequest: true,
	},

	// ---- limits, filters and options out of range ----
	{
		name: 'limit 0',
		run: () => node({ resource: 'event', operation: 'getMany', limit: 0 }),
		message: 'Limit must be a whole number from 1 to 100, not "0"',
		noRequest: true,
	},
	{
		name: 'limit above the page size',
		run: () => node({ resource: 'reviewTask', operation: 'getMany', limit: 500 }),
		message: 'Limit must be a whole number from 1 to 100, not "500"',
		noRequest: true,
	},
	{
		name: 'limit that is not whole',
		run: () => node({ resource: 'event', operation: 'getMany', limit: 2.5 }),
		message: 'Limit must be a whole number from 1 to 100, not "2.5"',
		noRequest: true,
	},
	{
		name: 'unknown event type filter',
		run: () =>
			node({
				resource: 'event',
				operation: 'getMany',
				limit: 5,
				filters: { type: '={{ "run.started" }}' },
			}),
		message: '"run.started" is not a valid event type filter',
		noRequest: true,
	},
	{
		name: '"after" that is not an event id',
		run: () =>
			node({ resource: 'event', operation: 'getMany', limit: 5, filters: { after: 'yesterday' } }),
		message: '"After Event ID" must be an event ID (a UUID), not "yesterday"',
		noRequest: true,
	},
	{
		name: 'unknown review task status filter',
		run: () =>
			node({
				resource: 'reviewTask',
				operation: 'getMany',
				limit: 5,
				filters: { status: '={{ "done" }}' },
			}),
		message: '"done" is not a valid review task status filter',
		noRequest: true,
	},
	{
		name: 'negative max wait',
		run: () => node(submit({ waitForCompletion: true }, { maxWaitMinutes: -1 }), [document]),
		message: 'The option "Max Wait Time" must be a number of at least 0, not "-1"',
		noRequest: true,
	},
	{
		name: 'zero concurrent checks',
		run: () => node(submit({ waitForCompletion: true }, { concurrency: 0 }), [document]),
		message: 'The option "Concurrent Checks" must be a number of at least 1, not "0"',
		noRequest: true,
	},
	{
		name: 'a check interval of 0 s (would hammer the API)',
		run: () =>
			node({
				resource: 'run',
				operation: 'wait',
				runId: UUID,
				options: { initialPollIntervalSeconds: 0 },
			}),
		message: 'The option "First Check Interval" must be a number of at least 0.1, not "0"',
		noRequest: true,
	},
	{
		name: 'trigger: unknown event type selected',
		run: () => poll({ events: ['run.started'] }),
		message: 'Unknown event type "run.started" in "Events"',
		noRequest: true,
	},
	{
		name: 'trigger: negative overlap window',
		run: () => poll({ options: { overlapMinutes: -5 } }),
		message: 'Overlap Window (Minutes) must be a positive number, not "-5"',
		noRequest: true,
	},

	// ---- the credential ----
	{
		name: 'baseUrl without a scheme',
		run: () =>
			node({ resource: 'workflow', operation: 'get', workflowId: UUID }, undefined, {
				baseUrl: 'api.example.com',
			}),
		message: 'The credential\'s Base URL "api.example.com" is not an http(s) URL',
		description: /set Base URL to the API address/,
		noRequest: true,
	},
	{
		name: 'baseUrl with another scheme',
		run: () =>
			node({ resource: 'workflow', operation: 'get', workflowId: UUID }, undefined, {
				baseUrl: 'ftp://api.example.com',
			}),
		message: 'The credential\'s Base URL "ftp://api.example.com" is not an http(s) URL',
		noRequest: true,
	},
	{
		name: 'trigger with a baseUrl that is not a URL',
		run: () => poll({}, { baseUrl: 'not a url' }),
		message: 'The credential\'s Base URL "not a url" is not an http(s) URL',
		noRequest: true,
	},
	{
		name: 'an expired key',
		run: async () => {
			const clock = await env.sandbox.control.getClock();
			const key = await env.sandbox.control.createKey({
				expiresOn: new Date(clock.nowMs - 1000).toISOString(),
			});
			return await node({ resource: 'workflow', operation: 'get', workflowId: wf() }, undefined, {
				apiKey: key.key,
			});
		},
		message: 'The API key was rejected (401): Unauthorized',
		description: /missing, mistyped, expired or deactivated/,
	},
	{
		name: 'a deactivated key',
		run: async () => {
			const key = await env.sandbox.control.createKey({ active: false });
			return await node({ resource: 'run', operation: 'get', runId: UUID }, undefined, {
				apiKey: key.key,
			});
		},
		message: 'The API key was rejected (401): Unauthorized',
		description: /Create or reactivate a key/,
	},
	{
		name: 'a deleted key, in the trigger',
		run: async () => {
			const key = await env.sandbox.control.createKey({});
			await env.sandbox.control.deleteKey(key.id);
			return await poll({}, { apiKey: key.key });
		},
		message: 'The API key was rejected (401): Unauthorized',
	},
	{
		name: 'a key without the scope the operation needs',
		run: async () => {
			const key = await env.sandbox.control.createKey({ scopes: ['runs:read'] });
			return await node(submit(), [document], { apiKey: key.key });
		},
		message: 'The API key is valid but not allowed to do this (403): Forbidden',
		description: /lacks the scope this operation needs/,
	},
	{
		name: 'a plan without API access',
		run: async () => {
			await env.sandbox.control.updateOrg((await env.sandbox.control.info()).defaultOrgId, {
				apiAccess: false,
			});
			return await node({ resource: 'workflow', operation: 'get', workflowId: wf() });
		},
		message: 'The API key is valid but not allowed to do this (403): Forbidden',
		description: /API detail: The organization's plan does not include API access/,
	},

	// ---- what the server answers ----
	{
		name: 'an output over 10 MB',
		run: async () => {
			const runId = await completedRun([
				{
					nodeId: 'big',
					kind: 'binary',
					contentType: 'application/pdf',
					filename: 'big.pdf',
					sizeBytes: 10 * 1024 * 1024 + 1,
				},
			]);
			return await node({
				resource: 'run',
				operation: 'getOutput',
				runId,
				binaryPropertyName: 'data',
			});
		},
		message: 'The run output is larger than 10 MB and cannot be returned through the API (413)',
		description: /at most 10 MB inline/,
	},
	{
		name: 'an output node id that is not in the graph',
		run: async () =>
			node({
				resource: 'run',
				operation: 'getOutput',
				runId: await completedRun(),
				nodeId: 'no-such-node',
				binaryPropertyName: 'data',
			}),
		message: 'The run or the requested output node was not found (404)',
		description: /must be the id of a Download Output node/,
	},
	{
		name: 'an expired file link (the fresh link expires too)',
		run: async () => {
			const submitted = await runActionNode({
				parameters: submit(),
				items: [document],
				credentials: env.credentials,
			});
			await env.sandbox.control.setSettings({ originalLinkTtlMs: 0 });
			await env.sandbox.control.addFault({ origin: 'files', kind: 'latency', ms: 20 });
			return await node({
				resource: 'document',
				operation: 'getOriginal',
				documentId: submitted.items[0].json.documentId,
				download: true,
				binaryPropertyName: 'data',
			});
		},
		message: 'Downloading the original file failed (HTTP 410)',
		description: /even with a freshly requested link/,
	},
	{
		name: 'malformed JSON in a success answer',
		run: async () => {
			await env.sandbox.control.addFault({
				pathPrefix: '/workflows/',
				kind: 'badBody',
				status: 200,
				contentType: 'application/json',
				body: '{"id": "3f0c1a9e", "name": ',
			});
			return await node({ resource: 'workflow', operation: 'get', workflowId: wf() });
		},
		message: 'The API answered with a body that is not valid JSON',
		description: /returned 200 with: \{"id": "3f0c1a9e", "name": [\s\S]*Correlation ID: \S+/,
	},
	{
		name: 'malformed JSON in the answer to a submission',
		run: async () => {
			await env.sandbox.control.addFault({
				method: 'POST',
				pathPrefix: '/workflows/',
				kind: 'badBody',
				status: 202,
				contentType: 'application/json',
				body: 'OK',
			});
			return await node(submit(), [document]);
		},
		message: 'The API answered with a body that is not valid JSON',
		description: /POST \/workflows\/[0-9a-f-]+\/trigger returned 202 with: OK/,
	},
	{
		name: 'a non-problem error body (an HTML page from a proxy)',
		run: async () => {
			await env.sandbox.control.addFault({
				pathPrefix: '/runs/',
				kind: 'badBody',
				status: 404,
				contentType: 'text/html',
				body: '<html><body><h1>404 Not Found</h1>nginx</body></html>',
			});
			return await node({
				resource: 'run',
				operation: 'getOutput',
				runId: UUID,
				binaryPropertyName: 'data',
			});
		},
		message: 'The run or the requested output node was not found (404)',
		description:
			/The response was not a problem\+json body: <html><body><h1>404 Not Found<\/h1>nginx/,
	},
	{
		name: 'a gateway error with a plain-text body (retried, then explained)',
		run: async () => {
			await env.sandbox.control.addFault({
				pathPrefix: '/workflows/',
				kind: 'badBody',
				status: 502,
				contentType: 'text/plain',
				body: 'upstream connect error',
			});
			return await node({ resource: 'workflow', operation: 'get', workflowId: wf() });
		},
		message: 'The API failed with a server error (502)',
		description: /the node already retried[\s\S]*not a problem\+json body: upstream connect error/,
		maxMs: 30_000,
	},
	{
		name: 'an error with an empty body',
		run: async () => {
			await env.sandbox.control.addFault({
				pathPrefix: '/documents/',
				kind: 'badBody',
				status: 400,
				body: '',
			});
			return await node({ resource: 'document', operation: 'get', documentId: UUID });
		},
		message: 'The API rejected the request as invalid (400)',
		description: /The response had no body\./,
	},
	{
		name: 'a binary output without its content',
		run: async () => {
			await env.sandbox.control.addFault({
				pathPrefix: '/runs/',
				kind: 'badBody',
				status: 200,
				contentType: 'application/json',
				body: '{"contentType":"application/pdf","filename":"x.pdf","isBase64":true,"output":null}',
			});
			return await node({
				resource: 'run',
				operation: 'getOutput',
				runId: UUID,
				binaryPropertyName: 'data',
			});
		},
		message: 'The API returned a binary output without its content',
	},
	{
		name: 'an unknown run status (not final: waits to the limit, then says so)',
		run: async () => {
			await env.sandbox.control.setNextScripts(wf(), [{ status: 'paused_for_audit' }]);
			return await node(
				submit({ waitForCompletion: true }, { ...FAST_WAIT, maxWaitMinutes: 0.01 }),
				[document],
			);
		},
		message:
			/^Run [0-9a-f-]{36} was still "paused_for_audit" when the time limit of 0.6 s was reached\.$/,
		description: /Raise "Max Wait Time"/,
		maxMs: 10_000,
	},
	{
		name: 'a Retry-After in the far future on a submission (bounded, not a hang)',
		run: async () => {
			await env.sandbox.control.addFault({
				method: 'POST',
				pathPrefix: '/workflows/',
				kind: 'rate429',
				retryAfter: 7 * 86_400,
				count: 1,
			});
			return await node(submit(), [document]);
		},
		message: 'The API rate limit was exceeded (429), and the wait it asks for is too long',
		description: /asks to wait 604800 s \(Retry-After\)/,
		maxMs: 5_000,
	},
	{
		name: 'a Retry-After as a far-future HTTP date while waiting for a run (bounded, not a hang)',
		run: async () => {
			await env.sandbox.control.addFault({
				method: 'GET',
				pathPrefix: '/runs/',
				kind: 'rate429',
				retryAfter: 3600,
				retryAfterAsDate: true,
				count: 1,
			});
			return await node(submit({ waitForCompletion: true }, FAST_WAIT), [document]);
		},
		message: 'The API rate limit was exceeded (429), and the wait it asks for is too long',
		description: /asks to wait 36\d\d s/,
		maxMs: 5_000,
	},
	{
		name: 'a run id that never exists',
		run: () =>
			node({
				resource: 'run',
				operation: 'wait',
				runId: UUID,
				options: { ...FAST_WAIT, notFoundGraceSeconds: 0.3 },
			}),
		message: `Run ${UUID} was not found (404) for 0.3 s`,
		description: /Check the Run ID/,
		maxMs: 5_000,
	},
	{
		name: 'an unreachable API',
		run: () =>
			node({ resource: 'workflow', operation: 'get', workflowId: UUID }, undefined, {
				baseUrl: 'http://127.0.0.1:1',
			}),
		message: 'Could not reach the Document Workflow API: the connection was refused',
		description: /error code ECONNREFUSED[\s\S]*Check the credential's Base URL/,
		maxMs: 30_000,
	},
];

describe('bad-input catalogue', () => {
	test('holds at least 30 cases', () => {
		expect(cases.length).toBeGreaterThanOrEqual(30);
	});

	test.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
		const started = Date.now();
		const outcome = await c.run();
		const elapsed = Date.now() - started;
		if (typeof c.message === 'string') expect(outcome.message).toBe(c.message);
		else expect(outcome.message).toMatch(c.message);
		if (c.description) expect(outcome.description ?? '').toMatch(c.description);
		if (c.noRequest) expect(await env.sandbox.control.getRequests({})).toHaveLength(0);
		if (c.maxMs !== undefined) expect(elapsed).toBeLessThan(c.maxMs);
	});

	test("the credential test refuses a baseUrl that is not a URL (n8n's own credential tester message)", async () => {
		const result = await testCredential({ baseUrl: 'api.example.com', apiKey: env.sandbox.apiKey });
		expect(result).toEqual({ status: 'Error', message: 'Invalid URL' });
		expect(await env.sandbox.control.getRequests({})).toHaveLength(0);
	});
});
