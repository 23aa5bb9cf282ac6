/**
 * When a wait ends early (a cancelled execution, or fail-fast on the first failed run),
 * nothing of it outlives the node's execution: no check still in flight, no timer still
 * set. Checked with Node's async hooks: every timer created while the node ran whose
 * creation passes through this package's code or the HTTP client must be gone when the
 * execution returns. (n8n ends a cancelled execution at once, without waiting for the
 * node; the node's own pauses are sliced into sleeps of at most 100 ms, so what may be left
 * then is one such slice, never a longer wait or a request.)
 */
import { createHook } from 'node:async_hooks';
import { FAST_WAIT, pdfItems, submitParams, useSandbox, waitParams } from '../../harness/sandbox';

interface TimerResource {
	_idleTimeout?: number;
	_destroyed?: boolean;
}

/**
 * Runs `work`, and lists the timers it left set that this package created, directly or by
 * sending a request (the HTTP client's timeout of a request still in flight), with their
 * duration. A timer that fired or was cleared is not left set.
 */
async function timersLeftBy<T>(
	work: () => Promise<T>,
): Promise<{ value: T; left: Array<{ ms: number; stack: string }> }> {
	const stackLimit = Error.stackTraceLimit;
	Error.stackTraceLimit = 80;
	const created: Array<{ timer: TimerResource; ms: number; stack: string }> = [];
	const hook = createHook({
		init(_id, type, _trigger, resource) {
			if (type !== 'Timeout') return;
			// This hook's own frame names the test file (under test/nodes/): it is left out.
			const stack = (new Error().stack ?? '')
				.split('\n')
				.filter((line) => !line.includes(__filename))
				.join('\n');
			const ours =
				/[\\/]nodes[\\/](DocumentWorkflow|shared)[\\/]/.test(stack) &&
				!/[\\/]sandbox[\\/]src[\\/]|undici/.test(stack);
			const timer = resource as TimerResource;
			if (ours) created.push({ timer, ms: Number(timer._idleTimeout ?? -1), stack });
		},
	});
	hook.enable();
	try {
		const value = await work();
		// Let the HTTP client finish the aborts it was told of (it clears its timers on the next ticks).
		await new Promise((resolve) => setImmediate(resolve));
		await new Promise((resolve) => setImmediate(resolve));
		const left = created
			.filter(({ timer }) => !timer._destroyed && timer._idleTimeout !== -1)
			.map(({ ms, stack }) => ({ ms, stack }));
		return { value, left };
	} finally {
		hook.disable();
		Error.stackTraceLimit = stackLimit;
	}
}

describe('a wait that ends early leaves nothing behind', () => {
	const env = useSandbox();
	const wf = () => env.sandbox.defaultWorkflowId;

	/** Two runs: the first fails soon, the second runs on; their ids. */
	async function failingAndRunning(): Promise<[string, string]> {
		await env.sandbox.control.setNextScripts(wf(), [
			{ status: 'running', ms: 300 },
			{ status: 'failed', error: { code: 'BROKEN' } },
		]);
		await env.sandbox.control.setNextScripts(wf(), [{ status: 'running' }]);
		const submitted = await env.run(submitParams(wf(), {}, { concurrency: 1 }), {
			items: pdfItems(2),
		});
		return submitted.items.map((item) => item.json.runId as string) as [string, string];
	}

	const waitOn = (runIds: string[], extra: Record<string, unknown> = {}) =>
		env.run(
			{
				resource: 'run',
				operation: 'wait',
				runId: '={{ $json.runId }}',
				options: { ...FAST_WAIT, maxWaitMinutes: 0 },
			},
			{ items: runIds.map((runId) => ({ json: { runId } })), ...extra },
		);

	it('fail-fast on the first failed run: the check of another run still in flight is aborted and awaited', async () => {
		const [failing, running] = await failingAndRunning();
		// Every check of the running run takes 3 s to answer: one is in flight when the other run fails.
		await env.sandbox.control.addFault({
			kind: 'latency',
			ms: 3000,
			method: 'GET',
			pathPrefix: `/runs/${running}`,
		});
		const { value: result, left } = await timersLeftBy(() => waitOn([failing, running]));
		expect(result.error?.message).toContain(`Run ${failing} failed: BROKEN`);
		expect(left).toEqual([]);
	});

	it('a run whose checks answer only after its Max Wait Time: without Continue On Fail the node fails at the limit, naming the run (no error item)', async () => {
		const [, running] = await failingAndRunning();
		await env.sandbox.control.addFault({
			kind: 'latency',
			ms: 3000,
			method: 'GET',
			pathPrefix: `/runs/${running}`,
		});
		const { value: result, left } = await timersLeftBy(() =>
			env.run(
				{
					resource: 'run',
					operation: 'wait',
					runId: '={{ $json.runId }}',
					options: { ...FAST_WAIT, maxWaitMinutes: 0.01 },
				},
				{ items: [{ json: { runId: running } }] },
			),
		);
		expect(result.items).toEqual([]);
		expect(result.error?.message).toBe(
			`Run ${running} was still without an answer when the time limit of 0.6 s was reached.`,
		);
		expect(left.filter((timer) => timer.ms > 100)).toEqual([]);
	});

	it('Submit with Wait for Completion, runs read once and then checked across their Max Wait Time: without Continue On Fail the node fails with the first item (no error items)', async () => {
		await env.sandbox.control.setNextScripts(wf(), [{ status: 'paused_for_audit' }], 3);
		// Every status read takes 400 ms: each run's first read answers before the limit (0.6 s),
		// the read sent at the limit is still in flight when the wait passes it (0.1 s later).
		await env.sandbox.control.addFault({
			kind: 'latency',
			ms: 400,
			method: 'GET',
			pathPrefix: '/runs/',
		});
		const result = await env.run(
			submitParams(wf(), { waitForCompletion: true }, { ...FAST_WAIT, maxWaitMinutes: 0.01 }),
			{ items: pdfItems(3) },
		);
		expect(result.items).toEqual([]);
		expect(result.error?.message).toMatch(
			/^Run [0-9a-f-]{36} was still "paused_for_audit" when the time limit of 0\.6 s was reached\.$/,
		);
	});

	it('a cancelled execution: a check waiting out a long Retry-After ends with it, and its timer too', async () => {
		const [, running] = await failingAndRunning();
		await env.sandbox.control.addFault({
			kind: 'rate429',
			retryAfter: 20,
			method: 'GET',
			pathPrefix: `/runs/${running}`,
		});
		const { value: result, left } = await timersLeftBy(() =>
			waitOn([running], { cancelAfterMs: 800 }),
		);
		expect(result.run.status).toBe('canceled');
		expect(left.filter((timer) => timer.ms > 100)).toEqual([]);
	});

	it('a run id that stays 404 with Max Wait 0 ends after the grace period, explained, when its document shows no other run', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		await env.sandbox.control.setNextScripts(wf, [{ status: 'running', ms: 60_000 }]);
		// The API answers 404 for every run read; the document itself is there, its run list names only that run.
		await env.sandbox.control.addFault({
			kind: 'badBody',
			status: 404,
			contentType: 'application/problem+json',
			body: '{"status":404,"title":"Not Found","type":"about:blank","instance":"/runs","traceId":"t"}',
			method: 'GET',
			pathPrefix: '/runs/',
		});
		const result = await env.run(
			waitParams(wf, { maxWaitMinutes: 0, notFoundGraceSeconds: 1, onFailed: 'item' }),
			{ items: pdfItems(1) },
		);
		const item = result.items[0].json;
		expect(item).toMatchObject({ waitOutcome: 'notStarted', finished: false });
		expect(item.message).toMatch(
			new RegExp(
				`^Run ${String(item.runId)} was not found \\(404\\) for 1 s, and document ${String(item.documentId)} \\(status "\\w+"\\) lists no run\\.$`,
			),
		);
	}, 30_000);

	it("a run id that turns 404 while its document lists another run: the wait follows that run, and its item names the trigger's run id", async () => {
		const wf = env.sandbox.defaultWorkflowId;
		await env.sandbox.control.setNextScripts(wf, [{ status: 'running', ms: 60_000 }]);
		const waiting = env.run(waitParams(wf, { maxWaitMinutes: 1 }), { items: pdfItems(1) });
		let triggered: Awaited<ReturnType<typeof env.sandbox.control.listRuns>>[number] | undefined;
		while (!triggered) [triggered] = await env.sandbox.control.listRuns({ workflowId: wf });
		// From now on the trigger's run id answers 404; the document gets a new top-level run, which completes.
		await env.sandbox.control.addFault({
			kind: 'badBody',
			status: 404,
			contentType: 'application/problem+json',
			body: '{"status":404,"title":"Not Found"}',
			method: 'GET',
			pathPrefix: `/runs/${triggered.id}`,
		});
		const replacement = await env.sandbox.control.createRun(triggered.documentId, {
			script: [{ status: 'completed' }],
		});
		const item = (await waiting).items[0].json;
		expect(item).toMatchObject({
			runId: replacement.id,
			triggerRunId: triggered.id,
			documentId: triggered.documentId,
			status: 'completed',
			waitOutcome: 'completed',
			finished: true,
		});
	}, 30_000);
});

describe('saved workflows', () => {
	const env = useSandbox();

	it('Run → Wait for Completion with Include Output and no Output Binary Field stored (n8n stores no defaults) runs, into "data"', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		await env.sandbox.control.setNextScripts(wf, [
			{ status: 'running', ms: 300 },
			{ status: 'completed' },
		]);
		const [submitted] = (await env.run(submitParams(wf), { items: pdfItems(1) })).items;
		const result = await env.run({
			resource: 'run',
			operation: 'wait',
			runId: String(submitted.json.runId),
			options: { ...FAST_WAIT, includeOutput: true },
		});
		expect(result.error).toBeUndefined();
		expect(result.items[0].json).toMatchObject({ waitOutcome: 'completed', outputKind: 'json' });
	});
});
