/**
 * Reading a run's captured output and turning it into n8n data: the one place that does
 * it, used by "Run → Get Output" and by the waits that include the output.
 *
 * - JSON output (`application/json` or `+json`, not base64) → `output` holds the JSON value.
 * - Text output (CSV, XML, YAML, plain text) → `output` holds the string.
 * - Binary output (`isBase64`) → an n8n binary property (named by the caller) with the
 *   output's file name and media type; `output` is left out of the JSON.
 */
import type { IBinaryKeyData, IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import type { ApiErrorOverrides } from '../../shared/transport';
import { apiErrorFromResponse, apiRequest } from '../../shared/transport';

export interface RunOutputBody {
	contentType?: string;
	filename?: string;
	isBase64?: boolean;
	output?: unknown;
}

export interface RunOutputOptions {
	nodeId?: string;
	binaryPropertyName: string;
	itemIndex: number;
	/** Ends the read early (a wait that is over). */
	signal?: AbortSignal;
}

export interface RunOutputData {
	/** `kind`, `contentType`, `filename` and (JSON/text) `output`. */
	json: IDataObject;
	binary?: IBinaryKeyData;
}

export const OUTPUT_ERROR_OVERRIDES: Record<number, ApiErrorOverrides> = {
	404: {
		message: 'The run or the requested output node was not found (404)',
		advice:
			'Check the Run ID. If you set a Node ID, it must be the id of a Download Output node in the graph this run executed; leave it empty to get the output of the most recently started Download Output node.',
	},
	409: {
		message: 'The run has no output to return yet (409)',
		advice:
			'Either the run has not completed yet, or it completed without capturing any output (its graph has no Download Output node, or that node did not run). Wait for the run to complete (Run → Wait for Completion) and make sure the workflow has a Download Output node.',
	},
	413: {
		message: 'The run output is larger than 10 MB and cannot be returned through the API (413)',
		advice:
			'The API returns outputs of at most 10 MB inline. Make the workflow produce a smaller output (for example split it), or collect the result another way.',
	},
};

export function isJsonContentType(contentType: string | undefined): boolean {
	const type = String(contentType ?? '')
		.split(';')[0]
		.trim()
		.toLowerCase();
	return type === 'application/json' || type.endsWith('+json') || type === 'text/json';
}

/** Fetches a run's output and turns it into item data; 409/413 throw explained errors. */
export async function fetchRunOutput(
	ctx: IExecuteFunctions,
	runId: string,
	options: RunOutputOptions,
): Promise<RunOutputData> {
	const response = await requestOutput(ctx, runId, options, false);
	return await outputToItemData(ctx, response.body ?? {}, options);
}

/**
 * The output fields of a wait's item (Include Output): `outputKind`, `outputContentType`,
 * `outputFilename` and `output` or the binary property; a 409 or 413 is explained in
 * `outputError` and `outputErrorDescription` (with the API's ids) instead of failing the item.
 */
export async function waitOutputFields(
	ctx: IExecuteFunctions,
	runId: string,
	options: RunOutputOptions,
): Promise<RunOutputData> {
	const response = await requestOutput(ctx, runId, options, true);
	if (response.statusCode === 409 || response.statusCode === 413) {
		const explained = apiErrorFromResponse(
			ctx.getNode(),
			{ statusCode: response.statusCode, body: response.body, headers: response.headers },
			{ method: 'GET', path: `/runs/${runId}/output`, itemIndex: options.itemIndex },
			OUTPUT_ERROR_OVERRIDES[response.statusCode],
		);
		return {
			json: {
				output: null,
				outputError: explained.message,
				outputErrorDescription: explained.description ?? '',
			},
		};
	}
	const { json, binary } = await outputToItemData(ctx, response.body ?? {}, options);
	const fields: IDataObject = {
		outputKind: json.kind ?? null,
		outputContentType: json.contentType ?? null,
		outputFilename: json.filename ?? null,
	};
	if (binary) fields.outputBinaryPropertyName = options.binaryPropertyName;
	else fields.output = json.output ?? null;
	return { json: fields, binary };
}

async function requestOutput(
	ctx: IExecuteFunctions,
	runId: string,
	options: RunOutputOptions,
	soft: boolean,
) {
	const qs: IDataObject = {};
	if (options.nodeId) qs.nodeId = options.nodeId;
	return await apiRequest<RunOutputBody>(
		ctx,
		{
			method: 'GET',
			path: '/runs/{runId}/output',
			pathParams: { runId },
			qs,
			itemIndex: options.itemIndex,
		},
		{
			errorOverrides: OUTPUT_ERROR_OVERRIDES,
			acceptStatuses: soft ? [409, 413] : undefined,
			signal: options.signal,
		},
	);
}

export async function outputToItemData(
	ctx: IExecuteFunctions,
	body: RunOutputBody,
	options: Pick<RunOutputOptions, 'binaryPropertyName' | 'itemIndex'>,
): Promise<RunOutputData> {
	const contentType = typeof body.contentType === 'string' ? body.contentType : undefined;
	const filename =
		typeof body.filename === 'string' && body.filename.trim() ? body.filename.trim() : undefined;
	const json: IDataObject = { contentType: contentType ?? null, filename: filename ?? null };

	if (body.isBase64 === true) {
		if (typeof body.output !== 'string') {
			throw new NodeOperationError(
				ctx.getNode(),
				'The API returned a binary output without its content',
				{
					itemIndex: options.itemIndex,
					description:
						'The output was marked as base64 but carried no string. Try again; if it persists, report it to the service.',
				},
			);
		}
		const data = Buffer.from(body.output, 'base64');
		const binaryData = await ctx.helpers.prepareBinaryData(data, filename ?? 'output', contentType);
		json.kind = 'binary';
		json.binaryPropertyName = options.binaryPropertyName;
		json.fileSize = data.length;
		return { json, binary: { [options.binaryPropertyName]: binaryData } };
	}

	if (typeof body.output === 'string') {
		// Text formats arrive as a string. With a JSON media type a string is itself the JSON
		// value (the API sends JSON output as a JSON value), so it is kept as it is.
		json.kind = isJsonContentType(contentType) ? 'json' : 'text';
		json.output = body.output;
		return { json };
	}
	json.kind = 'json';
	json.output = (body.output ?? null) as IDataObject;
	return { json };
}
