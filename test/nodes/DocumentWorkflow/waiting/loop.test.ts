/**
 * The waiting loop (nodes/DocumentWorkflow/waiting/loop.ts) through n8n-core against the
 * sandbox: one watcher per API key shared by executions that run at once or one after another,
 * each with its own context; what one taught the next; and no execution held by a read another
 * started. The policy's decisions themselves are replayed without I/O in policy.test.ts.
 */
import { activeWatcherCount } from '../../../../nodes/DocumentWorkflow/waiting/loop';
import { Policy } from '../../../../nodes/DocumentWorkflow/waiting/policy';
import type { Answer, Run, Wait } from '../../../../nodes/DocumentWorkflow/waiting/policy';
import type { Env } from '../../../harness/sandbox';
import {
	FAST_WAIT,
	pathOf,
	pdfItems,
	requests,
	submitParams,
	useSandbox,
	waitParams,
} from '../../../harness/sandbox';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The status reads of one run that the API answered (GET /runs/{id}, 200). */
async function statusReads(env: Env, runId: string): Promise<number> {
	return (await requests(env, { method: 'GET', pathPrefix: `/runs/${runId}` })).filter(
		(entry) => pathOf(entry) === `/runs/${runId}` && entry.status === 200,
	).length;
}

/** Submits one document per script, in order, and returns their run ids. */
async function submitRuns(
	env: Env,
	scripts: Array<Parameters<Env['sandbox']['control']['setNextScripts']>[1]>,
	workflowId = env.sandbox.defaultWorkflowId,
): Promise<string[]> {
	for (const script of scripts) await env.sandbox.control.setNextScripts(workflowId, script);
	const submitted = await env.run(submitParams(workflowId, {}, { concurrency: 1 }), {
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

/** One execution per run length, all at once, each waiting on its own run of workflow `wf`. */
async function atOnce(
	env: Env,
	wf: string,
	lengths: number[],
	options: Record<string, unknown> = {},
) {
	for (const ms of lengths)
		await env.sandbox.control.setNextScripts(wf, [
			{ status: 'running', ms },
			{ status: 'completed' },
		]);
	return await Promise.all(
		lengths.map(() => env.run(waitParams(wf, options), { items: pdfItems(1) })),
	);
}

/** How long `work` took, with its result. */
async function timed<T>(work: Promise<T>, started = Date.now()): Promise<{ ms: number; value: T }> {
	const value = await work;
	return { ms: Date.now() - started, value };
}

describe('one watcher per API key, shared by executions', () => {
	const env = useSandbox();

	it('what one execution learned serves the next: a run as long as the last is read once, when it ends', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		await env.sandbox.control.setNextScripts(
			wf,
			[{ status: 'running', ms: 1500 }, { status: 'completed' }],
			2,
		);
		const options = { initialPollIntervalSeconds: 1, maxPollIntervalSeconds: 20 };
		const first = await env.run(waitParams(wf, options), { items: pdfItems(1) });
		const second = await env.run(waitParams(wf, options), { items: pdfItems(1) });
		expect([first.items[0].json.waitOutcome, second.items[0].json.waitOutcome]).toEqual([
			'completed',
			'completed',
		]);
		expect(await statusReads(env, String(first.items[0].json.runId))).toBeGreaterThan(1);
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
		// The cancelled execution's run left the watcher at once: not read after it ended.
		const readsOfCancelled = (await requests(env, { pathPrefix: `/runs/${cancelled}` })).map(
			(entry) => entry.realTimeMs,
		);
		expect(Math.max(...readsOfCancelled)).toBeLessThanOrEqual(ended.cancelled);
		// Once nothing waits, the watcher is gone and sends nothing more.
		expect(activeWatcherCount()).toBe(0);
		const before = (await requests(env)).length;
		await pause(500);
		expect((await requests(env)).length).toBe(before);
	});

	it('a run.completed event for a run still running does not end its wait: the run is read first', async () => {
		const runIds = await submitRuns(
			env,
			Array.from({ length: 5 }, () => [{ status: 'running', ms: 2500 }, { status: 'completed' }]),
		);
		const waits = runIds.map((id) => waitOnRun(env, id));
		await pause(600);
		const [runId] = runIds;
		await env.sandbox.control.createEvents([
			{ type: 'run.completed', data: { runId, status: 'completed' } },
		]);
		const item = (await waits[0]).items[0].json;
		expect(item).toMatchObject({ runId, status: 'completed', waitOutcome: 'completed' });
		// Completed by the sandbox's clock no earlier than its script allows.
		expect(
			Date.parse(String(item.completedOn)) - Date.parse(String(item.startedOn)),
		).toBeGreaterThanOrEqual(2500);
		await Promise.all(waits.slice(1));
	});
});

describe('executions waiting on one run at once', () => {
	const env = useSandbox();

	it('each ends with the run: an event naming it names it for every wait, not only the last', async () => {
		const [runId] = await submitRuns(env, [
			[{ status: 'running', ms: 3000 }, { status: 'completed' }],
		]);
		const started = Date.now();
		const waits = await Promise.all([0, 1].map(() => timed(waitOnRun(env, runId), started)));
		for (const { value } of waits)
			expect(value.items[0].json).toMatchObject({ runId, waitOutcome: 'completed' });
		// Before, the list named it for one wait alone: the other read it by itself 4 s later.
		expect(Math.abs(waits[0].ms - waits[1].ms)).toBeLessThan(1500);
	});
});

describe('a defect inside the loop', () => {
	const env = useSandbox();

	it('ends every wait of the key with an error that says so, at once, and the next wait starts a loop of its own', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		for (let n = 0; n < 3; n++)
			await env.sandbox.control.setNextScripts(wf, [
				{ status: 'running', ms: 1000 },
				{ status: 'completed' },
			]);
		// The policy throws once both executions wait: neither may wait for ever.
		const next = Policy.prototype.next;
		let calls = 0;
		const broken = jest.spyOn(Policy.prototype, 'next').mockImplementation(function (
			this: Policy,
			now: number,
		) {
			if (++calls === 20) throw new Error('a defect of the policy');
			return next.call(this, now);
		});
		try {
			const results = await Promise.all(
				[0, 1].map(() => env.run(waitParams(wf), { items: pdfItems(1) })),
			);
			for (const result of results)
				expect(result.error?.message).toBe('Waiting for runs stopped: a defect of the policy');
			expect(activeWatcherCount()).toBe(0);
		} finally {
			broken.mockRestore();
		}
		const again = await env.run(waitParams(wf), { items: pdfItems(1) });
		expect(again.error).toBeUndefined();
		expect(again.items[0].json.waitOutcome).toBe('completed');
	});

	it('a defect of the policy while it takes an answer is no failure of the request: no item error, and the check is released once', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		await env.sandbox.control.setNextScripts(wf, [
			{ status: 'running', ms: 1000 },
			{ status: 'completed' },
		]);
		const answered = Policy.prototype.answered;
		const waits = new Set<Wait>();
		const broken = jest.spyOn(Policy.prototype, 'answered').mockImplementation(function (
			this: Policy,
			run: Run,
			answer: Answer,
			now: number,
		) {
			answered.call(this, run, answer, now);
			waits.add(run.wait);
			if (broken.mock.calls.length === 1) throw new Error('a defect of the policy');
		});
		try {
			const result = await env.run(waitParams(wf), { items: pdfItems(1) });
			// Before, it was the item's error, and the policy was handed the run's answer twice.
			expect(result.error?.message).toBe('Waiting for runs stopped: a defect of the policy');
			expect(broken).toHaveBeenCalledTimes(1);
			for (const wait of waits) expect(wait.inFlight).toBe(0);
			expect(activeWatcherCount()).toBe(0);
		} finally {
			broken.mockRestore();
		}
	});
});

describe("no execution waits on another's read (issue 34)", () => {
	const env = useSandbox();

	/** Past a limit: the last check's answer (a second at most here) and the upload and n8n-core
	 * before it on a loaded machine; far below the 20 s and 30 s a wait held by the read would take. */
	const SLACK_MS = 5000;

	/** Three one-document executions at once on runs of a minute, so that the list is read for them. */
	async function threeWaiting(limits: Array<Record<string, unknown>>) {
		const wf = env.sandbox.defaultWorkflowId;
		await env.sandbox.control.setNextScripts(
			wf,
			[{ status: 'running', ms: 60_000 }, { status: 'completed' }],
			3,
		);
		const started = Date.now();
		return limits.map((options) =>
			timed(
				env.run(waitParams(wf, { onTimeLimit: 'item', ...options }), { items: pdfItems(1) }),
				started,
			),
		);
	}

	it('an event list that answers in 30 s: each wait still returns at its Max Wait Time, and then nothing is left', async () => {
		await env.sandbox.control.addFault({
			kind: 'latency',
			ms: 30_000,
			method: 'GET',
			pathPrefix: '/events',
		});
		const [a, b, c] = await Promise.all(
			await threeWaiting([
				{ maxWaitMinutes: 0.025 },
				{ maxWaitMinutes: 0.04 },
				{ maxWaitMinutes: 0.04 },
			]),
		);
		expect(a.value.items[0].json.waitOutcome).toBe('timeLimit');
		// 1.5 s and 2.4 s limits, the upload before them: before, the read held all three for 30 s.
		expect(a.ms).toBeLessThan(1500 + SLACK_MS);
		expect(Math.max(b.ms, c.ms)).toBeLessThan(2400 + SLACK_MS);
		// The read made for them is abandoned with the last of them: no watcher is left running.
		expect(activeWatcherCount()).toBe(0);
	});

	it('a long Retry-After met by a read of the list made for others: each wait still returns at its Max Wait Time', async () => {
		await env.sandbox.control.addFault({
			kind: 'rate429',
			retryAfter: 20,
			method: 'GET',
			pathPrefix: '/events',
			count: 1,
		});
		const [a, b] = await Promise.all(
			await threeWaiting([
				{ maxWaitMinutes: 0.025 },
				{ maxWaitMinutes: 0.04 },
				{ maxWaitMinutes: 0.04 },
			]),
		);
		// Every read of the key waits out the 20 s, the wait's own checks too; but not past its limit.
		expect(a.value.items[0].json).toMatchObject({ waitOutcome: 'timeLimit', finished: false });
		expect(a.ms).toBeLessThan(1500 + SLACK_MS);
		expect(b.ms).toBeLessThan(2400 + SLACK_MS);
	});
});

describe('reads of the event list', () => {
	const env = useSandbox();

	it('read every page after their cursor: none is skipped when the list grew by more than two pages', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		await env.sandbox.control.setNextScripts(
			wf,
			[{ status: 'running', ms: 60_000 }, { status: 'completed' }],
			3,
		);
		const waits = [0, 1, 2].map(() =>
			env.run(waitParams(wf, { onTimeLimit: 'item', maxWaitMinutes: 0.1 }), {
				items: pdfItems(1),
			}),
		);
		// The first read finds where the list ends; then 250 events (three pages) come at once.
		await pause(1500);
		await env.sandbox.control.createEvents(
			Array.from({ length: 250 }, (_, n) => ({ type: 'document.created', data: { n } })),
		);
		await Promise.all(waits);
		const reads = (await requests(env, { method: 'GET', pathPrefix: '/events' })).map(
			(entry) => new URL(entry.path, 'http://api').searchParams,
		);
		const pagesAfter = (after: string) =>
			reads
				.filter((query) => query.get('after') === after)
				.map((query) => query.get('page') ?? '1');
		const lastPages = reads.filter((query) => query.get('after') && query.get('page') === '3');
		// Before, such a read asked for pages 1 and 3 only: the runs named in page 2 were never seen.
		expect(lastPages.length).toBeGreaterThan(0);
		for (const query of lastPages) expect(pagesAfter(query.get('after')!)).toContain('2');
	});
});

describe('what runs seen final tell of the event list', () => {
	const env = useSandbox();

	it('runs a batch saw final while the list was not read are no evidence that events name no run: later executions still have the list name theirs', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		// A batch of three, which reads no list: its runs are seen final by their own reads.
		await env.sandbox.control.setNextScripts(
			wf,
			[{ status: 'running', ms: 300 }, { status: 'completed' }],
			3,
		);
		expect((await env.run(waitParams(wf), { items: pdfItems(3) })).error).toBeUndefined();
		// Before, such runs piled up unchecked (one timestamp each, pruned only after a read of the
		// list) and counted against naming at the first read 5 s later: the list was left alone for
		// good, and the runs below were read a fifth of their age apart, not once each.
		await pause(5200);
		const { id: other } = await env.sandbox.control.createWorkflow({
			name: 'later',
			triggerFormats: ['pdf'],
		});
		await env.sandbox.control.setNextScripts(
			other,
			[{ status: 'running', ms: 3000 }, { status: 'completed' }],
			3,
		);
		const later = await Promise.all(
			[0, 1, 2].map(() => env.run(waitParams(other), { items: pdfItems(1) })),
		);
		const reads = await Promise.all(
			later.map((result) => statusReads(env, String(result.items[0].json.runId))),
		);
		expect(reads).toEqual([1, 1, 1]);
	});
});

describe('a run an event lists completed', () => {
	const env = useSandbox();

	it('has its output read beside its status: the output read leaves before the status read is answered', async () => {
		const { id: wf } = await env.sandbox.control.createWorkflow({
			name: 'listed',
			triggerFormats: ['pdf'],
		});
		await env.sandbox.control.setNextScripts(
			wf,
			[{ status: 'running', ms: 3000 }, { status: 'completed' }],
			3,
		);
		const answerMs = 800;
		await env.sandbox.control.addFault({ kind: 'latency', ms: answerMs, pathPrefix: '/runs/' });
		const results = await Promise.all(
			[0, 1, 2].map(() => env.run(waitParams(wf, { includeOutput: true }), { items: pdfItems(1) })),
		);
		for (const result of results) {
			const { runId, output, waitOutcome } = result.items[0].json;
			expect(waitOutcome).toBe('completed');
			expect(output).toBeDefined();
			const reads = await requests(env, { method: 'GET', pathPrefix: `/runs/${String(runId)}` });
			const statusAt = reads.filter((entry) => pathOf(entry) === `/runs/${String(runId)}`);
			const outputAt = reads.filter((entry) => pathOf(entry).endsWith('/output'));
			// The list named each run as it ended: one status read, one output read, sent together.
			expect([statusAt.length, outputAt.length]).toEqual([1, 1]);
			expect(outputAt[0].realTimeMs - statusAt[0].realTimeMs).toBeLessThan(answerMs / 2);
		}
	});
});

describe('events committed late, as the spec allows', () => {
	const env = useSandbox();

	it('a run.completed committed 3 s late, under ids already read, is listed by a read after its commit, and each wait ends with its run', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		// The process learns that run events name their run.
		await atOnce(env, wf, [300, 600, 1200], { includeOutput: true });
		// From now on run events commit 3 s late while other events keep coming at once: each late
		// one is listed under an id lower than ids already read.
		await env.sandbox.control.setSettings({ eventCommitDelayMs: 3000 });
		let ticking = true;
		const ticker = (async () => {
			while (ticking) {
				await env.sandbox.control.createEvents([{ type: 'review.created', data: {} }]);
				await pause(200);
			}
		})();
		const defaults = { notFoundGraceSeconds: 30, maxPollIntervalSeconds: 20 };
		const ended = await atOnce(env, wf, [2000, 2600, 3200], {
			includeOutput: true,
			...defaults,
			maxWaitMinutes: 0.25,
			onTimeLimit: 'item',
		});
		ticking = false;
		await ticker;
		expect(ended.map(({ items }) => items[0].json.waitOutcome)).toEqual(
			new Array(3).fill('completed'),
		);
		const late = (await env.sandbox.control.listEvents({ type: 'run.completed' })).filter(
			(event) => Date.parse(event.commitOn) - Date.parse(event.createdOn) >= 3000,
		);
		expect(late).toHaveLength(3);
		const reads = (await requests(env, { method: 'GET', pathPrefix: '/events' }))
			.filter((entry) => entry.status === 200)
			.map((entry) => ({
				at: Date.parse(entry.time),
				after: new URL(entry.path, 'http://api').searchParams.get('after'),
			}));
		// Before, each read started after the newest id of the read before the last, seconds back:
		// no read after a late event's commit started below it.
		for (const event of late) {
			const listing = reads.filter(
				({ at, after }) => at >= Date.parse(event.commitOn) && (!after || after < event.id),
			);
			expect(listing.length).toBeGreaterThan(0);
		}
	});
});

describe('a list that failed', () => {
	const env = useSandbox();

	it('is read again once the key has its events:read scope back', async () => {
		const keys = await env.sandbox.control.listKeys();
		const key = keys.find((candidate) => candidate.key === env.credentials.apiKey)!;
		const all = key.scopes;
		await env.sandbox.control.updateKey(key.id, { scopes: all.filter((s) => s !== 'events:read') });
		const options = { maxPollIntervalSeconds: 0.5 };
		const first = await atOnce(
			env,
			env.sandbox.defaultWorkflowId,
			[4000, 4000, 4000, 4000],
			options,
		);
		expect(first.map(({ items }) => items[0].json.waitOutcome)).toEqual(
			new Array(4).fill('completed'),
		);
		const refused = await requests(env, { method: 'GET', pathPrefix: '/events' });
		expect(refused.filter((entry) => entry.status === 403).length).toBeGreaterThanOrEqual(3);
		await env.sandbox.control.updateKey(key.id, { scopes: all });
		const restoredAt = Date.now();
		// Runs of a workflow this process has not seen: the list is what looks at them.
		const { id: other } = await env.sandbox.control.createWorkflow({ name: 'other' });
		await atOnce(env, other, [6000, 6000, 6000, 6000], options);
		// Before, three failed reads turned the list off for this key for the life of the process.
		const read = (await requests(env, { method: 'GET', pathPrefix: '/events' })).filter(
			(entry) => entry.status === 200 && entry.realTimeMs > restoredAt,
		);
		expect(read.length).toBeGreaterThan(0);
	});
});

describe('Max Wait Time, for each run', () => {
	const env = useSandbox();

	it("counts from the run's submission, not from the end of its batch's uploads", async () => {
		const wf = env.sandbox.defaultWorkflowId;
		await env.sandbox.control.setNextScripts(
			wf,
			[{ status: 'running', ms: 60_000 }, { status: 'completed' }],
			5,
		);
		// Uploads take 600 ms each, one at a time: the first run's Max Wait Time (1.2 s from its
		// submission) is over before the last document is uploaded.
		await env.sandbox.control.addFault({
			kind: 'latency',
			ms: 600,
			method: 'POST',
			pathPrefix: '/workflows/',
		});
		const result = await env.run(
			waitParams(wf, { concurrency: 1, maxWaitMinutes: 1200 / 60_000, onTimeLimit: 'item' }),
			{ items: pdfItems(5) },
		);
		expect(result.items.map((item) => item.json.waitOutcome)).toEqual(
			new Array(5).fill('timeLimit'),
		);
		// Its last read left an answer: the item holds the run's status then.
		expect(result.items[0].json.status).toBe('running');
		// The first run is read until its own limit, 1.2 s after its upload, while the others still
		// upload: its last read comes before the fifth upload (2.4 s after the first). Before, every
		// run was read until Max Wait Time after the last upload.
		const firstRun = `/runs/${String(result.items[0].json.runId)}`;
		const log = await requests(env);
		const uploads = log.filter((entry) => entry.method === 'POST');
		const reads = log.filter((entry) => pathOf(entry) === firstRun);
		expect(uploads).toHaveLength(5);
		expect(reads.length).toBeGreaterThan(0);
		expect(reads[reads.length - 1].realTimeMs).toBeLessThan(uploads[4].realTimeMs);
	});

	it('a probe whose last read does not answer in time still ends its round: the runs after it are read then, not at their own limit', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		for (const ms of [60_000, 500, 500])
			await env.sandbox.control.setNextScripts(wf, [
				{ status: 'running', ms },
				{ status: 'completed' },
			]);
		// Uploads 1 s apart; every status read answers in 0.3 s, past the 0.1 s a last read has.
		await env.sandbox.control.addFault({
			kind: 'latency',
			ms: 1000,
			method: 'POST',
			pathPrefix: '/workflows/',
		});
		await env.sandbox.control.addFault({
			kind: 'latency',
			ms: 300,
			method: 'GET',
			pathPrefix: '/runs/',
		});
		const options = { maxWaitMinutes: 0.05, onTimeLimit: 'item', concurrency: 1 };
		const result = await env.run(waitParams(wf, options), { items: pdfItems(3) });
		// The first run is the round's one probe; the others, uploaded after it, wait for the next.
		// Before, the probe ended at its limit without a word to the policy: they were read only at
		// their own limits, and ended there.
		expect(result.items.map((item) => item.json.waitOutcome)).toEqual([
			'timeLimit',
			'completed',
			'completed',
		]);
	});

	it('ends at Max Wait Time, not a First Check Interval after it', async () => {
		const wf = env.sandbox.defaultWorkflowId;
		// The run ends after its 3 s limit and before the 10 s First Check Interval is over.
		await env.sandbox.control.setNextScripts(wf, [
			{ status: 'running', ms: 6000 },
			{ status: 'completed' },
		]);
		const result = await env.run(
			waitParams(wf, { initialPollIntervalSeconds: 10, maxWaitMinutes: 0.05, onTimeLimit: 'item' }),
			{ items: pdfItems(1) },
		);
		// A wait that went on for a First Check Interval past its limit would find the run completed.
		expect(result.items[0].json).toMatchObject({ waitOutcome: 'timeLimit', finished: false });
	});
});
