import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/**
 * Runs `work` for each input item in turn. With "Continue On Fail" a failing item becomes
 * an error item (paired with its input) and the rest go on; otherwise the error stops the
 * node, naming the item.
 */
export async function forEachItem(
	ctx: IExecuteFunctions,
	items: INodeExecutionData[],
	work: (itemIndex: number) => Promise<INodeExecutionData[] | IDataObject | IDataObject[]>,
): Promise<INodeExecutionData[]> {
	const output: INodeExecutionData[] = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const result = await work(itemIndex);
			output.push(...toItems(result, itemIndex));
		} catch (error) {
			if (ctx.continueOnFail()) {
				output.push(errorItem(error, itemIndex));
				continue;
			}
			throw withItemIndex(ctx, error, itemIndex);
		}
	}
	return output;
}

function toItems(
	result: INodeExecutionData[] | IDataObject | IDataObject[],
	itemIndex: number,
): INodeExecutionData[] {
	const list = Array.isArray(result) ? result : [result];
	return list.map((entry) =>
		isExecutionData(entry)
			? { ...entry, pairedItem: entry.pairedItem ?? { item: itemIndex } }
			: { json: entry, pairedItem: { item: itemIndex } },
	);
}

function isExecutionData(value: unknown): value is INodeExecutionData {
	return (
		!!value &&
		typeof value === 'object' &&
		'json' in value &&
		typeof (value as INodeExecutionData).json === 'object'
	);
}

/** The item "Continue On Fail" emits for a failed input: the message, the advice, and the API's ids. */
export function errorItem(error: unknown, itemIndex: number): INodeExecutionData {
	const e = error as {
		message?: string;
		description?: string | null;
		httpCode?: string | null;
		context?: IDataObject;
		errorResponse?: IDataObject;
	};
	const json: IDataObject = { error: e.message ?? String(error) };
	if (e.description) json.description = e.description;
	if (e.httpCode) json.httpCode = e.httpCode;
	const response = e.errorResponse;
	if (response?.traceId) json.traceId = response.traceId;
	if (response?.correlationId) json.correlationId = response.correlationId;
	return { json, pairedItem: { item: itemIndex } };
}

export function withItemIndex(ctx: IExecuteFunctions, error: unknown, itemIndex: number): Error {
	if (error instanceof NodeOperationError || (error as { context?: IDataObject })?.context) {
		const context = (error as { context: IDataObject }).context;
		if (context && context.itemIndex === undefined) context.itemIndex = itemIndex;
		return error as Error;
	}
	return new NodeOperationError(ctx.getNode(), error as Error, { itemIndex });
}
