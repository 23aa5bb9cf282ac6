/**
 * The multipart/form-data body of a trigger request: the `file` part (with the binary's
 * file name and media type) and, when set, the `reference` part.
 *
 * In n8n's in-memory binary mode the file is already a base64 string in the item, so the
 * body is one Buffer. When n8n keeps binaries on disk (or in another store) the binary has
 * an `id`, and the file is streamed from n8n's store into the request, never read whole
 * into memory.
 */
import { randomBytes } from 'node:crypto';
import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';

/** The stream type n8n's binary helpers hand out (node's Readable), named without importing 'stream'. */
export type BinaryStream = Awaited<ReturnType<IExecuteFunctions['helpers']['getBinaryStream']>>;

export interface MultipartBody {
	/** A Buffer (in-memory binaries) or a Readable (binaries kept by id). */
	body: Buffer | BinaryStream;
	contentType: string;
	/** Byte length when known up front (always for a Buffer body). */
	length?: number;
	streamed: boolean;
}

export interface UploadFile {
	fileName: string;
	mimeType: string;
}

/** Escapes a form-data parameter value the way browsers do (WHATWG HTML: `"`, CR and LF percent-encoded). */
function escapeParam(value: string): string {
	return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

export function newBoundary(): string {
	return `----n8nDocumentWorkflow${randomBytes(16).toString('hex')}`;
}

/** What precedes and follows the file's bytes in the body. */
export function multipartFrame(
	boundary: string,
	file: UploadFile,
	reference: string | undefined,
): { preamble: Buffer; epilogue: Buffer } {
	let head = '';
	if (reference !== undefined && reference !== '') {
		head +=
			`--${boundary}\r\n` +
			'Content-Disposition: form-data; name="reference"\r\n' +
			'Content-Type: text/plain; charset=utf-8\r\n\r\n' +
			`${reference}\r\n`;
	}
	head +=
		`--${boundary}\r\n` +
		`Content-Disposition: form-data; name="file"; filename="${escapeParam(file.fileName)}"\r\n` +
		`Content-Type: ${file.mimeType.replace(/[\r\n]/g, '')}\r\n\r\n`;
	return { preamble: Buffer.from(head, 'utf8'), epilogue: Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8') };
}

/** The file name and media type to send for a binary; falls back to sensible defaults. */
export function uploadFileOf(binary: IBinaryData): UploadFile {
	const extension = binary.fileExtension ? `.${binary.fileExtension}` : '';
	const fileName = binary.fileName?.trim() || `document${extension}`;
	const mimeType = binary.mimeType?.trim() || 'application/octet-stream';
	return { fileName, mimeType };
}

/**
 * Builds the body for one attempt. A stream can be sent only once, so callers that may
 * retry call this again for each attempt (the transport's `bodyFactory`), with the same
 * boundary (it is part of the Content-Type header, set once per request).
 */
export async function buildMultipartBody(
	ctx: IExecuteFunctions,
	itemIndex: number,
	binaryPropertyName: string,
	binary: IBinaryData,
	reference: string | undefined,
	boundary: string,
): Promise<MultipartBody> {
	const { preamble, epilogue } = multipartFrame(boundary, uploadFileOf(binary), reference);
	const contentType = `multipart/form-data; boundary=${boundary}`;

	if (!binary.id) {
		const file = await ctx.helpers.getBinaryDataBuffer(itemIndex, binaryPropertyName);
		const body = Buffer.concat([preamble, file, epilogue]);
		return { body, contentType, length: body.length, streamed: false };
	}

	const fileStream = await ctx.helpers.getBinaryStream(binary.id);
	async function* parts(): AsyncGenerator<Buffer> {
		yield preamble;
		for await (const chunk of fileStream) {
			yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
		}
		yield epilogue;
	}
	// Node code may not import 'stream', but the file stream n8n gave us is a Readable (or a
	// subclass such as fs.ReadStream), and `Readable.from` is a static method its constructor
	// inherits: it turns the async generator into a new Readable that n8n's HTTP client
	// (axios) pipes into the request as it is read.
	const ReadableClass = fileStream.constructor as unknown as {
		from(iterable: AsyncIterable<Buffer>, options?: { objectMode?: boolean }): BinaryStream;
	};
	const body = ReadableClass.from(parts(), { objectMode: false });
	return { body, contentType, streamed: true };
}
