/**
 * Many one-document executions at once, the way most workflows run (a webhook, a form or a
 * file trigger starts one execution per document), through n8n-core against the sandbox:
 * one read limit for all of them, and waiting that works whether or not the API's run
 * events name their run.
 */
import type { Env } from '../../harness/sandbox';
import { pathOf, pdfItems, requests, useSandbox, waitParams } from '../../harness/sandbox';

const RUN_MS = 3000;
const DEFAULT_INTERVALS = {
	initialPollIntervalSeconds: 1,
	maxPollIntervalSeconds: 20,
	notFoundGraceSeconds: 30,
};

/** Starts `count` executions 25 ms apart, each submitting one document and waiting for it with its output. */
async function oneDocumentExecutions(env: Env, count: number) {
	const wf = env.sandbox.defaultWorkflowId;
	await env.sandbox.control.setNextScripts(
		wf,
		[{ status: 'running', ms: RUN_MS }, { status: 'completed' }],
		count,
	);
	const executions = [];
	for (let i = 0; i < count; i++) {
		// The node's default intervals, as users run it (the harness's fast ones check every 0.2 s).
		executions.push(
			env.run(waitParams(wf, { includeOutput: true, ...DEFAULT_INTERVALS }, {}), {
				items: pdfItems(1),
			}),
		);
		await new Promise((resolve) => setTimeout(resolve, 25));
	}
	return await Promise.all(executions);
}

describe('one-document executions at once', () => {
	const env = useSandbox();

	// The 429s left: reads sent before the first 429 of a limit not yet known came back (an event
	// read that names all 30 ended runs sends their checks and outputs together, at the pacer's
	// start rate), and at times one correction when a limit counted in fixed windows was learnt
	// over a sliding second. How many depends on the round trip, which 30 executions and the
	// sandbox in one test process stretch to about 100 ms: measured, 19 reads went out before the
	// first 429 came back, then none until the window reopened; 6 to 13 of about 110 requests were
	// refused over many runs. Each execution learning the limit on its own refused 44%. The
	// benchmark's real-n8n row holds the goal (under 1%) at 50/s.
	it('share one read limit: at most 20% of the requests answered 429 (old code: 44%)', async () => {
		await env.sandbox.control.setRateLimits({ reads: { limit: 10, windowMs: 1000 } });
		const results = await oneDocumentExecutions(env, 30);
		for (const result of results)
			expect(result.items[0]?.json).toMatchObject({ waitOutcome: 'completed', outputKind: 'json' });
		const log = await requests(env, { origin: 'api' });
		const refused = log.filter((entry) => entry.status === 429).length;
		expect(refused / log.length).toBeLessThanOrEqual(0.2);
	});

	it.each([
		['name their run', true],
		['name no run', false],
	])(
		'complete with few status reads when run events %s, each run read before its item is given',
		async (_label, named) => {
			await env.sandbox.control.setSettings({ runEventsNameRun: named });
			const results = await oneDocumentExecutions(env, 20);
			const log = await requests(env, { origin: 'api' });
			for (const result of results) {
				const item = result.items[0]?.json;
				expect(item).toMatchObject({
					waitOutcome: 'completed',
					status: 'completed',
					outputKind: 'json',
				});
				// The item's run was read, answering completed, and its output read: after the status
				// read, or beside it where a run.completed event named the run (the item waits for both).
				const runId = String(item?.runId);
				const runRead = log.findIndex(
					(entry) => pathOf(entry) === `/runs/${runId}` && entry.status === 200,
				);
				const outputRead = log.findIndex((entry) => pathOf(entry) === `/runs/${runId}/output`);
				expect(runRead).toBeGreaterThanOrEqual(0);
				expect(outputRead).toBeGreaterThanOrEqual(0);
				if (!named) expect(runRead).toBeLessThan(outputRead);
			}
			const statusReads = log.filter((entry) => /^\/runs\/[^/]+$/.test(pathOf(entry))).length;
			expect(statusReads / results.length).toBeLessThanOrEqual(3);
		},
	);
});
