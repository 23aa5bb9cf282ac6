/**
 * The public API origin (`baseUrl`).
 *
 * Order of checks for every request: faults → key (401) → plan API access (403) →
 * `X-Workspace-Id` (404 when not a workspace of the key's org) → route (404/405) → scope
 * (403) → rate limit of the route's class (429) → the operation.
 *
 * Path ids that are not UUIDs answer 404 (a choice; the spec is silent): the resource
 * cannot exist. Resources of another org or workspace answer 404 too.
 */
import busboy from 'busboy';
import { createHash, createHmac } from 'node:crypto';
import { createWriteStream, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';

import type {
	DocumentRec,
	Engine,
	KeyRec,
	OrgRec,
	RunRec,
	StoredFile,
	WorkflowRec,
} from './engine';
import { iso } from './engine';
import { detectFormat } from './formats';
import { Ctx, applyFaults, header, pause } from './http-util';
import { isUuid, uuid } from './ids';
import type { FaultInjector, RateClass, RateLimiter, RequestLog } from './infra';
import { retryAfterHeader } from './infra';
import type { OutputNode, Scope } from './types';
import { EVENT_TYPES, REVIEW_TASK_STATUSES } from './types';

export interface ApiDeps {
	engine: Engine;
	log: RequestLog;
	faults: FaultInjector;
	limiter: RateLimiter;
	tmpDir: string;
	linkSecret: string;
	fileBaseUrl: () => string;
	/** Idempotency markers: `${orgId}|${key}` → state. */
	idempotency: Map<string, 'in_flight' | 'completed'>;
}

interface Auth {
	key: KeyRec;
	org: OrgRec;
	workspaceId: string;
}

type Handler = (ctx: Ctx, auth: Auth, params: string[], deps: ApiDeps) => void | Promise<void>;

interface Route {
	method: string;
	re: RegExp;
	scope: Scope;
	cls: RateClass;
	handler: Handler;
}

const HEAD_BYTES = 4096;

export function signLink(secret: string, documentId: string, expiresMs: number): string {
	return createHmac('sha256', secret).update(`${documentId}.${expiresMs}`).digest('base64url');
}

function inScope<T extends { orgId: string; workspaceId: string }>(
	r: T | undefined,
	auth: Auth,
): r is T {
	return !!r && r.orgId === auth.org.id && r.workspaceId === auth.workspaceId;
}

/** A path id: non-UUIDs never match (404). */
function lookup<T>(map: Map<string, T>, id: string | undefined): T | undefined {
	if (!isUuid(id)) return undefined;
	return map.get(id) ?? map.get(id.toLowerCase());
}

function safeDecode(s: string): string {
	try {
		return decodeURIComponent(s);
	} catch {
		return s;
	}
}

// ---------------------------------------------------------------- paging helpers

function parseIntParam(v: string | null): number | null | 'bad' {
	if (v === null) return null;
	if (!/^-?\d+$/.test(v.trim())) return 'bad';
	const n = Number(v.trim());
	return Number.isSafeInteger(n) ? n : 'bad';
}

/** page/pageSize: defaults 1 and 20; 400 for page < 1, pageSize outside 1..100, non-integers. */
function paging(ctx: Ctx, errors: Record<string, string[]>): { page: number; pageSize: number } {
	const p = parseIntParam(ctx.url.searchParams.get('page'));
	const s = parseIntParam(ctx.url.searchParams.get('pageSize'));
	let page = 1;
	let pageSize = 20;
	if (p === 'bad' || (typeof p === 'number' && p < 1))
		errors.page = ['page must be an integer of at least 1.'];
	else if (typeof p === 'number') page = p;
	if (s === 'bad' || (typeof s === 'number' && (s < 1 || s > 100)))
		errors.pageSize = ['pageSize must be an integer from 1 to 100.'];
	else if (typeof s === 'number') pageSize = s;
	return { page, pageSize };
}

function envelope(ctx: Ctx, count: number, page: number, pageSize: number, data: unknown[]): void {
	ctx.json(200, { count, pages: Math.ceil(count / pageSize), data });
}

// ---------------------------------------------------------------- handlers

const getWorkflow: Handler = async (ctx, auth, [id], { engine }) => {
	const wf = lookup(engine.workflows, id);
	if (!inScope(wf, auth)) return ctx.problem(404, `Workflow ${id} was not found.`);
	ctx.json(200, engine.workflowJson(wf));
};

function findRun(engine: Engine, id: string | undefined, auth: Auth): RunRec | undefined {
	const r = lookup(engine.runs, id);
	return inScope(r, auth) && r.started ? r : undefined;
}

const getRun: Handler = async (ctx, auth, [id], { engine }) => {
	const run = findRun(engine, id, auth);
	if (!run)
		return ctx.problem(
			404,
			`Run ${id} was not found. A run can answer 404 briefly before it is created, and for good if it never starts: the document's status then says why.`,
		);
	ctx.json(200, engine.runJson(run));
};

function outputSize(n: OutputNode): number {
	if (n.sizeBytes !== undefined) return n.sizeBytes;
	if (n.kind === 'binary') return Buffer.from(n.base64 ?? '', 'base64').length;
	if (n.kind === 'text') return Buffer.byteLength(String(n.value ?? ''));
	return Buffer.byteLength(JSON.stringify(n.value ?? null));
}

function outputValue(n: OutputNode): { isBase64: boolean; output: unknown } {
	if (n.kind === 'binary') {
		if (n.base64 !== undefined && n.sizeBytes === undefined)
			return { isBase64: true, output: n.base64 };
		const size = n.sizeBytes ?? 0;
		const buf = Buffer.allocUnsafe(size);
		for (let i = 0; i < size; i++) buf[i] = i % 251;
		return { isBase64: true, output: buf.toString('base64') };
	}
	if (n.kind === 'text') {
		if (n.sizeBytes !== undefined && n.value === undefined)
			return { isBase64: false, output: 'a'.repeat(n.sizeBytes) };
		return { isBase64: false, output: String(n.value ?? '') };
	}
	if (n.sizeBytes !== undefined && n.value === undefined) {
		return { isBase64: false, output: { data: 'x'.repeat(Math.max(0, n.sizeBytes - 11)) } };
	}
	return { isBase64: false, output: n.value ?? null };
}

const DEFAULT_CT: Record<OutputNode['kind'], string> = {
	json: 'application/json',
	text: 'text/plain',
	binary: 'application/octet-stream',
};
const DEFAULT_EXT: Record<OutputNode['kind'], string> = {
	json: 'json',
	text: 'txt',
	binary: 'bin',
};

/**
 * GET /runs/{id}/output[?nodeId]. Without nodeId the most recently started Download Output
 * node answers: the last node of the run's output list. Order of checks: run 404, nodeId 404,
 * not completed 409, no output 409, too large 413.
 */
const getOutput: Handler = async (ctx, auth, [id], { engine }) => {
	const run = findRun(engine, id, auth);
	if (!run) return ctx.problem(404, `Run ${id} was not found.`);
	const nodeId = ctx.url.searchParams.get('nodeId');
	let node: OutputNode | undefined;
	if (nodeId !== null) {
		node = run.outputs.find((n) => n.nodeId === nodeId);
		if (!node) {
			return ctx.problem(
				404,
				`Node '${nodeId}' is not a Download Output node of the graph run ${run.id} executed.`,
				{
					errors: {
						nodeId: [`Known nodes: ${run.outputs.map((n) => n.nodeId).join(', ') || '(none)'}`],
					},
				},
			);
		}
	} else {
		node = run.outputs[run.outputs.length - 1];
	}
	if (run.status !== 'completed')
		return ctx.problem(
			409,
			`Run ${run.id} has not completed (status '${run.status}'); its output can be read once it has.`,
		);
	if (!node) return ctx.problem(409, `Run ${run.id} captured no output.`);
	const size = outputSize(node);
	const max = engine.settings.maxOutputBytes;
	if (size > max)
		return ctx.problem(
			413,
			`The output of node '${node.nodeId}' is ${size} bytes, more than the ${max} bytes that can be returned inline.`,
		);
	const v = outputValue(node);
	ctx.json(200, {
		contentType: node.contentType ?? DEFAULT_CT[node.kind],
		filename: node.filename ?? `${node.nodeId}.${DEFAULT_EXT[node.kind]}`,
		isBase64: v.isBase64,
		output: v.output,
	});
};

function findDoc(engine: Engine, id: string | undefined, auth: Auth): DocumentRec | undefined {
	const d = lookup(engine.documents, id);
	return inScope(d, auth) ? d : undefined;
}

const getDocument: Handler = async (ctx, auth, [id], { engine }) => {
	const d = findDoc(engine, id, auth);
	if (!d) return ctx.problem(404, `Document ${id} was not found.`);
	ctx.json(200, engine.documentJson(d));
};

const getDocumentRuns: Handler = async (ctx, auth, [id], { engine }) => {
	const d = findDoc(engine, id, auth);
	if (!d) return ctx.problem(404, `Document ${id} was not found.`);
	ctx.json(200, { data: engine.documentRuns(d).map((r) => engine.runListItem(r)) });
};

const getOriginal: Handler = async (ctx, auth, [id], deps) => {
	const d = findDoc(deps.engine, id, auth);
	if (!d) return ctx.problem(404, `Document ${id} was not found.`);
	const expiresMs = deps.engine.now() + deps.engine.settings.originalLinkTtlMs;
	const sig = signLink(deps.linkSecret, d.id, expiresMs);
	ctx.json(200, {
		url: `${deps.fileBaseUrl()}/files/${d.id}?expires=${expiresMs}&sig=${sig}`,
		expiresOn: iso(expiresMs),
	});
};

const listReviewTasks: Handler = async (ctx, auth, _p, { engine }) => {
	const q = ctx.url.searchParams;
	const errors: Record<string, string[]> = {};
	const { page, pageSize } = paging(ctx, errors);
	const status = q.get('status');
	if (status !== null && !(REVIEW_TASK_STATUSES as readonly string[]).includes(status)) {
		errors.status = [`status must be one of: ${REVIEW_TASK_STATUSES.join(', ')}.`];
	}
	const workflowId = q.get('workflowId');
	if (workflowId !== null && !isUuid(workflowId))
		errors.workflowId = ['workflowId must be a UUID.'];
	const runId = q.get('runId');
	if (runId !== null && !isUuid(runId)) errors.runId = ['runId must be a UUID.'];
	if (Object.keys(errors).length)
		return ctx.problem(400, `Invalid query: ${Object.values(errors).flat().join(' ')}`, { errors });
	const all = engine
		.tasksNewestFirst()
		.filter(
			(t) =>
				inScope(t, auth) &&
				(status === null || t.status === status) &&
				(workflowId === null || t.workflowId === workflowId.toLowerCase()) &&
				(runId === null || t.matchRunIds.includes(runId.toLowerCase())),
		);
	const pages = Math.ceil(all.length / pageSize);
	if (page > Math.max(pages, 1)) {
		return ctx.problem(
			400,
			`page ${page} is too large: there ${pages === 1 ? 'is 1 page' : `are ${pages} pages`} of ${pageSize}.`,
			{
				errors: { page: [`page must be at most ${Math.max(pages, 1)}.`] },
			},
		);
	}
	const slice = all.slice((page - 1) * pageSize, page * pageSize).map((t) => engine.taskJson(t));
	envelope(ctx, all.length, page, pageSize, slice);
};

const getReviewTask: Handler = async (ctx, auth, [id], { engine }) => {
	const t = lookup(engine.tasks, id);
	if (!inScope(t, auth)) return ctx.problem(404, `Review task ${id} was not found.`);
	ctx.json(200, engine.taskJson(t));
};

/** Events are per organization and environment (the key's); the workspace header does not filter them. */
const listEvents: Handler = async (ctx, auth, _p, { engine }) => {
	const q = ctx.url.searchParams;
	const errors: Record<string, string[]> = {};
	const { page, pageSize } = paging(ctx, errors);
	const type = q.get('type');
	if (type !== null && !(EVENT_TYPES as readonly string[]).includes(type))
		errors.type = [`type must be one of: ${EVENT_TYPES.join(', ')}.`];
	const after = q.get('after');
	if (after !== null && !isUuid(after)) errors.after = ['after must be an event id (UUID).'];
	if (Object.keys(errors).length)
		return ctx.problem(400, `Invalid query: ${Object.values(errors).flat().join(' ')}`, { errors });
	if (engine.settings.eventPageLatencyMs > 0) await pause(engine.settings.eventPageLatencyMs);
	const r = engine.events.query(
		auth.org.id,
		auth.key.environment,
		{ after: after ?? undefined, type: type ?? undefined, page, pageSize },
		engine.now(),
	);
	const pages = Math.ceil(r.count / pageSize);
	if (page > Math.max(pages, 1)) {
		return ctx.problem(400, `page ${page} is too large: there are ${pages} pages of ${pageSize}.`, {
			errors: { page: [`page must be at most ${Math.max(pages, 1)}.`] },
		});
	}
	envelope(
		ctx,
		r.count,
		page,
		pageSize,
		r.items.map((e) => engine.eventJson(e)),
	);
	if (engine.settings.eventPageClockAdvanceMs > 0) {
		engine.clock.offsetMs += engine.settings.eventPageClockAdvanceMs;
		engine.settle();
	}
};

/**
 * POST /workflows/{id}/trigger. The idempotency marker is taken before the body is read
 * (so a second request with the key while the first is uploading gets 409), released on
 * any non-2xx answer or an aborted upload, and kept forever after a 2xx (also when the
 * response was then dropped by a `dropAfterProcess` fault).
 */
const trigger: Handler = async (ctx, auth, [id], deps) => {
	const idem = header(ctx.req, 'idempotency-key');
	let markerKey: string | null = null;
	if (idem !== undefined && isUuid(idem.trim())) {
		const k = `${auth.org.id}|${idem.trim().toLowerCase()}`;
		const state = deps.idempotency.get(k);
		if (state) {
			return ctx.problem(
				409,
				state === 'in_flight'
					? `A request with Idempotency-Key ${idem.trim()} is still being processed.`
					: `A request with Idempotency-Key ${idem.trim()} has already completed; use a new key for a new document.`,
			);
		}
		deps.idempotency.set(k, 'in_flight');
		markerKey = k;
	}
	try {
		await runTrigger(ctx, auth, id, deps);
	} finally {
		if (markerKey) {
			const s = ctx.sentStatus;
			if (s !== null && s >= 200 && s < 300) deps.idempotency.set(markerKey, 'completed');
			else deps.idempotency.delete(markerKey);
		}
	}
};

async function runTrigger(
	ctx: Ctx,
	auth: Auth,
	id: string | undefined,
	deps: ApiDeps,
): Promise<void> {
	const { engine } = deps;
	const wf: WorkflowRec | undefined = lookup(engine.workflows, id);
	if (!inScope(wf, auth)) return ctx.problem(404, `Workflow ${id} was not found.`);
	const ct = header(ctx.req, 'content-type') ?? '';
	if (!/^multipart\/form-data/i.test(ct)) {
		return ctx.problem(
			400,
			'The request must be multipart/form-data with the document in the form field "file".',
			{
				errors: { file: ['The form field "file" is required.'] },
			},
		);
	}
	let bb: busboy.Busboy;
	try {
		bb = busboy({ headers: ctx.req.headers, defParamCharset: 'utf8' });
	} catch (e) {
		return ctx.problem(400, `Malformed multipart request: ${(e as Error).message}`);
	}
	await new Promise<void>((resolve) => {
		let settled = false;
		let fileSeen = false;
		let rejection: { detail: string; errors: Record<string, string[]> } | null = null;
		let stored: Promise<StoredFile> | null = null;
		let tmpPath: string | null = null;
		let reference: string | null = null;
		const cleanup = (): void => {
			if (tmpPath) rmSync(tmpPath, { force: true });
		};
		const finish = (p: Promise<void> | void): void => {
			if (settled) return;
			settled = true;
			void Promise.resolve(p).finally(resolve);
		};
		ctx.req.on('close', () => {
			if (!ctx.req.complete && !settled) {
				// Client went away mid-upload: nothing is created, the key is released.
				cleanup();
				finish();
			}
		});
		bb.on('file', (name, stream, info) => {
			if (name !== 'file' || fileSeen) {
				stream.resume();
				return;
			}
			fileSeen = true;
			const format = detectFormat(info.filename, info.mimeType);
			if (!format || !wf.triggerFormats.includes(format)) {
				const accepted = wf.triggerFormats.length
					? wf.triggerFormats.join(', ')
					: 'none (the workflow has no API trigger)';
				rejection = {
					detail: format
						? `The document format '${format}' (file '${info.filename}', ${info.mimeType}) is not accepted by workflow ${wf.id}. Accepted triggerFormats: ${accepted}.`
						: `The format of file '${info.filename}' (${info.mimeType}) could not be recognised. Accepted triggerFormats: ${accepted}.`,
					errors: { file: [`Accepted triggerFormats: ${accepted}.`] },
				};
				stream.resume();
				return;
			}
			const path = join(deps.tmpDir, uuid());
			tmpPath = path;
			const hash = createHash('sha256');
			const head: Buffer[] = [];
			let headLen = 0;
			let size = 0;
			const out = createWriteStream(path);
			stream.on('data', (chunk: Buffer) => {
				hash.update(chunk);
				size += chunk.length;
				if (headLen < HEAD_BYTES) {
					const part = chunk.subarray(0, HEAD_BYTES - headLen);
					head.push(Buffer.from(part));
					headLen += part.length;
				}
			});
			stored = new Promise<StoredFile>((res, rej) => {
				out.on('finish', () =>
					res({
						filename: info.filename ?? '',
						contentType: info.mimeType,
						format,
						sizeBytes: size,
						sha256: hash.digest('hex'),
						head: Buffer.concat(head),
						filePath: path,
					}),
				);
				out.on('error', rej);
				stream.on('error', rej);
			});
			stored.catch(() => undefined);
			stream.pipe(out);
		});
		bb.on('field', (name, value) => {
			if (name === 'reference') reference = value;
		});
		bb.on('error', (err: Error) => {
			cleanup();
			finish(ctx.problem(400, `Malformed multipart request: ${err.message}`));
		});
		bb.on('close', () => {
			finish(
				(async () => {
					if (rejection) {
						cleanup();
						return ctx.problem(400, rejection.detail, { errors: rejection.errors });
					}
					if (!fileSeen || !stored) {
						cleanup();
						return ctx.problem(400, 'The form field "file" (the document) is required.', {
							errors: { file: ['The form field "file" is required.'] },
						});
					}
					let file: StoredFile;
					try {
						file = await stored;
					} catch (e) {
						cleanup();
						return ctx.problem(400, `The upload could not be read: ${(e as Error).message}`);
					}
					engine.settle();
					const result = engine.trigger(wf, file, reference);
					ctx.json(202, result);
				})(),
			);
		});
		ctx.req.pipe(bb);
	});
}

const ROUTES: Route[] = [
	{
		method: 'POST',
		re: /^\/workflows\/([^/]+)\/trigger$/,
		scope: 'workflows:trigger',
		cls: 'triggers',
		handler: trigger,
	},
	{
		method: 'GET',
		re: /^\/workflows\/([^/]+)$/,
		scope: 'workflows:read',
		cls: 'reads',
		handler: getWorkflow,
	},
	{ method: 'GET', re: /^\/runs\/([^/]+)$/, scope: 'runs:read', cls: 'reads', handler: getRun },
	{
		method: 'GET',
		re: /^\/runs\/([^/]+)\/output$/,
		scope: 'runs:read',
		cls: 'reads',
		handler: getOutput,
	},
	{
		method: 'GET',
		re: /^\/documents\/([^/]+)$/,
		scope: 'documents:read',
		cls: 'reads',
		handler: getDocument,
	},
	{
		method: 'GET',
		re: /^\/documents\/([^/]+)\/runs$/,
		scope: 'runs:read',
		cls: 'reads',
		handler: getDocumentRuns,
	},
	{
		method: 'GET',
		re: /^\/documents\/([^/]+)\/original$/,
		scope: 'documents:read',
		cls: 'originals',
		handler: getOriginal,
	},
	{
		method: 'GET',
		re: /^\/review-tasks$/,
		scope: 'reviews:read',
		cls: 'reads',
		handler: listReviewTasks,
	},
	{
		method: 'GET',
		re: /^\/review-tasks\/([^/]+)$/,
		scope: 'reviews:read',
		cls: 'reads',
		handler: getReviewTask,
	},
	{ method: 'GET', re: /^\/events$/, scope: 'events:read', cls: 'reads', handler: listEvents },
];

/** The key check: 401 (missing, invalid, deactivated, expired), 403 (no API access), 404 (unknown workspace). */
function authenticate(ctx: Ctx, engine: Engine): Auth | Promise<void> {
	const value = header(ctx.req, 'x-api-key')?.trim();
	if (!value) return ctx.problem(401, 'The X-Api-Key header is missing.');
	const key = engine.keysByValue.get(value);
	if (!key) return ctx.problem(401, 'The API key is invalid (unknown or deleted).');
	if (!key.active) return ctx.problem(401, 'The API key is deactivated.');
	if (key.expiresOnMs !== null && engine.now() >= key.expiresOnMs) {
		return ctx.problem(401, `The API key expired on ${iso(key.expiresOnMs)}.`);
	}
	const org = engine.orgs.get(key.orgId);
	if (!org) return ctx.problem(401, 'The API key is invalid (its organization no longer exists).');
	if (!org.apiAccess)
		return ctx.problem(403, "The organization's plan does not include API access.");
	const ws = header(ctx.req, 'x-workspace-id')?.trim();
	let workspaceId = org.defaultWorkspaceId;
	if (ws) {
		const found = [...org.workspaces.keys()].find((w) => w.toLowerCase() === ws.toLowerCase());
		if (!found) return ctx.problem(404, `Workspace ${ws} was not found in this organization.`);
		workspaceId = found;
	}
	return { key, org, workspaceId };
}

export function apiHandler(deps: ApiDeps): (req: IncomingMessage, res: ServerResponse) => void {
	return (req, res) => {
		void handle(req, res, deps).catch((err: unknown) => {
			if (!res.headersSent) {
				res.writeHead(500, { 'Content-Type': 'application/problem+json' });
				res.end(
					JSON.stringify({ status: 500, title: 'Internal Server Error', detail: String(err) }),
				);
			}
		});
	};
}

async function handle(req: IncomingMessage, res: ServerResponse, deps: ApiDeps): Promise<void> {
	const { engine } = deps;
	engine.settle();
	const ctx = new Ctx(req, res, 'api', deps.log, engine);
	try {
		// No await before the trigger's idempotency marker unless a fault fires: keeps "in flight" exact.
		if (deps.faults.size > 0 && (await applyFaults(ctx, deps.faults))) return;
		const auth = authenticate(ctx, engine);
		if (auth instanceof Promise) return await auth;
		const path = ctx.url.pathname;
		const method = ctx.entry.method;
		let params: string[] | null = null;
		let route: Route | undefined;
		let pathKnown = false;
		for (const r of ROUTES) {
			const m = r.re.exec(path);
			if (!m) continue;
			pathKnown = true;
			if (r.method === method) {
				route = r;
				params = m.slice(1).map(safeDecode);
				break;
			}
		}
		if (!route || !params) {
			if (pathKnown) return await ctx.problem(405, `Method ${method} is not allowed on ${path}.`);
			return await ctx.problem(404, `No operation at ${method} ${path}.`);
		}
		if (!auth.key.scopes.has(route.scope)) {
			return await ctx.problem(
				403,
				`The API key lacks the scope '${route.scope}' that this operation requires.`,
			);
		}
		const rate = deps.limiter.take(auth.org.id, route.cls, engine.now());
		if (!rate.ok) {
			const retryAfter = retryAfterHeader(rate.retryAfterMs, rate.format);
			return await ctx.problem(
				429,
				`The plan's ${route.cls.replace(/s$/, '')} rate limit is exceeded; retry after ${Math.max(1, Math.ceil(rate.retryAfterMs / 1000))} s.`,
				{
					headers: { 'Retry-After': retryAfter },
				},
			);
		}
		await route.handler(ctx, auth, params, deps);
	} catch (err) {
		if (!ctx.finished) await ctx.problem(500, `Sandbox error: ${(err as Error).message}`);
	}
}
