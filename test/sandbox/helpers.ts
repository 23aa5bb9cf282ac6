/** Helpers for the sandbox conformance tests: plain fetch against a running sandbox. */
import { request as httpRequest } from 'node:http';

import type { Sandbox } from '../../sandbox/src';
import { pdf } from '../harness/sandbox';

export interface Res<T = any> {
	status: number;
	headers: Headers;
	body: T;
	text: string;
}

export interface CallOptions {
	/** API key; default the sandbox's key; null = no key header. */
	key?: string | null;
	headers?: Record<string, string>;
	query?: Record<string, string | number | undefined>;
}

function url(base: string, path: string, query?: CallOptions['query']): string {
	const u = new URL(base + path);
	for (const [k, v] of Object.entries(query ?? {}))
		if (v !== undefined) u.searchParams.set(k, String(v));
	return u.toString();
}

async function toRes<T>(r: Response): Promise<Res<T>> {
	const text = await r.text();
	let body: any = text;
	const ct = r.headers.get('content-type') ?? '';
	if (ct.includes('json') && text) body = JSON.parse(text);
	return { status: r.status, headers: r.headers, body, text };
}

function keyHeaders(sb: Sandbox, o: CallOptions): Record<string, string> {
	const h: Record<string, string> = { ...(o.headers ?? {}) };
	const key = o.key === undefined ? sb.apiKey : o.key;
	if (key !== null) h['X-Api-Key'] = key;
	return h;
}

export async function get<T = any>(
	sb: Sandbox,
	path: string,
	o: CallOptions = {},
): Promise<Res<T>> {
	return toRes<T>(await fetch(url(sb.baseUrl, path, o.query), { headers: keyHeaders(sb, o) }));
}

export async function send<T = any>(
	sb: Sandbox,
	method: string,
	path: string,
	o: CallOptions = {},
): Promise<Res<T>> {
	return toRes<T>(
		await fetch(url(sb.baseUrl, path, o.query), { method, headers: keyHeaders(sb, o) }),
	);
}

export interface TriggerOptions extends CallOptions {
	filename?: string;
	contentType?: string;
	data?: Buffer;
	reference?: string;
	idempotencyKey?: string;
	/** Leave out the file part. */
	noFile?: boolean;
}

export const PDF = pdf('sandbox test document');

export async function trigger<T = any>(
	sb: Sandbox,
	workflowId: string,
	o: TriggerOptions = {},
): Promise<Res<T>> {
	const form = new FormData();
	if (!o.noFile) {
		form.append(
			'file',
			new Blob([new Uint8Array(o.data ?? PDF)], { type: o.contentType ?? 'application/pdf' }),
			o.filename ?? 'document.pdf',
		);
	}
	if (o.reference !== undefined) form.append('reference', o.reference);
	const headers = keyHeaders(sb, o);
	if (o.idempotencyKey !== undefined) headers['Idempotency-Key'] = o.idempotencyKey;
	return toRes<T>(
		await fetch(url(sb.baseUrl, `/workflows/${workflowId}/trigger`, o.query), {
			method: 'POST',
			headers,
			body: form,
		}),
	);
}

/** Triggers the default workflow and returns the trigger result body (asserting 202). */
export async function triggerOk(
	sb: Sandbox,
	workflowId = sb.defaultWorkflowId,
	o: TriggerOptions = {},
): Promise<{ documentId: string; runId: string | null; status: string; reference: string | null }> {
	const r = await trigger(sb, workflowId, o);
	if (r.status !== 202) throw new Error(`trigger answered ${r.status}: ${r.text}`);
	return r.body;
}

/**
 * A trigger whose body is sent in two parts: the headers and the start of the file now,
 * the rest when `finish()` is called. Lets a test act while the request is in flight.
 */
export function slowTrigger(
	sb: Sandbox,
	workflowId: string,
	idempotencyKey: string,
): {
	finish: () => Promise<{ status: number; body: any }>;
	abort: () => void;
	response: Promise<{ status: number; body: any }>;
} {
	const boundary = '----sandboxtest' + Math.random().toString(16).slice(2);
	const head = Buffer.from(
		`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n`,
	);
	const tail = Buffer.from(`more bytes\n%%EOF\n\r\n--${boundary}--\r\n`);
	const u = new URL(`${sb.baseUrl}/workflows/${workflowId}/trigger`);
	const req = httpRequest({
		host: u.hostname,
		port: u.port,
		path: u.pathname,
		method: 'POST',
		headers: {
			'X-Api-Key': sb.apiKey,
			'Idempotency-Key': idempotencyKey,
			'Content-Type': `multipart/form-data; boundary=${boundary}`,
			'Content-Length': head.length + tail.length,
		},
	});
	const response = new Promise<{ status: number; body: any }>((resolve, reject) => {
		req.on('response', (res) => {
			const chunks: Buffer[] = [];
			res.on('data', (c: Buffer) => chunks.push(c));
			res.on('end', () => {
				const text = Buffer.concat(chunks).toString('utf8');
				resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null });
			});
		});
		req.on('error', reject);
	});
	response.catch(() => undefined);
	req.write(head);
	return {
		response,
		finish: () => {
			req.end(tail);
			return response;
		},
		abort: () => req.destroy(),
	};
}

/** Polls until `check` returns a value (not undefined), at most `timeoutMs` (real time). */
export async function until<T>(
	check: () => Promise<T | undefined>,
	timeoutMs = 5000,
	everyMs = 10,
): Promise<T> {
	const end = Date.now() + timeoutMs;
	for (;;) {
		const v = await check();
		if (v !== undefined) return v;
		if (Date.now() > end) throw new Error('condition not met in time');
		await new Promise((r) => setTimeout(r, everyMs));
	}
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Asserts the RFC 7807 shape of an error response. */
export function expectProblem(r: Res, status: number): void {
	expect(r.status).toBe(status);
	expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
	expect(r.body).toEqual(
		expect.objectContaining({
			status,
			title: expect.any(String),
			type: expect.any(String),
			instance: expect.any(String),
			traceId: expect.any(String),
		}),
	);
	expect(typeof r.body.detail === 'string' || r.body.detail === null).toBe(true);
	expect(r.headers.get('x-correlation-id')).toMatch(UUID_RE);
}
