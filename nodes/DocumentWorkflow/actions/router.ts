/**
 * The action node's operations: one folder per resource (`workflow/`, `run/`, `document/`,
 * `reviewTask/`, `event/`), each with a `<Resource>.resource.ts` listing its operations and one
 * `<op>.operation.ts` per operation. This router sends each execution to the chosen operation.
 * Beside it: the fields and options several operations share (`fields.ts`, `waitOptions.ts`,
 * `listing.ts`) and the per-item loop (`forEachItem.ts`).
 */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import * as document from './document/Document.resource';
import * as event from './event/Event.resource';
import * as reviewTask from './reviewTask/ReviewTask.resource';
import * as run from './run/Run.resource';
import type { OperationModule } from './types';
import * as workflow from './workflow/Workflow.resource';

const resources: Record<string, Record<string, OperationModule>> = {
	workflow: workflow.operations,
	run: run.operations,
	document: document.operations,
	reviewTask: reviewTask.operations,
	event: event.operations,
};

/** Dispatches to the operation chosen in the node; resource and operation are the same for every item. */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const resource = this.getNodeParameter('resource', 0) as string;
	const operation = this.getNodeParameter('operation', 0) as string;
	const module = resources[resource]?.[operation];
	if (!module) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${operation}" of "${resource}" is not supported`,
			{
				description: 'Open the node and choose a resource and an operation from the lists.',
			},
		);
	}
	return [await module.execute.call(this, items)];
}
