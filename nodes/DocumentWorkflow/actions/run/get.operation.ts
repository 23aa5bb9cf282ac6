import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { apiRequest } from '../../../shared/transport';
import { runIdField } from '../fields';
import { forEachItem } from '../forEachItem';

const show = { resource: ['run'], operation: ['get'] };

export const description: INodeProperties[] = [runIdField(show)];

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await forEachItem(this, items, async (itemIndex) => {
		const runId = this.getNodeParameter('runId', itemIndex) as string;
		const { body } = await apiRequest<IDataObject>(
			this,
			{ method: 'GET', path: '/runs/{runId}', pathParams: { runId }, itemIndex },
			{
				errorOverrides: {
					404: {
						message: 'The run was not found (404)',
						advice:
							'Check the Run ID. A run that was just triggered can answer 404 for a short while before it exists, and stays 404 if it never starts: use Run → Wait for Completion (which waits out that window and explains it), or Document → Get to see the document status.',
					},
				},
			},
		);
		return body;
	});
}
