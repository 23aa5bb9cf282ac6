import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { fetchRunOutput } from '../../helpers/runOutput';
import { requireUuid } from '../../../shared/transport';
import { outputBinaryField, runIdField } from '../fields';
import { forEachItem } from '../forEachItem';

const show = { resource: ['run'], operation: ['getOutput'] };

export const description: INodeProperties[] = [
	runIdField(show),
	{
		displayName: 'Node ID',
		name: 'nodeId',
		type: 'string',
		default: '',
		placeholder: 'e.g. download-output-1',
		description:
			'Optional: the ID of the Download Output node whose output to get, when the workflow has several. Empty: the most recently started Download Output node.',
		displayOptions: { show },
	},
	outputBinaryField(
		show,
		'The name of the binary field to put the output in when it is a file (e.g. a PDF or an image), with its file name and media type',
	),
];

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await forEachItem(this, items, async (itemIndex) => {
		const runId = requireUuid(
			this.getNode(),
			'runId',
			this.getNodeParameter('runId', itemIndex),
			itemIndex,
		);
		const nodeId = String(this.getNodeParameter('nodeId', itemIndex, '') ?? '').trim();
		const binaryPropertyName =
			String(this.getNodeParameter('binaryPropertyName', itemIndex, 'data')).trim() || 'data';
		const output = await fetchRunOutput(this, runId, {
			nodeId: nodeId || undefined,
			binaryPropertyName,
			itemIndex,
		});
		const json = { runId, ...(nodeId ? { nodeId } : {}), ...output.json };
		return output.binary
			? [{ json, binary: output.binary, pairedItem: { item: itemIndex } }]
			: [{ json, pairedItem: { item: itemIndex } }];
	});
}
