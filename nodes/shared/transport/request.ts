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
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import { CREDENTIAL_TYPE } from '../credentialType';
import { cancelSignalOf, contextEndingWith, pause } from './cancellation';
import type { ApiErrorOverrides, RequestPlace } from './errors';
import { apiErrorFromResponse, isNetworkFailure, networkError, rateLimitError, withoutSecret } from './errors';
import type { RateLimitClass } from './rateLimits';
import { closeRateLimitUntil, limitScope, parseRetryAfter, rateLimitOpensAt } from './rateLimits';
import { asJson, lowerCaseHeaders } from './responses';
import type { PathTemplate } from './url';
import { buildPath, normalizeBaseUrl } from './url';

/** The contexts that may call the API: the action node and the polling trigger. */
export type ApiContext = IExecuteFunctions | IPollFunctions;

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
		/** Ends the request (and its waits) early, besides the execution's cancel signal; e.g. a wait that is over. */
		signal?: AbortSignal;
	} = {},
): Promise<ApiResponse<T>> {
	const node = ctx.getNode();
	const credentials = await ctx.getCredentials(CREDENTIAL_TYPE);
	const baseUrl = normalizeBaseUrl(node, credentials.baseUrl);
	const path = buildPath(node, request);
	const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
	const limit: RateLimitClass = request.rateLimit ?? (request.method === 'GET' ? 'read' : 'trigger');
	const scope = limitScope(baseUrl, credentials);
	const executionSignal = cancelSignalOf(ctx);
	const signal = options.signal && executionSignal ? AbortSignal.any([options.signal, executionSignal]) : (options.signal ?? executionSignal);
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
				options.signal && signal ? contextEndingWith(ctx, signal) : ctx,
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

