/** Conformance: Authentication, Endpoints (headers), Errors. */
import { ALL_SCOPES } from '../../sandbox/src';
import type { Sandbox } from '../../sandbox/src';
import { UUID_RE, expectProblem, get, send, trigger, triggerOk } from './helpers';
import { useSandbox } from '../harness/sandbox';

const env = useSandbox({ nodes: false });

describe('Authentication', () => {
	test('Auth rule 1: the key has a fixed prefix followed by a unique identifier', async () => {
		const a = await env.sandbox.control.createKey({ name: 'a' });
		const b = await env.sandbox.control.createKey({ name: 'b' });
		expect(a.key).toMatch(/^dwk_[0-9a-f]{32}$/);
		expect(b.key).toMatch(/^dwk_[0-9a-f]{32}$/);
		expect(a.key).not.toBe(b.key);
		expect(env.sandbox.apiKey).toMatch(/^dwk_[0-9a-f]{32}$/);
	});

	test('Auth rule 6: a missing key gets 401', async () => {
		expectProblem(
			await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, { key: null }),
			401,
		);
	});

	test('Auth rule 6: an invalid key gets 401', async () => {
		expectProblem(
			await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, {
				key: 'dwk_ffffffffffffffffffffffffffffffff',
			}),
			401,
		);
		expectProblem(
			await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, { key: 'not-a-key' }),
			401,
		);
	});

	test('Auth rule 6: an expired key gets 401 (sandbox clock)', async () => {
		const clock = await env.sandbox.control.getClock();
		const k = await env.sandbox.control.createKey({
			expiresOn: new Date(clock.nowMs + 60_000).toISOString(),
		});
		expect(
			(await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, { key: k.key }))
				.status,
		).toBe(200);
		await env.sandbox.control.advanceClock(61_000);
		const r = await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, { key: k.key });
		expectProblem(r, 401);
		expect(r.body.detail).toMatch(/expired/);
	});

	test('Auth rule 4: a key without an expiration date does not expire', async () => {
		const k = await env.sandbox.control.createKey({});
		await env.sandbox.control.advanceClock(400 * 24 * 3600 * 1000);
		expect(
			(await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, { key: k.key }))
				.status,
		).toBe(200);
	});

	test('Auth rule 5: a deactivated key gets 401, and works again when reactivated', async () => {
		const k = await env.sandbox.control.createKey({});
		await env.sandbox.control.updateKey(k.id, { active: false });
		const r = await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, { key: k.key });
		expectProblem(r, 401);
		expect(r.body.detail).toMatch(/deactivated/);
		await env.sandbox.control.updateKey(k.id, { active: true });
		expect(
			(await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, { key: k.key }))
				.status,
		).toBe(200);
	});

	test('Auth rule 5: a deleted key gets 401 for good', async () => {
		const k = await env.sandbox.control.createKey({});
		await env.sandbox.control.deleteKey(k.id);
		expectProblem(
			await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, { key: k.key }),
			401,
		);
	});

	test('Auth rule 7: a plan without API access gets 403', async () => {
		const org = await env.sandbox.control.createOrg({ apiAccess: false });
		const k = await env.sandbox.control.createKey({ orgId: org.id });
		const r = await get(env.sandbox, '/events', { key: k.key });
		expectProblem(r, 403);
		expect(r.body.detail).toMatch(/API access/);
		await env.sandbox.control.updateOrg(org.id, { apiAccess: true });
		expect((await get(env.sandbox, '/events', { key: k.key })).status).toBe(200);
	});

	describe('Auth rule 2/3/7: each operation requires its scope, a key without it gets 403', () => {
		const cases: Array<[string, string, (s: Sandbox, ids: Ids) => Promise<{ status: number }>]> = [
			[
				'workflows:trigger',
				'POST /workflows/{id}/trigger',
				(s, _i) => trigger(s, s.defaultWorkflowId, { key: keyFor.value }),
			],
			[
				'workflows:read',
				'GET /workflows/{id}',
				(s) => get(s, `/workflows/${s.defaultWorkflowId}`, { key: keyFor.value }),
			],
			['runs:read', 'GET /runs/{id}', (s, i) => get(s, `/runs/${i.runId}`, { key: keyFor.value })],
			[
				'runs:read',
				'GET /runs/{id}/output',
				(s, i) => get(s, `/runs/${i.runId}/output`, { key: keyFor.value }),
			],
			[
				'runs:read',
				'GET /documents/{id}/runs',
				(s, i) => get(s, `/documents/${i.documentId}/runs`, { key: keyFor.value }),
			],
			[
				'documents:read',
				'GET /documents/{id}',
				(s, i) => get(s, `/documents/${i.documentId}`, { key: keyFor.value }),
			],
			[
				'documents:read',
				'GET /documents/{id}/original',
				(s, i) => get(s, `/documents/${i.documentId}/original`, { key: keyFor.value }),
			],
			['reviews:read', 'GET /review-tasks', (s) => get(s, '/review-tasks', { key: keyFor.value })],
			[
				'reviews:read',
				'GET /review-tasks/{id}',
				(s, i) => get(s, `/review-tasks/${i.taskId}`, { key: keyFor.value }),
			],
			['events:read', 'GET /events', (s) => get(s, '/events', { key: keyFor.value })],
		];
		interface Ids {
			runId: string;
			documentId: string;
			taskId: string;
		}
		const keyFor = { value: '' };
		test.each(cases)('scope %s for %s', async (scope, _label, call) => {
			await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
				{ status: 'review' },
			]);
			const t = await triggerOk(env.sandbox);
			const task = (await env.sandbox.control.listReviewTasks({ runId: t.runId! }))[0]!;
			const ids: Ids = { runId: t.runId!, documentId: t.documentId, taskId: task.id };
			const others = ALL_SCOPES.filter((x) => x !== scope);
			keyFor.value = (await env.sandbox.control.createKey({ scopes: others })).key;
			const denied = await call(env.sandbox, ids);
			expect(denied.status).toBe(403);
			keyFor.value = (await env.sandbox.control.createKey({ scopes: [scope] })).key;
			const allowed = await call(env.sandbox, ids);
			expect(allowed.status).not.toBe(403);
			expect(allowed.status).not.toBe(401);
		});
	});

	test('Auth rule 8: X-Workspace-Id scopes a request to a workspace; omitted = the default workspace', async () => {
		const org = await env.sandbox.control.getOrg('default');
		const ws = await env.sandbox.control.createWorkspace(org.id, { name: 'Second' });
		const wf = await env.sandbox.control.createWorkflow({
			workspaceId: ws.id,
			name: 'In second workspace',
		});
		// Default workspace: not found.
		expectProblem(await get(env.sandbox, `/workflows/${wf.id}`), 404);
		// With the header: found.
		const r = await get(env.sandbox, `/workflows/${wf.id}`, {
			headers: { 'X-Workspace-Id': ws.id },
		});
		expect(r.status).toBe(200);
		expect(r.body.name).toBe('In second workspace');
		// The default workflow is not in the second workspace.
		expectProblem(
			await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, {
				headers: { 'X-Workspace-Id': ws.id },
			}),
			404,
		);
		// Explicit default workspace id behaves as omitted.
		expect(
			(
				await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, {
					headers: { 'X-Workspace-Id': org.defaultWorkspaceId },
				})
			).status,
		).toBe(200);
		// Documents and runs follow the workspace of their workflow.
		const t = await triggerOk(env.sandbox, wf.id, { headers: { 'X-Workspace-Id': ws.id } });
		expectProblem(await get(env.sandbox, `/documents/${t.documentId}`), 404);
		expect(
			(
				await get(env.sandbox, `/documents/${t.documentId}`, {
					headers: { 'X-Workspace-Id': ws.id },
				})
			).status,
		).toBe(200);
	});

	test('Auth rule 8: an unknown X-Workspace-Id answers 404', async () => {
		expectProblem(
			await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, {
				headers: { 'X-Workspace-Id': '00000000-0000-4000-8000-000000000000' },
			}),
			404,
		);
	});

	test('Auth rule 2: resources of another organization are 404', async () => {
		const org = await env.sandbox.control.createOrg({ name: 'Other' });
		const k = await env.sandbox.control.createKey({ orgId: org.id });
		const t = await triggerOk(env.sandbox);
		expectProblem(
			await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, { key: k.key }),
			404,
		);
		expectProblem(await get(env.sandbox, `/documents/${t.documentId}`, { key: k.key }), 404);
		expectProblem(await get(env.sandbox, `/runs/${t.runId}`, { key: k.key }), 404);
		expectProblem(await trigger(env.sandbox, env.sandbox.defaultWorkflowId, { key: k.key }), 404);
		expect((await get(env.sandbox, '/review-tasks', { key: k.key })).body.count).toBe(0);
	});
});

describe('Endpoints: headers', () => {
	test('Endpoints: every response carries a fresh X-Correlation-ID; a client value is ignored', async () => {
		const mine = '11111111-1111-4111-8111-111111111111';
		const responses = [
			await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, {
				headers: { 'X-Correlation-ID': mine },
			}),
			await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`, {
				headers: { 'X-Correlation-ID': mine },
			}),
			await get(env.sandbox, '/runs/00000000-0000-4000-8000-000000000000', {
				headers: { 'X-Correlation-ID': mine },
			}),
			await get(env.sandbox, '/events', { key: null, headers: { 'X-Correlation-ID': mine } }),
			await trigger(env.sandbox, env.sandbox.defaultWorkflowId, {
				headers: { 'X-Correlation-ID': mine },
			}),
		];
		const ids = responses.map((r) => r.headers.get('x-correlation-id'));
		for (const id of ids) {
			expect(id).toMatch(UUID_RE);
			expect(id).not.toBe(mine);
		}
		expect(new Set(ids).size).toBe(ids.length);
	});

	test('Errors: an error response is application/problem+json with status, title, type, instance, traceId, detail, errors', async () => {
		const r = await get(env.sandbox, '/review-tasks', { query: { pageSize: 0 } });
		expectProblem(r, 400);
		expect(r.body.instance).toBe('/review-tasks');
		expect(r.body.errors).toEqual({ pageSize: [expect.any(String)] });
		expect(r.body.detail).toMatch(/pageSize/);
	});

	test('Errors: each error gets its own traceId', async () => {
		const a = await get(env.sandbox, '/events', { key: null });
		const b = await get(env.sandbox, '/events', { key: null });
		expect(a.body.traceId).not.toBe(b.body.traceId);
	});

	test('Errors: an unknown path answers 404 and a wrong method 405, as problems', async () => {
		expectProblem(await get(env.sandbox, '/pipelines/00000000-0000-4000-8000-000000000000'), 404);
		expectProblem(
			await send(env.sandbox, 'DELETE', `/workflows/${env.sandbox.defaultWorkflowId}`),
			405,
		);
	});

	test('Get a workflow: returns the Workflow fields', async () => {
		const r = await get(env.sandbox, `/workflows/${env.sandbox.defaultWorkflowId}`);
		expect(r.status).toBe(200);
		expect(r.headers.get('content-type')).toMatch(/^application\/json/);
		expect(r.body).toEqual({
			id: env.sandbox.defaultWorkflowId,
			name: expect.any(String),
			environment: 'prod',
			isEnabled: true,
			triggerFormats: expect.arrayContaining(['pdf', 'png', 'docx']),
			createdOn: expect.any(String),
			updatedOn: expect.any(String),
		});
	});

	test('Get a workflow: a non-UUID id answers 404', async () => {
		expectProblem(await get(env.sandbox, '/workflows/not-a-uuid'), 404);
		expectProblem(await get(env.sandbox, '/runs/123'), 404);
	});

	test('Workflow: updatedOn moves when the name or enabled state changes, not when only the graph changes', async () => {
		const wf = await env.sandbox.control.createWorkflow({ name: 'A' });
		const before = (await get(env.sandbox, `/workflows/${wf.id}`)).body;
		await env.sandbox.control.advanceClock(1000);
		await env.sandbox.control.updateWorkflow(wf.id, {
			triggerFormats: ['pdf'],
			script: [{ status: 'completed' }],
			outputs: [],
		});
		const graph = (await get(env.sandbox, `/workflows/${wf.id}`)).body;
		expect(graph.updatedOn).toBe(before.updatedOn);
		expect(graph.triggerFormats).toEqual(['pdf']);
		await env.sandbox.control.updateWorkflow(wf.id, { name: 'B' });
		const renamed = (await get(env.sandbox, `/workflows/${wf.id}`)).body;
		expect(Date.parse(renamed.updatedOn)).toBeGreaterThan(Date.parse(before.updatedOn));
		await env.sandbox.control.advanceClock(1000);
		await env.sandbox.control.updateWorkflow(wf.id, { isEnabled: false });
		const disabled = (await get(env.sandbox, `/workflows/${wf.id}`)).body;
		expect(disabled.isEnabled).toBe(false);
		expect(Date.parse(disabled.updatedOn)).toBeGreaterThan(Date.parse(renamed.updatedOn));
		expect(disabled.createdOn).toBe(before.createdOn);
	});
});

describe('Limits: rate limits', () => {
	test('Limits: reads, triggers and original-file downloads are limited separately; 429 carries Retry-After in seconds', async () => {
		await env.sandbox.control.setRateLimits({
			reads: { limit: 2, windowMs: 10_000 },
			triggers: { limit: 1, windowMs: 10_000 },
			originals: { limit: 1, windowMs: 10_000 },
		});
		const t = await triggerOk(env.sandbox);
		const t2 = await trigger(env.sandbox, env.sandbox.defaultWorkflowId);
		expectProblem(t2, 429);
		expect(t2.headers.get('retry-after')).toMatch(/^\d+$/);
		expect(Number(t2.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
		expect(Number(t2.headers.get('retry-after'))).toBeLessThanOrEqual(10);
		// Reads still have their own budget.
		expect((await get(env.sandbox, `/documents/${t.documentId}`)).status).toBe(200);
		expect((await get(env.sandbox, `/documents/${t.documentId}`)).status).toBe(200);
		const r3 = await get(env.sandbox, `/documents/${t.documentId}`);
		expectProblem(r3, 429);
		expect(r3.headers.get('retry-after')).toMatch(/^\d+$/);
		// Original-file downloads have theirs.
		expect((await get(env.sandbox, `/documents/${t.documentId}/original`)).status).toBe(200);
		expectProblem(await get(env.sandbox, `/documents/${t.documentId}/original`), 429);
		// The window resets.
		await env.sandbox.control.advanceClock(10_000);
		expect((await get(env.sandbox, `/documents/${t.documentId}`)).status).toBe(200);
		expect((await trigger(env.sandbox, env.sandbox.defaultWorkflowId)).status).toBe(202);
	});

	test('Limits: polling a run counts against the read limit, not the trigger limit', async () => {
		await env.sandbox.control.setRateLimits({ triggers: { limit: 1, windowMs: 60_000 } });
		const t = await triggerOk(env.sandbox);
		for (let i = 0; i < 5; i++)
			expect((await get(env.sandbox, `/runs/${t.runId}`)).status).toBe(200);
	});

	test('Limits: Retry-After can be sent as an HTTP date', async () => {
		await env.sandbox.control.setRateLimits({
			reads: { limit: 0, windowMs: 30_000 },
			retryAfterFormat: 'date',
		});
		const r = await get(env.sandbox, '/events');
		expectProblem(r, 429);
		const value = r.headers.get('retry-after')!;
		expect(value).not.toMatch(/^\d+$/);
		const when = Date.parse(value);
		expect(Number.isNaN(when)).toBe(false);
		expect(when).toBeGreaterThan(Date.now() - 1000);
	});

	test('Limits: rate limits are per organization', async () => {
		await env.sandbox.control.setRateLimits({ reads: { limit: 0, windowMs: 30_000 } });
		const org = await env.sandbox.control.createOrg({});
		const k = await env.sandbox.control.createKey({ orgId: org.id });
		expect((await get(env.sandbox, '/events')).status).toBe(429);
		expect((await get(env.sandbox, '/events', { key: k.key })).status).toBe(200);
	});
});
