/** Conformance: List review tasks, Get a review task, Review task fields, State fact 3. */
import { randomUUID } from 'node:crypto';

import { expectProblem, get, triggerOk } from './helpers';
import { useSandbox } from '../harness/sandbox';

const env = useSandbox({ nodes: false });

/** Triggers n documents whose runs stop in review at once. */
async function reviewRuns(
	n: number,
	workflowId = env.sandbox.defaultWorkflowId,
): Promise<string[]> {
	await env.sandbox.control.setNextScripts(
		workflowId,
		[{ status: 'review' }, { status: 'completed' }],
		n,
	);
	const ids: string[] = [];
	for (let i = 0; i < n; i++) {
		ids.push((await triggerOk(env.sandbox, workflowId)).runId!);
		await env.sandbox.control.advanceClock(1_000); // distinct createdOn
	}
	return ids;
}

describe('Review tasks', () => {
	test('Review task: a run in review has a pending task with every required field', async () => {
		const [runId] = await reviewRuns(1);
		const list = await get(env.sandbox, '/review-tasks');
		expect(list.status).toBe(200);
		expect(list.body.count).toBe(1);
		expect(list.body.pages).toBe(1);
		const task = list.body.data[0];
		expect(task).toEqual({
			id: expect.any(String),
			runId,
			rootRunId: runId,
			workflowId: env.sandbox.defaultWorkflowId,
			documentId: expect.any(String),
			status: 'pending',
			round: 1,
			createdOn: expect.any(String),
			completedOn: null,
			decision: null,
		});
		const one = await get(env.sandbox, `/review-tasks/${task.id}`);
		expect(one.status).toBe(200);
		expect(one.body).toEqual(task);
	});

	test('State fact 3: the task is decided in the review queue (control API); decision is set once approved/rejected, and the run resumes', async () => {
		const [a, b] = await reviewRuns(2);
		const [ta] = await env.sandbox.control.listReviewTasks({ runId: a });
		const [tb] = await env.sandbox.control.listReviewTasks({ runId: b });
		await env.sandbox.control.setReviewTaskStatus(ta!.id, 'in_review');
		const inReview = (await get(env.sandbox, `/review-tasks/${ta!.id}`)).body;
		expect(inReview.status).toBe('in_review');
		expect(inReview.decision).toBeNull();
		await env.sandbox.control.decideReviewTask(ta!.id, 'approved');
		await env.sandbox.control.decideReviewTask(tb!.id, 'rejected');
		const approved = (await get(env.sandbox, `/review-tasks/${ta!.id}`)).body;
		expect(approved).toEqual(
			expect.objectContaining({
				status: 'approved',
				decision: 'approved',
				completedOn: expect.any(String),
			}),
		);
		const rejected = (await get(env.sandbox, `/review-tasks/${tb!.id}`)).body;
		expect(rejected).toEqual(expect.objectContaining({ status: 'rejected', decision: 'rejected' }));
		expect((await get(env.sandbox, `/runs/${a}`)).body.status).toBe('completed');
	});

	test('Review task: a rejected review can send the run down another path (ifRejected)', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{
				status: 'review',
				ifRejected: [
					{ status: 'failed', error: { code: 'review_rejected', message: 'Rejected by reviewer' } },
				],
			},
			{ status: 'completed' },
		]);
		const t = await triggerOk(env.sandbox);
		const [task] = await env.sandbox.control.listReviewTasks({ runId: t.runId! });
		await env.sandbox.control.decideReviewTask(task!.id, 'rejected');
		const run = (await get(env.sandbox, `/runs/${t.runId}`)).body;
		expect(run.status).toBe('failed');
		expect(run.error.code).toBe('review_rejected');
	});

	test('Review task: round grows when the run reaches the same step again', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'review', step: 'approval' },
			{ status: 'running', ms: 10 },
			{ status: 'review', step: 'approval' },
			{ status: 'review', step: 'legal' },
			{ status: 'completed' },
		]);
		const t = await triggerOk(env.sandbox);
		const first = (await env.sandbox.control.listReviewTasks({ runId: t.runId! }))[0]!;
		await env.sandbox.control.decideReviewTask(first.id, 'rejected');
		await env.sandbox.control.advanceClock(1_000);
		const second = (
			await env.sandbox.control.listReviewTasks({ runId: t.runId!, status: 'pending' })
		)[0]!;
		await env.sandbox.control.decideReviewTask(second.id, 'approved');
		const list = (await get(env.sandbox, '/review-tasks', { query: { runId: t.runId! } })).body
			.data as Array<{ id: string; round: number }>;
		expect(list.map((x) => x.round)).toEqual([1, 2, 1]);
		expect(list[1]!.id).toBe(second.id);
		expect(list[2]!.id).toBe(first.id);
	});

	test('List review tasks: newest first; default pageSize 20; count and pages', async () => {
		const runs = await reviewRuns(23);
		const p1 = await get(env.sandbox, '/review-tasks');
		expect(p1.body.count).toBe(23);
		expect(p1.body.pages).toBe(2);
		expect(p1.body.data).toHaveLength(20);
		expect(p1.body.data[0].runId).toBe(runs[22]);
		const p2 = await get(env.sandbox, '/review-tasks', { query: { page: 2 } });
		expect(p2.body.data).toHaveLength(3);
		expect(p2.body.data[2].runId).toBe(runs[0]);
		const small = await get(env.sandbox, '/review-tasks', { query: { page: 3, pageSize: 10 } });
		expect(small.body.pages).toBe(3);
		expect(small.body.data).toHaveLength(3);
		const created = p1.body.data.map((x: { createdOn: string }) => Date.parse(x.createdOn));
		expect([...created].sort((a, b) => b - a)).toEqual(created);
	});

	test.each([
		['page 0', { page: 0 }],
		['page -1', { page: -1 }],
		['page not a number', { page: 'x' }],
		['page too large', { page: 3 }],
		['pageSize 0', { pageSize: 0 }],
		['pageSize 101', { pageSize: 101 }],
		['pageSize not a number', { pageSize: '2.5' }],
		['unknown status', { status: 'done' }],
	] as Array<[string, Record<string, string | number>]>)(
		'List review tasks: 400 for %s',
		async (_label, query) => {
			await reviewRuns(3);
			const r = await get(env.sandbox, '/review-tasks', { query: { pageSize: 2, ...query } });
			expectProblem(r, 400);
			expect(r.body.errors).toEqual(expect.any(Object));
		},
	);

	test('List review tasks: page 1 of an empty list is fine; page 2 is too large', async () => {
		const r = await get(env.sandbox, '/review-tasks');
		expect(r.body).toEqual({ count: 0, pages: 0, data: [] });
		expectProblem(await get(env.sandbox, '/review-tasks', { query: { page: 2 } }), 400);
	});

	test('List review tasks: pageSize 1 and 100 are valid', async () => {
		await reviewRuns(2);
		expect(
			(await get(env.sandbox, '/review-tasks', { query: { pageSize: 1 } })).body.data,
		).toHaveLength(1);
		expect(
			(await get(env.sandbox, '/review-tasks', { query: { pageSize: 100 } })).body.data,
		).toHaveLength(2);
	});

	test('List review tasks: filters status, workflowId and runId', async () => {
		const other = await env.sandbox.control.createWorkflow({ name: 'other' });
		const [a, b] = await reviewRuns(2);
		const [c] = await reviewRuns(1, other.id);
		const [ta] = await env.sandbox.control.listReviewTasks({ runId: a });
		await env.sandbox.control.decideReviewTask(ta!.id, 'approved');
		const pending = (await get(env.sandbox, '/review-tasks', { query: { status: 'pending' } }))
			.body;
		expect(pending.data.map((x: { runId: string }) => x.runId).sort()).toEqual([b, c].sort());
		const approved = (await get(env.sandbox, '/review-tasks', { query: { status: 'approved' } }))
			.body;
		expect(approved.data.map((x: { runId: string }) => x.runId)).toEqual([a]);
		const byWf = (await get(env.sandbox, '/review-tasks', { query: { workflowId: other.id } }))
			.body;
		expect(byWf.data.map((x: { runId: string }) => x.runId)).toEqual([c]);
		const byRun = (await get(env.sandbox, '/review-tasks', { query: { runId: b } })).body;
		expect(byRun.count).toBe(1);
		expect(byRun.data[0].runId).toBe(b);
	});

	test('List review tasks: runId also matches the tasks of sub-workflows the run called', async () => {
		const sub = await env.sandbox.control.createWorkflow({ name: 'reusable section' });
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'review', step: 'top' },
			{
				status: 'awaiting_children',
				children: [
					{
						kind: 'sub_workflow_call',
						workflowId: sub.id,
						script: [{ status: 'review', step: 'inner' }, { status: 'completed' }],
					},
				],
			},
			{ status: 'completed' },
		]);
		const t = await triggerOk(env.sandbox);
		const top = (await env.sandbox.control.listReviewTasks({ runId: t.runId! }))[0]!;
		await env.sandbox.control.decideReviewTask(top.id, 'approved');
		const r = (await get(env.sandbox, '/review-tasks', { query: { runId: t.runId! } })).body;
		expect(r.count).toBe(2);
		const inner = r.data[0];
		expect(inner.runId).not.toBe(t.runId);
		expect(inner.rootRunId).toBe(t.runId);
		expect(inner.workflowId).toBe(sub.id);
		// The sub-workflow run itself also matches its own tasks only.
		expect(
			(await get(env.sandbox, '/review-tasks', { query: { runId: inner.runId } })).body.count,
		).toBe(1);
		await env.sandbox.control.decideReviewTask(inner.id, 'approved');
		expect((await get(env.sandbox, `/runs/${t.runId}`)).body.status).toBe('completed');
	});

	test('Get a review task: unknown id answers 404', async () => {
		expectProblem(await get(env.sandbox, `/review-tasks/${randomUUID()}`), 404);
	});

	test('Review task: a timed review step is decided automatically after ms', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'review', ms: 60_000, decision: 'approved' },
			{ status: 'completed' },
		]);
		const t = await triggerOk(env.sandbox);
		expect((await get(env.sandbox, `/runs/${t.runId}`)).body.status).toBe('review');
		await env.sandbox.control.advanceClock(60_000);
		expect((await get(env.sandbox, `/runs/${t.runId}`)).body.status).toBe('completed');
		const task = (await get(env.sandbox, '/review-tasks')).body.data[0];
		expect(task.decision).toBe('approved');
	});
});
