import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { apiRequest } from '../../../shared/transport';
import { documentIdField } from '../fields';
import { forEachItem } from '../forEachItem';
import { listOutput } from '../listing';

const show = { resource: ['document'], operation: ['getRuns'] };

export const description: INodeProperties[] = [documentIdField(show)];

/**
 * One item per top-level run of the document, newest first (the API's order); none when it has
 * no runs yet. As an AI agent's tool, one object listing them (`listOutput`).
 */
export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await forEachItem(this, items, async (itemIndex) => {
		const documentId = this.getNodeParameter('documentId', itemIndex) as string;
		const { body } = await apiRequest<{ data?: IDataObject[] }>(this, {
			method: 'GET',
			path: '/documents/{documentId}/runs',
			pathParams: { documentId },
			itemIndex,
		});
		const runs = Array.isArray(body?.data) ? body.data : [];
		return listOutput(
			this,
			runs.map((run) => ({ ...run, documentId })),
		);
	});
}
