/**
 * One watcher per API key, shared by every execution of this n8n process
 * (nodes/DocumentWorkflow/helpers/runWatcher.ts), through n8n-core against the sandbox:
 * executions that run at the same time or one after another, each with its own context.
 */
import { activeWatcherCount } from '../../../nodes/DocumentWorkflow/waiting/loop';
import type { Env } from '../../harness/sandbox';
import {
	FAST_WAIT,
	pathOf,
	pdfItems,
	requests,
	submitParams,
	useSandbox,
	waitParams,
} from '../../harness/sandbox';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The status reads of one run (GET /runs/{id}, answered 200). */
async function statusReads(env: Env, runId: string): Promise<number> {
	return (await requests(env, { method: 'GET', pathPrefix: `/runs/${runId}` })).filter(
		(entry) => pathOf(entry) === `/runs/${runId}` && entry.status === 200,
	).length;
}

/** Submits one document per script, in order, and returns their run ids. */
async function submitRuns(
	env: Env,
	scripts: Array<Parameters<Env['sandbox']['control']['setNextScripts']>[1]>,
): Promise<string[]> {
	const wf = env.sandbox.defaultWorkflowId;
	for (const script of scripts) await env.sandbox.control.setNextScripts(wf, script);
	const submitted = await env.run(submitParams(wf, {}, { concurrency: 1 }), {
		items: pdfItems(scripts.length),
	});
	return submitted.items.map((item) => item.json.runId as string);
}

const waitOnRun = (env: Env, runId: string, extra: Record<string, unknown> = {}) =>
	env.run(
		{
			resource: 'run',
			operation: 'wait',
			runId,
			options: { ...FAST_WAIT, maxPollIntervalSeconds: 1 },
		},
		extra,
	);

/** The node's default intervals: the harness's fast ones would check every 0.2 s anyway. */
const DEFAULT_INTERVALS = {
	initialPollIntervalSeconds: 1,
	maxPollIntervalSeconds: 20,
	notFoundGraceSeconds: 30,
};

/** One execution of Submit Document with Wait for Completion, for one document. */
const submitAndWaitOne = (
	env: Env,
	workflowId: string,
	options: Record<string, unknown> = DEFAULT_INTERVALS,
) => env.run(waitParams(workflowId, options, {}), { items: pdfItems(1) });

/** Three executions at once, each on a run of 0.5 s, teach the watcher that this API key's events name their run. */
async function learnThatEventsNameRuns(
	env: Env,
	options: Record<string, unknown> = DEFAULT_INTERVALS,
): Promise<void> {
	const wf = env.sandbox.defaultWorkflowId;
	await env.sandbox.control.setSettings({ runEventsNameRun: true });
	await env.sandbox.control.setNextScripts(
		wf,
		[{ status: 'running', ms: 500 }, { status: 'completed' }],
		3,
	);
	await Promise.all([0, 1, 2].map(() => submitAndWaitOne(env, wf, options)));
}

describe('one watcher per API key', () => {
	const env = useSandbox();

	it('what one execution learned serves the next: a run as long as the last is checked once, when it ends', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		const script = [{ status: 'running', ms: 1500 }, { status: 'completed' }];
		await env.sandbox.control.setNextScripts(wf, script, 2);
		const first = await env.run(waitParams(wf, {}, {}), { items: pdfItems(1) });
		expect(first.items[0].json.waitOutcome).toBe('completed');
		const second = await env.run(waitParams(wf, {}, {}), { items: pdfItems(1) });
		expect(second.items[0].json.waitOutcome).toBe('completed');
		// The first run was found by checks every fifth of its age; the second is checked once.
		expect(await statusReads(env, String(first.items[0].json.runId))).toBeGreaterThan(3);
		expect(await statusReads(env, String(second.items[0].json.runId))).toBe(1);
	});

	it('runs that are queued before they start: what the next execution waits for counts the queue too', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		// startedOn − completedOn is 1.5 s, but from the submission to the end it is 3 s.
		const script = [
			{ status: 'queued', ms: 1500 },
			{ status: 'running', ms: 1500 },
			{ status: 'completed' },
		];
		await env.sandbox.control.setNextScripts(wf, script, 2);
		const first = await env.run(waitParams(wf, {}, {}), { items: pdfItems(1) });
		const second = await env.run(waitParams(wf, {}, {}), { items: pdfItems(1) });
		expect([first.items[0].json.waitOutcome, second.items[0].json.waitOutcome]).toEqual([
			'completed',
			'completed',
		]);
		// Learned as 1.5 s long, the second run would be checked at 1.7 s, still queued, and again after.
		expect(await statusReads(env, String(second.items[0].json.runId))).toBe(1);
	});

	it('executions at once share it; one cancelled, one failing and one finishing each end on their own, and then nothing is left', async () => {
		const [finishing, failing, cancelled] = await submitRuns(env, [
			[{ status: 'running', ms: 2500 }, { status: 'completed' }],
			[
				{ status: 'running', ms: 800 },
				{ status: 'failed', error: { code: 'BROKEN' } },
			],
			[{ status: 'running', ms: 60_000 }, { status: 'completed' }],
		]);
		const ended: Record<string, number> = {};
		const track = <T>(name: string, work: Promise<T>) =>
			work.finally(() => (ended[name] = Date.now()));
		const runs = Promise.all([
			track('finishing', waitOnRun(env, finishing)),
			track('failing', waitOnRun(env, failing)),
			track('cancelled', waitOnRun(env, cancelled, { cancelAfterMs: 1200 })),
		]);
		await pause(400);
		expect(activeWatcherCount()).toBe(1);
		const [done, failed, stopped] = await runs;

		expect(done.error).toBeUndefined();
		expect(done.items[0].json).toMatchObject({ runId: finishing, waitOutcome: 'completed' });
		expect(failed.error?.message).toMatch(new RegExp(`^Run ${failing} failed: BROKEN`));
		expect(stopped.run.status).toBe('canceled');
		// Neither the failure nor the cancel held the others: each ended before the finishing run did.
		expect(ended.failing).toBeLessThan(ended.finishing);
		expect(ended.cancelled).toBeLessThan(ended.finishing);
		// The cancelled execution's run left the watcher at once: not checked after it ended.
		const checksOfCancelled = (await requests(env, { pathPrefix: `/runs/${cancelled}` })).map(
			(entry) => entry.realTimeMs,
		);
		expect(Math.max(...checksOfCancelled)).toBeLessThanOrEqual(ended.cancelled);
		// Once nothing waits, the watcher is gone and sends nothing more.
		expect(activeWatcherCount()).toBe(0);
		const before = (await requests(env)).length;
		await pause(500);
		expect((await requests(env)).length).toBe(before);
	});

	it('where events name their run, one execution waiting alone is read soon after its run ends, though its workflow had far longer runs', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		await env.sandbox.control.setSettings({ runEventsNameRun: true });
		const execution = () => submitAndWaitOne(env, wf);
		// Four at once teach the watcher that events name runs, and that this workflow's runs take 3 to 8 s.
		for (const ms of [3000, 3200, 3400, 8000])
			await env.sandbox.control.setNextScripts(wf, [
				{ status: 'running', ms },
				{ status: 'completed' },
			]);
		await Promise.all([execution(), execution(), execution(), execution()]);
		await env.sandbox.control.setNextScripts(wf, [
			{ status: 'running', ms: 3000 },
			{ status: 'completed' },
		]);
		const alone = (await execution()).items[0].json;
		expect(alone.waitOutcome).toBe('completed');
		const runId = String(alone.runId);
		// The last read of the run is the one that found it final.
		const readFinal = (await requests(env, { method: 'GET', pathPrefix: `/runs/${runId}` }))
			.filter((entry) => pathOf(entry) === `/runs/${runId}` && entry.status === 200)
			.pop();
		const run = (await env.sandbox.control.listRuns({ workflowId: wf })).find(
			(candidate) => candidate.id === runId,
		)!;
		// Read within a fifth of the run and a margin for the read itself; not where the 8 s run would have ended (5 s late).
		expect(Date.parse(readFinal!.time) - Date.parse(String(run.completedOn))).toBeLessThan(
			0.2 * 3000 + 300,
		);
	});

	it('an event the list shows too late for the hint does not hold a run up: looks that find nothing never put its own check off past four times the age of its last', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		const execution = () =>
			submitAndWaitOne(env, wf, { ...DEFAULT_INTERVALS, maxWaitMinutes: 0.5 });
		// Three at once teach the watcher that events name runs, and that this workflow's runs take 1 s.
		await env.sandbox.control.setNextScripts(
			wf,
			[{ status: 'running', ms: 1000 }, { status: 'completed' }],
			3,
		);
		await Promise.all([execution(), execution(), execution()]);
		// A ends at 3 s, B at 5 s. A's run.completed is listed 8 s after it was created, under a
		// lower id than B's, which the watcher read long before: the spec allows it, and every
		// later read starts past it.
		await env.sandbox.control.setNextScripts(wf, [
			{ status: 'running', ms: 3000 },
			{ status: 'completed' },
		]);
		await env.sandbox.control.setNextScripts(wf, [
			{ status: 'running', ms: 5000 },
			{ status: 'completed' },
		]);
		const a = execution();
		await pause(300);
		const b = execution();
		await pause(1700);
		await env.sandbox.control.setSettings({ eventCommitDelayMs: 8000 });
		await pause(2000);
		await env.sandbox.control.setSettings({ eventCommitDelayMs: 0 });
		const [itemA, itemB] = (await Promise.all([a, b])).map((result) => result.items[0].json);
		expect([itemA.waitOutcome, itemB.waitOutcome]).toEqual(['completed', 'completed']);
		const runA = (await env.sandbox.control.listRuns({ workflowId: wf })).find(
			(run) => run.id === itemA.runId,
		)!;
		const readFinal = (await requests(env, { method: 'GET', pathPrefix: `/runs/${runA.id}` }))
			.filter((entry) => pathOf(entry) === `/runs/${runA.id}` && entry.status === 200)
			.pop()!;
		// Its last read found it running at about 1.2 s: it is seen final by its own read at four
		// times that age at the latest, not at its time limit 30 s after it began.
		expect(Date.parse(readFinal.time) - Date.parse(String(runA.completedOn))).toBeLessThan(6000);
	});

	it('where events name their run and run lengths vary, a run is read once, when the list names it, though it runs past the not-found grace period', async () => {
		const options = { ...DEFAULT_INTERVALS, notFoundGraceSeconds: 3 };
		await learnThatEventsNameRuns(env, options);
		// A workflow it knows nothing of: eleven runs at once, from 1 s to 6 s. Past the grace
		// period a run has not been read yet, but the runs seen end by then took over half its age.
		const { id: wf } = await env.sandbox.control.createWorkflow({
			name: 'lengths that vary',
			triggerFormats: ['pdf'],
		});
		const lengths = Array.from({ length: 11 }, (_, i) => 1000 + 500 * i);
		for (const ms of lengths)
			await env.sandbox.control.setNextScripts(wf, [
				{ status: 'running', ms },
				{ status: 'completed' },
			]);
		const items = (await Promise.all(lengths.map(() => submitAndWaitOne(env, wf, options)))).map(
			(result) => result.items[0].json,
		);
		expect(items.map((item) => item.waitOutcome)).toEqual(lengths.map(() => 'completed'));
		const reads = await Promise.all(items.map((item) => statusReads(env, String(item.runId))));
		expect(reads).toEqual(lengths.map(() => 1));
	});

	it("one run seen final is no length its workflow's runs share: where events name their run, a later, longer run is not read again and again around that length", async () => {
		await learnThatEventsNameRuns(env);
		// A new workflow: one run of 1 s is all that is known of it when a run of 6 s starts.
		const { id: wf } = await env.sandbox.control.createWorkflow({
			name: 'one run seen',
			triggerFormats: ['pdf'],
		});
		for (const ms of [1000, 6000])
			await env.sandbox.control.setNextScripts(wf, [
				{ status: 'running', ms },
				{ status: 'completed' },
			]);
		await submitAndWaitOne(env, wf);
		const longer = (await submitAndWaitOne(env, wf)).items[0].json;
		expect(longer.waitOutcome).toBe('completed');
		// Taken for the length of every run, the one run put three reads on it (at 1.4 s, at four
		// times that, and when the list named it); read where a run twice as long would end, two.
		// One run is no length runs share, and before the not-found grace period (30 s) a read of
		// a run the list would name is spent: it is read once, when the list names it.
		expect(await statusReads(env, String(longer.runId))).toBe(1);
	});

	it("where events name their run, a run older than twice its workflow's longest run seen is looked at as a later execution's would be, though its wait began knowing no run of it", async () => {
		await learnThatEventsNameRuns(env);
		// A workflow it knows nothing of: four executions at once, one run of 1 s and three of 8 s.
		const { id: wf } = await env.sandbox.control.createWorkflow({
			name: 'lengths that vary, learned while waiting',
			triggerFormats: ['pdf'],
		});
		for (const ms of [1000, 8000, 8000, 8000])
			await env.sandbox.control.setNextScripts(wf, [
				{ status: 'running', ms },
				{ status: 'completed' },
			]);
		const started = Date.now();
		const items = (await Promise.all([0, 1, 2, 3].map(() => submitAndWaitOne(env, wf)))).map(
			(result) => result.items[0].json,
		);
		expect(items.map((item) => item.waitOutcome)).toEqual([
			'completed',
			'completed',
			'completed',
			'completed',
		]);
		// Past 2 s the 1 s run shows that this workflow's lengths vary. Looked at every fourteenth
		// of their age (as while no run of it was known) the three were looked at 17 times from
		// then to their end; at the share a later execution's are, 8 times.
		const looks = (await requests(env, { method: 'GET', pathPrefix: '/events' })).filter(
			(entry) => Date.parse(entry.time) >= started + 2200,
		);
		expect(looks.length).toBeLessThanOrEqual(12);
	});

	it('a run.completed event for a run still running does not end its wait: the run is read first', async () => {
		const [runId] = await submitRuns(env, [
			[{ status: 'running', ms: 2500 }, { status: 'completed' }],
		]);
		const others = await submitRuns(
			env,
			Array.from({ length: 4 }, () => [{ status: 'running', ms: 2500 }, { status: 'completed' }]),
		);
		const waits = [runId, ...others].map((id) => waitOnRun(env, id));
		await pause(600);
		await env.sandbox.control.createEvents([
			{ type: 'run.completed', data: { runId, status: 'completed' } },
		]);
		const results = await Promise.all(waits);
		const item = results[0].items[0].json;
		expect(item).toMatchObject({ runId, status: 'completed', waitOutcome: 'completed' });
		// Completed by the sandbox's clock no earlier than its script allows.
		expect(
			Date.parse(String(item.completedOn)) - Date.parse(String(item.startedOn)),
		).toBeGreaterThanOrEqual(2500);
	});

	it('a run an event named as ended before its read showed it final is read on its own schedule, not left to reads of the list', async () => {
		const [runId] = await submitRuns(env, [
			[{ status: 'running', ms: 2500 }, { status: 'completed' }],
		]);
		const others = await submitRuns(
			env,
			Array.from({ length: 4 }, () => [{ status: 'running', ms: 6000 }, { status: 'completed' }]),
		);
		const waits = [runId, ...others].map((id) => waitOnRun(env, id));
		// The run's own run.completed is listed only after the test: the early event is all the list tells of it.
		await env.sandbox.control.setSettings({ eventCommitDelayMs: 60_000 });
		await pause(400);
		await env.sandbox.control.createEvents([
			{ type: 'run.completed', data: { runId, status: 'completed' } },
		]);
		const item = (await waits[0]).items[0].json;
		expect(item).toMatchObject({ runId, waitOutcome: 'completed' });
		const readFinal = (await requests(env, { method: 'GET', pathPrefix: `/runs/${runId}` }))
			.filter((entry) => pathOf(entry) === `/runs/${runId}` && entry.status === 200)
			.pop()!;
		// Its own schedule sees it within a fifth of its age and a margin for the read; left to
		// looks, its own read came only at four times the age of the read the event caused.
		expect(Date.parse(readFinal.time) - Date.parse(String(item.completedOn))).toBeLessThan(
			0.2 * 2900 + 300,
		);
		await Promise.all(waits.slice(1));
	});
});
