import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import { apiRequest, requireUuid } from '../../../shared/transport';
import {
	downloadStreamFromLink,
	drainStream,
	linkWithoutSecret,
	withoutLinkSecrets,
} from '../../helpers/fileLink';
import { documentIdField, outputBinaryField } from '../fields';
import { forEachItem } from '../forEachItem';

const show = { resource: ['document'], operation: ['getOriginal'] };

export const description: INodeProperties[] = [
	documentIdField(show),
	{
		displayName: 'Download',
		name: 'download',
		type: 'boolean',
		default: false,
		description:
			"Whether to download the file itself into a binary property (under its original file name). Off: return the short-lived link (valid 5 minutes, needs no API key) and when it expires. As an AI agent's tool, leave it off: agents receive JSON only, never files.",
		displayOptions: { show },
	},
	outputBinaryField(
		{ ...show, download: [true] },
		'The name of the binary field to put the downloaded file in',
	),
];

/** Statuses with which a file host says a link is no longer valid. */
const EXPIRED_LINK_STATUSES = [403, 404, 410];

interface OriginalLink {
	url: string;
	expiresOn?: string;
}

async function requestLink(
	ctx: IExecuteFunctions,
	documentId: string,
	itemIndex: number,
): Promise<OriginalLink> {
	const { body } = await apiRequest<IDataObject>(ctx, {
		method: 'GET',
		path: '/documents/{documentId}/original',
		pathParams: { documentId },
		rateLimit: 'original',
		itemIndex,
	});
	if (typeof body?.url !== 'string' || !/^https?:\/\//i.test(body.url)) {
		throw new NodeOperationError(
			ctx.getNode(),
			'The API returned no usable link to the original file',
			{
				itemIndex,
				description:
					'The response had no http(s) "url". Try again; if it persists, report it to the service.',
			},
		);
	}
	return {
		url: body.url,
		expiresOn: typeof body.expiresOn === 'string' ? body.expiresOn : undefined,
	};
}

/** The file name from Content-Disposition (`filename*` preferred), else the link's last path segment. */
export function fileNameFrom(headers: Record<string, string>, url: string): string | undefined {
	const disposition = headers['content-disposition'] ?? '';
	const extended = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(disposition);
	let name: string | undefined;
	if (extended) {
		try {
			name = decodeURIComponent(extended[2].trim().replace(/^"|"$/g, ''));
		} catch {
			name = undefined;
		}
	}
	if (!name) {
		const plain = /filename\s*=\s*("((?:[^"\\]|\\.)*)"|[^;]+)/i.exec(disposition);
		if (plain) name = (plain[2] ?? plain[1]).replace(/\\(.)/g, '$1').trim();
	}
	if (!name) {
		try {
			const segment = new URL(url).pathname.split('/').filter(Boolean).pop();
			name = segment ? decodeURIComponent(segment) : undefined;
		} catch {
			name = undefined;
		}
	}
	// Only the base name: never a path.
	const base = name?.split(/[\\/]/).pop()?.trim();
	return base || undefined;
}

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await forEachItem(this, items, async (itemIndex) => {
		const documentId = requireUuid(
			this.getNode(),
			'documentId',
			this.getNodeParameter('documentId', itemIndex),
			itemIndex,
		);
		const download = this.getNodeParameter('download', itemIndex, false) as boolean;
		let link = await requestLink(this, documentId, itemIndex);
		if (!download) return { documentId, url: link.url, expiresOn: link.expiresOn ?? null };

		const binaryPropertyName =
			String(this.getNodeParameter('binaryPropertyName', itemIndex, 'data')).trim() || 'data';
		let linkRequests = 1;
		for (;;) {
			// The link needs no key; the unauthenticated helper keeps the API key away from its host.
			const response = await downloadStreamFromLink(this, link.url, itemIndex);
			if (response.statusCode >= 200 && response.statusCode < 300) {
				const fileName = fileNameFrom(response.headers, link.url) ?? `document-${documentId}`;
				const mimeType = response.headers['content-type']?.split(';')[0].trim() || undefined;
				const binary = await this.helpers.prepareBinaryData(
					response.body as unknown as Buffer,
					fileName,
					mimeType,
				);
				return [
					{
						json: {
							documentId,
							fileName: binary.fileName ?? fileName,
							mimeType: binary.mimeType,
							fileSize: binary.fileSize ?? null,
							linkRequests,
						},
						binary: { [binaryPropertyName]: binary },
						pairedItem: { item: itemIndex },
					},
				];
			}
			const text = await drainStream(response.body);
			if (EXPIRED_LINK_STATUSES.includes(response.statusCode) && linkRequests === 1) {
				// The link expired (it lives 5 minutes) or was refused: ask for a fresh one, once.
				link = await requestLink(this, documentId, itemIndex);
				linkRequests++;
				continue;
			}
			const place = linkWithoutSecret(link.url);
			throw new NodeApiError(
				this.getNode(),
				{ status: response.statusCode, documentId, method: 'GET', url: place } as JsonObject,
				{
					message: `Downloading the original file failed (HTTP ${response.statusCode})`,
					description: `The file host answered ${response.statusCode}${linkRequests > 1 ? ' even with a freshly requested link' : ''}. ${
						EXPIRED_LINK_STATUSES.includes(response.statusCode)
							? 'The link may have expired again or the file may no longer be available; try again later.'
							: 'Try again later.'
					}${text ? `\nResponse: ${withoutLinkSecrets(text, link.url).slice(0, 300)}` : ''}\nRequest: GET ${place} (the link's signature is left out)`,
					httpCode: String(response.statusCode),
					itemIndex,
				},
			);
		}
	});
}
