import type { INodeExecutionData, INodeType, INodeTypeDescription, IPollFunctions } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

export class DocumentWorkflowTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Document Workflow Trigger',
		name: 'documentWorkflowTrigger',
		icon: { light: 'file:documentWorkflow.svg', dark: 'file:documentWorkflow.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{"Events: " + ($parameter["events"].length ? $parameter["events"].join(", ") : "all")}}',
		description: 'Starts the workflow when Document Workflow events happen',
		defaults: { name: 'Document Workflow Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'documentWorkflowApi', required: true }],
		properties: [],
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		return null;
	}
}
