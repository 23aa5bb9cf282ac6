/**
 * The file-link origin: serves original files through signed, expiring links.
 *
 * Needs no API key; every request is logged, and a request carrying `X-Api-Key` is
 * remembered (a client must never send the key here). A link whose signature does not
 * match answers 403; an expired one (sandbox clock) answers 410; both with a problem body.
 */
import { createReadStream, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { signLink } from './api-server';
import type { Engine } from './engine';
import { iso } from './engine';
import { Ctx, applyFaults } from './http-util';
import type { FaultInjector, RequestLog } from './infra';
import { timingSafeEqual } from 'node:crypto';

export interface FilesDeps {
	engine: Engine;
	log: RequestLog;
	faults: FaultInjector;
	linkSecret: string;
}

/** `attachment; filename="…"` with the original name (and `filename*` when it is not plain ASCII). */
export function contentDisposition(filename: string): string {
	const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
	let v = `attachment; filename="${ascii}"`;
	if (ascii !== filename)
		v += `; filename*=UTF-8''${encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
	return v;
}

function sameSig(a: string, b: string): boolean {
	const x = Buffer.from(a);
	const y = Buffer.from(b);
	return x.length === y.length && timingSafeEqual(x, y);
}

export function filesHandler(deps: FilesDeps): (req: IncomingMessage, res: ServerResponse) => void {
	return (req, res) => {
		void handle(req, res, deps).catch(() => {
			if (!res.headersSent) res.writeHead(500).end();
		});
	};
}

async function handle(req: IncomingMessage, res: ServerResponse, deps: FilesDeps): Promise<void> {
	const { engine } = deps;
	engine.settle();
	const ctx = new Ctx(req, res, 'files', deps.log, engine);
	if (deps.faults.size > 0 && (await applyFaults(ctx, deps.faults))) return;
	const method = ctx.entry.method;
	const m = /^\/files\/([^/]+)$/.exec(ctx.url.pathname);
	if (!m) return ctx.problem(404, `Nothing at ${ctx.url.pathname}.`);
	if (method !== 'GET' && method !== 'HEAD')
		return ctx.problem(405, `Method ${method} is not allowed on a file link.`);
	const doc = engine.documents.get(m[1]!);
	if (!doc) return ctx.problem(404, 'The file of this link no longer exists.');
	const expiresRaw = ctx.url.searchParams.get('expires') ?? '';
	const sig = ctx.url.searchParams.get('sig') ?? '';
	const expiresMs = Number(expiresRaw);
	if (!/^\d+$/.test(expiresRaw) || !sameSig(sig, signLink(deps.linkSecret, doc.id, expiresMs))) {
		return ctx.problem(
			403,
			'The link signature is invalid; request a new link from the original-file operation.',
		);
	}
	if (engine.now() > expiresMs) {
		return ctx.problem(
			410,
			`The link expired on ${iso(expiresMs)}; request a new link from the original-file operation.`,
		);
	}
	let size: number;
	try {
		size = statSync(doc.filePath).size;
	} catch {
		return ctx.problem(404, 'The file of this link no longer exists.');
	}
	const headers = {
		'Content-Type': doc.contentType || 'application/octet-stream',
		'Content-Length': size,
		'Content-Disposition': contentDisposition(doc.filename),
		'Cache-Control': 'private, no-store',
	};
	ctx.stream(200, headers, method === 'HEAD' ? null : createReadStream(doc.filePath));
}
