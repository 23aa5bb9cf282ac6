/** Reading what the API answered: header names and bodies that may arrive as text or bytes. */

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
