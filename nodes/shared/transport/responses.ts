/** Reading what the API answered: header names and bodies that may arrive as text or bytes. */
import type { IDataObject } from 'n8n-workflow';

/** The API's largest page (`pageSize` at most 100): the fewest requests for a list. */
export const MAX_PAGE_SIZE = 100;

export function lowerCaseHeaders(headers: unknown): Record<string, string> {
	const result: Record<string, string> = {};
	if (headers && typeof headers === 'object') {
		for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
			result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
		}
	}
	return result;
}

/** Parses a body that may have arrived as text or bytes; returns undefined when it is not JSON. */
export function asJson(body: unknown): unknown {
	if (body === undefined || body === null || body === '') return undefined;
	if (Buffer.isBuffer(body)) body = body.toString('utf8');
	if (typeof body !== 'string') return body;
	try {
		return JSON.parse(body);
	} catch {
		return undefined;
	}
}

/** A JSON object (not an array, not null): the shape of every API resource and envelope. */
export function isObject(value: unknown): value is IDataObject {
	return !!value && typeof value === 'object' && !Array.isArray(value);
}
