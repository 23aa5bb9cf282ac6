/**
 * The one way both nodes talk to the Document Workflow API.
 *
 * Every request goes through `apiRequest`: it builds the URL from the credential's
 * `baseUrl`, refuses path ids that are not UUIDs before anything is sent, authenticates
 * through n8n's `httpRequestWithAuthentication`, waits out `429 Retry-After` per rate
 * limit (reads, triggers and original-file downloads are limited separately; a 429 was
 * not processed, so any request is sent again), retries what else is safe to retry, and turns error responses into `NodeApiError`s that say what
 * happened and what to do. The API key never passes through this module's hands: n8n
 * adds it in the credential's `authenticate`, and errors are built from a clean object,
 * never from the request that carried the key.
 */
import type {
	IDataObject,
	IHttpRequestMethods,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
	INode,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import { CREDENTIAL_TYPE } from '../credentialType';
import type { ApiContext } from './cancellation';
import { cancelSignalOf, contextEndingWith, pause } from './cancellation';
import type { ApiErrorOverrides, RequestPlace } from './errors';
import {
	apiErrorFromResponse,
	isNetworkFailure,
	networkError,
	networkErrorCode,
	rateLimitError,
	withoutSecret,
} from './errors';
import type { RateLimitClass } from './rateLimits';
import {
	closeRateLimitUntil,
	holdBackReadsSentAfter,
	limitScope,
	parseRetryAfter,
	rateLimitOpensAt,
	readAnswered,
	readOnItsWay,
} from './rateLimits';
import { readPacerFor } from './readPacer';
import { asJson, lowerCaseHeaders } from './responses';
import type { PathTemplate } from './url';
import { buildPath, normalizeBaseUrl } from './url';

export interface ApiRequest extends PathTemplate {
	method: IHttpRequestMethods;
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

export function backoffDelay(attempt: number, policy: RetryPolicy, random = Math.random): number {
	const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
	return Math.round(random() * ceiling);
}

function isRetryableStatus(status: number): boolean {
	return status >= 500 && status !== 501;
}

/** How long one attempt may take until the answer's headers arrive, unless the caller says otherwise. */
export const DEFAULT_TIMEOUT_MS = 300_000;

const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ECONNABORTED']);

function isTimeoutCode(code: string | undefined): boolean {
	return code !== undefined && TIMEOUT_CODES.has(code);
}

export interface ApiRequestOptions {
	retry?: Partial<RetryPolicy>;
	acceptStatuses?: number[];
	errorOverrides?: Record<number, ApiErrorOverrides>;
	encoding?: 'json' | 'arraybuffer';
	/** How long one attempt may take until the answer's headers arrive (default `DEFAULT_TIMEOUT_MS`). */
	timeoutMs?: number;
	/**
	 * Told each time an attempt runs out of time: that attempt may still be in the server's
	 * hands, which a caller may need to know (e.g. to read a 409 on a repeated idempotency key).
	 */
	onTimedOut?: () => void;
	/** Told when an attempt leaves, past the rate limit and the read pacer. */
	onSent?: (at: number) => void;
	/** Ends the request (and its waits) early, besides the execution's cancel signal; e.g. a wait that is over. */
	signal?: AbortSignal;
}

/** Everything about one API request that stays the same across its attempts. */
interface Call {
	ctx: ApiContext;
	node: INode;
	request: ApiRequest;
	options: ApiRequestOptions;
	baseUrl: string;
	path: string;
	where: RequestPlace;
	headers: Record<string, string>;
	policy: RetryPolicy;
	limit: RateLimitClass;
	scope: string;
	signal: AbortSignal | undefined;
	apiKey: string;
	/** A POST may be repeated after a lost answer only when the server can recognise the repeat. */
	retriesAreSafe: boolean;
}

/** What the attempts so far have used up, and when the latest left. */
interface Attempts {
	failures: number;
	rateLimited: number;
	sentAt: number;
}

/** One attempt's result: an HTTP answer, or a failure that got none. */
type Outcome =
	| { answered: true; response: IN8nHttpFullResponse }
	| { answered: false; error: unknown };

/** What to do after an attempt: hand back an answer, or wait (rate limit gate, backoff) and try again. */
type Decision<T> = { done: ApiResponse<T> } | { retry: true };

/**
 * Sends one API request, with waiting and retries, and returns the parsed response.
 * Non-2xx answers become `NodeApiError`s; `acceptStatuses` lets a caller handle some itself.
 */
export async function apiRequest<T = unknown>(
	ctx: ApiContext,
	request: ApiRequest,
	options: ApiRequestOptions = {},
): Promise<ApiResponse<T>> {
	const call = await prepare(ctx, request, options);
	const attempts: Attempts = { failures: 0, rateLimited: 0, sentAt: 0 };
	for (;;) {
		attempts.sentAt = await waitForSlot(call);
		call.options.onSent?.(attempts.sentAt);
		const read = call.limit === 'read' ? readOnItsWay(call.scope, attempts.sentAt) : undefined;
		let outcome: Outcome;
		try {
			outcome = await attempt(call, read?.heldBack.signal);
		} finally {
			if (read) readAnswered(call.scope, read);
		}
		// Held back by a 429 before it had an answer (most likely before n8n sent it): it goes again.
		if (!outcome.answered && read?.heldBack.signal.aborted) continue;
		const decision = outcome.answered
			? await onAnswer<T>(call, attempts, outcome.response)
			: await onNoAnswer(call, attempts, outcome.error);
		if ('done' in decision) return decision.done;
	}
}

async function prepare(
	ctx: ApiContext,
	request: ApiRequest,
	options: ApiRequestOptions,
): Promise<Call> {
	const node = ctx.getNode();
	const credentials = await ctx.getCredentials(CREDENTIAL_TYPE);
	const baseUrl = normalizeBaseUrl(node, credentials.baseUrl);
	const path = buildPath(node, request);
	const headers: Record<string, string> = {
		Accept: 'application/json, application/problem+json',
		...request.headers,
	};
	if (request.idempotencyKey) headers['Idempotency-Key'] = request.idempotencyKey;
	return {
		ctx,
		node,
		request,
		options,
		baseUrl,
		path,
		where: { method: request.method, path, itemIndex: request.itemIndex },
		headers,
		policy: { ...DEFAULT_RETRY_POLICY, ...options.retry },
		limit: request.rateLimit ?? (request.method === 'GET' ? 'read' : 'trigger'),
		scope: limitScope(baseUrl, credentials),
		signal: combinedSignal(options.signal, cancelSignalOf(ctx)),
		apiKey: String(credentials.apiKey ?? ''),
		retriesAreSafe: request.method === 'GET' || request.idempotencyKey !== undefined,
	};
}

/** The request's own signal and the execution's, as one. */
function combinedSignal(
	own: AbortSignal | undefined,
	execution: AbortSignal | undefined,
): AbortSignal | undefined {
	return own && execution ? AbortSignal.any([own, execution]) : (own ?? execution);
}

/** Waits while a 429 (this request's or another's) keeps this request's rate limit closed. */
async function waitForRateLimit(call: Call): Promise<void> {
	const opensAt = rateLimitOpensAt(call.scope, call.limit);
	if (opensAt <= Date.now()) return;
	if (call.policy.deadline !== undefined && opensAt > call.policy.deadline) {
		throw rateLimitError(call.node, call.where, opensAt - Date.now(), 'the time this run may wait');
	}
	await pause(Math.min(opensAt - Date.now(), call.policy.maxRetryAfterMs), call.signal);
}

/**
 * Waits for the rate limit to be open and, for a read, for a slot of its API key's read pacer
 * (one pace for every read of this n8n process). A 429 met by another read while this one
 * waited for its slot closes the limit again: it is checked before each send. Returns when it
 * let the request go.
 */
async function waitForSlot(call: Call): Promise<number> {
	const ticket = {};
	try {
		for (;;) {
			await waitForRateLimit(call);
			if (call.limit !== 'read') return Date.now();
			const pacer = readPacerFor(call.scope);
			const now = Date.now();
			if (rateLimitOpensAt(call.scope, call.limit) > now) continue;
			if (pacer.trySend(now, ticket)) return now;
			await pause(Math.max(1, pacer.nextSendAt - now), call.signal);
		}
	} finally {
		if (call.limit === 'read') readPacerFor(call.scope).leave(ticket);
	}
}

/** Sends the request once. Only a cancelled execution and n8n's own errors end the request here. */
async function attempt(call: Call, heldBack?: AbortSignal): Promise<Outcome> {
	const { ctx, request, options } = call;
	const body = request.bodyFactory ? await request.bodyFactory() : request.body;
	const httpOptions: IHttpRequestOptions = {
		method: request.method,
		baseURL: call.baseUrl,
		url: call.path,
		qs: request.qs,
		headers: call.headers,
		body: body as IHttpRequestOptions['body'],
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		json: options.encoding !== 'arraybuffer',
		encoding: options.encoding === 'arraybuffer' ? 'arraybuffer' : undefined,
		timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
		abortSignal: call.signal,
		// The API does not redirect. Following redirects would let a 3xx carry the key to
		// another host, and axios' redirect follower buffers a streamed upload whole in
		// memory so that it could replay it.
		disableFollowRedirect: true,
	};
	try {
		ctx.logger?.debug('Document Workflow API request', { method: request.method, path: call.path });
		// n8n takes the request's abort signal from the context: the execution's, unless it is given one.
		const ending = heldBack ? combinedSignal(heldBack, call.signal) : options.signal && call.signal;
		const response = (await ctx.helpers.httpRequestWithAuthentication.call(
			ending ? contextEndingWith(ctx, ending) : ctx,
			CREDENTIAL_TYPE,
			httpOptions,
		)) as IN8nHttpFullResponse;
		return { answered: true, response };
	} catch (error) {
		if (call.signal?.aborted) {
			throw new NodeOperationError(
				call.node,
				'The execution was cancelled while waiting for the Document Workflow API',
				{ itemIndex: request.itemIndex },
			);
		}
		// n8n's own errors (e.g. a credential that cannot be read) pass through unchanged.
		if (error instanceof NodeOperationError) throw new NodeOperationError(call.node, error);
		return { answered: false, error };
	}
}

/** No answer: retried with backoff where that is safe, else an error naming the failure. */
async function onNoAnswer(
	call: Call,
	attempts: Attempts,
	error: unknown,
): Promise<Decision<never>> {
	if (isTimeoutCode(networkErrorCode(error))) call.options.onTimedOut?.();
	if (
		!call.retriesAreSafe ||
		!isNetworkFailure(error) ||
		attempts.failures >= call.policy.maxRetries
	) {
		throw networkError(call.node, error, call.where, call.baseUrl);
	}
	await waitBeforeRetry(attempts.failures++, call.policy, call.signal, call.node, call.where);
	return { retry: true };
}

/** An HTTP answer: success, a wait for a 429, a retry after a 5xx, a status the caller takes, or an error. */
async function onAnswer<T>(
	call: Call,
	attempts: Attempts,
	response: IN8nHttpFullResponse,
): Promise<Decision<T>> {
	const headers = lowerCaseHeaders(response.headers);
	const { statusCode } = response;
	const correlationId = headers['x-correlation-id'];
	call.ctx.logger?.debug('Document Workflow API response', {
		method: call.request.method,
		path: call.path,
		statusCode,
		correlationId,
	});
	const answer = { statusCode, headers, correlationId };

	if (statusCode >= 200 && statusCode < 300)
		return {
			done: { ...answer, body: successBody<T>(call, response.body, statusCode, correlationId) },
		};

	// Error bodies are quoted in errors: a body that echoes the request must not carry the key.
	const body = withoutSecret(response.body, call.apiKey);
	if (statusCode === 429) return onRateLimited(call, attempts, { statusCode, body, headers });
	if (call.options.acceptStatuses?.includes(statusCode))
		return { done: { ...answer, body: asJson(body) as T } };
	if (
		call.retriesAreSafe &&
		isRetryableStatus(statusCode) &&
		attempts.failures < call.policy.maxRetries
	) {
		await waitBeforeRetry(attempts.failures++, call.policy, call.signal, call.node, call.where);
		return { retry: true };
	}
	throw apiErrorFromResponse(
		call.node,
		{ statusCode, body, headers },
		call.where,
		call.options.errorOverrides?.[statusCode],
	);
}

/** A 2xx body: parsed JSON (or the raw bytes asked for); a body that should be JSON and is not is an error. */
function successBody<T>(
	call: Call,
	raw: unknown,
	statusCode: number,
	correlationId: string | undefined,
): T {
	if (call.options.encoding === 'arraybuffer' || (typeof raw !== 'string' && !Buffer.isBuffer(raw)))
		return raw as T;
	const parsed = asJson(raw);
	if (parsed === undefined && String(raw).trim() !== '') {
		throw new NodeApiError(
			call.node,
			{ status: statusCode, path: call.path, correlationId: correlationId ?? null } as JsonObject,
			{
				message: 'The API answered with a body that is not valid JSON',
				description: `${call.request.method} ${call.path} returned ${statusCode} with: ${String(withoutSecret(String(raw), call.apiKey)).slice(0, 200)}${correlationId ? `\nCorrelation ID: ${correlationId}` : ''}`,
				itemIndex: call.request.itemIndex,
			},
		);
	}
	return parsed as T;
}

/**
 * A 429 means the request was not processed, so any request (an upload without an
 * idempotency key too) is sent again once `Retry-After` has passed, within the policy's bounds.
 */
function onRateLimited(
	call: Call,
	attempts: Attempts,
	answer: { statusCode: number; body: unknown; headers: Record<string, string> },
): Decision<never> {
	const { policy, node, where } = call;
	const retryAfterMs =
		parseRetryAfter(answer.headers['retry-after']) ??
		backoffDelay(attempts.rateLimited, policy) + 1000;
	const now = Date.now();
	const until = now + retryAfterMs;
	// The first 429 met while the limit was open tells the read pacer the limit's size; the
	// others of the same window (reads already on their way) tell it nothing more.
	if (call.limit === 'read' && rateLimitOpensAt(call.scope, call.limit) <= now)
		readPacerFor(call.scope).rateLimited(now, retryAfterMs, attempts.sentAt);
	// Other requests of this class wait too, but only for a wait this request would take itself;
	// reads sent after this one met the same full limit and wait as well, unless already answered.
	if (retryAfterMs <= policy.maxRetryAfterMs) {
		closeRateLimitUntil(call.scope, call.limit, until);
		if (call.limit === 'read') holdBackReadsSentAfter(call.scope, attempts.sentAt);
	}
	if (retryAfterMs > policy.maxRetryAfterMs)
		throw rateLimitError(
			node,
			where,
			retryAfterMs,
			`the ${Math.round(policy.maxRetryAfterMs / 1000)} s the node waits at most`,
		);
	if (policy.deadline !== undefined && until > policy.deadline)
		throw rateLimitError(node, where, retryAfterMs, 'the time this run may wait');
	if (attempts.rateLimited++ >= policy.max429Retries)
		throw apiErrorFromResponse(node, answer, where);
	return { retry: true };
}

async function waitBeforeRetry(
	attempt: number,
	policy: RetryPolicy,
	signal: AbortSignal | undefined,
	node: INode,
	where: RequestPlace,
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
