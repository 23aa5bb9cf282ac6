/**
 * The node run as an AI agent's tool (its `…Tool` node type, as n8n runs it for an agent): list
 * operations answer with one bounded object that says whether there is more; the node itself
 * keeps version 1's one item per entry; Submit Document without a file says what to do.
 */
import { pdfItems, requests, submitParams, useSandbox } from '../../harness/sandbox';

describe('run as an AI agent tool', () => {
	const env = useSandbox();
	const wf = () => env.sandbox.defaultWorkflowId;

	async function pendingTasks(count: number) {
		await env.sandbox.control.updateWorkflow(wf(), { script: [{ status: 'review' }] });
		const submitted = await env.run(submitParams(wf()), { items: pdfItems(count) });
		expect(submitted.error).toBeUndefined();
		let tasks = await env.sandbox.control.listReviewTasks({ status: 'pending' });
		for (let i = 0; i < 50 && tasks.length < count; i++) {
			await new Promise((resolve) => setTimeout(resolve, 50));
			tasks = await env.sandbox.control.listReviewTasks({ status: 'pending' });
		}
		expect(tasks).toHaveLength(count);
	}

	async function apiList(path: string) {
		const res = await fetch(`${env.sandbox.baseUrl}${path}`, {
			headers: { 'X-Api-Key': env.sandbox.apiKey },
		});
		return (await res.json()) as { count: number; data: Array<Record<string, unknown>> };
	}

	it('a limited list is one object: the entries, how many of how many, and that more exist', async () => {
		await pendingTasks(7);
		const params = {
			resource: 'reviewTask',
			operation: 'getMany',
			returnAll: false,
			limit: 5,
			filters: { status: 'pending' },
		};
		const api = await apiList('/review-tasks?status=pending&pageSize=100');

		const asTool = await env.run(params, { asTool: true });
		expect(asTool.error).toBeUndefined();
		expect(asTool.items).toHaveLength(1);
		expect(asTool.items[0].json).toEqual({
			results: api.data.slice(0, 5),
			returned: 5,
			total: 7,
			hasMore: true,
			note: 'Only the first 5 of 7 matching entries are listed. Narrow the filters to see the others.',
		});

		// The node in a workflow keeps version 1's output: one item per entry, as the API returns it.
		const asNode = await env.run(params);
		expect(asNode.items.map((item) => item.json)).toEqual(api.data.slice(0, 5));
	});

	it('Return All reads one page of 100 as a tool, and says the rest exists', async () => {
		await env.sandbox.control.createEvents(
			Array.from({ length: 130 }, (_, i) => ({ type: 'run.failed', data: { n: i } })),
		);
		await env.sandbox.control.clearRequests();
		const params = {
			resource: 'event',
			operation: 'getMany',
			returnAll: true,
			filters: { type: 'run.failed' },
		};

		const asTool = await env.run(params, { asTool: true });
		expect(asTool.items).toHaveLength(1);
		const answer = asTool.items[0].json as {
			results: unknown[];
			returned: number;
			total: number;
			hasMore: boolean;
		};
		expect(answer).toMatchObject({ returned: 100, total: 130, hasMore: true });
		expect((await requests(env, { pathPrefix: '/events' })).map((e) => e.path)).toEqual([
			'/events?type=run.failed&page=1&pageSize=100',
		]);
		expect(answer.results).toEqual((await apiList('/events?type=run.failed&pageSize=100')).data);

		const asNode = await env.run(params);
		expect(asNode.items).toHaveLength(130);
	});

	it('an empty list is still an answer a model can read', async () => {
		const params = {
			resource: 'reviewTask',
			operation: 'getMany',
			returnAll: false,
			limit: 10,
			filters: { status: 'rejected' },
		};
		const asTool = await env.run(params, { asTool: true });
		expect(asTool.items.map((item) => item.json)).toEqual([
			{ results: [], returned: 0, total: 0, hasMore: false },
		]);
		const asNode = await env.run(params);
		expect(asNode.items).toHaveLength(0);
	});

	it("a document's runs are one object as a tool, also when it has none", async () => {
		const submitted = await env.run(
			submitParams(
				wf(),
				{ waitForCompletion: true },
				{ initialPollIntervalSeconds: 0.1, maxPollIntervalSeconds: 0.2 },
			),
			{ items: pdfItems(1) },
		);
		const documentId = submitted.items[0].json.documentId as string;
		const asNode = await env.run({ resource: 'document', operation: 'getRuns', documentId });
		expect(asNode.items).toHaveLength(1);
		const asTool = await env.run(
			{ resource: 'document', operation: 'getRuns', documentId },
			{ asTool: true },
		);
		expect(asTool.items.map((item) => item.json)).toEqual([
			{ results: asNode.items.map((item) => item.json), returned: 1, total: 1, hasMore: false },
		]);

		await env.sandbox.control.setNextScripts(wf(), { steps: [], neverStarts: 'held' });
		const held = await env.run(submitParams(wf()), { items: pdfItems(1) });
		const heldId = held.items[0].json.documentId as string;
		expect(
			(await env.run({ resource: 'document', operation: 'getRuns', documentId: heldId })).items,
		).toHaveLength(0);
		const heldAsTool = await env.run(
			{ resource: 'document', operation: 'getRuns', documentId: heldId },
			{ asTool: true },
		);
		expect(heldAsTool.items.map((item) => item.json)).toEqual([
			{ results: [], returned: 0, total: 0, hasMore: false },
		]);
	});

	it('Submit Document with no file says, in the message a model receives, that the file must come from an earlier node', async () => {
		const result = await env.run(submitParams(wf()), {
			asTool: true,
			items: [{ json: { question: 'submit invoice.pdf' } }],
		});
		expect(result.error?.message).toBe(
			'The item has no file in binary property "data" to upload: Submit Document sends a file that an earlier node put into the item, never one given as a parameter',
		);
		expect(result.error?.description).toContain('An AI agent cannot pass a file to this tool');
		expect(await requests(env)).toHaveLength(0);
	});
});
