import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { apiRequest } from '../../../shared/transport';
import { workflowIdField } from '../fields';
import { forEachItem } from '../forEachItem';

const show = { resource: ['workflow'], operation: ['get'] };

export const description: INodeProperties[] = [workflowIdField(show)];

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await forEachItem(this, items, async (itemIndex) => {
		const workflowId = this.getNodeParameter('workflowId', itemIndex) as string;
		const { body } = await apiRequest<IDataObject>(this, {
			method: 'GET',
			path: '/workflows/{workflowId}',
			pathParams: { workflowId },
			itemIndex,
		});
		return body;
	});
}
