/**
 * One API key is one scope of pacing, rate-limit gates and waiting knowledge in an n8n process
 * (nodes/shared/transport/url.ts, rateLimits.ts, readPacer.ts; DocumentWorkflow/waiting/loop.ts),
 * through n8n-core against the sandbox: however its base URL is spelled, and however many other
 * keys come and go while it is in use.
 */
import type { INode } from 'n8n-workflow';
import {
	KEYS_KEPT,
	START_RATE,
	limitScope,
	normalizeBaseUrl,
	readPacerFor,
} from '../../../nodes/shared/transport';
import type { DocumentWorkflowCredentials } from '../../harness/n8n';
import type { Env } from '../../harness/sandbox';
import {
	FAST_WAIT,
	pathOf,
	pdfItems,
	requests,
	useSandbox,
	waitParams,
} from '../../harness/sandbox';

const env = useSandbox();

/** The status reads of one run that the API answered. */
async function statusReads(runId: string): Promise<number> {
	return (await requests(env, { method: 'GET', pathPrefix: `/runs/${runId}` })).filter(
		(entry) => pathOf(entry) === `/runs/${runId}` && entry.status === 200,
	).length;
}

/** One Submit Document with Wait for Completion, for one document whose run takes `ms`. */
async function submitAndWait(
	credentials: DocumentWorkflowCredentials,
	ms: number,
): Promise<string> {
	const wf = env.sandbox.defaultWorkflowId;
	await env.sandbox.control.setNextScripts(wf, [
		{ status: 'running', ms },
		{ status: 'completed' },
	]);
	// The harness runs with `env.credentials` unless told otherwise.
	const options = { items: pdfItems(1), credentials } as Parameters<Env['run']>[1];
	const result = await env.run(waitParams(wf, FAST_WAIT), options);
	expect(result.items[0].json.waitOutcome).toBe('completed');
	return String(result.items[0].json.runId);
}

const scopeOf = (credentials: DocumentWorkflowCredentials) =>
	limitScope(normalizeBaseUrl({} as INode, credentials.baseUrl), { ...credentials });

test('one API spelled two ways (the scheme in capitals, a trailing slash) is one scope: what a run taught under one spelling serves the other', async () => {
	const plain = env.credentials;
	const spelled = { ...plain, baseUrl: `${plain.baseUrl.replace(/^http/, 'HTTP')}/` };
	await submitAndWait(spelled, 600);
	// Two spellings were two scopes: the second run started from nothing and was read again and again.
	const second = await submitAndWait(plain, 600);
	expect(await statusReads(second)).toBe(1);
});

test(`a key in use keeps its read pacer and what its runs taught while more than ${KEYS_KEPT} other keys come and go (the least recently used goes, not the oldest)`, async () => {
	const key = env.credentials;
	// The key learns a run length, and then a read limit from a 429 (one refusing its first read
	// ever would teach none: none of its reads was in that window).
	await submitAndWait(key, 600);
	await env.sandbox.control.addFault({
		kind: 'rate429',
		retryAfter: 1,
		method: 'GET',
		pathPrefix: '/runs/',
		count: 1,
	});
	await submitAndWait(key, 600);
	const pacer = readPacerFor(scopeOf(key));
	expect(pacer.readsPerSecond).toBeLessThan(START_RATE);
	// KEYS_KEPT - 1 other keys each wait on a run: the registries are full.
	const others = async (count: number) => {
		const keys = await Promise.all(
			Array.from({ length: count }, () => env.sandbox.control.createKey({ name: 'other' })),
		);
		for (let i = 0; i < keys.length; i += 20)
			await Promise.all(
				keys.slice(i, i + 20).map((other) => {
					const credentials = { baseUrl: key.baseUrl, apiKey: other.key };
					return submitAndWait(credentials, 0);
				}),
			);
	};
	await others(KEYS_KEPT - 1);
	// The key is used again: it is the most recently used now, though the first made.
	await submitAndWait(key, 600);
	// One more key: one entry of each registry goes.
	await others(1);
	expect(readPacerFor(scopeOf(key))).toBe(pacer);
	expect(await statusReads(await submitAndWait(key, 600))).toBe(1);
}, 60_000);
