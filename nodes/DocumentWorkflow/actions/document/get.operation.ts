import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { apiRequest } from '../../../shared/transport';
import { documentIdField } from '../fields';
import { forEachItem } from '../forEachItem';

const show = { resource: ['document'], operation: ['get'] };

export const description: INodeProperties[] = [documentIdField(show)];

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await forEachItem(this, items, async (itemIndex) => {
		const documentId = this.getNodeParameter('documentId', itemIndex) as string;
		const { body } = await apiRequest<IDataObject>(this, {
			method: 'GET',
			path: '/documents/{documentId}',
			pathParams: { documentId },
			itemIndex,
		});
		return body;
	});
}
