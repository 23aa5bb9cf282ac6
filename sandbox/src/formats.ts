/** Document format detection from the file name extension, then the content type. */
import type { TriggerFormat } from './types';

const BY_EXTENSION: Record<string, TriggerFormat> = {
	pdf: 'pdf',
	docx: 'docx',
	xlsx: 'xlsx',
	pptx: 'pptx',
	csv: 'csv',
	png: 'png',
	jpg: 'jpeg',
	jpeg: 'jpeg',
	tif: 'tiff',
	tiff: 'tiff',
	gif: 'gif',
	webp: 'webp',
};

const BY_CONTENT_TYPE: Record<string, TriggerFormat> = {
	'application/pdf': 'pdf',
	'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
	'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
	'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
	'text/csv': 'csv',
	'application/csv': 'csv',
	'image/png': 'png',
	'image/jpeg': 'jpeg',
	'image/jpg': 'jpeg',
	'image/pjpeg': 'jpeg',
	'image/tiff': 'tiff',
	'image/gif': 'gif',
	'image/webp': 'webp',
};

/**
 * The format of an uploaded file: the extension of its name wins when it is a known one;
 * otherwise the content type decides; null when neither is known.
 */
export function detectFormat(
	filename: string | undefined,
	contentType: string | undefined,
): TriggerFormat | null {
	const name = (filename ?? '').trim().toLowerCase();
	const dot = name.lastIndexOf('.');
	if (dot >= 0) {
		const ext = name.slice(dot + 1);
		const byExt = BY_EXTENSION[ext];
		if (byExt) return byExt;
	}
	const ct = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
	return BY_CONTENT_TYPE[ct] ?? null;
}

export function contentTypeOf(format: TriggerFormat): string {
	for (const [ct, f] of Object.entries(BY_CONTENT_TYPE)) if (f === format) return ct;
	return 'application/octet-stream';
}
