/**
 * The multipart/form-data body of a trigger request: the `file` part (with the binary's
 * file name and media type) and, when set, the `reference` part. This is the one place that
 * frames the body and names its content type.
 *
 * In n8n's in-memory binary mode the file is already a base64 string in the item, so the
 * body is one Buffer, built once and sent again as it is on a retry. When n8n keeps binaries
 * on disk (or in another store) the binary has an `id`, and each attempt streams the file
 * from n8n's store into the request, never reading it whole into memory.
 */
import { randomBytes } from 'node:crypto';
import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';
import { BINARY_ENCODING } from 'n8n-workflow';
import { DEFAULT_TIMEOUT_MS } from '../../shared/transport';

export interface UploadFile {
	fileName: string;
	mimeType: string;
}

/** A body ready to send, again and again: each call of `body()` gives a fresh one for one attempt. */
export interface MultipartUpload {
	contentType: string;
	file: UploadFile;
	/** The file's size in bytes, when n8n knows it. */
	fileBytes?: number;
	body(): Promise<Buffer | NodeJS.ReadableStream>;
}

/** A conservative upload rate, 1 MB per 8 s (about 1 Mbit/s): a slow link still finishes within the time given. */
const UPLOAD_MS_PER_MB = 8_000;
/** For a file whose size n8n does not report: as long as a 2 GB file would get at that rate. */
const UNKNOWN_SIZE_BYTES = 2 * 1024 ** 3;

/**
 * How long one upload attempt may take until the API answers: the time any request gets
 * (the floor) plus the file's bytes at the conservative rate.
 */
export function uploadTimeoutMs(fileBytes: number | undefined): number {
	const bytes = fileBytes ?? UNKNOWN_SIZE_BYTES;
	return DEFAULT_TIMEOUT_MS + Math.ceil((bytes / 1024 ** 2) * UPLOAD_MS_PER_MB);
}

/** Escapes a form-data parameter value the way browsers do (WHATWG HTML: `"`, CR and LF percent-encoded). */
function escapeParam(value: string): string {
	return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function newBoundary(): string {
	return `----n8nDocumentWorkflow${randomBytes(16).toString('hex')}`;
}

/** What precedes and follows the file's bytes in the body. */
function multipartFrame(
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
	return {
		preamble: Buffer.from(head, 'utf8'),
		epilogue: Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8'),
	};
}

/** The file name and media type to send for a binary; falls back to sensible defaults. */
function uploadFileOf(binary: IBinaryData): UploadFile {
	const extension = binary.fileExtension ? `.${binary.fileExtension}` : '';
	const fileName = binary.fileName?.trim() || `document${extension}`;
	const mimeType = binary.mimeType?.trim() || 'application/octet-stream';
	return { fileName, mimeType };
}

/** The size of a binary kept by id: from the binary itself, else from n8n's store; undefined if neither knows. */
async function storedFileBytes(
	ctx: IExecuteFunctions,
	binary: IBinaryData & { id: string },
): Promise<number | undefined> {
	if (typeof binary.bytes === 'number') return binary.bytes;
	try {
		const { fileSize } = await ctx.helpers.getBinaryMetadata(binary.id);
		return Number.isFinite(fileSize) ? fileSize : undefined;
	} catch (error) {
		ctx.logger?.debug('The binary store did not give the file size', {
			error: (error as Error).message,
		});
		return undefined;
	}
}

/** The upload of one binary (with an optional reference) as a multipart body. */
export async function multipartUpload(
	ctx: IExecuteFunctions,
	binary: IBinaryData,
	reference: string | undefined,
): Promise<MultipartUpload> {
	const boundary = newBoundary();
	const file = uploadFileOf(binary);
	const contentType = `multipart/form-data; boundary=${boundary}`;
	const { preamble, epilogue } = multipartFrame(boundary, file, reference);

	const { id } = binary;
	if (!id) {
		const whole = Buffer.concat([preamble, Buffer.from(binary.data, BINARY_ENCODING), epilogue]);
		return {
			contentType,
			file,
			fileBytes: whole.length - preamble.length - epilogue.length,
			body: async () => whole,
		};
	}

	async function* framed(fileStream: AsyncIterable<unknown>): AsyncGenerator<Buffer> {
		yield preamble;
		for await (const chunk of fileStream)
			yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
		yield epilogue;
	}
	return {
		contentType,
		file,
		fileBytes: await storedFileBytes(ctx, { ...binary, id }),
		// A stream can be sent only once, so each attempt opens the file again. `compose` is the
		// Readable's own method for piping it through a generator; it returns a Readable (a Duplex)
		// that n8n's HTTP client (axios) pipes into the request as the server reads it.
		body: async () => (await ctx.helpers.getBinaryStream(id)).compose(framed),
	};
}
