/**
 * Downloads from a link the API handed out (the original-file link). It goes through
 * n8n's plain `httpRequest`, never the authenticated one, so the link's host never
 * receives the API key. The link is signed in its query string: errors name the host and
 * path only, never the query, so a link that has not yet expired is not handed on.
 */
import type { IExecuteFunctions, IN8nHttpFullResponse, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import { DEFAULT_TIMEOUT_MS, cancelSignalOf, networkErrorCode } from '../../shared/transport';
import { lowerCaseHeaders } from '../../shared/transport/responses';

/** The link without its query string (the signature): what errors may show of it. */
export function linkWithoutSecret(url: string): string {
	try {
		const parsed = new URL(url);
		return `${parsed.origin}${parsed.pathname}`;
	} catch {
		return url.split(/[?#]/)[0];
	}
}

/** Text (e.g. an error page the file host sent) with the link's query string and each of its values taken out. */
export function withoutLinkSecrets(text: string, url: string): string {
	let search: URLSearchParams;
	try {
		search = new URL(url).searchParams;
	} catch {
		return text;
	}
	let clean = text;
	for (const value of search.values())
		if (value.length >= 6) clean = clean.split(value).join('[redacted]');
	return clean;
}

/**
 * Sends the GET and hands the response body over as a stream, so a large file can go into
 * n8n's binary store without being held in memory. A caller that does not use the body of
 * an error status must still consume it (`drainStream`) so the connection is released.
 */
export async function downloadStreamFromLink(
	ctx: IExecuteFunctions,
	url: string,
	itemIndex: number,
): Promise<{
	statusCode: number;
	body: AsyncIterable<unknown> & object;
	headers: Record<string, string>;
}> {
	const signal = cancelSignalOf(ctx);
	let response: IN8nHttpFullResponse;
	try {
		response = (await ctx.helpers.httpRequest({
			method: 'GET',
			url,
			encoding: 'stream',
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			timeout: DEFAULT_TIMEOUT_MS,
			abortSignal: signal,
		})) as IN8nHttpFullResponse;
	} catch (error) {
		if (signal?.aborted)
			throw new NodeOperationError(
				ctx.getNode(),
				'The execution was cancelled while downloading the original file',
				{ itemIndex },
			);
		// n8n's error quotes the whole request, link and signature included: only the code is kept.
		const code = networkErrorCode(error);
		const place = linkWithoutSecret(url);
		throw new NodeApiError(
			ctx.getNode(),
			{ networkErrorCode: code ?? null, method: 'GET', url: place } as JsonObject,
			{
				message: 'Could not download the original file: the file host gave no answer',
				description: `GET ${place} got no HTTP answer${code ? ` (error code ${code})` : ''}. Check that n8n can reach this host, then try again; a new link is requested on each run.`,
				itemIndex,
			},
		);
	}
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
