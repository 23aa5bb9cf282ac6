import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { apiRequest } from '../../../shared/transport';
import { reviewTaskIdField } from '../fields';
import { forEachItem } from '../forEachItem';

const show = { resource: ['reviewTask'], operation: ['get'] };

export const description: INodeProperties[] = [reviewTaskIdField(show)];

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await forEachItem(this, items, async (itemIndex) => {
		const reviewTaskId = this.getNodeParameter('reviewTaskId', itemIndex) as string;
		const { body } = await apiRequest<IDataObject>(this, {
			method: 'GET',
			path: '/review-tasks/{reviewTaskId}',
			pathParams: { reviewTaskId },
			itemIndex,
		});
		return body;
	});
}
