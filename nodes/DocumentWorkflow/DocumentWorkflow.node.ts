/**
 * The Document Workflow action node. This folder holds everything only this node uses:
 * `actions/` has one folder per resource, each operation in `<op>.operation.ts` (its fields and
 * its execute side by side), dispatched by `actions/router.ts`; `helpers/` has the work several
 * operations share (waiting on runs, reading run output, uploads, idempotency keys). The API
 * client both nodes use is in `../shared/transport/`.
 */
import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';
import * as document from './actions/document/Document.resource';
import * as event from './actions/event/Event.resource';
import * as reviewTask from './actions/reviewTask/ReviewTask.resource';
import { router } from './actions/router';
import * as run from './actions/run/Run.resource';
import * as workflow from './actions/workflow/Workflow.resource';

export class DocumentWorkflow implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Document Workflow',
		name: 'documentWorkflow',
		icon: { light: 'file:documentWorkflow.svg', dark: 'file:documentWorkflow.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description:
			'Submit documents to Document Workflow processing, follow their runs, and read outputs, review tasks, events and original files',
		defaults: { name: 'Document Workflow' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'documentWorkflowApi', required: true }],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{ name: 'Document', value: 'document' },
					{ name: 'Event', value: 'event' },
					{ name: 'Review Task', value: 'reviewTask' },
					{ name: 'Run', value: 'run' },
					{ name: 'Workflow', value: 'workflow' },
				],
				default: 'workflow',
			},
			...workflow.description,
			...run.description,
			...document.description,
			...reviewTask.description,
			...event.description,
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
