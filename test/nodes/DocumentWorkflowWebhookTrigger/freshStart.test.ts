/**
 * A trigger that starts afresh (no cursor: at activation, or a delivery reaching a trigger
 * that has none) takes as known only the events created more than the look-back before it
 * started, so every event whose delivery it could have answered comes out, once. n8n registers
 * the webhook before it calls `checkExists` (2.41.1 `addWebhooks`), so deliveries reach the node
 * before the activation's read; the harness's `activate(mode, registered)` runs them there.
 */
import { FRESH_START_LOOK_BACK_MS } from '../../../nodes/DocumentWorkflowWebhookTrigger/reader';
import { CURSOR_KEY } from '../../../nodes/shared/eventCursor';
import { spreadEvents } from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';
import { WebhookHost } from '../../harness/webhookHost';
import { listedCopies, settle } from './helpers';

const env = useSandbox();

const hosts: WebhookHost[] = [];
afterEach(async () => {
	await Promise.all(hosts.splice(0).map(async (host) => await host.stop()));
});

/** A host listening but not activated: what n8n routes to once it has registered the webhook. */
async function registeredHost(): Promise<WebhookHost> {
	const host = await new WebhookHost({ credentials: env.credentials }).start();
	hosts.push(host);
	return host;
}

const idsOf = (host: WebhookHost) => host.emitted().map((event) => String(event.id));

async function create(types: string[]): Promise<string[]> {
	return (
		await env.sandbox.control.createEvents(
			types.map((type) => ({ type })),
			{ returnIds: true },
		)
	).ids!;
}

/** Events created `agoMs` before the sandbox's now (their ids of that time). */
async function createAgo(agoMs: number, count = 1): Promise<string[]> {
	const now = (await env.sandbox.control.getClock()).nowMs;
	return (
		await env.sandbox.control.createEvents(spreadEvents(count, now - agoMs, now - agoMs), {
			returnIds: true,
		})
	).ids!;
}

describe('Document Workflow Webhook Trigger: starting afresh', () => {
	test('an event created and delivered between the webhook’s registration and the activation’s read is emitted once, also after a restart and repeats', async () => {
		const host = await registeredHost();
		await env.sandbox.control.addSubscription({ url: host.url });
		let early: string[] = [];
		await host.activate('activate', async () => {
			// Registered: the event's delivery is answered (and handled to the end) before checkExists reads.
			early = await create(['run.completed']);
			await settle(env.sandbox, host);
			expect((await env.sandbox.control.getDeliveries()).map((d) => d.status)).toEqual([202]);
		});
		// n8n restarts before any other delivery: what the activation saved must not repeat the event.
		await host.restart();
		const listed = await listedCopies(env.sandbox);
		await host.post(listed.get(early[0]));
		const next = await create(['run.failed']);
		await settle(env.sandbox, host);
		expect(idsOf(host)).toEqual([...early, ...next]);
	});

	test('an event created between the webhook’s registration and the activation’s read, its delivery answered after activation, is emitted once', async () => {
		const host = await registeredHost();
		let early: string[] = [];
		await host.activate('activate', async () => {
			early = await create(['run.completed']);
		});
		const listed = await listedCopies(env.sandbox);
		await host.post(listed.get(early[0]));
		await host.post(listed.get(early[0]));
		await host.settled();
		expect(idsOf(host)).toEqual(early);
	});

	test('a delivery reaching a trigger with no cursor emits a lone event, once', async () => {
		const host = await registeredHost();
		const [id] = await create(['run.failed']);
		await Promise.all([host.post({ id }), host.post({ id })]);
		await host.settled();
		await host.post({ id });
		await host.settled();
		expect(idsOf(host)).toEqual([id]);
	});

	test('a delivery reaching a trigger with no cursor: events created before the look-back are not emitted, those since are, once', async () => {
		await createAgo(10 * 60_000);
		await createAgo(FRESH_START_LOOK_BACK_MS + 60_000, 3);
		const recent = await createAgo(FRESH_START_LOOK_BACK_MS / 2);
		const host = await registeredHost();
		const [id] = await create(['run.failed']);
		await host.post({ id });
		await host.settled();
		expect(idsOf(host)).toEqual([...recent, id]);
	});

	test('activation: events created before the look-back are not emitted; every event since, more than a page of them, comes out once with the next delivery', async () => {
		await createAgo(10 * 60_000);
		await createAgo(FRESH_START_LOOK_BACK_MS + 60_000, 120);
		const now = (await env.sandbox.control.getClock()).nowMs;
		// 150 events within the look-back: the newest page (100) does not reach back to its start.
		const recent = (
			await env.sandbox.control.createEvents(
				spreadEvents(150, now - FRESH_START_LOOK_BACK_MS / 2, now - 1000),
				{ returnIds: true },
			)
		).ids!;
		const host = await registeredHost();
		await host.activate();
		await env.sandbox.control.addSubscription({ url: host.url });
		const next = await create(['review.created']);
		await settle(env.sandbox, host);
		expect(idsOf(host)).toEqual([...recent, ...next]);
	});

	test('an id a delivery left owed between the webhook’s registration and the activation’s read stays owed in what the activation saves', async () => {
		const host = await registeredHost();
		let late = '';
		await host.activate('activate', async () => {
			// Not listed yet: the delivery looks for it while held, then is answered with it owed, saved.
			[late] = (
				await env.sandbox.control.createEvents([{ type: 'run.completed', commitDelayMs: 60_000 }], {
					returnIds: true,
				})
			).ids!;
			await host.post({ id: late });
			await host.settled();
		});
		// The activation saves the static data it loaded before the delivery: it must owe the id too.
		const saved = host.store.data[`node:${host.nodeName}`] as Record<string, { owed?: object }>;
		expect(Object.keys(saved[CURSOR_KEY].owed ?? {})).toEqual([late]);
		// A restart keeps it: the event comes out with the first delivery after it is listed.
		await host.restart();
		await env.sandbox.control.advanceClock(60_000);
		await host.post({ id: late });
		await host.settled();
		expect(idsOf(host)).toEqual([late]);
	});
});
