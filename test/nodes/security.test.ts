/**
 * The API key stays secret. Two guards run over the whole test run (see test/harness/journal.ts):
 * every output item, error field, static data copy, credential-test result and n8n log line
 * produced through the harness is journaled with the keys in use, scanned at the end of each
 * test file and again over the whole run (jest globalTeardown); and the sandbox counts every
 * request that reached a file-link origin with X-Api-Key. This file proves that the scan can
 * fail, that it really sees n8n's log lines, and drives the paths most likely to leak a key.
 */
import { filesOriginApiKeySightingsInProcess } from '../../sandbox/src/infra';
import { pollTrigger, runActionNode, testCredential } from '../harness/n8n';
import type { JournalEntry } from '../harness/journal';
import { describeLeaks, entriesOfThisFile, findLeaks } from '../harness/journal';
import { pdfItem, submitParams, useSandbox, waitParams } from '../harness/sandbox';

const env = useSandbox();

const document = pdfItem(0);

describe('the key scan can fail', () => {
	const key = 'dwk_0123456789abcdef0123456789abcdef';
	const entry = (kind: JournalEntry['kind'], text: string): JournalEntry => ({
		kind,
		source: 'synthetic',
		text,
	});

	test.each([
		['as is', `Request failed with header X-Api-Key: ${key}`],
		['without its prefix', 'token=0123456789abcdef0123456789abcdef'],
		['base64', `Authorization: Basic ${Buffer.from(key).toString('base64')}`],
		['in another case', key.toUpperCase()],
	])('finds a key leaked %s', (_form, text) => {
		const leaks = findLeaks([
			entry('secret', key),
			entry('output', 'harmless'),
			entry('log', text),
		]);
		expect(leaks).toHaveLength(1);
		expect(leaks[0].entry.kind).toBe('log');
		// The report names the place but never prints the key itself.
		expect(describeLeaks(leaks)).not.toContain(key);
	});

	test('finds a key leaked into an error of another test file (the whole-run scan sees every worker)', () => {
		const leaks = findLeaks([entry('error', `oops ${key}`), entry('secret', key)]);
		expect(leaks).toHaveLength(1);
	});

	test('reports any request that reached a file-link origin with a key', () => {
		expect(
			findLeaks([entry('filesOrigin', 'X-Api-Key received by the file-link origin: /f/abc')]),
		).toHaveLength(1);
	});

	test('passes clean entries', () => {
		expect(
			findLeaks([
				entry('secret', key),
				entry('output', '{"id":"3f0c1a9e"}'),
				entry('log', 'GET /runs/x'),
			]),
		).toEqual([]);
	});
});

describe('the journal sees what n8n would show and log', () => {
	test("n8n's logger lines, output items, error messages and descriptions are all journaled", async () => {
		const before = entriesOfThisFile().length;
		await runActionNode({
			parameters: {
				resource: 'workflow',
				operation: 'get',
				workflowId: env.sandbox.defaultWorkflowId,
			},
			credentials: env.credentials,
		});
		await runActionNode({
			parameters: {
				resource: 'run',
				operation: 'get',
				runId: '3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70',
			},
			credentials: env.credentials,
		});
		const entries = entriesOfThisFile().slice(before);
		expect(entries.some((e) => e.kind === 'secret' && e.text === env.credentials.apiKey)).toBe(
			true,
		);
		expect(
			entries.some((e) => e.kind === 'log' && e.text.includes('Document Workflow API request')),
		).toBe(true);
		expect(entries.some((e) => e.kind === 'output' && e.text.includes('Invoice extraction'))).toBe(
			true,
		);
		expect(
			entries.some((e) => e.kind === 'error' && e.text === 'The run was not found (404)'),
		).toBe(true);
		expect(
			entries.some((e) => e.kind === 'error' && e.text.includes('Run → Wait for Completion')),
		).toBe(true);
	});
});

describe('the key never appears, on the paths most likely to leak it', () => {
	test('errors of every kind, log lines, outputs and static data carry no key', async () => {
		const limited = await env.sandbox.control.createKey({ scopes: ['runs:read'] });
		const expired = await env.sandbox.control.createKey({
			expiresOn: new Date((await env.sandbox.control.getClock()).nowMs - 1).toISOString(),
		});
		const keys = [env.credentials.apiKey, limited.key, expired.key];
		const before = entriesOfThisFile().length;
		const get = {
			resource: 'workflow',
			operation: 'get',
			workflowId: env.sandbox.defaultWorkflowId,
		};
		await runActionNode({
			parameters: get,
			credentials: { ...env.credentials, apiKey: limited.key },
		}); // 403
		await runActionNode({
			parameters: get,
			credentials: { ...env.credentials, apiKey: expired.key },
		}); // 401
		await runActionNode({
			parameters: get,
			credentials: { ...env.credentials, baseUrl: 'http://127.0.0.1:1' },
		}); // network
		await env.sandbox.control.addFault({
			pathPrefix: '/workflows/',
			kind: 'rate429',
			retryAfter: 86_400,
			count: 1,
		});
		await runActionNode({ parameters: get, credentials: env.credentials }); // 429 too long
		await env.sandbox.control.addFault({ pathPrefix: '/workflows/', kind: 'drop', count: 5 });
		await runActionNode({ parameters: get, credentials: env.credentials }); // dropped until retries run out
		await runActionNode({
			parameters: waitParams(env.sandbox.defaultWorkflowId),
			items: [document],
			credentials: env.credentials,
		});
		await pollTrigger({
			parameters: {},
			credentials: env.credentials,
			staticData: {},
			activation: 'activate',
		});
		await testCredential({ ...env.credentials, apiKey: limited.key });
		const produced = entriesOfThisFile().slice(before);
		expect(produced.filter((e) => e.kind === 'error').length).toBeGreaterThanOrEqual(10);
		const leaks = findLeaks([
			...keys.map((text) => ({ kind: 'secret' as const, source: 'test', text })),
			...produced,
		]);
		expect(describeLeaks(leaks)).toBe('');
	}, 60_000);

	test('an error page that echoes the request headers (some proxies do) has the key redacted from the error', async () => {
		await env.sandbox.control.addFault({
			pathPrefix: '/runs/',
			kind: 'badBody',
			status: 400,
			contentType: 'text/plain',
			body: `Bad request. Headers received: x-api-key: ${env.credentials.apiKey}; accept: application/json`,
		});
		const result = await runActionNode({
			parameters: {
				resource: 'run',
				operation: 'get',
				runId: '3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70',
			},
			credentials: env.credentials,
		});
		expect(result.error?.message).toBe('The API rejected the request as invalid (400)');
		expect(result.error?.description).toContain('x-api-key: [redacted API key]; accept');
		expect(result.error?.description).not.toContain(env.credentials.apiKey);
	});

	test('a JSON body that echoes the key is redacted too, in problem details and in non-JSON success bodies', async () => {
		await env.sandbox.control.addFault({
			pathPrefix: '/documents/',
			kind: 'badBody',
			status: 403,
			contentType: 'application/problem+json',
			body: JSON.stringify({
				status: 403,
				title: 'Forbidden',
				type: 'about:blank',
				instance: '/documents',
				traceId: 't',
				detail: `key ${env.credentials.apiKey} lacks documents:read`,
			}),
			count: 1,
		});
		const problem = await runActionNode({
			parameters: {
				resource: 'document',
				operation: 'get',
				documentId: '3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70',
			},
			credentials: env.credentials,
		});
		expect(problem.error?.description).toContain(
			'API detail: key [redacted API key] lacks documents:read',
		);
		await env.sandbox.control.addFault({
			pathPrefix: '/workflows/',
			kind: 'badBody',
			status: 200,
			contentType: 'application/json',
			body: `{"echo": "${env.credentials.apiKey}"`,
			count: 1,
		});
		const broken = await runActionNode({
			parameters: {
				resource: 'workflow',
				operation: 'get',
				workflowId: env.sandbox.defaultWorkflowId,
			},
			credentials: env.credentials,
		});
		expect(broken.error?.message).toBe('The API answered with a body that is not valid JSON');
		expect(broken.error?.description).not.toContain(env.credentials.apiKey);
	});
});

describe('the file-link origin never receives the key', () => {
	test('downloads (first link, and a fresh link after expiry) send no X-Api-Key to the file-link origin', async () => {
		const submitted = await runActionNode({
			parameters: submitParams(env.sandbox.defaultWorkflowId),
			items: [document],
			credentials: env.credentials,
		});
		const documentId = submitted.items[0].json.documentId as string;
		const download = {
			resource: 'document',
			operation: 'getOriginal',
			documentId,
			download: true,
			binaryPropertyName: 'data',
		};
		expect(
			(await runActionNode({ parameters: download, credentials: env.credentials })).error,
		).toBeUndefined();
		await env.sandbox.control.setSettings({ originalLinkTtlMs: 300 });
		await env.sandbox.control.addFault({ origin: 'files', kind: 'latency', ms: 600, count: 1 });
		expect(
			(await runActionNode({ parameters: download, credentials: env.credentials })).error,
		).toBeUndefined();

		const fileRequests = await env.sandbox.control.getRequests({ origin: 'files' });
		expect(fileRequests.map((r) => r.status)).toEqual([200, 410, 200]);
		for (const request of fileRequests) {
			expect(request.headers['x-api-key']).toBeUndefined();
			expect(JSON.stringify(request)).not.toContain(env.credentials.apiKey);
		}
		// The API origin did get the key, so the check above is not vacuous.
		expect(
			(await env.sandbox.control.getRequests({ origin: 'api', pathPrefix: '/documents/' }))[0]
				.headers['x-api-key'],
		).toBe(env.credentials.apiKey);
		expect(await env.sandbox.control.fileOriginSawApiKey()).toBe(false);
		expect(filesOriginApiKeySightingsInProcess()).toEqual([]);
	});

	test('the sighting counter works: a request with X-Api-Key to the file-link origin is counted and survives a reset', async () => {
		// Sent by the test on purpose, to a separate copy of the sandbox modules (its own counter),
		// so the run-wide check stays about what the nodes send.
		let isolated: typeof import('../../sandbox/src') | undefined;
		jest.isolateModules(() => {
			isolated = require('../../sandbox/src') as typeof import('../../sandbox/src');
		});
		const other = await isolated!.startSandbox();
		try {
			await fetch(`${other.fileBaseUrl}/f/whatever`, {
				headers: { 'x-api-key': 'probe-not-a-real-key' },
			});
			expect(await other.control.fileOriginSawApiKey()).toBe(true);
			await other.control.reset();
			expect(await other.control.fileOriginSawApiKey()).toBe(false);
			expect(isolated!.filesOriginApiKeySightingsInProcess()).toHaveLength(1);
			expect(filesOriginApiKeySightingsInProcess()).toEqual([]);
		} finally {
			await other.stop();
		}
	});
});
