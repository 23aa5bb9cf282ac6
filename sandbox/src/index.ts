/**
 * The sandbox: a local, spec-faithful fake of the Document Workflow Processing API.
 *
 * Three listeners on 127.0.0.1: the public API (`baseUrl`), the file-link origin
 * (`fileBaseUrl`, serves original-file links, needs no key) and the control API
 * (`controlUrl`, JSON, see `SandboxControl`).
 *
 * This module starts them (`startSandbox`). The folder, one concern per module: `api-server.ts`
 * (the public API's routes), `files-server.ts` (the file-link origin), `control-server.ts` and
 * `control-client.ts` (the control API and its typed client), `engine.ts` (domain state and the
 * run state machine), `event-store.ts` (the 7-day event window), `subscriptions.ts` (deliveries to
 * registered URLs), `infra.ts` (rate limits, fault
 * injection, the request log), `http-util.ts` (per-request context and problem details),
 * `ids.ts`, `formats.ts`, `seed.ts` (demo data), `types.ts` and `cli.ts` (`npm run sandbox`).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { apiHandler } from './api-server';
import { SandboxControl } from './control-client';
import { controlHandler } from './control-server';
import { DEFAULT_ORG_ID, DEFAULT_OUTPUTS, DEFAULT_STEPS, Engine } from './engine';
import { filesHandler } from './files-server';
import { newApiKey, uuid } from './ids';
import { FaultInjector, RateLimiter, RequestLog } from './infra';
import { seedDemo } from './seed';
import { Subscriptions } from './subscriptions';
import type { SandboxInfo } from './types';
import { ALL_FORMATS, ALL_SCOPES } from './types';

export { SandboxControl, SandboxControlError } from './control-client';
export type * from './types';
export {
	ALL_FORMATS,
	ALL_SCOPES,
	EVENT_TYPES,
	FINAL_RUN_STATUSES,
	REVIEW_TASK_STATUSES,
	TEST_PING_EVENT_TYPE,
} from './types';
export { detectFormat } from './formats';
export { filesOriginApiKeySightingsInProcess } from './infra';
export type { DeliveryRecord, SubscriptionInfo, SubscriptionInput } from './subscriptions';

export interface SandboxOptions {
	/** Default 127.0.0.1. */
	host?: string;
	/** Public API port; 0 (default) = random. */
	port?: number;
	/** File-link origin port; 0 (default) = random. */
	filesPort?: number;
	/** Control API port; 0 (default) = random. */
	controlPort?: number;
	/** The ready key's value (default: a new `dwk_` key). */
	apiKey?: string;
	/** The ready workflow's id (default: a new UUID). */
	defaultWorkflowId?: string;
	/** Also create demo workflows, documents, review tasks and events (again after each reset). */
	seedDemo?: boolean;
	/** Ticker period in ms (default 20). */
	tickMs?: number;
}

export interface Sandbox extends SandboxInfo {
	control: SandboxControl;
	/** In-process access to the state (tests in the same process only). */
	engine: Engine;
	/** In-process access to the subscriptions (e.g. to wait until every delivery is answered). */
	subscriptions: Subscriptions;
	stop(): Promise<void>;
}

function listen(server: Server, host: string, port: number): Promise<number> {
	return new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(port, host, () => {
			server.off('error', reject);
			resolve((server.address() as AddressInfo).port);
		});
	});
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
	const host = options.host ?? '127.0.0.1';
	const engine = new Engine();
	const log = new RequestLog();
	const faults = new FaultInjector();
	const limiter = new RateLimiter();
	const idempotency = new Map<string, 'in_flight' | 'completed'>();
	const tmpDir = mkdtempSync(join(tmpdir(), 'dw-sandbox-'));
	const linkSecret = randomBytes(32).toString('hex');
	const subscriptions = new Subscriptions(engine);
	engine.events.onCreated((rec) => subscriptions.onCreated(rec));

	const ids = {
		apiKey: options.apiKey ?? newApiKey(),
		apiKeyId: uuid(),
		workspaceId: uuid(),
		workflowId: options.defaultWorkflowId ?? uuid(),
	};
	const urls = { base: '', files: '', control: '' };

	const info = (): SandboxInfo => ({
		baseUrl: urls.base,
		fileBaseUrl: urls.files,
		controlUrl: urls.control,
		apiKey: ids.apiKey,
		apiKeyId: ids.apiKeyId,
		defaultOrgId: DEFAULT_ORG_ID,
		defaultWorkspaceId: ids.workspaceId,
		defaultWorkflowId: ids.workflowId,
	});

	const reset = (): void => {
		engine.clear();
		log.clear();
		faults.clear();
		limiter.clear();
		idempotency.clear();
		subscriptions.clear();
		engine.createOrg({
			id: DEFAULT_ORG_ID,
			name: 'Default organization',
			defaultWorkspaceId: ids.workspaceId,
		});
		engine.createKey({
			id: ids.apiKeyId,
			key: ids.apiKey,
			name: 'sandbox key (all scopes)',
			scopes: [...ALL_SCOPES],
			environment: 'prod',
		});
		engine.createWorkflow({
			id: ids.workflowId,
			name: 'Invoice extraction',
			environment: 'prod',
			triggerFormats: [...ALL_FORMATS],
			script: { steps: DEFAULT_STEPS },
			outputs: DEFAULT_OUTPUTS,
		});
		if (options.seedDemo) seedDemo(engine, tmpDir);
	};
	reset();

	const apiServer = createServer(
		apiHandler({
			engine,
			log,
			faults,
			limiter,
			tmpDir,
			linkSecret,
			idempotency,
			fileBaseUrl: () => urls.files,
		}),
	);
	const filesServer = createServer(filesHandler({ engine, log, faults, linkSecret }));
	const controlServer = createServer(
		controlHandler({ engine, log, faults, limiter, info, reset, subscriptions }),
	);
	for (const s of [apiServer, filesServer, controlServer]) {
		s.keepAliveTimeout = 5000;
		s.requestTimeout = 0; // 200 MB uploads may take a while
	}
	// Tests call the control API between polls that can take seconds: a connection kept longer than the
	// client waits between calls is never closed by the server just as the client reuses it (ECONNRESET).
	controlServer.keepAliveTimeout = 65_000;

	const apiPort = await listen(apiServer, host, options.port ?? 0);
	const filesPort = await listen(filesServer, host, options.filesPort ?? 0);
	const controlPort = await listen(controlServer, host, options.controlPort ?? 0);
	urls.base = `http://${host}:${apiPort}`;
	urls.files = `http://${host}:${filesPort}`;
	urls.control = `http://${host}:${controlPort}`;

	const ticker = setInterval(() => {
		try {
			engine.settle();
		} catch {
			/* a broken script must not stop the ticker */
		}
	}, options.tickMs ?? 20);
	ticker.unref();

	let stopped = false;
	const stop = async (): Promise<void> => {
		if (stopped) return;
		stopped = true;
		clearInterval(ticker);
		await Promise.all(
			[apiServer, filesServer, controlServer].map(
				(s) =>
					new Promise<void>((resolve) => {
						s.close(() => resolve());
						s.closeAllConnections();
					}),
			),
		);
		engine.clear();
		rmSync(tmpDir, { recursive: true, force: true });
	};

	return { ...info(), control: new SandboxControl(urls.control), engine, subscriptions, stop };
}
