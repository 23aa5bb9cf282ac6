/** Shortcuts for the webhook trigger's tests: a host per test, the sandbox's own listing, counting reads. */
import type { IDataObject } from 'n8n-workflow';
import { randomBytes } from 'node:crypto';

import type { Sandbox } from '../../../sandbox/src';
import type { Env } from '../../harness/sandbox';
import type { WebhookHostOptions } from '../../harness/webhookHost';
import { WebhookHost } from '../../harness/webhookHost';

/**
 * Starts a host for each test that asks for one, activated as n8n activates it (the cursor
 * starts from now; the request log is cleared after, so a test counts the reads deliveries
 * cause), and stops them all after the test.
 */
export function useHosts(
	env: Env,
): (
	parameters?: IDataObject,
	typeVersion?: number,
	options?: Partial<WebhookHostOptions>,
) => Promise<WebhookHost> {
	const hosts: WebhookHost[] = [];
	afterEach(async () => {
		await Promise.all(hosts.splice(0).map(async (host) => await host.stop()));
	});
	return async (parameters = {}, typeVersion?: number, options = {}) => {
		const host = await new WebhookHost({
			credentials: env.credentials,
			parameters,
			typeVersion,
			...options,
		}).start();
		hosts.push(host);
		await host.activate();
		await env.sandbox.control.clearRequests();
		return host;
	};
}

/** Every delivery the sandbox started is answered, and every request the host got is handled to the end. */
export async function settle(sb: Sandbox, host: WebhookHost): Promise<void> {
	await sb.subscriptions.settled();
	await host.settled();
}

/** The events as the API lists them (what the trigger must emit), by id. */
export async function listedCopies(sb: Sandbox): Promise<Map<string, IDataObject>> {
	const response = await fetch(`${sb.baseUrl}/events?pageSize=100`, {
		headers: { 'X-Api-Key': sb.apiKey },
	});
	const body = (await response.json()) as { data: IDataObject[] };
	return new Map(body.data.map((event) => [String(event.id), event]));
}

/** How many times the event list was read. */
export async function eventReads(sb: Sandbox): Promise<number> {
	return (await sb.control.getRequests({ origin: 'api', pathPrefix: '/events' })).length;
}

/** An id in the API's form that no event has: a time-ordered id of now (or of `ms`), as a forger would make it. */
export function forgedId(ms = Date.now()): string {
	const t = Math.floor(ms).toString(16).padStart(12, '0');
	const r = randomBytes(10).toString('hex');
	return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${r.slice(0, 3)}-8${r.slice(3, 6)}-${r.slice(6, 18)}`;
}

/** When each read of the event list was received (real time, ms), oldest first. */
export async function readTimes(sb: Sandbox): Promise<number[]> {
	return (await sb.control.getRequests({ origin: 'api', pathPrefix: '/events' })).map(
		(entry) => entry.realTimeMs,
	);
}

export const wait = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));
