import type {
	IDataObject,
	IDisplayOptions,
	IExecuteFunctions,
	INodeProperties,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { MAX_PAGE_SIZE, apiRequest, requireUuid } from '../../shared/transport';
import { isRunAsTool } from '../helpers/toolMode';

/** `returnAll` and `limit`, as n8n's list operations show them. */
export function listFields(show: IDisplayOptions['show']): INodeProperties[] {
	return [
		{
			displayName: 'Return All',
			name: 'returnAll',
			type: 'boolean',
			default: false,
			description: 'Whether to return all results or only up to a given limit',
			displayOptions: { show },
		},
		{
			displayName: 'Limit',
			name: 'limit',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: MAX_PAGE_SIZE },
			default: 50,
			description: 'Max number of results to return',
			displayOptions: { show: { ...show, returnAll: [false] } },
		},
	];
}

/** Reads `returnAll`/`limit` and checks the limit before any request. */
export function readListSettings(
	ctx: IExecuteFunctions,
	itemIndex: number,
): { returnAll: boolean; limit: number } {
	const returnAll = ctx.getNodeParameter('returnAll', itemIndex, false) as boolean;
	if (returnAll) return { returnAll, limit: Infinity };
	const raw = ctx.getNodeParameter('limit', itemIndex, 50);
	const limit = Number(raw);
	if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
		throw new NodeOperationError(
			ctx.getNode(),
			`Limit must be a whole number from 1 to ${MAX_PAGE_SIZE}, not "${String(raw)}"`,
			{
				itemIndex,
				description: `The API returns at most ${MAX_PAGE_SIZE} entries per page. For more, turn on Return All, which reads every page.`,
			},
		);
	}
	return { returnAll, limit };
}

/** A filter value that must be one of `allowed`; undefined when empty. */
export function enumFilter(
	ctx: IExecuteFunctions,
	itemIndex: number,
	label: string,
	value: unknown,
	allowed: string[],
): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	const text = String(value).trim();
	if (!allowed.includes(text)) {
		throw new NodeOperationError(ctx.getNode(), `"${text}" is not a valid ${label} filter`, {
			itemIndex,
			description: `Use one of: ${allowed.join(', ')}.`,
		});
	}
	return text;
}

/** A filter id that must be a UUID; undefined when empty. */
export function idFilter(
	ctx: IExecuteFunctions,
	itemIndex: number,
	name: string,
	value: unknown,
): string | undefined {
	if (value === undefined || value === null || String(value).trim() === '') return undefined;
	return requireUuid(ctx.getNode(), name, value, itemIndex);
}

/**
 * Reads a paged list (`{count, pages, data}`): every page of 100 with Return All, else
 * one page of `limit`. The API's order is kept.
 *
 * Run as an AI agent's tool, the result is one object instead of one item per entry
 * (`toolListResult`), and Return All reads one page of 100 only, so a model always gets a bounded
 * answer that says whether there is more. Version 1's output in workflows is unchanged.
 */
export async function readPagedList(
	ctx: IExecuteFunctions,
	path: string,
	qs: IDataObject,
	settings: { returnAll: boolean; limit: number },
	itemIndex: number,
): Promise<IDataObject[]> {
	const asTool = isRunAsTool(ctx);
	const returnAll = settings.returnAll && !asTool;
	const limit = settings.returnAll && asTool ? MAX_PAGE_SIZE : settings.limit;
	const pageSize = returnAll ? MAX_PAGE_SIZE : limit;
	const results: IDataObject[] = [];
	for (let page = 1; ; page++) {
		const { body } = await apiRequest<{ data?: IDataObject[]; pages?: number; count?: number }>(
			ctx,
			{
				method: 'GET',
				path,
				qs: { ...qs, page, pageSize },
				itemIndex,
			},
		);
		const data = Array.isArray(body?.data) ? body.data : [];
		results.push(...data);
		const pages = typeof body?.pages === 'number' ? body.pages : page;
		if (!returnAll) {
			const listed = results.slice(0, limit);
			if (!asTool) return listed;
			const total = typeof body?.count === 'number' ? body.count : undefined;
			return [toolListResult(listed, total, pages > page)];
		}
		if (data.length === 0 || page >= pages) return results;
	}
}

/**
 * A whole (unpaged) list as the node outputs it: one item per entry, or, run as an AI agent's
 * tool, one `toolListResult` object (an empty list would otherwise reach the model as "").
 */
export function listOutput(ctx: IExecuteFunctions, results: IDataObject[]): IDataObject[] {
	return isRunAsTool(ctx) ? [toolListResult(results, results.length, false)] : results;
}

/**
 * A list as a tool hands it to a model: the entries, how many, how many match in all, and
 * whether more exist than were returned (with what to do about it).
 */
export function toolListResult(
	results: IDataObject[],
	total: number | undefined,
	morePages: boolean,
): IDataObject {
	const hasMore = total === undefined ? morePages : total > results.length;
	const answer: IDataObject = { results, returned: results.length, total: total ?? null, hasMore };
	if (hasMore) {
		answer.note = `Only the first ${results.length}${total === undefined ? '' : ` of ${total}`} matching entries are listed. Narrow the filters to see the others.`;
	}
	return answer;
}
