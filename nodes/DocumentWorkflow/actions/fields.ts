import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';

/** Identifier fields shared by several operations; names are fixed by saved workflows. */
function idField(name: string, displayName: string, what: string, show: IDisplayOptions['show']): INodeProperties {
	return {
		displayName,
		name,
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70',
		description: `The ID of the ${what}, a UUID such as 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70, found as "${name}" in other operations' results`,
		displayOptions: { show },
	};
}

export const workflowIdField = (show: IDisplayOptions['show']) => idField('workflowId', 'Workflow ID', 'workflow', show);
export const runIdField = (show: IDisplayOptions['show']) => idField('runId', 'Run ID', 'run', show);
export const documentIdField = (show: IDisplayOptions['show']) => idField('documentId', 'Document ID', 'document', show);
export const reviewTaskIdField = (show: IDisplayOptions['show']) => idField('reviewTaskId', 'Review Task ID', 'review task', show);
