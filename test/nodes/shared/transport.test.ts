/**
 * The transport, exercised through the action node inside n8n-core against the sandbox:
 * problem details, correlation ids, 429 with Retry-After, retries, UUID refusal, and the
 * key kept out of every error.
 */
import {
	backoffDelay,
	DEFAULT_RETRY_POLICY,
	limitScope,
	parseRetryAfter,
	ReadPacer,
	readPacerFor,
	SLOW_GROWTH,
} from '../../../nodes/shared/transport';
import { CredentialRead, runActionNode } from '../../harness/n8n';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

const getWorkflow = (workflowId: string, options: { credentialRead?: CredentialRead } = {}) =>
	runActionNode({
		parameters: { resource: 'workflow', operation: 'get', workflowId },
		credentials: env.credentials,
		...options,
	});

const MISSING = '00000000-0000-4000-8000-000000000000';

describe('problem details become NodeApiErrors that say what to do', () => {
	test('404 keeps status, title, traceId and the response X-Correlation-ID', async () => {
		const { error } = await getWorkflow(MISSING);
		expect(error).toBeDefined();
		expect(error!.httpCode).toBe('404');
		expect(error!.message).toMatch(/could not find the requested resource \(404\)/);
		const [request] = await env.sandbox.control.getRequests({
			pathPrefix: `/workflows/${MISSING}`,
		});
		expect(error!.description).toContain(`Correlation ID: ${request.correlationId}`);
		expect(error!.description).toMatch(/Trace ID: \S+/);
		expect(error!.description).toContain(`Request: GET /workflows/${MISSING}`);
	});

	test('401 says the key was rejected and how to fix it', async () => {
		const { error } = await runActionNode({
			parameters: {
				resource: 'workflow',
				operation: 'get',
				workflowId: env.sandbox.defaultWorkflowId,
			},
			credentials: { ...env.credentials, apiKey: 'dwk_00000000000000000000000000000bad' },
		});
		expect(error!.httpCode).toBe('401');
		expect(error!.message).toMatch(/API key was rejected \(401\)/);
		expect(error!.description).toMatch(/expired or deactivated/);
	});

	test('403 names the missing scope as the cause', async () => {
		const key = await env.sandbox.control.createKey({ scopes: ['runs:read'] });
		const { error } = await runActionNode({
			parameters: {
				resource: 'workflow',
				operation: 'get',
				workflowId: env.sandbox.defaultWorkflowId,
			},
			credentials: { ...env.credentials, apiKey: key.key },
		});
		expect(error!.httpCode).toBe('403');
		expect(error!.message).toMatch(/valid but not allowed/);
		expect(error!.description).toMatch(/lacks the scope/);
	});

	test('each response carries a fresh correlation id, whatever the client sends', async () => {
		await getWorkflow(MISSING);
		await getWorkflow(MISSING);
		const requests = await env.sandbox.control.getRequests({ pathPrefix: '/workflows/' });
		expect(requests).toHaveLength(2);
		expect(requests[0].correlationId).not.toBe(requests[1].correlationId);
	});
});

describe('ids are checked before any request', () => {
	test.each([
		['../events', 'path escape'],
		['..%2Fevents', 'encoded slash'],
		['3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f7', 'one digit short'],
		['3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70/../../events', 'uuid then escape'],
	])('%s (%s) is refused with no request sent', async (workflowId) => {
		const { error } = await getWorkflow(workflowId);
		expect(error!.message).toMatch(/The Workflow ID .* is not a valid UUID/);
		expect(await env.sandbox.control.getRequests()).toHaveLength(0);
	});

	test('an empty id is refused by n8n as a missing required parameter, with no request sent', async () => {
		const { error } = await getWorkflow('');
		expect(error!.message).toMatch(/issues|required|Workflow ID/i);
		expect(await env.sandbox.control.getRequests()).toHaveLength(0);
	});

	test('a valid id with spaces around it is trimmed, not refused', async () => {
		const { error, items } = await getWorkflow(`  ${env.sandbox.defaultWorkflowId}\n`);
		expect(error).toBeUndefined();
		expect(items[0].json.id).toBe(env.sandbox.defaultWorkflowId);
	});
});

describe('429 and Retry-After', () => {
	test('waits for Retry-After (seconds) and retries until it passes', async () => {
		await env.sandbox.control.addFault({
			kind: 'rate429',
			pathPrefix: '/workflows/',
			retryAfter: 1,
			count: 2,
		});
		const { error, items } = await getWorkflow(env.sandbox.defaultWorkflowId);
		expect(error).toBeUndefined();
		expect(items[0].json.id).toBe(env.sandbox.defaultWorkflowId);
		const requests = await env.sandbox.control.getRequests({ pathPrefix: '/workflows/' });
		expect(requests.map((r) => r.status)).toEqual([429, 429, 200]);
		// The retry came no earlier than Retry-After allowed.
		expect(requests[1].realTimeMs - requests[0].realTimeMs).toBeGreaterThanOrEqual(950);
	});

	test('understands Retry-After as an HTTP date', async () => {
		await env.sandbox.control.addFault({
			kind: 'rate429',
			pathPrefix: '/workflows/',
			retryAfter: 1,
			retryAfterAsDate: true,
			count: 1,
		});
		const { error } = await getWorkflow(env.sandbox.defaultWorkflowId);
		expect(error).toBeUndefined();
		const requests = await env.sandbox.control.getRequests({ pathPrefix: '/workflows/' });
		expect(requests.map((r) => r.status)).toEqual([429, 200]);
	});

	test('a Retry-After far in the future fails at once with a clear error instead of hanging', async () => {
		await env.sandbox.control.addFault({
			kind: 'rate429',
			pathPrefix: '/workflows/',
			retryAfter: 86_400,
			count: 1,
		});
		const { error } = await getWorkflow(env.sandbox.defaultWorkflowId);
		expect(error!.message).toMatch(
			/rate limit was exceeded \(429\), and the wait it asks for is too long/,
		);
		expect(error!.description).toMatch(/86400 s/);
		expect(await env.sandbox.control.getRequests({ pathPrefix: '/workflows/' })).toHaveLength(1);
	});

	test('the real rate limit of reads is obeyed: requests beyond it wait for the window', async () => {
		await env.sandbox.control.setRateLimits({ reads: { limit: 1, windowMs: 1000 } });
		const first = await getWorkflow(env.sandbox.defaultWorkflowId);
		const second = await getWorkflow(env.sandbox.defaultWorkflowId);
		expect(first.error).toBeUndefined();
		expect(second.error).toBeUndefined();
		const statuses = (await env.sandbox.control.getRequests({ pathPrefix: '/workflows/' })).map(
			(r) => r.status,
		);
		expect(statuses.filter((s) => s === 200)).toHaveLength(2);
	});

	test('the read pacer learns the limit from the reads sent before the refused one, not from those that left while its 429 came back', async () => {
		await env.sandbox.control.setRateLimits({ reads: { limit: 10, windowMs: 1000 } });
		await env.sandbox.control.addFault({ kind: 'latency', pathPrefix: '/workflows/', ms: 300 });
		const results = await Promise.all(
			Array.from({ length: 30 }, () => getWorkflow(env.sandbox.defaultWorkflowId)),
		);
		expect(results.filter((result) => result.error)).toEqual([]);
		// Every read refused had left before the first 429 came back (it closes the limit): 20 did...
		const requests = await env.sandbox.control.getRequests({ pathPrefix: '/workflows/' });
		expect(requests.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(10);
		// ...yet the pace stays a step under the 10 that went, not under all 30 sent that second.
		const pacer = readPacerFor(limitScope(env.credentials.baseUrl, env.credentials));
		expect(pacer.readsPerSecond).toBeLessThanOrEqual(10 * (1 - SLOW_GROWTH));
	});

	test('reads n8n had not sent yet when a 429 came are held back, not sent into the full limit', async () => {
		await env.sandbox.control.setRateLimits({ reads: { limit: 10, windowMs: 1000 } });
		// When each request left n8n (n8n reads the credential, then sends), and when the node met
		// the first 429. Each execution's first credential read is the node's own, before any request.
		const leftAt: number[] = [];
		const requestsLeaving = (): CredentialRead => {
			let reads = 0;
			return { ms: 50, onRead: (at) => void (reads++ > 0 && leftAt.push(at)) };
		};
		let knownAt = Infinity;
		const rateLimited = ReadPacer.prototype.rateLimited;
		const spy = jest.spyOn(ReadPacer.prototype, 'rateLimited').mockImplementation(function (
			this: ReadPacer,
			...args
		) {
			knownAt = Math.min(knownAt, Date.now());
			rateLimited.apply(this, args);
		});
		const results = await Promise.all(
			Array.from({ length: 30 }, () =>
				getWorkflow(env.sandbox.defaultWorkflowId, { credentialRead: requestsLeaving() }),
			),
		);
		spy.mockRestore();
		expect(results.filter((result) => result.error)).toEqual([]);
		const requests = await env.sandbox.control.getRequests({ pathPrefix: '/workflows/' });
		expect(requests.filter((r) => r.status === 200)).toHaveLength(30);
		// Only requests that had left before the node met the 429 may be refused; 10 of them went
		// through. How many had left by then is counted, not assumed: one or two past the limit on a
		// quiet machine, all 30 when a busy event loop answers the 429 late. A request let go after
		// it (not held back, or sent again before the limit opened) is one refusal past the bound.
		const leftBefore = leftAt.filter((at) => at <= knownAt).length;
		expect(leftBefore).toBeGreaterThan(10);
		expect(requests.filter((r) => r.status === 429).length).toBeLessThanOrEqual(leftBefore - 10);
	});

	test('parseRetryAfter reads seconds and HTTP dates, and ignores garbage', () => {
		const now = Date.parse('2026-01-01T00:00:00Z');
		expect(parseRetryAfter('3', now)).toBe(3000);
		expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
		expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
		expect(parseRetryAfter('soon', now)).toBeUndefined();
		expect(parseRetryAfter(undefined, now)).toBeUndefined();
	});
});

describe('retries of reads', () => {
	test('5xx answers are retried with backoff until success', async () => {
		await env.sandbox.control.addFault({
			kind: 'status5xx',
			status: 503,
			pathPrefix: '/workflows/',
			count: 2,
		});
		const { error } = await getWorkflow(env.sandbox.defaultWorkflowId);
		expect(error).toBeUndefined();
		const statuses = (await env.sandbox.control.getRequests({ pathPrefix: '/workflows/' })).map(
			(r) => r.status,
		);
		expect(statuses).toEqual([503, 503, 200]);
	});

	test('a dropped connection is retried', async () => {
		await env.sandbox.control.addFault({ kind: 'drop', pathPrefix: '/workflows/', count: 1 });
		const { error } = await getWorkflow(env.sandbox.defaultWorkflowId);
		expect(error).toBeUndefined();
		const requests = await env.sandbox.control.getRequests({ pathPrefix: '/workflows/' });
		expect(requests.map((r) => r.dropped)).toEqual([true, false]);
	});

	test('retries are bounded: a persistent 500 ends in a clear server error', async () => {
		await env.sandbox.control.addFault({
			kind: 'status5xx',
			status: 500,
			pathPrefix: '/workflows/',
		});
		const { error } = await getWorkflow(env.sandbox.defaultWorkflowId);
		expect(error!.httpCode).toBe('500');
		expect(error!.message).toMatch(/server error \(500\)/);
		const requests = await env.sandbox.control.getRequests({ pathPrefix: '/workflows/' });
		expect(requests).toHaveLength(DEFAULT_RETRY_POLICY.maxRetries + 1);
	}, 60_000);

	test('backoff is capped exponential with full jitter', () => {
		const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };
		expect(backoffDelay(0, policy, () => 1)).toBe(100);
		expect(backoffDelay(3, policy, () => 1)).toBe(800);
		expect(backoffDelay(10, policy, () => 1)).toBe(1000);
		expect(backoffDelay(10, policy, () => 0)).toBe(0);
	});
});

describe('redirects are not followed', () => {
	test('a 3xx says where it points and how to fix the Base URL, and the key never travels there', async () => {
		await env.sandbox.control.addFault({
			kind: 'badBody',
			status: 302,
			location: `${env.sandbox.fileBaseUrl}/moved`,
			pathPrefix: '/workflows/',
			count: 1,
		});
		const { error } = await getWorkflow(env.sandbox.defaultWorkflowId);
		expect(error!.message).toBe(
			'The API answered with a redirect (302), which the node does not follow',
		);
		expect(error!.description).toContain(`It redirects to: ${env.sandbox.fileBaseUrl}/moved`);
		expect(await env.sandbox.control.getRequests({ origin: 'files' })).toHaveLength(0);
	});
});

describe('the API key stays out of errors', () => {
	test('no error message, description or context contains the key', async () => {
		const key = await env.sandbox.control.createKey({ scopes: ['runs:read'] });
		const secret = key.key;
		const creds = { baseUrl: env.sandbox.baseUrl, apiKey: secret };
		const failures = [
			await runActionNode({
				parameters: { resource: 'workflow', operation: 'get', workflowId: MISSING },
				credentials: creds,
			}),
			await runActionNode({
				parameters: {
					resource: 'workflow',
					operation: 'get',
					workflowId: env.sandbox.defaultWorkflowId,
				},
				credentials: creds,
			}),
			await runActionNode({
				parameters: { resource: 'workflow', operation: 'get', workflowId: 'nope' },
				credentials: creds,
			}),
			await runActionNode({
				parameters: {
					resource: 'workflow',
					operation: 'get',
					workflowId: env.sandbox.defaultWorkflowId,
				},
				credentials: { baseUrl: 'http://127.0.0.1:1', apiKey: secret },
			}),
		];
		for (const { error, run } of failures) {
			expect(error).toBeDefined();
			const serialised = JSON.stringify({
				...error,
				message: error!.message,
				description: error!.description,
				stack: error!.stack,
			});
			expect(serialised).not.toContain(secret);
			expect(JSON.stringify(run.data)).not.toContain(secret);
		}
	}, 60_000);

	test('an unreachable base URL says so', async () => {
		const { error } = await runActionNode({
			parameters: {
				resource: 'workflow',
				operation: 'get',
				workflowId: env.sandbox.defaultWorkflowId,
			},
			credentials: { baseUrl: 'http://127.0.0.1:1', apiKey: env.sandbox.apiKey },
		});
		expect(error!.message).toBe(
			'Could not reach the Document Workflow API: the connection was refused',
		);
		expect(error!.description).toMatch(/error code ECONNREFUSED/);
	}, 60_000);

	test('a base URL that is not a URL is refused before any request', async () => {
		const { error } = await runActionNode({
			parameters: {
				resource: 'workflow',
				operation: 'get',
				workflowId: env.sandbox.defaultWorkflowId,
			},
			credentials: { baseUrl: 'api.example.com', apiKey: env.sandbox.apiKey },
		});
		expect(error!.message).toMatch(/Base URL "api.example.com" is not an http\(s\) URL/);
	});
});
