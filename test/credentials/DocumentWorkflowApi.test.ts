/**
 * The credential: its test (as n8n's "Test" button runs it) and how it authenticates.
 */
import { DocumentWorkflowApi } from '../../credentials/DocumentWorkflowApi.credentials';
import { runActionNode, testCredential } from '../harness/n8n';
import { useSandbox } from '../harness/sandbox';

const env = useSandbox();

describe("credential test (the editor's Test button)", () => {
	test('a working key with events:read passes', async () => {
		const result = await testCredential(env.credentials);
		expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
		const [request] = await env.sandbox.control.getRequests({ pathPrefix: '/events' });
		expect(request.headers['x-api-key']).toBe(env.credentials.apiKey);
		expect(request.path).toBe('/events?pageSize=1');
	});

	test('a trailing slash on the base URL is tolerated', async () => {
		const result = await testCredential({
			baseUrl: `${env.sandbox.baseUrl}///`,
			apiKey: env.sandbox.apiKey,
		});
		expect(result.status).toBe('OK');
	});

	test('an invalid key reads as rejected (401), not as a scope problem', async () => {
		const result = await testCredential({
			baseUrl: env.sandbox.baseUrl,
			apiKey: 'dwk_0000000000000000000000000000dead',
		});
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/rejected \(401\).*expired or deactivated/);
	});

	test('an expired key reads as rejected (401)', async () => {
		const clock = await env.sandbox.control.getClock();
		const key = await env.sandbox.control.createKey({
			expiresOn: new Date(Date.parse(clock.now) + 60_000).toISOString(),
		});
		expect((await testCredential({ baseUrl: env.sandbox.baseUrl, apiKey: key.key })).status).toBe(
			'OK',
		);
		await env.sandbox.control.advanceClock(120_000);
		const result = await testCredential({ baseUrl: env.sandbox.baseUrl, apiKey: key.key });
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/401/);
	});

	test('a deactivated key reads as rejected (401)', async () => {
		const key = await env.sandbox.control.createKey({});
		await env.sandbox.control.updateKey(key.id, { active: false });
		const result = await testCredential({ baseUrl: env.sandbox.baseUrl, apiKey: key.key });
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/401/);
	});

	test('a valid key without events:read is called valid, and the missing scope is named (403)', async () => {
		const key = await env.sandbox.control.createKey({ scopes: ['workflows:trigger', 'runs:read'] });
		const result = await testCredential({ baseUrl: env.sandbox.baseUrl, apiKey: key.key });
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/^The API key is valid, but it lacks the events:read scope/);
		expect(result.message).not.toMatch(/invalid|rejected/i);
	});

	test('a base URL that is not the API root says so (404)', async () => {
		const result = await testCredential({
			baseUrl: `${env.sandbox.baseUrl}/v1`,
			apiKey: env.sandbox.apiKey,
		});
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/Base URL answered 404/);
	});

	test('the test never echoes the key', async () => {
		const key = 'dwk_ffffffffffffffffffffffffffffffff';
		const result = await testCredential({ baseUrl: env.sandbox.baseUrl, apiKey: key });
		expect(JSON.stringify(result)).not.toContain(key);
	});
});

describe('authentication', () => {
	const workflowGet = (workflowId: string) => ({
		resource: 'workflow',
		operation: 'get',
		workflowId,
	});

	test('sends X-Api-Key, and no X-Workspace-Id when the workspace is empty', async () => {
		const result = await runActionNode({
			parameters: workflowGet(env.sandbox.defaultWorkflowId),
			credentials: { baseUrl: env.sandbox.baseUrl, apiKey: env.sandbox.apiKey, workspaceId: '' },
		});
		expect(result.error).toBeUndefined();
		expect(result.items[0].json.id).toBe(env.sandbox.defaultWorkflowId);
		const [request] = await env.sandbox.control.getRequests({ pathPrefix: '/workflows/' });
		expect(request.headers['x-api-key']).toBe(env.sandbox.apiKey);
		expect(request.headers).not.toHaveProperty('x-workspace-id');
	});

	test('sends X-Workspace-Id when set, scoping requests to that workspace', async () => {
		const info = await env.sandbox.control.info();
		const workspace = await env.sandbox.control.createWorkspace(info.defaultOrgId, {
			name: 'other',
		});
		const inWorkspace = await env.sandbox.control.createWorkflow({
			workspaceId: workspace.id,
			name: 'in other workspace',
		});
		const credentials = {
			baseUrl: env.sandbox.baseUrl,
			apiKey: env.sandbox.apiKey,
			workspaceId: workspace.id,
		};

		const found = await runActionNode({ parameters: workflowGet(inWorkspace.id), credentials });
		expect(found.error).toBeUndefined();
		expect(found.items[0].json.name).toBe('in other workspace');
		const requests = await env.sandbox.control.getRequests({
			pathPrefix: `/workflows/${inWorkspace.id}`,
		});
		expect(requests[0].headers['x-workspace-id']).toBe(workspace.id);

		// The default workspace's workflow is not visible from the other workspace.
		const notFound = await runActionNode({
			parameters: workflowGet(env.sandbox.defaultWorkflowId),
			credentials,
		});
		expect(notFound.error?.httpCode).toBe('404');
	});

	test('the key is added only to requests bound for the base URL origin', async () => {
		const credential = new DocumentWorkflowApi();
		const credentials = {
			baseUrl: 'https://api.example.com/',
			apiKey: 'dwk_secret',
			workspaceId: 'ws-1',
		};
		const toApi = await credential.authenticate(credentials, {
			url: '/runs/x',
			baseURL: 'https://api.example.com',
		});
		expect(toApi.headers).toEqual({ 'X-Api-Key': 'dwk_secret', 'X-Workspace-Id': 'ws-1' });
		const toApiAbsolute = await credential.authenticate(credentials, {
			url: 'https://api.example.com/runs/x',
		});
		expect(toApiAbsolute.headers).toMatchObject({ 'X-Api-Key': 'dwk_secret' });
		const toFileHost = await credential.authenticate(credentials, {
			url: 'https://files.example.net/f/abc',
		});
		expect(toFileHost.headers).toBeUndefined();
		const toOtherPort = await credential.authenticate(credentials, {
			url: 'https://api.example.com:8443/f/abc',
		});
		expect(toOtherPort.headers).toBeUndefined();
	});
});
