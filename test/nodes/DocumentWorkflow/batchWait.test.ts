/**
 * The batch wait through n8n-core against the sandbox: one batch mixing run lengths, failed
 * runs, documents held and runs that stay 404, under 429s; the same over run ids with
 * Run → Wait for Completion; and the bound on Concurrent Checks.
 */
import type { RunScriptInput } from '../../../sandbox/src';
import {
	FAST_WAIT,
	expectPaired,
	pathOf,
	pdfItems,
	requests,
	submitParams,
	useSandbox,
	waitParams,
} from '../../harness/sandbox';

describe('waiting on a mixed batch', () => {
	const env = useSandbox();
	const wf = () => env.sandbox.defaultWorkflowId;

	/** The scripts of the next 40 submissions, and how many of each outcome they give. */
	async function mixedBatch(): Promise<Record<string, number>> {
		const scripts: Array<[RunScriptInput, number]> = [
			[[{ status: 'running', ms: 150 }, { status: 'completed' }], 12],
			[[{ status: 'running', ms: 600 }, { status: 'completed' }], 12],
			[[{ status: 'running', ms: 1500 }, { status: 'completed' }], 8],
			[
				[
					{ status: 'running', ms: 300 },
					{ status: 'failed', error: { code: 'BROKEN' } },
				],
				4,
			],
			[{ steps: [{ status: 'completed' }], neverStarts: 'held' }, 2],
			[{ steps: [{ status: 'completed' }], neverStarts: 'failed' }, 2],
		];
		for (const [script, count] of scripts)
			await env.sandbox.control.setNextScripts(wf(), script, count);
		return { completed: 32, failed: 4, held: 2, notStarted: 2 };
	}

	const outcomes = (items: Array<{ json: Record<string, unknown> }>) =>
		items.reduce<Record<string, number>>(
			(counts, item) => ({
				...counts,
				[String(item.json.waitOutcome)]: (counts[String(item.json.waitOutcome)] ?? 0) + 1,
			}),
			{},
		);

	it('every run ends with its own outcome, all items paired, under 429s on the checks', async () => {
		const expected = await mixedBatch();
		await env.sandbox.control.addFault({
			kind: 'rate429',
			retryAfter: 1,
			method: 'GET',
			pathPrefix: '/runs/',
			probability: 0.1,
			seed: 7,
		});
		const result = await env.run(
			waitParams(wf(), { onFailed: 'item', notFoundGraceSeconds: 0.5 }),
			{ items: pdfItems(40) },
		);
		expect(result.error).toBeUndefined();
		expectPaired(
			result,
			Array.from({ length: 40 }, (_, i) => i),
		);
		expect(outcomes(result.items)).toEqual(expected);
		const log = await requests(env, { origin: 'api' });
		expect(log.some((entry) => entry.status === 429)).toBe(true);
		// Every run was seen final: its last check answered it.
		for (const item of result.items.filter(
			(i) => i.json.waitOutcome === 'completed' || i.json.waitOutcome === 'failed',
		)) {
			const checks = log.filter(
				(entry) => pathOf(entry) === `/runs/${String(item.json.runId)}` && entry.status === 200,
			);
			expect(checks.length).toBeGreaterThanOrEqual(1);
		}
	});

	it('Run → Wait for Completion over many run ids gives the same outcomes, in item order', async () => {
		const expected = await mixedBatch();
		const submitted = await env.run(submitParams(wf()), { items: pdfItems(40) });
		const runIds = submitted.items.map((item) => item.json.runId as string | null);
		const withRun = runIds.filter((runId): runId is string => typeof runId === 'string');
		const result = await env.run(
			{
				resource: 'run',
				operation: 'wait',
				runId: '={{ $json.runId }}',
				options: { ...FAST_WAIT, onFailed: 'item', notFoundGraceSeconds: 0.5 },
			},
			{ items: withRun.map((runId) => ({ json: { runId } })), continueOnFail: true },
		);
		expect(result.error).toBeUndefined();
		expectPaired(
			result,
			withRun.map((_, i) => i),
		);
		// Without the document, a run that stays 404 cannot be explained: an error item names it
		// (the held and never-started documents got run ids from the trigger, which stay 404).
		const counts = outcomes(result.items);
		expect(counts.completed).toBe(expected.completed);
		expect(counts.failed).toBe(expected.failed);
		const notFound = result.items.filter((item) => typeof item.json.error === 'string');
		expect(notFound).toHaveLength(expected.held + expected.notStarted);
		expect(
			notFound.every((item) => /was not found \(404\) for 0\.5 s/.test(String(item.json.error))),
		).toBe(true);
		const finished = result.items.filter((item) => typeof item.json.error !== 'string');
		expect(finished.every((item) => withRun.includes(String(item.json.runId)))).toBe(true);
	});

	it('Run → Wait for Completion over a batch of runs of one length reads most runs once: only the probes at once', async () => {
		await env.sandbox.control.setNextScripts(
			wf(),
			[{ status: 'running', ms: 3000 }, { status: 'completed' }],
			40,
		);
		const submitted = await env.run(submitParams(wf()), { items: pdfItems(40) });
		const runIds = submitted.items.map((item) => String(item.json.runId));
		const before = (await requests(env, { origin: 'api' })).length;
		const result = await env.run(
			{ resource: 'run', operation: 'wait', runId: '={{ $json.runId }}' },
			{ items: runIds.map((runId) => ({ json: { runId } })) },
		);
		expect(result.error).toBeUndefined();
		expect(result.items.every((item) => item.json.waitOutcome === 'completed')).toBe(true);
		const reads = (await requests(env, { origin: 'api' }))
			.slice(before)
			.filter((entry) => runIds.some((runId) => pathOf(entry) === `/runs/${runId}`));
		// Each run read once at once, then once more when done, made 80 and more (the code before this test).
		expect(reads.length).toBeLessThan(60);
	});

	it('fails fast on the first failed run without Continue On Fail, naming it', async () => {
		await mixedBatch();
		const result = await env.run(waitParams(wf(), { notFoundGraceSeconds: 0.5 }), {
			items: pdfItems(40),
		});
		expect(result.error?.message).toMatch(/^Run [0-9a-f-]{36} (failed: BROKEN|never started)/);
	});

	it('refuses more than 100 Concurrent Checks before any request', async () => {
		const result = await env.run(waitParams(wf(), { concurrency: 101 }), { items: pdfItems(1) });
		expect(result.error?.message).toBe(
			'The option "Concurrent Checks" must be a number of at most 100, not "101"',
		);
		expect(await requests(env)).toHaveLength(0);
	});
});
