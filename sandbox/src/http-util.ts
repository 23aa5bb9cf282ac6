/** Per-request context of the public origins: correlation id, request log, problem details, faults. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';

import type { Engine } from './engine';
import { iso } from './engine';
import { traceId, uuid } from './ids';
import type { FaultInjector, RequestLog } from './infra';
import { retryAfterHeader } from './infra';
import type { FaultKind, RequestLogEntry } from './types';

const TITLES: Record<number, string> = {
	400: 'Bad Request',
	401: 'Unauthorized',
	403: 'Forbidden',
	404: 'Not Found',
	405: 'Method Not Allowed',
	409: 'Conflict',
	410: 'Gone',
	413: 'Content Too Large',
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
};

const TYPES: Record<number, string> = {
	400: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
	401: 'https://tools.ietf.org/html/rfc9110#section-15.5.2',
	403: 'https://tools.ietf.org/html/rfc9110#section-15.5.4',
	404: 'https://tools.ietf.org/html/rfc9110#section-15.5.5',
	405: 'https://tools.ietf.org/html/rfc9110#section-15.5.6',
	409: 'https://tools.ietf.org/html/rfc9110#section-15.5.10',
	410: 'https://tools.ietf.org/html/rfc9110#section-15.5.11',
	413: 'https://tools.ietf.org/html/rfc9110#section-15.5.14',
	429: 'https://tools.ietf.org/html/rfc6585#section-4',
	500: 'https://tools.ietf.org/html/rfc9110#section-15.6.1',
	502: 'https://tools.ietf.org/html/rfc9110#section-15.6.3',
	503: 'https://tools.ietf.org/html/rfc9110#section-15.6.4',
};

export function lowerHeaders(req: IncomingMessage): Record<string, string | string[]> {
	const out: Record<string, string | string[]> = {};
	for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k.toLowerCase()] = v;
	return out;
}

export function header(req: IncomingMessage, name: string): string | undefined {
	const v = req.headers[name.toLowerCase()];
	return Array.isArray(v) ? v[0] : v;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A wait that does not keep the process alive once the sandbox stops. */
export const pause = (ms: number): Promise<void> =>
	new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());

export class Ctx {
	readonly correlationId = uuid();
	readonly entry: RequestLogEntry;
	readonly url: URL;
	dropAfterProcess = false;
	/** Status sent (or that would have been sent when dropped); null until then. */
	sentStatus: number | null = null;
	private done = false;

	constructor(
		readonly req: IncomingMessage,
		readonly res: ServerResponse,
		readonly origin: 'api' | 'files',
		log: RequestLog,
		private readonly engine: Engine,
	) {
		this.url = new URL(req.url ?? '/', 'http://sandbox.local');
		this.entry = log.add({
			origin,
			method: (req.method ?? 'GET').toUpperCase(),
			path: req.url ?? '/',
			headers: lowerHeaders(req),
			status: null,
			processedStatus: null,
			dropped: false,
			fault: null,
			correlationId: this.correlationId,
			time: iso(engine.now()),
			realTimeMs: Date.now(),
		});
	}

	get finished(): boolean {
		return this.done;
	}

	/** Resolves once the request body has been read to its end (discarding what is left). */
	drain(): Promise<void> {
		const req = this.req;
		if (req.complete || req.readableEnded || req.destroyed) return Promise.resolve();
		return new Promise((resolve) => {
			const done = (): void => resolve();
			req.once('end', done);
			req.once('close', done);
			req.once('error', done);
			req.resume();
		});
	}

	/** Destroys the socket without a response. */
	drop(kind: FaultKind): void {
		if (this.done) return;
		this.done = true;
		this.entry.dropped = true;
		this.entry.fault = kind;
		this.req.socket.destroy();
	}

	/**
	 * The correlation id, and `Date` from the sandbox clock (which tests move forward), as a real
	 * server's clock would say; without `Date` when the settings say so (the spec does not
	 * promise one), and then not Node's own either.
	 */
	private clockHeaders(): Record<string, string> {
		if (!this.engine.settings.sendDateHeader) {
			this.res.sendDate = false;
			return { 'X-Correlation-ID': this.correlationId };
		}
		return {
			'X-Correlation-ID': this.correlationId,
			Date: new Date(this.engine.now()).toUTCString(),
		};
	}

	private begin(status: number): boolean {
		if (this.done) return false;
		this.done = true;
		this.sentStatus = status;
		this.entry.processedStatus = status;
		if (this.dropAfterProcess) {
			this.entry.dropped = true;
			this.entry.fault = 'dropAfterProcess';
			this.req.socket.destroy();
			return false;
		}
		this.entry.status = status;
		return true;
	}

	send(status: number, headers: Record<string, string | number>, body?: string | Buffer): void {
		if (!this.begin(status)) return;
		const h: Record<string, string | number> = { ...headers, ...this.clockHeaders() };
		if (body !== undefined) h['Content-Length'] = Buffer.byteLength(body);
		this.res.writeHead(status, h);
		this.res.end(body);
	}

	stream(status: number, headers: Record<string, string | number>, body: Readable | null): void {
		if (!this.begin(status)) {
			body?.destroy();
			return;
		}
		this.res.writeHead(status, { ...headers, ...this.clockHeaders() });
		if (!body) {
			this.res.end();
			return;
		}
		body.on('error', () => this.res.destroy());
		body.pipe(this.res);
	}

	json(status: number, value: unknown, headers: Record<string, string | number> = {}): void {
		this.send(
			status,
			{ 'Content-Type': 'application/json; charset=utf-8', ...headers },
			JSON.stringify(value),
		);
	}

	/** An RFC 7807 problem; the request body (if any) is read to its end first. */
	async problem(
		status: number,
		detail: string,
		opts: { errors?: Record<string, string[]>; headers?: Record<string, string | number> } = {},
	): Promise<void> {
		await this.drain();
		const body = {
			type: TYPES[status] ?? 'about:blank',
			title: TITLES[status] ?? 'Error',
			status,
			detail,
			instance: this.url.pathname,
			traceId: traceId(),
			errors: opts.errors ?? null,
		};
		this.send(
			status,
			{ 'Content-Type': 'application/problem+json; charset=utf-8', ...(opts.headers ?? {}) },
			JSON.stringify(body),
		);
	}
}

/**
 * Applies the fault rules that fire for this request. Returns true when the request was
 * answered or dropped (stop processing). Latency rules stack; `dropAfterProcess` marks the
 * context so the response is replaced by a socket reset once processing is done.
 */
export async function applyFaults(ctx: Ctx, faults: FaultInjector): Promise<boolean> {
	const fired = faults.match(ctx.origin, ctx.entry.method, ctx.url.pathname);
	for (const f of fired) {
		if (f.kind === 'latency') {
			ctx.entry.fault = 'latency';
			await pause(f.ms ?? 0);
			continue;
		}
		ctx.entry.fault = f.kind;
		switch (f.kind) {
			case 'drop':
				ctx.drop('drop');
				return true;
			case 'dropAfterProcess':
				ctx.dropAfterProcess = true;
				return false;
			case 'status5xx': {
				const status = f.status === 502 || f.status === 503 ? f.status : 500;
				await ctx.problem(
					status,
					`Injected fault: the sandbox answered ${status} before processing the request.`,
				);
				return true;
			}
			case 'rate429': {
				const secs = Math.max(0, f.retryAfter ?? 1);
				await ctx.problem(429, `Injected fault: rate limit exceeded; retry after ${secs} s.`, {
					headers: {
						'Retry-After': retryAfterHeader(secs * 1000, f.retryAfterAsDate ? 'date' : 'seconds'),
					},
				});
				return true;
			}
			case 'badBody': {
				// A raw answer that is not what the spec promises (broken JSON, an HTML page from a proxy…).
				await ctx.drain();
				const status =
					Number.isInteger(f.status) && f.status! >= 100 && f.status! <= 599 ? f.status! : 200;
				const headers: Record<string, string> = {
					'Content-Type': f.contentType ?? 'text/plain; charset=utf-8',
				};
				if (f.location) headers.Location = f.location;
				ctx.send(status, headers, f.body ?? '');
				return true;
			}
		}
	}
	return false;
}
