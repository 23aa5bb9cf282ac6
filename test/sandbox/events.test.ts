/** Conformance: List events (rules 1-4), Events section, Event fields. */
import { TEST_PING_EVENT_TYPE } from '../../sandbox/src';
import type { EventInput } from '../../sandbox/src';
import { UUID_RE, expectProblem, get, triggerOk } from './helpers';
import { useSandbox } from '../harness/sandbox';

const env = useSandbox({ nodes: false });

const DAY = 24 * 3_600_000;

async function events(query: Record<string, string | number | undefined> = {}, key?: string) {
	return get(env.sandbox, '/events', { query, key });
}

describe('List events', () => {
	test('Events: documents, runs and reviews generate events with ids in data', async () => {
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'review' },
			{ status: 'completed' },
		]);
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [{ status: 'failed' }]);
		await env.sandbox.control.setNextScripts(env.sandbox.defaultWorkflowId, [
			{ status: 'cancelled' },
		]);
		const a = await triggerOk(env.sandbox);
		const b = await triggerOk(env.sandbox);
		const c = await triggerOk(env.sandbox);
		const [task] = await env.sandbox.control.listReviewTasks({ runId: a.runId! });
		await env.sandbox.control.decideReviewTask(task!.id, 'approved');
		const r = await events({ pageSize: 100 });
		expect(r.status).toBe(200);
		const list = r.body.data as Array<{
			id: string;
			type: string;
			createdOn: string;
			environment: string;
			data: Record<string, unknown>;
		}>;
		const types = list.map((e) => e.type);
		expect(types.filter((t) => t === 'document.received')).toHaveLength(3);
		expect(types).toEqual(
			expect.arrayContaining([
				'review.created',
				'review.completed',
				'run.completed',
				'run.failed',
				'run.cancelled',
			]),
		);
		for (const e of list) {
			expect(Object.keys(e).sort()).toEqual(['createdOn', 'data', 'environment', 'id', 'type']);
			expect(e.id).toMatch(UUID_RE);
			expect(e.environment).toBe('prod');
		}
		expect(list.find((e) => e.type === 'run.failed')!.data).toEqual(
			expect.objectContaining({
				runId: b.runId,
				documentId: b.documentId,
				workflowId: env.sandbox.defaultWorkflowId,
			}),
		);
		expect(list.find((e) => e.type === 'run.cancelled')!.data).toEqual(
			expect.objectContaining({ runId: c.runId }),
		);
		expect(list.find((e) => e.type === 'review.completed')!.data).toEqual(
			expect.objectContaining({ reviewTaskId: task!.id, runId: a.runId, decision: 'approved' }),
		);
		expect(
			list.find((e) => e.type === 'document.received' && e.data.documentId === a.documentId),
		).toBeDefined();
	});

	test('Event rule 1: oldest first by id; the paged envelope with count and pages; default pageSize 20', async () => {
		await env.sandbox.control.createEvents(
			Array.from({ length: 45 }, (_, i) => ({ type: 'document.received', data: { i } })),
		);
		const p1 = await events();
		expect(p1.body.count).toBe(45);
		expect(p1.body.pages).toBe(3);
		expect(p1.body.data).toHaveLength(20);
		const p3 = await events({ page: 3 });
		expect(p3.body.data).toHaveLength(5);
		const all = [...p1.body.data, ...(await events({ page: 2 })).body.data, ...p3.body.data];
		const ids = all.map((e: { id: string }) => e.id);
		expect([...ids].sort()).toEqual(ids);
		expect(all.map((e: { data: { i: number } }) => e.data.i)).toEqual(
			Array.from({ length: 45 }, (_, i) => i),
		);
	});

	test('Event: ids reflect creation time (time-ordered UUIDs)', async () => {
		const clock = await env.sandbox.control.getClock();
		await env.sandbox.control.createEvents([
			{ type: 'run.completed', createdOn: new Date(clock.nowMs - 60_000).toISOString() },
			{ type: 'run.completed', createdOn: new Date(clock.nowMs - 120_000).toISOString() },
		]);
		const list = (await events()).body.data;
		expect(Date.parse(list[0].createdOn)).toBe(clock.nowMs - 120_000);
		expect(list[0].id < list[1].id).toBe(true);
	});

	test('Event rule 1: only events of the last 7 days are returned', async () => {
		const clock = await env.sandbox.control.getClock();
		await env.sandbox.control.createEvents([
			{
				type: 'run.completed',
				createdOn: new Date(clock.nowMs - 8 * DAY).toISOString(),
				data: { n: 'old' },
			},
			{
				type: 'run.completed',
				createdOn: new Date(clock.nowMs - 6 * DAY).toISOString(),
				data: { n: 'six' },
			},
			{ type: 'run.completed', data: { n: 'now' } },
		]);
		expect((await events()).body.data.map((e: { data: { n: string } }) => e.data.n)).toEqual([
			'six',
			'now',
		]);
		await env.sandbox.control.advanceClock(1.5 * DAY);
		expect((await events()).body.data.map((e: { data: { n: string } }) => e.data.n)).toEqual([
			'now',
		]);
	});

	test("Event rule 1: only events in the key's environment are returned", async () => {
		await env.sandbox.control.createEvents([
			{ type: 'run.completed', environment: 'prod', data: { n: 'p' } },
			{ type: 'run.completed', environment: 'dev', data: { n: 'd' } },
		]);
		const dev = await env.sandbox.control.createKey({ environment: 'dev' });
		expect((await events()).body.data.map((e: { data: { n: string } }) => e.data.n)).toEqual(['p']);
		const devList = (await events({}, dev.key)).body.data;
		expect(devList.map((e: { data: { n: string } }) => e.data.n)).toEqual(['d']);
		expect(devList[0].environment).toBe('dev');
		// Events of a dev workflow go to the dev environment.
		const wf = await env.sandbox.control.createWorkflow({ environment: 'dev' });
		await triggerOk(env.sandbox, wf.id);
		expect((await events({ type: 'document.received' }, dev.key)).body.count).toBe(1);
		expect((await events({ type: 'document.received' })).body.count).toBe(0);
	});

	test('Event rule 1: events of another organization are not returned', async () => {
		const org = await env.sandbox.control.createOrg({});
		const k = await env.sandbox.control.createKey({ orgId: org.id });
		await env.sandbox.control.createEvents([{ type: 'run.completed' }]);
		expect((await events({}, k.key)).body.count).toBe(0);
		await env.sandbox.control.createEvents([{ type: 'run.failed' }], { orgId: org.id });
		expect((await events({}, k.key)).body.data.map((e: { type: string }) => e.type)).toEqual([
			'run.failed',
		]);
	});

	test('Event rule 3: an event can appear later with a lower id than one already read; after + page 1 + de-dup finds it', async () => {
		const clock = await env.sandbox.control.getClock();
		await env.sandbox.control.createEvents([
			{
				type: 'run.completed',
				createdOn: new Date(clock.nowMs - 30_000).toISOString(),
				data: { n: 'early' },
			},
			{
				type: 'run.completed',
				createdOn: new Date(clock.nowMs - 20_000).toISOString(),
				commitDelayMs: 90_000,
				data: { n: 'late' },
			},
			{
				type: 'run.completed',
				createdOn: new Date(clock.nowMs - 10_000).toISOString(),
				data: { n: 'newest' },
			},
		]);
		const first = (await events()).body.data;
		expect(first.map((e: { data: { n: string } }) => e.data.n)).toEqual(['early', 'newest']);
		const newest = first[1].id;
		// The late event exists but is not committed yet.
		const all = await env.sandbox.control.listEvents();
		expect(all.map((e) => [e.data.n, e.committed])).toEqual([
			['early', true],
			['late', false],
			['newest', true],
		]);
		await env.sandbox.control.advanceClock(90_000);
		// after = newest misses it (its id is lower) ...
		expect((await events({ after: newest })).body.data).toEqual([]);
		// ... after = an id seen a few minutes before the newest finds it.
		const again = (await events({ after: first[0].id })).body.data;
		expect(again.map((e: { data: { n: string } }) => e.data.n)).toEqual(['late', 'newest']);
		expect(again[0].id < newest).toBe(true);
	});

	test('Event rule 2: subscription test pings are never listed', async () => {
		await env.sandbox.control.createEvents([
			{ type: TEST_PING_EVENT_TYPE, data: { test: true } },
			{ type: 'run.completed' },
		]);
		const r = await events();
		expect(r.body.count).toBe(1);
		expect(r.body.data[0].type).toBe('run.completed');
	});

	test('Versioning rule 2: an event of a type unknown to the client is listed as is', async () => {
		await env.sandbox.control.createEvents([{ type: 'document.archived', data: { x: 1 } }]);
		expect((await events()).body.data.map((e: { type: string }) => e.type)).toEqual([
			'document.archived',
		]);
	});

	test('List events: after returns only events whose id is greater', async () => {
		const res = await env.sandbox.control.createEvents(
			Array.from({ length: 10 }, (_, i) => ({ type: 'run.completed', data: { i } })),
			{ returnIds: true },
		);
		const r = await events({ after: res.ids![6] });
		expect(r.body.data.map((e: { data: { i: number } }) => e.data.i)).toEqual([7, 8, 9]);
		expect(r.body.count).toBe(3);
		expect((await events({ after: res.lastId! })).body).toEqual({ count: 0, pages: 0, data: [] });
	});

	test('List events: type filters one event type', async () => {
		await env.sandbox.control.createEvents([
			{ type: 'run.completed' },
			{ type: 'run.failed' },
			{ type: 'run.completed' },
			{ type: 'review.created' },
		]);
		const r = await events({ type: 'run.completed' });
		expect(r.body.count).toBe(2);
		expect(r.body.data.every((e: { type: string }) => e.type === 'run.completed')).toBe(true);
	});

	test.each([
		['page 0', { page: 0 }],
		['page too large', { page: 5 }],
		['pageSize 0', { pageSize: 0 }],
		['pageSize 101', { pageSize: 101 }],
		['unknown type', { type: 'run.exploded' }],
		['after not an id', { after: 'yesterday' }],
	] as Array<[string, Record<string, string | number>]>)(
		'List events: 400 for %s',
		async (_l, query) => {
			await env.sandbox.control.createEvents([{ type: 'run.completed' }]);
			expectProblem(await events(query), 400);
		},
	);

	test('List events: fast with 50,000 events (bulk creation and paging with after)', async () => {
		const clock = await env.sandbox.control.getClock();
		const many: EventInput[] = Array.from({ length: 50_000 }, (_, i) => ({
			type: i % 3 ? 'run.completed' : 'document.received',
			createdOn: new Date(clock.nowMs - 6 * DAY + i * 1_000).toISOString(),
			data: { i },
		}));
		const created = await env.sandbox.control.createEvents(many, { returnIds: true });
		expect(created.count).toBe(50_000);
		const r = await events({ pageSize: 100 });
		expect(r.body.count).toBe(50_000);
		expect(r.body.pages).toBe(500);
		const tail = await events({ after: created.ids![49_950], pageSize: 100 });
		expect(tail.body.data).toHaveLength(49);
		expect(tail.body.data[0].data.i).toBe(49_951);
		const last = await events({ page: 500, pageSize: 100 });
		expect(last.body.data.at(-1).data.i).toBe(49_999);
		const typed = await events({ type: 'document.received', pageSize: 100 });
		expect(typed.body.count).toBe(16_667);
	});

	test('Event commit delay: the sandbox can delay its own events (settings.eventCommitDelayMs)', async () => {
		await env.sandbox.control.setSettings({ eventCommitDelayMs: 60_000 });
		await triggerOk(env.sandbox);
		expect((await events()).body.count).toBe(0);
		expect((await env.sandbox.control.listEvents({ includeUncommitted: false })).length).toBe(0);
		expect((await env.sandbox.control.listEvents()).length).toBeGreaterThan(0);
		await env.sandbox.control.advanceClock(60_000);
		expect((await events({ type: 'document.received' })).body.count).toBe(1);
	});
});
