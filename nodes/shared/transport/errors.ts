/**
 * Errors that say what happened and what to do: problem+json answers with advice by HTTP
 * status, trace and correlation ids; failures that got no answer; rate limits that ask for
 * too long a wait. Built from clean objects only, never from the request that carried the
 * API key, and with the key taken out of any body they quote.
 */
import type { INode, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';
import { asJson } from './responses';

/** Where a failed request went, for messages. */
export interface RequestPlace {
	method: string;
	path: string;
	itemIndex?: number;
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
	return text !== undefined && text.includes(secret)
		? (JSON.parse(text.split(secret).join(REDACTED)) as unknown)
		: body;
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
	return (
		!!value &&
		typeof value === 'object' &&
		!Array.isArray(value) &&
		('title' in value || 'status' in value)
	);
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
						"The Base URL points at an address that redirects elsewhere (for example http to https, or an old host). Set the credential's Base URL to the address it redirects to; redirects are not followed so that the API key is only ever sent to the Base URL.",
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
	if (statusCode >= 300 && statusCode < 400 && headers.location)
		lines.push(`It redirects to: ${headers.location}`);
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
		message:
			overrides.message ?? (problem?.title ? `${base.message}: ${problem.title}` : base.message),
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
export function networkErrorCode(error: unknown): string | undefined {
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
export function networkError(
	node: INode,
	error: unknown,
	request: RequestPlace,
	baseUrl: string,
): NodeApiError {
	const code = networkErrorCode(error);
	// Words, not the bare code: n8n replaces a message containing a known code with its own.
	const reason = code ? (NETWORK_FAILURES[code] ?? 'it got no answer') : 'it got no answer';
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

export function isNetworkFailure(error: unknown): boolean {
	return networkErrorCode(error) !== undefined;
}

export function rateLimitError(
	node: INode,
	where: RequestPlace,
	waitMs: number,
	bound: string,
): NodeApiError {
	return new NodeApiError(
		node,
		{ status: 429, method: where.method, path: where.path } as JsonObject,
		{
			message: 'The API rate limit was exceeded (429), and the wait it asks for is too long',
			description: `${where.method} ${where.path}: the API asks to wait ${Math.ceil(waitMs / 1000)} s (Retry-After), longer than ${bound}. Run the workflow later, or space executions out.`,
			httpCode: '429',
			itemIndex: where.itemIndex,
		},
	);
}
