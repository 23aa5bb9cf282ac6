/**
 * The one way both nodes talk to the Document Workflow API.
 *
 * Every request goes through `apiRequest`: it builds the URL from the credential's
 * `baseUrl`, refuses path ids that are not UUIDs before anything is sent, authenticates
 * through n8n's `httpRequestWithAuthentication`, waits out `429 Retry-After` per rate
 * limit (reads, triggers and original-file downloads are limited separately), retries
 * what is safe to retry, and turns error responses into `NodeApiError`s that say what
 * happened and what to do. The API key never passes through this module's hands: n8n
 * adds it in the credential's `authenticate`, and errors are built from a clean object,
 * never from the request that carried the key.
 */
import { createHash } from 'node:crypto';
import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
	INode,
	IPollFunctions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError, sleep } from 'n8n-workflow';

export const CREDENTIAL_TYPE = 'documentWorkflowApi';

/** The contexts that may call the API: the action node and the polling trigger. */
export type ApiContext = IExecuteFunctions | IPollFunctions;

/** Which of the API's separate rate limits a request counts against. */
export type RateLimitClass = 'read' | 'trigger' | 'original';

export interface ApiRequest {
	method: IHttpRequestMethods;
	/** Path template with `{name}` placeholders, e.g. `/runs/{runId}/output`. */
	path: string;
	/** Values for the placeholders; each must be a UUID. */
	pathParams?: Record<string, string>;
	qs?: IDataObject;
	body?: unknown;
	/**
	 * Builds the body afresh for each attempt; use it instead of `body` when the body is a
	 * stream, which can be sent only once (a retry would otherwise send nothing).
	 */
	bodyFactory?: () => Promise<unknown>;
	headers?: Record<string, string>;
	/** Defaults to `read` for GET and `trigger` for POST. */
	rateLimit?: RateLimitClass;
	/** Sent as `Idempotency-Key`; a POST is retried after 5xx or a lost connection only with one. */
	idempotencyKey?: string;
	/** Item the request is for, so errors point at it. */
	itemIndex?: number;
}

export interface RetryPolicy {
	/** Attempts after the first one for 5xx and network errors (safe requests only). */
	maxRetries: number;
	/** Backoff: full jitter over min(cap, base * 2^attempt). */
	baseDelayMs: number;
	maxDelayMs: number;
	/** The longest single `Retry-After` wait accepted; a longer one fails with a clear error. */
	maxRetryAfterMs: number;
	/** How many 429s in a row one request tolerates. */
	max429Retries: number;
	/** Absolute time (ms since epoch) after which no wait may end; e.g. a poll budget. */
	deadline?: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
	maxRetries: 4,
	baseDelayMs: 500,
	maxDelayMs: 10_000,
	maxRetryAfterMs: 120_000,
	max429Retries: 20,
};

export interface ApiResponse<T> {
	body: T;
	statusCode: number;
	headers: Record<string, string>;
	correlationId?: string;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
	return typeof value === 'string' && UUID_PATTERN.test(value);
}

/** Human names of the identifiers, for messages. */
const ID_LABELS: Record<string, string> = {
	workflowId: 'Workflow ID',
	runId: 'Run ID',
	documentId: 'Document ID',
	reviewTaskId: 'Review Task ID',
};

export function idLabel(name: string): string {
	return ID_LABELS[name] ?? name;
}

/**
 * Returns the trimmed id, or throws an error naming the field when it is not a UUID.
 * Checked before any request, so an id like `../events` can never reach the path.
 */
export function requireUuid(node: INode, name: string, value: unknown, itemIndex?: number): string {
	const text = typeof value === 'string' ? value.trim() : value;
	if (isUuid(text)) return text.toLowerCase();
	if (text === undefined || text === null || text === '') {
		throw new NodeOperationError(node, `The ${idLabel(name)} is empty`, {
			itemIndex,
			description: `${idLabel(name)} must be a UUID like 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70. If an expression fills it, the expression found no value: check that the incoming item has that field.`,
		});
	}
	const shown = typeof value === 'string' ? `"${value.length > 60 ? value.slice(0, 60) + '…' : value}"` : String(value);
	throw new NodeOperationError(node, `The ${idLabel(name)} ${shown} is not a valid UUID`, {
		itemIndex,
		description: `${idLabel(name)} must look like 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70. Check the field or the expression that fills it; if it comes from an earlier node, make sure that node returned an id.`,
	});
}

export function buildPath(node: INode, request: Pick<ApiRequest, 'path' | 'pathParams' | 'itemIndex'>): string {
	return request.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
		const raw = request.pathParams?.[name];
		return encodeURIComponent(requireUuid(node, name, raw, request.itemIndex));
	});
}

/** The credential's base URL without trailing slashes, or a clear error when it is no URL. */
export function normalizeBaseUrl(node: INode, value: unknown): string {
	const text = String(value ?? '').trim().replace(/\/+$/, '');
	let parsed: URL | undefined;
	try {
		parsed = new URL(text);
	} catch {
		parsed = undefined;
	}
	if (!parsed || !/^https?:$/.test(parsed.protocol)) {
		throw new NodeOperationError(node, `The credential's Base URL "${text}" is not an http(s) URL`, {
			description:
				'Open the Document Workflow API credential and set Base URL to the API address, e.g. https://api.example.com (no version segment).',
		});
	}
	return text;
}

/** A stable key for "this API and this key", so rate-limit waits are shared by all requests that share the limit. */
function limitScope(baseUrl: string, credentials: IDataObject): string {
	const digest = createHash('sha256')
		.update(`${String(credentials.apiKey ?? '')}\u0000${String(credentials.workspaceId ?? '')}`)
		.digest('hex')
		.slice(0, 16);
	return `${baseUrl}|${digest}`;
}

/**
 * When each rate limit opens again, per API key. A 429 on one request makes every request
 * of that class wait (in this n8n process), while the other classes keep going.
 */
const rateLimitGates = new Map<string, number>();

export function rateLimitOpensAt(scope: string, limit: RateLimitClass): number {
	return rateLimitGates.get(`${scope}|${limit}`) ?? 0;
}

function closeRateLimitUntil(scope: string, limit: RateLimitClass, until: number): void {
	const key = `${scope}|${limit}`;
	if ((rateLimitGates.get(key) ?? 0) < until) rateLimitGates.set(key, until);
	// Keep the map from growing with stale entries.
	if (rateLimitGates.size > 1000) {
		const now = Date.now();
		for (const [k, v] of rateLimitGates) if (v < now) rateLimitGates.delete(k);
	}
}

/** `Retry-After` in milliseconds from now: seconds, or an HTTP date. Undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
	if (value === undefined || value === null) return undefined;
	const text = String(value).trim();
	if (text === '') return undefined;
	if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
	const date = Date.parse(text);
	if (Number.isNaN(date)) return undefined;
	return Math.max(0, date - now);
}

export function backoffDelay(attempt: number, policy: RetryPolicy, random = Math.random): number {
	const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
	return Math.round(random() * ceiling);
}

/** The execution's cancel signal where this n8n version provides one. */
export function cancelSignalOf(ctx: ApiContext): AbortSignal | undefined {
	const candidate = ctx as Partial<Pick<IExecuteFunctions, 'getExecutionCancelSignal'>>;
	return typeof candidate.getExecutionCancelSignal === 'function'
		? candidate.getExecutionCancelSignal()
		: undefined;
}

/** Thrown when a wait ends because the execution was cancelled. */
export class ExecutionCancelledError extends Error {
	constructor() {
		super('The execution was cancelled');
	}
}

/** Sleeps `ms`, ending early (with `ExecutionCancelledError`) when the execution is cancelled. */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
	if (signal?.aborted) throw new ExecutionCancelledError();
	if (ms <= 0) return;
	if (!signal) return await sleep(ms);
	let onAbort: (() => void) | undefined;
	const aborted = new Promise<void>((resolve) => {
		onAbort = resolve;
		signal.addEventListener('abort', onAbort, { once: true });
	});
	await Promise.race([sleep(ms), aborted]);
	if (onAbort) signal.removeEventListener('abort', onAbort);
	if (signal.aborted) throw new ExecutionCancelledError();
}

function lowerCaseHeaders(headers: unknown): Record<string, string> {
	const result: Record<string, string> = {};
	if (headers && typeof headers === 'object') {
		for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
			result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
		}
	}
	return result;
}

/** Parses a body that may have arrived as text or bytes; returns undefined when it is not JSON. */
function asJson(body: unknown): unknown {
	if (body === undefined || body === null || body === '') return undefined;
	if (Buffer.isBuffer(body)) body = body.toString('utf8');
	if (typeof body !== 'string') return body;
	try {
		return JSON.parse(body);
	} catch {
		return undefined;
	}
}

const REDACTED = '[redacted API key]';

/**
 * The body of an answer with the API key taken out. Errors quote bodies, and an error page
 * that echoes the request (as some proxies and gateways do) would otherwise carry the key
 * into the error shown in n8n.
 */
export function withoutSecret(body: unknown, secret: string): unknown {
	if (!secret || body === undefined || body === null) return body;
	if (Buffer.isBuffer(body)) body = body.toString('utf8');
	if (typeof body === 'string') return body.split(secret).join(REDACTED);
	const text = JSON.stringify(body);
	return text !== undefined && text.includes(secret) ? (JSON.parse(text.split(secret).join(REDACTED)) as unknown) : body;
}

interface ProblemDetails {
	status?: number;
	title?: string;
	type?: string;
	detail?: string | null;
	instance?: string;
	traceId?: string;
	errors?: Record<string, string[]> | null;
}

function isProblem(value: unknown): value is ProblemDetails {
	return !!value && typeof value === 'object' && !Array.isArray(value) && ('title' in value || 'status' in value);
}

/** What the user should do, by HTTP status; the API's own detail is added when it has one. */
function adviceFor(status: number): { message: string; advice: string } {
	switch (status) {
		case 400:
			return {
				message: 'The API rejected the request as invalid (400)',
				advice: 'Check the values named below and correct the node parameters.',
			};
		case 401:
			return {
				message: 'The API key was rejected (401)',
				advice:
					'The key is missing, mistyped, expired or deactivated. Create or reactivate a key in the service settings and update the Document Workflow API credential.',
			};
		case 403:
			return {
				message: 'The API key is valid but not allowed to do this (403)',
				advice:
					'The key lacks the scope this operation needs, or the plan has no API access. Add the scope to the key (or use a key that has it) and try again.',
			};
		case 404:
			return {
				message: 'The API could not find the requested resource (404)',
				advice:
					'Check the id. It must belong to the organization (and workspace, if the credential sets one) of the API key.',
			};
		case 409:
			return {
				message: 'The API reported a conflict (409)',
				advice: 'The request conflicts with the current state of the resource.',
			};
		case 413:
			return {
				message: 'The content is too large for the API (413)',
				advice: 'The API returns at most 10 MB inline.',
			};
		case 429:
			return {
				message: 'The API rate limit was exceeded (429)',
				advice:
					'Too many requests for the plan. The node waits for Retry-After and retries; if this persists, space executions out or raise the plan limits.',
			};
		default:
			if (status >= 500)
				return {
					message: `The API failed with a server error (${status})`,
					advice:
						'The service had a problem; the node already retried where that is safe. Try again later; if it persists, report the trace id below to the service.',
				};
			if (status >= 300 && status < 400)
				return {
					message: `The API answered with a redirect (${status}), which the node does not follow`,
					advice:
						'The Base URL points at an address that redirects elsewhere (for example http to https, or an old host). Set the credential\'s Base URL to the address it redirects to; redirects are not followed so that the API key is only ever sent to the Base URL.',
				};
			return {
				message: `The API answered with HTTP ${status}`,
				advice: 'See the details below.',
			};
	}
}

export interface ApiErrorOverrides {
	message?: string;
	advice?: string;
}

/** Builds the error for an error response. The key never appears: only the status, body fields and ids are used. */
export function apiErrorFromResponse(
	node: INode,
	response: { statusCode: number; body: unknown; headers: Record<string, string> },
	request: { method: string; path: string; itemIndex?: number },
	overrides: ApiErrorOverrides = {},
): NodeApiError {
	const { statusCode, headers } = response;
	const parsed = asJson(response.body);
	const problem = isProblem(parsed) ? parsed : undefined;
	const correlationId = headers['x-correlation-id'];
	const base = adviceFor(statusCode);

	const lines: string[] = [overrides.advice ?? base.advice];
	if (problem?.detail) lines.push(`API detail: ${problem.detail}`);
	if (problem?.errors && typeof problem.errors === 'object') {
		for (const [field, messages] of Object.entries(problem.errors)) {
			lines.push(`${field}: ${(Array.isArray(messages) ? messages : [messages]).join('; ')}`);
		}
	}
	if (!problem) {
		const raw = Buffer.isBuffer(response.body) ? response.body.toString('utf8') : response.body;
		const text = typeof raw === 'string' ? raw : raw === undefined ? '' : JSON.stringify(raw);
		lines.push(
			text
				? `The response was not a problem+json body: ${text.slice(0, 300)}`
				: 'The response had no body.',
		);
	}
	if (statusCode >= 300 && statusCode < 400 && headers.location) lines.push(`It redirects to: ${headers.location}`);
	lines.push(`Request: ${request.method} ${request.path}`);
	if (problem?.traceId) lines.push(`Trace ID: ${problem.traceId}`);
	if (correlationId) lines.push(`Correlation ID: ${correlationId}`);

	const errorBody: JsonObject = {
		status: statusCode,
		title: problem?.title ?? null,
		type: problem?.type ?? null,
		detail: problem?.detail ?? null,
		instance: problem?.instance ?? null,
		errors: (problem?.errors as JsonObject | null | undefined) ?? null,
		traceId: problem?.traceId ?? null,
		correlationId: correlationId ?? null,
		method: request.method,
		path: request.path,
	};
	const error = new NodeApiError(node, errorBody, {
		message: overrides.message ?? (problem?.title ? `${base.message}: ${problem.title}` : base.message),
		description: lines.join('\n'),
		httpCode: String(statusCode),
		itemIndex: request.itemIndex,
	});
	return error;
}

/**
 * The error code of a failure that got no HTTP answer. n8n's request helper wraps such
 * failures in a NodeApiError whose httpCode is the code (e.g. ECONNRESET), keeping the
 * original in `cause`.
 */
function networkErrorCode(error: unknown): string | undefined {
	const candidates = [
		(error as { httpCode?: unknown })?.httpCode,
		(error as { code?: unknown })?.code,
		(error as { cause?: { code?: unknown } })?.cause?.code,
	];
	for (const candidate of candidates) {
		if (typeof candidate === 'string' && /^[A-Z_]{3,}$/.test(candidate)) return candidate;
	}
	return undefined;
}

const NETWORK_FAILURES: Record<string, string> = {
	ECONNREFUSED: 'the connection was refused',
	ECONNRESET: 'the connection was closed before an answer came',
	EPIPE: 'the connection was closed before an answer came',
	ETIMEDOUT: 'the request timed out',
	ECONNABORTED: 'the request timed out',
	ENOTFOUND: 'the host name could not be resolved',
	EAI_AGAIN: 'the host name could not be resolved',
	EHOSTUNREACH: 'the host is unreachable',
	ENETUNREACH: 'the network is unreachable',
};

/** Network failures (no HTTP answer). Only the error code is kept: the original error holds the request, key included. */
function networkError(node: INode, error: unknown, request: { method: string; path: string; itemIndex?: number }, baseUrl: string): NodeApiError {
	const code = networkErrorCode(error);
	// Words, not the bare code: n8n replaces a message containing a known code with its own.
	const reason = code ? NETWORK_FAILURES[code] ?? 'it got no answer' : 'it got no answer';
	return new NodeApiError(
		node,
		{ networkErrorCode: code ?? null, method: request.method, path: request.path } as JsonObject,
		{
			message: `Could not reach the Document Workflow API: ${reason}`,
			description: `${request.method} ${request.path} at ${baseUrl} got no HTTP answer${code ? ` (error code ${code})` : ''}. Check the credential's Base URL and that the service is reachable from n8n; the node already retried where that is safe.`,
			itemIndex: request.itemIndex,
		},
	);
}

function isNetworkFailure(error: unknown): boolean {
	return networkErrorCode(error) !== undefined;
}

function isRetryableStatus(status: number): boolean {
	return status >= 500 && status !== 501;
}

export interface RequestHooks {
	/** Called before each attempt; tests and the benchmark count requests with it. */
	onAttempt?: (attempt: number) => void;
}

/**
 * Sends one API request, with waiting and retries, and returns the parsed response.
 * Non-2xx answers become `NodeApiError`s; `acceptStatuses` lets a caller handle some itself.
 */
export async function apiRequest<T = unknown>(
	ctx: ApiContext,
	request: ApiRequest,
	options: {
		retry?: Partial<RetryPolicy>;
		acceptStatuses?: number[];
		errorOverrides?: Record<number, ApiErrorOverrides>;
		encoding?: 'json' | 'arraybuffer';
		timeoutMs?: number;
	} = {},
): Promise<ApiResponse<T>> {
	const node = ctx.getNode();
	const credentials = await ctx.getCredentials(CREDENTIAL_TYPE);
	const baseUrl = normalizeBaseUrl(node, credentials.baseUrl);
	const path = buildPath(node, request);
	const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
	const limit: RateLimitClass = request.rateLimit ?? (request.method === 'GET' ? 'read' : 'trigger');
	const scope = limitScope(baseUrl, credentials);
	const signal = cancelSignalOf(ctx);
	// A POST may be repeated only when the server can recognise the repeat.
	const retriesAreSafe = request.method === 'GET' || request.idempotencyKey !== undefined;
	const where = { method: request.method, path, itemIndex: request.itemIndex };

	const headers: Record<string, string> = { Accept: 'application/json, application/problem+json', ...request.headers };
	if (request.idempotencyKey) headers['Idempotency-Key'] = request.idempotencyKey;

	let failures = 0;
	let rateLimited = 0;
	for (;;) {
		const opensAt = rateLimitOpensAt(scope, limit);
		if (opensAt > Date.now()) {
			if (policy.deadline !== undefined && opensAt > policy.deadline) {
				throw rateLimitError(node, where, opensAt - Date.now(), 'the time this run may wait');
			}
			await pause(Math.min(opensAt - Date.now(), policy.maxRetryAfterMs), signal);
		}

		const body = request.bodyFactory ? await request.bodyFactory() : request.body;
		const httpOptions: IHttpRequestOptions = {
			method: request.method,
			baseURL: baseUrl,
			url: path,
			qs: request.qs,
			headers,
			body: body as IHttpRequestOptions['body'],
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			json: options.encoding !== 'arraybuffer',
			encoding: options.encoding === 'arraybuffer' ? 'arraybuffer' : undefined,
			timeout: options.timeoutMs ?? 300_000,
			abortSignal: signal,
			// The API does not redirect. Following redirects would let a 3xx carry the key to
			// another host, and axios' redirect follower buffers a streamed upload whole in
			// memory so that it could replay it.
			disableFollowRedirect: true,
		};

		let response: IN8nHttpFullResponse;
		try {
			ctx.logger?.debug('Document Workflow API request', { method: request.method, path });
			response = (await ctx.helpers.httpRequestWithAuthentication.call(
				ctx,
				CREDENTIAL_TYPE,
				httpOptions,
			)) as IN8nHttpFullResponse;
		} catch (error) {
			if (signal?.aborted) {
				throw new NodeOperationError(node, 'The execution was cancelled while waiting for the Document Workflow API', { itemIndex: request.itemIndex });
			}
			// n8n's own errors (e.g. a credential that cannot be read) pass through unchanged.
			if (error instanceof NodeOperationError) throw new NodeOperationError(node, error);
			if (retriesAreSafe && isNetworkFailure(error) && failures < policy.maxRetries) {
				await waitBeforeRetry(failures++, policy, signal, node, where);
				continue;
			}
			throw networkError(node, error, where, baseUrl);
		}

		const responseHeaders = lowerCaseHeaders(response.headers);
		const statusCode = response.statusCode;
		if (statusCode < 200 || statusCode >= 300) response.body = withoutSecret(response.body, String(credentials.apiKey ?? '')) as typeof response.body;
		const correlationId = responseHeaders['x-correlation-id'];
		ctx.logger?.debug('Document Workflow API response', { method: request.method, path, statusCode, correlationId });

		if (statusCode >= 200 && statusCode < 300) {
			let body = response.body as unknown;
			if (options.encoding !== 'arraybuffer' && (typeof body === 'string' || Buffer.isBuffer(body))) {
				const parsed = asJson(body);
				if (parsed === undefined && String(body).trim() !== '') {
					throw new NodeApiError(node, { status: statusCode, path, correlationId: correlationId ?? null } as JsonObject, {
						message: 'The API answered with a body that is not valid JSON',
						description: `${request.method} ${path} returned ${statusCode} with: ${String(withoutSecret(String(body), String(credentials.apiKey ?? ''))).slice(0, 200)}${correlationId ? `\nCorrelation ID: ${correlationId}` : ''}`,
						itemIndex: request.itemIndex,
					});
				}
				body = parsed;
			}
			return { body: body as T, statusCode, headers: responseHeaders, correlationId };
		}

		if (statusCode === 429) {
			const retryAfterMs = parseRetryAfter(responseHeaders['retry-after']) ?? backoffDelay(rateLimited, policy) + 1000;
			const until = Date.now() + retryAfterMs;
			// Other requests of this class wait too, but only for a wait this request would take itself.
			if (retryAfterMs <= policy.maxRetryAfterMs) closeRateLimitUntil(scope, limit, until);
			if (!retriesAreSafe) throw apiErrorFromResponse(node, { statusCode, body: response.body, headers: responseHeaders }, where, {
				advice: `The rate limit is exceeded; Retry-After is ${Math.ceil(retryAfterMs / 1000)} s. This upload was not retried because it carries no Idempotency-Key (turn the idempotency option on to let the node retry safely).`,
			});
			if (retryAfterMs > policy.maxRetryAfterMs) throw rateLimitError(node, where, retryAfterMs, `the ${Math.round(policy.maxRetryAfterMs / 1000)} s the node waits at most`);
			if (policy.deadline !== undefined && until > policy.deadline) throw rateLimitError(node, where, retryAfterMs, 'the time this run may wait');
			if (rateLimited++ >= policy.max429Retries) throw apiErrorFromResponse(node, { statusCode, body: response.body, headers: responseHeaders }, where);
			continue;
		}

		if (options.acceptStatuses?.includes(statusCode)) {
			return { body: asJson(response.body) as T, statusCode, headers: responseHeaders, correlationId };
		}

		if (retriesAreSafe && isRetryableStatus(statusCode) && failures < policy.maxRetries) {
			await waitBeforeRetry(failures++, policy, signal, node, where);
			continue;
		}

		throw apiErrorFromResponse(
			node,
			{ statusCode, body: response.body, headers: responseHeaders },
			where,
			options.errorOverrides?.[statusCode],
		);
	}
}

function rateLimitError(node: INode, where: { method: string; path: string; itemIndex?: number }, waitMs: number, bound: string): NodeApiError {
	return new NodeApiError(node, { status: 429, method: where.method, path: where.path } as JsonObject, {
		message: 'The API rate limit was exceeded (429), and the wait it asks for is too long',
		description: `${where.method} ${where.path}: the API asks to wait ${Math.ceil(waitMs / 1000)} s (Retry-After), longer than ${bound}. Run the workflow later, or space executions out.`,
		httpCode: '429',
		itemIndex: where.itemIndex,
	});
}

async function waitBeforeRetry(
	attempt: number,
	policy: RetryPolicy,
	signal: AbortSignal | undefined,
	node: INode,
	where: { method: string; path: string; itemIndex?: number },
): Promise<void> {
	const delay = backoffDelay(attempt, policy);
	if (policy.deadline !== undefined && Date.now() + delay > policy.deadline) {
		throw new NodeApiError(node, { method: where.method, path: where.path } as JsonObject, {
			message: 'The Document Workflow API kept failing and the time to retry ran out',
			description: `${where.method} ${where.path} failed ${attempt + 1} time(s); no time was left to retry it.`,
			itemIndex: where.itemIndex,
		});
	}
	await pause(delay, signal);
}

/**
 * Downloads from a link the API handed out (the original-file link). It goes through
 * n8n's plain `httpRequest`, never the authenticated one, so the link's host never
 * receives the API key.
 */
export async function downloadFromLink(
	ctx: IExecuteFunctions,
	url: string,
): Promise<{ statusCode: number; body: Buffer; headers: Record<string, string> }> {
	const response = (await ctx.helpers.httpRequest({
		method: 'GET',
		url,
		encoding: 'arraybuffer',
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		timeout: 300_000,
		abortSignal: cancelSignalOf(ctx),
	})) as IN8nHttpFullResponse;
	return {
		statusCode: response.statusCode,
		body: Buffer.isBuffer(response.body) ? response.body : Buffer.from(response.body as ArrayBuffer),
		headers: lowerCaseHeaders(response.headers),
	};
}

/**
 * Like `downloadFromLink`, but hands the response body over as a stream, so a large file
 * can go into n8n's binary store without being held in memory. Also unauthenticated.
 * A caller that does not use the body of an error status must still consume it
 * (`drainStream`) so the connection is released.
 */
export async function downloadStreamFromLink(
	ctx: IExecuteFunctions,
	url: string,
): Promise<{ statusCode: number; body: AsyncIterable<unknown> & object; headers: Record<string, string> }> {
	const response = (await ctx.helpers.httpRequest({
		method: 'GET',
		url,
		encoding: 'stream',
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		timeout: 300_000,
		abortSignal: cancelSignalOf(ctx),
	})) as IN8nHttpFullResponse;
	return {
		statusCode: response.statusCode,
		body: response.body as unknown as AsyncIterable<unknown> & object,
		headers: lowerCaseHeaders(response.headers),
	};
}

/** Reads a response stream to its end (at most `limit` bytes kept) and returns what it held as text. */
export async function drainStream(stream: AsyncIterable<unknown>, limit = 4096): Promise<string> {
	const chunks: Buffer[] = [];
	let kept = 0;
	for await (const chunk of stream) {
		const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
		if (kept < limit) {
			chunks.push(buffer.subarray(0, limit - kept));
			kept += Math.min(buffer.length, limit - kept);
		}
	}
	return Buffer.concat(chunks).toString('utf8');
}
