import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

export const description: INodeProperties[] = [];

export async function execute(this: IExecuteFunctions, _items: INodeExecutionData[]): Promise<INodeExecutionData[]> {
	throw new NodeOperationError(this.getNode(), 'Not implemented yet');
}
