/**
 * Where a request leaves the process. The nodes call n8n-core's
 * `helpers.httpRequestWithAuthentication` (the credential's `authenticate` adds the key), which
 * hands the request to `@n8n/backend-network`'s `OutboundHttp.requests().request` and from there
 * to `invokeAxios`: the default instance of the axios that package loads (its own copy, under
 * its `node_modules`). Its adapter is the one point below n8n-core where a request goes out, so
 * the model answers there: everything above it (n8n-core's context, credentials, request
 * building, axios' response handling) runs as in n8n.
 *
 * A request names its API and its n8n process by host and path prefix (`http://api-3.model.test/
 * p2`): a request of a process that has stopped (a restart, a crash) is never answered, as a
 * dead process gets no answers; its code hangs there and does nothing more.
 */
import { dirname } from 'node:path';

import type { ModelApi } from './api';

interface AxiosLike {
	defaults: { adapter?: unknown };
	getUri(config: unknown): string;
	AxiosError: new (message: string, code: string, config: unknown) => Error;
}

/** The axios instance `@n8n/backend-network` sends with. */
function networkAxios(): AxiosLike {
	const from = dirname(require.resolve('@n8n/backend-network'));
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	return require(require.resolve('axios', { paths: [from] })) as AxiosLike;
}

interface Route {
	api: ModelApi;
	/** Whether the n8n process with this id is running. */
	alive: (process: number) => boolean;
}

const routes = new Map<string, Route>();
let installed = false;
let nextApi = 0;

function install(): void {
	if (installed) return;
	const axios = networkAxios();
	axios.defaults.adapter = async (config: { method?: string }) => {
		const url = new URL(axios.getUri(config));
		const route = routes.get(url.host);
		const match = /^\/p(\d+)(\/.*)$/.exec(url.pathname);
		if (!route || !match || !route.alive(Number(match[1]))) return await new Promise(() => {}); // a stopped process: never answered
		const query = Object.fromEntries(url.searchParams.entries());
		const answer = await route.api.answer(Number(match[1]), match[2], query);
		if (!route.alive(Number(match[1]))) return await new Promise(() => {});
		if (answer.reset) throw new axios.AxiosError('socket hang up', 'ECONNRESET', config);
		return {
			data: answer.body === undefined ? '' : JSON.stringify(answer.body),
			status: answer.status,
			statusText: String(answer.status),
			headers: answer.headers,
			config,
			request: {},
		};
	};
	installed = true;
}

/** Serves `api` to the processes `alive` says are running; returns its host name. */
export function serve(api: ModelApi, alive: (process: number) => boolean): string {
	install();
	const host = `api-${++nextApi}.model.test`;
	routes.set(host, { api, alive });
	return host;
}

/** Stops serving a host (its history is over): its requests are never answered. */
export function unserve(host: string): void {
	routes.delete(host);
}

/** The credential's base URL for one n8n process. */
export function baseUrlFor(host: string, process: number): string {
	return `http://${host}/p${process}`;
}
