/**
 * Queue mode with two webhook processes (`n8n webhook`) behind one URL, every delivery reaching
 * both: two copies of the node's modules (each process its own memory) sharing one workflow's
 * saved static data, loaded per request and saved whole after it. Nothing answered may be lost;
 * an event may start twice (once per process: the documented bound), never twice from one process,
 * and every item of both processes is the API's listed copy. How many events start twice is
 * measured (the real-n8n figure is the benchmark's `webhook-queue`). Ids owed that one process
 * got first and the other later are as old as their first delivery when the bound lets ids go.
 */
import type { INodeType } from 'n8n-workflow';

import { MAX_OWED } from '../../../nodes/DocumentWorkflowWebhookTrigger/reader';
import { CURSOR_KEY } from '../../../nodes/shared/eventCursor';
import { useSandbox } from '../../harness/sandbox';
import { StaticDataStore, WebhookHost } from '../../harness/webhookHost';
import { forgedId, listedCopies, wait } from './helpers';

const env = useSandbox();

/** The node as a second n8n process loads it: its own module state, n8n's own packages shared. */
function secondProcess(): { nodeType: INodeType; forgetAll: () => void } {
	let loaded: { nodeType: INodeType; forgetAll: () => void } | undefined;
	const n8nWorkflow = jest.requireActual<typeof import('n8n-workflow')>('n8n-workflow');
	jest.isolateModules(() => {
		jest.doMock('n8n-workflow', () => n8nWorkflow);
		const node =
			require('../../../nodes/DocumentWorkflowWebhookTrigger/DocumentWorkflowWebhookTrigger.node') as typeof import('../../../nodes/DocumentWorkflowWebhookTrigger/DocumentWorkflowWebhookTrigger.node');
		const reader =
			require('../../../nodes/DocumentWorkflowWebhookTrigger/reader') as typeof import('../../../nodes/DocumentWorkflowWebhookTrigger/reader');
		loaded = {
			nodeType: new node.DocumentWorkflowWebhookTrigger(),
			forgetAll: () => reader.WebhookReaders.reset(),
		};
	});
	return loaded!;
}

/** Two webhook processes of one n8n (each its own reader), sharing the workflow's static data. */
async function twoProcesses() {
	const store = new StaticDataStore();
	const shared = { credentials: env.credentials, store, nodeId: 'queue-trigger', typeVersion: 2 };
	const first = await new WebhookHost(shared).start();
	const second = await new WebhookHost({ ...shared, process: secondProcess() }).start();
	return { store, first, second };
}

describe('Document Workflow Webhook Trigger: two webhook processes, every delivery at both', () => {
	test.each([
		['together', 0],
		['up to 3 s apart', 3000],
	])('copies %s: no event lost; events started twice counted', async (_label, maxDelayMs) => {
		const { first, second } = await twoProcesses();
		try {
			// The main process activates the workflow; the webhook processes only receive.
			await first.activate();
			await env.sandbox.control.addSubscription({ url: first.url });
			await env.sandbox.control.addSubscription({ url: second.url, maxDelayMs, seed: 9 });
			const created: string[] = [];
			for (let batch = 0; batch < 20; batch++) {
				created.push(
					...(
						await env.sandbox.control.createEvents(
							Array.from({ length: 5 }, (_, n) => ({ type: 'run.completed', data: { batch, n } })),
							{ returnIds: true },
						)
					).ids!,
				);
				await new Promise((resolve) => setTimeout(resolve, 100));
			}
			await env.sandbox.subscriptions.settled();
			await Promise.all([first.settled(), second.settled()]);
			const counts = new Map<string, number>();
			for (const event of [...first.emitted(), ...second.emitted()])
				counts.set(String(event.id), (counts.get(String(event.id)) ?? 0) + 1);
			const lost = created.filter((id) => !counts.has(id));
			const twice = created.filter((id) => (counts.get(id) ?? 0) > 1);
			console.log(
				`two webhook processes, copies ${_label}: ${created.length} events, ${lost.length} lost, ${twice.length} started twice (first process ${first.emitted().length} items, second ${second.emitted().length})`,
			);
			expect(lost).toEqual([]);
			// The documented bound: an event starts the workflow at most once per webhook process.
			expect([...counts.values()].every((n) => n <= 2)).toBe(true);
			// What a user of either process gets: each event at most once from that process, only
			// events the API lists, each item the listed copy, and no event of another process's
			// doing (a forged or unlisted id).
			const listed = await listedCopies(env.sandbox);
			for (const host of [first, second]) {
				const ids = host.emitted().map((event) => String(event.id));
				expect(ids.length).toBe(new Set(ids).size);
				for (const event of host.emitted()) expect(event).toEqual(listed.get(String(event.id)));
			}
		} finally {
			await Promise.all([first.stop(), second.stop()]);
		}
	});
});

describe('Document Workflow Webhook Trigger: two webhook processes, each its own deliveries', () => {
	test(`past ${MAX_OWED} ids owed, the oldest goes first, also one another process received first`, async () => {
		const { store, first, second } = await twoProcesses();
		const savedOwed = () =>
			Object.keys(
				(store.data[`node:${first.nodeName}`] as Record<string, { owed?: object }>)[CURSOR_KEY]
					.owed ?? {},
			);
		try {
			await first.activate();
			// Ids of events not listed yet. The second process gets `old` first; the first gets `young`,
			// then its own copy of `old`, which it owes from then, behind `young`.
			const [old, young] = [forgedId(), forgedId()];
			const posts = [second.post({ id: old })];
			await wait(50);
			posts.push(first.post({ id: young }));
			await wait(50);
			posts.push(first.post({ id: old }));
			await Promise.all(posts);
			// The second process saves `old` as it got it, first; the first process loads that.
			await second.post({ id: forgedId() });
			const flood = Array.from({ length: MAX_OWED - 2 }, () => ({ id: forgedId() }));
			await first.post(flood);
			await Promise.all([first.settled(), second.settled()]);
			expect(savedOwed()).toHaveLength(MAX_OWED);
			expect(savedOwed()).toContain(young);
			expect(savedOwed()).not.toContain(old);
		} finally {
			await Promise.all([first.stop(), second.stop()]);
		}
	}, 60_000);
});

describe('Document Workflow Webhook Trigger: two webhook processes, one read slow', () => {
	test('an event the other process emitted while a read ran is not emitted by that read', async () => {
		const { first, second } = await twoProcesses();
		try {
			await first.activate();
			const { ids } = await env.sandbox.control.createEvents([{ type: 'run.completed' }], {
				returnIds: true,
			});
			const event = ids![0];
			// The first process's read waits on its first page, from the cursor of the activation.
			const slow = { pathPrefix: '/events', kind: 'latency', ms: 1500, count: 1 } as const;
			await env.sandbox.control.addFault(slow);
			const slowRead = first.post({ id: event });
			await wait(200);
			// Meanwhile the second process emits the event and saves; the service repeats it to the
			// first, whose delivery loads that save while the slow read is still running.
			await second.post({ id: event });
			await first.post({ id: event });
			await slowRead;
			await Promise.all([first.settled(), second.settled()]);
			expect(second.emitted().map((item) => item.id)).toEqual([event]);
			expect(first.emitted().map((item) => item.id)).toEqual([]);
		} finally {
			await Promise.all([first.stop(), second.stop()]);
		}
	});
});
