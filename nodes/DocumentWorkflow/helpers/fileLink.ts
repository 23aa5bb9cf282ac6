/**
 * Downloads from a link the API handed out (the original-file link). It goes through
 * n8n's plain `httpRequest`, never the authenticated one, so the link's host never
 * receives the API key.
 */
import type { IExecuteFunctions, IN8nHttpFullResponse } from 'n8n-workflow';
import { cancelSignalOf } from '../../shared/transport';
import { lowerCaseHeaders } from '../../shared/transport/responses';

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

