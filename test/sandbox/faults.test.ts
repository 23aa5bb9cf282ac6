/** Sandbox machinery the client tests rely on: fault injection, request log, clock, reset. */
import { randomUUID } from 'node:crypto';

import { SandboxControl } from '../../sandbox/src';
import { expectProblem, get, trigger, triggerOk } from './helpers';
import { useSandbox } from '../harness/sandbox';

const env = useSandbox({ nodes: false });

describe('Fault injection', () => {
	test('Errors: 500/502/503 faults answer problem+json with a correlation id, for the next N matching requests only', async () => {
		await env.sandbox.control.addFault({
			kind: 'status5xx',
			status: 502,
			method: 'GET',
			pathPrefix: '/workflows/',
			count: 2,
		});
		expectProblem(await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`), 502);
		expect((await get(env.sandbox, '/events')).status).toBe(200); // not matching
		expectProblem(await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`), 502);
		expect((await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`)).status).toBe(
			200,
		);
		const [f] = await env.sandbox.control.listFaults();
		expect(f!.hits).toBe(2);
		expect(f!.remaining).toBe(0);
		await env.sandbox.control.setFaults([{ kind: 'status5xx' }]);
		expectProblem(await get(env.sandbox, '/events'), 500);
		await env.sandbox.control.setFaults([{ kind: 'status5xx', status: 503 }]);
		expectProblem(await get(env.sandbox, '/events'), 503);
	});

	test('Fault drop: the socket is destroyed before processing; nothing is created', async () => {
		await env.sandbox.control.addFault({ kind: 'drop', method: 'POST', count: 1 });
		await expect(trigger(env.sandbox, env.sandbox.defaultWorkflowId)).rejects.toThrow();
		expect(await env.sandbox.control.countDocuments()).toBe(0);
		const [entry] = await env.sandbox.control.getRequests({ method: 'POST' });
		expect(entry).toEqual(
			expect.objectContaining({
				dropped: true,
				status: null,
				processedStatus: null,
				fault: 'drop',
			}),
		);
		expect((await trigger(env.sandbox, env.sandbox.defaultWorkflowId)).status).toBe(202);
	});

	test('Fault dropAfterProcess: the request is processed (exactly one document), then the socket is destroyed', async () => {
		const key = randomUUID();
		await env.sandbox.control.addFault({
			kind: 'dropAfterProcess',
			method: 'POST',
			pathPrefix: '/workflows/',
			count: 1,
		});
		await expect(
			trigger(env.sandbox, env.sandbox.defaultWorkflowId, { idempotencyKey: key }),
		).rejects.toThrow();
		expect(await env.sandbox.control.countDocuments()).toBe(1);
		const [entry] = await env.sandbox.control.getRequests({ method: 'POST' });
		expect(entry).toEqual(
			expect.objectContaining({
				dropped: true,
				status: null,
				processedStatus: 202,
				fault: 'dropAfterProcess',
			}),
		);
		// A retry with the same key is refused: the first request completed.
		expectProblem(
			await trigger(env.sandbox, env.sandbox.defaultWorkflowId, { idempotencyKey: key }),
			409,
		);
		expect(await env.sandbox.control.countDocuments()).toBe(1);
	});

	test('Fault latency: the request is answered after the delay, normally', async () => {
		await env.sandbox.control.addFault({ kind: 'latency', ms: 150, count: 1 });
		const r = await get(env.sandbox, '/events');
		expect(r.status).toBe(200);
		const [entry] = await env.sandbox.control.getRequests();
		expect(entry!.fault).toBe('latency');
	});

	test('Fault rate429: 429 with Retry-After seconds, or an HTTP date', async () => {
		await env.sandbox.control.setFaults([
			{ kind: 'rate429', retryAfter: 7, count: 1 },
			{ kind: 'rate429', retryAfter: 3, retryAfterAsDate: true, count: 1 },
		]);
		const a = await get(env.sandbox, '/events');
		expectProblem(a, 429);
		expect(a.headers.get('retry-after')).toBe('7');
		const b = await get(env.sandbox, '/events');
		expectProblem(b, 429);
		expect(Number.isNaN(Date.parse(b.headers.get('retry-after')!))).toBe(false);
		expect((await get(env.sandbox, '/events')).status).toBe(200);
	});

	test('Fault probability: a seeded PRNG makes the same requests fail on every run', async () => {
		const pattern = async () => {
			await env.sandbox.control.setFaults([{ kind: 'status5xx', probability: 0.5, seed: 42 }]);
			const out: number[] = [];
			for (let i = 0; i < 20; i++) out.push((await get(env.sandbox, '/events')).status);
			return out;
		};
		const a = await pattern();
		const b = await pattern();
		expect(a).toEqual(b);
		expect(a).toContain(500);
		expect(a).toContain(200);
	});

	test('Fault origin: a rule can target the file-link origin only', async () => {
		const t = await triggerOk(env.sandbox);
		await env.sandbox.control.addFault({
			kind: 'status5xx',
			status: 503,
			origin: 'files',
			count: 1,
		});
		const link = (await get(env.sandbox, `/documents/${t.documentId}/original`)).body;
		expect(link.url).toBeDefined();
		const r1 = await fetch(link.url);
		expect(r1.status).toBe(503);
		await r1.arrayBuffer();
		const r2 = await fetch(link.url);
		expect(r2.status).toBe(200);
		await r2.arrayBuffer();
	});
});

describe('Request log', () => {
	test('Request log: method, path with query, lower-cased headers, origin, status and time of every request to both origins', async () => {
		const t = await triggerOk(env.sandbox);
		await get(env.sandbox, '/review-tasks', {
			query: { page: 1, pageSize: 5 },
			headers: { 'X-Custom-Thing': 'yes' },
		});
		const link = (await get(env.sandbox, `/documents/${t.documentId}/original`)).body;
		await (await fetch(link.url)).arrayBuffer();
		await get(env.sandbox, '/events', { key: null });
		const all = await env.sandbox.control.getRequests();
		expect(all.map((e) => [e.origin, e.method, e.status])).toEqual([
			['api', 'POST', 202],
			['api', 'GET', 200],
			['api', 'GET', 200],
			['files', 'GET', 200],
			['api', 'GET', 401],
		]);
		expect(all[1]!.path).toBe('/review-tasks?page=1&pageSize=5');
		expect(all[1]!.headers['x-custom-thing']).toBe('yes');
		expect(all[1]!.headers['x-api-key']).toBe(env.sandbox.apiKey);
		expect(all[3]!.headers['x-api-key']).toBeUndefined();
		expect(all[1]!.correlationId).toMatch(/^[0-9a-f-]{36}$/);
		expect(Number.isNaN(Date.parse(all[1]!.time))).toBe(false);
		expect((await env.sandbox.control.getRequests({ origin: 'files' })).length).toBe(1);
		expect((await env.sandbox.control.getRequests({ pathPrefix: '/review-tasks' })).length).toBe(1);
		expect((await env.sandbox.control.getRequests({ afterSeq: all[3]!.seq })).length).toBe(1);
		await env.sandbox.control.clearRequests();
		expect(await env.sandbox.control.getRequests()).toEqual([]);
	});
});

describe('Control API', () => {
	test('Control: usable from another process by URL; reset keeps the default ids', async () => {
		const other = new SandboxControl(env.sandbox.controlUrl);
		const info = await other.info();
		expect(info).toEqual(
			expect.objectContaining({
				baseUrl: env.sandbox.baseUrl,
				fileBaseUrl: env.sandbox.fileBaseUrl,
				apiKey: env.sandbox.apiKey,
				defaultWorkflowId: env.sandbox.defaultWorkflowId,
			}),
		);
		await triggerOk(env.sandbox);
		await other.advanceClock(10_000);
		const after = await other.reset();
		expect(after.apiKey).toBe(env.sandbox.apiKey);
		expect(await other.countDocuments()).toBe(0);
		expect((await other.getClock()).offsetMs).toBe(0);
		expect((await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`)).status).toBe(
			200,
		);
	});

	test('Control: errors are thrown with the status', async () => {
		await expect(env.sandbox.control.getRun(randomUUID())).rejects.toMatchObject({ status: 404 });
	});

	test('Control: the default workflow completes quickly in real time with a JSON output', async () => {
		const t = await triggerOk(env.sandbox);
		const deadline = Date.now() + 5_000;
		let status = '';
		while (Date.now() < deadline) {
			status = (await get(env.sandbox, `/runs/${t.runId}`)).body.status;
			if (status === 'completed') break;
			await new Promise((r) => setTimeout(r, 20));
		}
		expect(status).toBe('completed');
		const out = await get(env.sandbox, `/runs/${t.runId}/output`);
		expect(out.body.isBase64).toBe(false);
		expect(typeof out.body.output).toBe('object');
	});

	test('Control: setRunState sets fields directly', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'running' },
		]);
		const t = await triggerOk(env.sandbox);
		await env.sandbox.control.setRunState(t.runId!, {
			status: 'failed',
			error: { code: 'x', message: 'y' },
		});
		const r = (await get(env.sandbox, `/runs/${t.runId}`)).body;
		expect(r.status).toBe('failed');
		expect(r.error).toEqual({ code: 'x', message: 'y' });
	});

	test('Control: thousands of runs stay cheap', async () => {
		await env.sandbox.control.setNextScripts(
			env.sandbox.defaultWorkflowId,
			[{ status: 'running', ms: 60_000 }, { status: 'completed' }],
			500,
		);
		const batch = 50;
		for (let i = 0; i < 500; i += batch)
			await Promise.all(Array.from({ length: batch }, () => triggerOk(env.sandbox)));
		await env.sandbox.control.advanceClock(60_000);
		const runs = await env.sandbox.control.listRuns();
		expect(runs).toHaveLength(500);
		expect(runs.every((r) => r.status === 'completed')).toBe(true);
	});
});
