/**
 * Reads go on while there is more to read: a read that stops at its budget before the end of the
 * list is followed by another one at the bell's fast pace, carried by a delivery (up to its time
 * limit). Events whose own deliveries n8n never answered (an overloaded n8n) come out with the
 * next answered delivery's read, once: the cursor has not passed them. Bounds hold.
 */
import {
	MAX_HELD,
	MAX_OWED,
	WebhookReaders,
} from '../../../nodes/DocumentWorkflowWebhookTrigger/reader';
import { useSandbox } from '../../harness/sandbox';
import type { WebhookHost } from '../../harness/webhookHost';
import { useHosts, wait } from './helpers';

const env = useSandbox();
const newHost = useHosts(env);

const idsOf = (host: WebhookHost) => host.emitted().map((event) => String(event.id));

async function create(count: number): Promise<string[]> {
	return (
		await env.sandbox.control.createEvents(
			Array.from({ length: count }, (_, n) => ({ type: 'run.completed', data: { n } })),
			{ returnIds: true },
		)
	).ids!;
}

describe('Document Workflow Webhook Trigger: reads go on while there is more', () => {
	test('a read that stops at its page budget (2,000 events) is carried on by the next delivery, though that one names an event already emitted: 2,300 events, every event once', async () => {
		const host = await newHost();
		const created = await create(2300);
		await host.post({ id: created[0] });
		await host.settled();
		expect(idsOf(host)).toHaveLength(2000);
		// n8n answers another delivery, late: its event came out with the first read.
		await host.post({ id: created[1] });
		await host.settled();
		expect(idsOf(host)).toHaveLength(2300);
		expect(new Set(idsOf(host))).toEqual(new Set(created));
		expect(WebhookReaders.getInstance().size()).toMatchObject({ held: 0 });
	});

	test('events whose deliveries n8n never answered come out with the next answered delivery, once each', async () => {
		const host = await newHost();
		const first = await create(MAX_HELD);
		// Two more whose deliveries n8n has not answered: the first read finds events nobody named.
		const unanswered = await create(2);
		const posts = first.map(async (id) => await host.post({ id }));
		// Events keep coming whose deliveries n8n never answers.
		const later: string[] = [];
		for (let batch = 0; batch < 8; batch++) {
			await wait(100);
			later.push(...(await create(2)));
		}
		await Promise.all(posts);
		await host.settled();
		// Reads depend on what the API lists and on time, not on events nobody rang for: the next
		// answered delivery brings out every one, each once.
		const next = await create(1);
		await host.post({ id: next[0] });
		await host.settled();
		const all = [...first, ...unanswered, ...later, ...next];
		expect(idsOf(host)).toHaveLength(all.length);
		expect(new Set(idsOf(host))).toEqual(new Set(all));
		expect(host.maxOpen).toBeLessThanOrEqual(MAX_HELD);
		expect(WebhookReaders.getInstance().size()).toMatchObject({ held: 0, owed: 0 });
	});
});
