/**
 * The one test harness for the sandbox, used by every test file: `useSandbox()` starts a sandbox
 * per test file, resets it before each test and stops it after the file; and the fixtures every
 * suite uses (files, items, fast wait options, node parameters).
 */
import { startSandbox } from '../../sandbox/src';
import type { Sandbox } from '../../sandbox/src';
import type { RequestLogEntry } from '../../sandbox/src/types';
import type { DocumentWorkflowCredentials, InputItem, NodeRunResult, RunNodeOptions } from './n8n';

export interface Env {
	sandbox: Sandbox;
	credentials: DocumentWorkflowCredentials;
	run(
		parameters: RunNodeOptions['parameters'],
		options?: Omit<RunNodeOptions, 'parameters' | 'credentials'>,
	): Promise<NodeRunResult>;
}

export interface SandboxOptions {
	/**
	 * Whether the file runs the nodes (default true). The sandbox's own conformance suites say
	 * false: they send requests by hand (some deliberately carry the key to the file-link
	 * origin), so n8n is not loaded and the per-file key scan of node output is not armed.
	 */
	nodes?: boolean;
}

/** Starts a sandbox for the file's tests, resets it before each test and stops it after the file. */
export function useSandbox(options: SandboxOptions = {}): Env {
	// Loaded here, while the file is being collected: loading n8n.ts registers the file's key scan (an afterAll hook).
	const harness =
		options.nodes === false ? undefined : (require('./n8n') as typeof import('./n8n'));
	const env = {} as Env;
	env.run = async (parameters, runOptions = {}) => {
		if (!harness) throw new Error('useSandbox({ nodes: false }) does not run nodes');
		return await harness.runActionNode({ parameters, credentials: env.credentials, ...runOptions });
	};
	beforeAll(async () => {
		env.sandbox = await startSandbox();
		env.credentials = { baseUrl: env.sandbox.baseUrl, apiKey: env.sandbox.apiKey };
	});
	beforeEach(async () => {
		await env.sandbox.control.reset();
		// Each test is a new user of the API: a key of its own, so what an n8n process learns
		// about a key's runs (the action node's watcher) does not carry from one test to the next.
		if (harness)
			env.credentials = {
				baseUrl: env.sandbox.baseUrl,
				apiKey: (await env.sandbox.control.createKey({ name: 'test key' })).key,
			};
	});
	afterAll(async () => {
		await env.sandbox?.stop();
	});
	return env;
}

export function pdf(text: string): Buffer {
	return Buffer.from(`%PDF-1.4\n% ${text}\n%%EOF\n`, 'utf8');
}

export function pdfItem(index: number, json: Record<string, unknown> = {}): InputItem {
	return {
		json: { index, ...json },
		binary: {
			data: {
				data: pdf(`document ${index}`),
				fileName: `doc-${index}.pdf`,
				mimeType: 'application/pdf',
			},
		},
	};
}

export function pdfItems(count: number): InputItem[] {
	return Array.from({ length: count }, (_, i) => pdfItem(i));
}

/** Short intervals, so tests of the wait run in well under a second each. */
export const FAST_WAIT = {
	initialPollIntervalSeconds: 0.1,
	maxPollIntervalSeconds: 0.2,
	notFoundGraceSeconds: 1,
};

export function submitParams(
	workflowId: string,
	extra: Record<string, unknown> = {},
	options: Record<string, unknown> = {},
) {
	return {
		resource: 'workflow',
		operation: 'trigger',
		workflowId,
		binaryPropertyName: 'data',
		...extra,
		options,
	};
}

export function waitParams(
	workflowId: string,
	options: Record<string, unknown> = {},
	extra: Record<string, unknown> = {},
) {
	return submitParams(
		workflowId,
		{ waitForCompletion: true, ...extra },
		{ ...FAST_WAIT, ...options },
	);
}

export async function requests(
	env: Env,
	filter: { origin?: 'api' | 'files'; method?: string; pathPrefix?: string } = {},
): Promise<RequestLogEntry[]> {
	return await env.sandbox.control.getRequests(filter);
}

export function pathOf(entry: RequestLogEntry): string {
	return entry.path.split('?')[0];
}

/** Every output item must carry pairedItem pointing at its input. */
export function expectPaired(result: NodeRunResult, expected: number[]): void {
	expect(
		result.items.map((item) => (item.pairedItem as { item: number } | undefined)?.item),
	).toEqual(expected);
}
