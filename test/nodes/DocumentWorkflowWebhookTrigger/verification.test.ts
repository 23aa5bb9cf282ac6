/**
 * A delivery is a doorbell: only events the API lists start the workflow, each as the API
 * lists it; forged deliveries, test pings, events of another environment and ids in the wrong
 * form start nothing; a malformed body gets a 4xx naming what was wrong.
 */
import { NodeHelpers } from 'n8n-workflow';

import {
	DocumentWorkflowWebhookTrigger,
	SETUP_NOTICE,
} from '../../../nodes/DocumentWorkflowWebhookTrigger/DocumentWorkflowWebhookTrigger.node';
import { DocumentWorkflowTrigger } from '../../../nodes/DocumentWorkflowTrigger/DocumentWorkflowTrigger.node';
import { captureWarnings } from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';
import { eventReads, forgedId, listedCopies, settle, useHosts } from './helpers';

const env = useSandbox();
const newHost = useHosts(env);

describe('Document Workflow Webhook Trigger: what starts the workflow', () => {
	test('the description: set up by hand (the notice), the same events filter and credential as the polling trigger', () => {
		const webhook = new DocumentWorkflowWebhookTrigger().description;
		const polling = new DocumentWorkflowTrigger().description;
		expect(webhook.name).toBe('documentWorkflowWebhookTrigger');
		expect(webhook.displayName).toBe('Document Workflow Webhook Trigger');
		// Version 2 is version 1 for n8n's sake (a comment on the description says why): the same properties.
		expect(webhook.version).toEqual([1, 2]);
		expect(webhook.defaultVersion).toBe(2);
		expect(JSON.stringify(webhook.properties)).not.toContain('@version');
		expect(webhook.properties.find((p) => p.type === 'notice')?.displayName).toBe(SETUP_NOTICE);
		expect(SETUP_NOTICE).toMatch(/create a subscription .* Production URL .* event types you want/);
		expect(webhook.properties.find((p) => p.name === 'events')).toEqual(
			polling.properties.find((p) => p.name === 'events'),
		);
		expect(webhook.credentials).toEqual(polling.credentials);
		expect(webhook.webhooks).toEqual([
			expect.objectContaining({ httpMethod: 'POST', responseMode: 'onReceived' }),
		]);
		expect(
			NodeHelpers.getNodeParameters(webhook.properties, {}, true, false, null, null),
		).toMatchObject({ events: [] });
	});

	test.each([1, 2])(
		"node version %i, real deliveries: each event is one item, the API's listed copy; events read together start one execution",
		async (typeVersion) => {
			const host = await newHost({}, typeVersion);
			await env.sandbox.control.addSubscription({ url: host.url });
			const created = await env.sandbox.control.createEvents(
				[
					{ type: 'run.completed', data: { runId: 'r1' } },
					{ type: 'review.created', data: { n: 2 } },
					{ type: 'document.received', data: { n: 3 } },
				],
				{ returnIds: true },
			);
			await settle(env.sandbox, host);
			const listed = await listedCopies(env.sandbox);
			// Delivered together, read together: one execution carries all three.
			expect(host.executions).toHaveLength(1);
			expect(host.emitted().map((event) => event.id)).toEqual([...created.ids!].sort());
			for (const event of host.emitted()) expect(event).toEqual(listed.get(String(event.id)));
			const deliveries = await env.sandbox.control.getDeliveries();
			expect(deliveries.map((d) => d.status)).toEqual([202, 202, 202]);
		},
	);

	test("a forged delivery starts nothing; a forged copy of a real event emits the API's copy, not the forged data", async () => {
		const host = await newHost();
		const warnings = captureWarnings();
		try {
			const fake = forgedId();
			const answer = await host.post({
				id: fake,
				type: 'run.completed',
				createdOn: new Date().toISOString(),
				environment: 'prod',
				data: { runId: 'forged' },
			});
			expect(answer.status).toBe(202);
			const [real] = (
				await env.sandbox.control.createEvents([{ type: 'run.failed', data: { genuine: true } }], {
					returnIds: true,
				})
			).ids!;
			await host.post({
				id: real,
				type: 'run.completed',
				createdOn: '2020-01-01T00:00:00.000Z',
				environment: 'prod',
				data: { genuine: false },
			});
			await host.settled();
			expect(host.emitted()).toEqual([(await listedCopies(env.sandbox)).get(real)]);
			expect(host.emitted()[0]).toMatchObject({ type: 'run.failed', data: { genuine: true } });
			expect(warnings.messages.some((m) => m.includes(fake) && m.includes('did not list'))).toBe(
				true,
			);
		} finally {
			warnings.restore();
		}
	});

	test('a test ping (never listed) starts nothing', async () => {
		const host = await newHost();
		const warnings = captureWarnings();
		try {
			const sub = await env.sandbox.control.addSubscription({ url: host.url });
			const ping = await env.sandbox.control.pingSubscription(sub.id);
			await settle(env.sandbox, host);
			expect(host.executions).toHaveLength(0);
			expect((await env.sandbox.control.getDeliveries())[0]).toMatchObject({
				ping: true,
				status: 202,
			});
			expect(warnings.messages.some((m) => m.includes(ping.id))).toBe(true);
		} finally {
			warnings.restore();
		}
	});

	test('an event of another environment (not listed for this key) starts nothing', async () => {
		const host = await newHost();
		await env.sandbox.control.addSubscription({ url: host.url, environment: 'dev' });
		await env.sandbox.control.createEvents([{ type: 'run.completed', environment: 'dev' }]);
		await settle(env.sandbox, host);
		expect((await env.sandbox.control.getDeliveries()).map((d) => d.status)).toEqual([202]);
		expect(host.executions).toHaveLength(0);
	});

	test.each([1, 2])(
		'node version %i, a malformed body or an id in the wrong form gets a 400 naming what was wrong; nothing is read or started',
		async (typeVersion) => {
			const host = await newHost({}, typeVersion);
			const [real] = (
				await env.sandbox.control.createEvents([{ type: 'run.completed' }], { returnIds: true })
			).ids!;
			const cases: Array<[unknown, RegExp]> = [
				[
					{ id: '12345', type: 'run.completed' },
					/The delivered event has the id "12345", which is not an event id \(a UUID\)/,
				],
				[
					[{ id: real }, { id: '../events' }],
					/Event 1 of the delivery has the id "..\/events", which is not an event id/,
				],
				[[{ id: real }, 'text'], /Event 1 of the delivery is not an object/],
				[{ type: 'run.completed' }, /has no "id"/],
				[{}, /The delivery has no event/],
				[[], /empty array/],
				[{ id: 42 }, /the id 42, which is not an event id/],
			];
			for (const [body, message] of cases) {
				const answer = await host.post(body);
				expect(answer.status).toBe(400);
				expect(JSON.parse(answer.body).error).toMatch(message);
			}
			const text = await host.post('id=1', 'application/x-www-form-urlencoded');
			expect(text.status).toBe(400);
			await host.settled();
			expect(host.executions).toHaveLength(0);
			expect(await eventReads(env.sandbox)).toBe(0);
		},
	);

	test.each([1, 2])(
		'node version %i, the filter: only selected types start the workflow; a delivery stating an unselected type is not even read',
		async (typeVersion) => {
			const host = await newHost({ events: ['run.failed', 'review.created'] }, typeVersion);
			const sub = await env.sandbox.control.addSubscription({ url: host.url });
			const created = await env.sandbox.control.createEvents(
				[
					{ type: 'run.failed' },
					{ type: 'run.completed' },
					{ type: 'review.created' },
					{ type: 'document.received' },
				],
				{ returnIds: true },
			);
			await settle(env.sandbox, host);
			expect(
				host
					.emitted()
					.map((event) => event.id)
					.sort(),
			).toEqual([created.ids![0], created.ids![2]].sort());
			await env.sandbox.control.removeSubscription(sub.id);
			const [unselected] = (
				await env.sandbox.control.createEvents([{ type: 'document.received' }], {
					returnIds: true,
				})
			).ids!;
			await env.sandbox.control.clearRequests();
			await host.post({ id: unselected, type: 'document.received' });
			await host.settled();
			expect(await eventReads(env.sandbox)).toBe(0);
			// An unselected event whose body claims a selected type is read, and still not emitted.
			await host.post({ id: unselected, type: 'run.failed' });
			await host.settled();
			expect(await eventReads(env.sandbox)).toBeGreaterThanOrEqual(1);
			expect(host.emitted()).toHaveLength(2);
		},
	);
});
