/** Where a request goes: the credential's base URL, and a path whose ids are checked UUIDs. */
import type { INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import type { IdName } from './ids';
import { requireUuid } from './ids';

/** A path template with `{name}` placeholders, and the UUID for each. */
export interface PathTemplate {
	/** Path template with `{name}` placeholders, e.g. `/runs/{runId}/output`. */
	path: string;
	/** Values for the placeholders; each must be a UUID. */
	pathParams?: Partial<Record<IdName, string>>;
	/** Item the request is for, so errors point at it. */
	itemIndex?: number;
}

export function buildPath(node: INode, request: PathTemplate): string {
	return request.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
		return encodeURIComponent(
			requireUuid(node, name, request.pathParams?.[name as IdName], request.itemIndex),
		);
	});
}

/**
 * The credential's base URL in one spelling (scheme and host in lower case, no default port,
 * no trailing slash), so one API is one scope of limits and pacing; or a clear error.
 */
export function normalizeBaseUrl(node: INode, value: unknown): string {
	const text = String(value ?? '')
		.trim()
		.replace(/\/+$/, '');
	let parsed: URL | undefined;
	try {
		parsed = new URL(text);
	} catch {
		parsed = undefined;
	}
	if (!parsed || !/^https?:$/.test(parsed.protocol)) {
		throw new NodeOperationError(
			node,
			`The credential's Base URL "${text}" is not an http(s) URL`,
			{
				description:
					'Open the Document Workflow API credential and set Base URL to the API address, e.g. https://api.example.com (no version segment).',
			},
		);
	}
	return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}
