/** The control API: JSON over HTTP for tests and the dev script (see control-client.ts for every route). */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Engine } from './engine';
import { DEFAULT_ORG_ID, EngineError, iso } from './engine';
import { uuid } from './ids';
import type { FaultInjector, RateLimiter, RequestLog } from './infra';
import type { Subscriptions } from './subscriptions';
import { subscriptionRoutes } from './subscriptions';
import type {
	ClockInfo,
	CreateEventsResult,
	Environment,
	EventInput,
	FaultRule,
	RateLimitsInput,
	RequestFilter,
	SandboxInfo,
	SandboxSettings,
} from './types';

export interface ControlDeps {
	engine: Engine;
	log: RequestLog;
	faults: FaultInjector;
	limiter: RateLimiter;
	info: () => SandboxInfo;
	reset: () => void;
	subscriptions: Subscriptions;
}

type Body = Record<string, unknown>;
type Handler = (params: string[], query: URLSearchParams, body: Body) => unknown;

class HttpError extends Error {
	constructor(
		readonly status: number,
		message: string,
	) {
		super(message);
	}
}

function readJson(req: IncomingMessage): Promise<Body> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			const text = Buffer.concat(chunks).toString('utf8');
			if (!text.trim()) return resolve({});
			try {
				const v: unknown = JSON.parse(text);
				resolve(v && typeof v === 'object' && !Array.isArray(v) ? (v as Body) : { value: v });
			} catch (e) {
				reject(new HttpError(400, `invalid JSON: ${(e as Error).message}`));
			}
		});
		req.on('error', reject);
	});
}

function clockInfo(engine: Engine): ClockInfo {
	const now = engine.now();
	return { now: iso(now), nowMs: now, offsetMs: engine.clock.offsetMs };
}

function opt(q: URLSearchParams, name: string): string | undefined {
	return q.get(name) ?? undefined;
}

export function controlHandler(
	deps: ControlDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
	const { engine, log, faults, limiter } = deps;
	const routes: Array<[string, RegExp, Handler]> = [
		['POST', /^\/reset$/, () => (deps.reset(), deps.info())],
		['GET', /^\/info$/, () => deps.info()],
		[
			'PUT',
			/^\/settings$/,
			(_p, _q, b) => {
				const s = b as SandboxSettings;
				for (const k of [
					'eventCommitDelayMs',
					'originalLinkTtlMs',
					'maxOutputBytes',
					'eventPageLatencyMs',
					'eventPageClockAdvanceMs',
				] as const) {
					if (s[k] !== undefined) engine.settings[k] = Number(s[k]);
				}
				if (s.sendDateHeader !== undefined)
					engine.settings.sendDateHeader = s.sendDateHeader !== false;
				if (s.runEventsNameRun !== undefined)
					engine.settings.runEventsNameRun = s.runEventsNameRun !== false;
				return engine.settings;
			},
		],
		// orgs, workspaces, keys
		['POST', /^\/orgs$/, (_p, _q, b) => engine.orgInfo(engine.createOrg(b))],
		['GET', /^\/orgs\/([^/]+)$/, ([id]) => engine.orgInfo(engine.org(id!))],
		[
			'PATCH',
			/^\/orgs\/([^/]+)$/,
			([id], _q, b) => {
				const o = engine.org(id!);
				if (typeof b.name === 'string') o.name = b.name;
				if (typeof b.apiAccess === 'boolean') o.apiAccess = b.apiAccess;
				return engine.orgInfo(o);
			},
		],
		[
			'POST',
			/^\/orgs\/([^/]+)\/workspaces$/,
			([id], _q, b) => {
				const o = engine.org(id!);
				const wsId = uuid();
				const ws = {
					id: wsId,
					name: typeof b.name === 'string' ? b.name : 'Workspace',
					isDefault: false,
				};
				o.workspaces.set(wsId, ws);
				return ws;
			},
		],
		['POST', /^\/keys$/, (_p, _q, b) => engine.keyInfo(engine.createKey(b))],
		[
			'GET',
			/^\/keys$/,
			(_p, q) =>
				[...engine.keysById.values()]
					.filter((k) => !q.get('orgId') || k.orgId === q.get('orgId'))
					.map((k) => engine.keyInfo(k)),
		],
		['PATCH', /^\/keys\/([^/]+)$/, ([id], _q, b) => engine.keyInfo(engine.updateKey(id!, b))],
		['DELETE', /^\/keys\/([^/]+)$/, ([id]) => (engine.deleteKey(id!), { deleted: true })],
		// workflows
		['POST', /^\/workflows$/, (_p, _q, b) => engine.workflowInfo(engine.createWorkflow(b))],
		[
			'GET',
			/^\/workflows$/,
			() => [...engine.workflows.values()].map((w) => engine.workflowInfo(w)),
		],
		['GET', /^\/workflows\/([^/]+)$/, ([id]) => engine.workflowInfo(engine.workflow(id!))],
		[
			'PATCH',
			/^\/workflows\/([^/]+)$/,
			([id], _q, b) => engine.workflowInfo(engine.updateWorkflow(id!, b)),
		],
		[
			'POST',
			/^\/workflows\/([^/]+)\/next-scripts$/,
			([id], _q, b) =>
				engine.workflowInfo(engine.setNextScripts(id!, b.script as never, Number(b.count ?? 1))),
		],
		[
			'DELETE',
			/^\/workflows\/([^/]+)\/next-scripts$/,
			([id]) => engine.workflowInfo(engine.clearNextScripts(id!)),
		],
		// documents and runs
		[
			'GET',
			/^\/documents\/count$/,
			(_p, q) => ({ count: [...engine.documents.values()].filter((d) => docMatch(d, q)).length }),
		],
		[
			'GET',
			/^\/documents$/,
			(_p, q) =>
				[...engine.documents.values()]
					.filter((d) => docMatch(d, q))
					.map((d) => engine.documentInfo(d)),
		],
		['GET', /^\/documents\/([^/]+)$/, ([id]) => engine.documentInfo(engine.document(id!))],
		[
			'POST',
			/^\/documents\/([^/]+)\/start$/,
			([id], _q, b) => engine.runInfo(engine.startDocument(id!, b.script as never)),
		],
		[
			'POST',
			/^\/documents\/([^/]+)\/runs$/,
			([id], _q, b) => engine.runInfo(engine.addRun(id!, b)),
		],
		[
			'GET',
			/^\/runs$/,
			(_p, q) =>
				[...engine.runs.values()]
					.filter(
						(r) =>
							(!q.get('documentId') || r.documentId === q.get('documentId')) &&
							(!q.get('workflowId') || r.workflowId === q.get('workflowId')),
					)
					.map((r) => engine.runInfo(r)),
		],
		['GET', /^\/runs\/([^/]+)$/, ([id]) => engine.runInfo(engine.run(id!))],
		['PATCH', /^\/runs\/([^/]+)$/, ([id], _q, b) => engine.runInfo(engine.setRunState(id!, b))],
		['POST', /^\/runs\/([^/]+)\/advance$/, ([id]) => engine.runInfo(engine.advanceRun(id!))],
		// review tasks
		[
			'GET',
			/^\/review-tasks$/,
			(_p, q) =>
				engine
					.tasksNewestFirst()
					.filter(
						(t) =>
							(!q.get('runId') || t.matchRunIds.includes(q.get('runId')!)) &&
							(!q.get('workflowId') || t.workflowId === q.get('workflowId')) &&
							(!q.get('status') || t.status === q.get('status')) &&
							(!q.get('orgId') || t.orgId === q.get('orgId')),
					)
					.map((t) => engine.taskInfo(t)),
		],
		[
			'POST',
			/^\/review-tasks\/([^/]+)\/decide$/,
			([id], _q, b) => engine.taskInfo(engine.decideTask(id!, b.decision as 'approved')),
		],
		[
			'PATCH',
			/^\/review-tasks\/([^/]+)$/,
			([id], _q, b) => engine.taskInfo(engine.setTaskStatus(id!, String(b.status))),
		],
		// clock
		['GET', /^\/clock$/, () => clockInfo(engine)],
		[
			'POST',
			/^\/clock\/advance$/,
			(_p, _q, b) => {
				const ms = Number(b.ms);
				if (!Number.isFinite(ms) || ms < 0) throw new HttpError(400, 'ms must be a number >= 0');
				engine.clock.offsetMs += ms;
				engine.settle();
				return clockInfo(engine);
			},
		],
		// rate limits, faults
		[
			'PUT',
			/^\/rate-limits$/,
			(_p, _q, b) => {
				const input = b as RateLimitsInput;
				const orgId = input.orgId ?? DEFAULT_ORG_ID;
				engine.org(orgId);
				return limiter.set(orgId, input);
			},
		],
		[
			'PUT',
			/^\/faults$/,
			(_p, _q, b) => {
				faults.clear();
				for (const r of (b.rules ?? []) as FaultRule[]) faults.add(r);
				return faults.list();
			},
		],
		['POST', /^\/faults$/, (_p, _q, b) => faults.add(b as unknown as FaultRule)],
		['GET', /^\/faults$/, () => faults.list()],
		['DELETE', /^\/faults$/, () => (faults.clear(), { cleared: true })],
		// request log
		[
			'GET',
			/^\/requests$/,
			(_p, q) => {
				const f: RequestFilter = {
					origin: opt(q, 'origin') as RequestFilter['origin'],
					method: opt(q, 'method'),
					pathPrefix: opt(q, 'pathPrefix'),
					afterSeq: q.get('afterSeq') !== null ? Number(q.get('afterSeq')) : undefined,
				};
				return log.list(f);
			},
		],
		['DELETE', /^\/requests$/, () => (log.clear(), { cleared: true })],
		['GET', /^\/files-origin$/, () => ({ sawApiKey: log.sawApiKeyOnFiles })],
		// events
		[
			'GET',
			/^\/events$/,
			(_p, q) => {
				const now = engine.now();
				return engine.events
					.all(
						{
							orgId: opt(q, 'orgId'),
							environment: opt(q, 'environment') as Environment | undefined,
							type: opt(q, 'type'),
							includeUncommitted: q.get('includeUncommitted') !== 'false',
						},
						now,
					)
					.map((e) => engine.eventInfo(e, now));
			},
		],
		[
			'POST',
			/^\/events\/bulk$/,
			(_p, _q, b): CreateEventsResult => {
				const orgId = typeof b.orgId === 'string' ? b.orgId : DEFAULT_ORG_ID;
				engine.org(orgId);
				const list = (Array.isArray(b.events) ? b.events : []) as EventInput[];
				const now = engine.now();
				const items = list.map((e) => {
					const createdOnMs = e.createdOn ? Date.parse(e.createdOn) : now;
					if (Number.isNaN(createdOnMs))
						throw new HttpError(400, `invalid createdOn ${e.createdOn}`);
					const env = e.environment ?? 'prod';
					if (env !== 'dev' && env !== 'prod')
						throw new HttpError(400, `invalid environment ${String(env)}`);
					return {
						type: String(e.type),
						createdOnMs,
						environment: env,
						data: e.data ?? {},
						orgId,
						commitDelayMs: Number(e.commitDelayMs ?? 0),
					};
				});
				const recs = engine.events.createMany(items);
				return {
					count: recs.length,
					firstId: recs[0]?.id ?? null,
					lastId: recs[recs.length - 1]?.id ?? null,
					...(b.returnIds ? { ids: recs.map((r) => r.id) } : {}),
				};
			},
		],
		// subscriptions (subscriptions.ts)
		...subscriptionRoutes(deps.subscriptions),
	];

	function docMatch(d: { orgId: string; workflowId: string }, q: URLSearchParams): boolean {
		return (
			(!q.get('orgId') || d.orgId === q.get('orgId')) &&
			(!q.get('workflowId') || d.workflowId === q.get('workflowId'))
		);
	}

	return (req, res) => {
		void (async () => {
			const url = new URL(req.url ?? '/', 'http://control.local');
			const method = (req.method ?? 'GET').toUpperCase();
			let status = 200;
			let out: unknown;
			try {
				const body = await readJson(req);
				engine.settle();
				let found = false;
				let pathKnown = false;
				for (const [m, re, h] of routes) {
					const match = re.exec(url.pathname);
					if (!match) continue;
					pathKnown = true;
					if (m !== method) continue;
					found = true;
					out = h(
						match.slice(1).map((s) => decodeURIComponent(s)),
						url.searchParams,
						body,
					);
					break;
				}
				if (!found)
					throw new HttpError(pathKnown ? 405 : 404, `no control route ${method} ${url.pathname}`);
			} catch (e) {
				status = e instanceof HttpError || e instanceof EngineError ? e.status : 400;
				out = { error: (e as Error).message };
			}
			const text = JSON.stringify(out ?? null);
			res.writeHead(status, {
				'Content-Type': 'application/json; charset=utf-8',
				'Content-Length': Buffer.byteLength(text),
			});
			res.end(text);
		})();
	};
}
