import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

/**
 * One operation of the node: its parameters (shown only for its resource and operation)
 * and what it does. `execute` gets every input item at once, so operations that wait can
 * wait for all items together; per-item operations use `forEachItem`.
 */
export interface OperationModule {
	description: INodeProperties[];
	execute(this: IExecuteFunctions, items: INodeExecutionData[]): Promise<INodeExecutionData[]>;
}
