import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { forEachItem } from '../forEachItem';
import { enumFilter, idFilter, listFields, readListSettings, readPagedList } from '../listing';

const show = { resource: ['reviewTask'], operation: ['getMany'] };

export const REVIEW_TASK_STATUSES = [
	'pending',
	'in_review',
	'approved_pending_resume',
	'rejected_pending_resume',
	'approved',
	'rejected',
	'resume_failed',
	'cancelled',
];

export const description: INodeProperties[] = [
	...listFields(show),
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		displayOptions: { show },
		options: [
			{
				displayName: 'Run ID',
				name: 'runId',
				type: 'string',
				default: '',
				description: 'Only tasks of this run: its ID, a UUID ("runId" on submissions and review tasks); includes tasks of sub-workflows the run called',
			},
			{
				displayName: 'Status',
				name: 'status',
				type: 'options',
				options: [
					{ name: 'Approved', value: 'approved' },
					{ name: 'Approved (Pending Resume)', value: 'approved_pending_resume' },
					{ name: 'Cancelled', value: 'cancelled' },
					{ name: 'In Review', value: 'in_review' },
					{ name: 'Pending', value: 'pending' },
					{ name: 'Rejected', value: 'rejected' },
					{ name: 'Rejected (Pending Resume)', value: 'rejected_pending_resume' },
					{ name: 'Resume Failed', value: 'resume_failed' },
				],
				default: 'pending',
				description: `Only tasks with this status; as text, one of: ${REVIEW_TASK_STATUSES.join(', ')}`,
			},
			{
				displayName: 'Workflow ID',
				name: 'workflowId',
				type: 'string',
				default: '',
				description: 'Only tasks of this workflow: its ID, a UUID ("workflowId" on runs and review tasks)',
			},
		],
	},
];

/** Review tasks, newest first (the API's order), one item each. */
export async function execute(this: IExecuteFunctions, items: INodeExecutionData[]): Promise<INodeExecutionData[]> {
	return await forEachItem(this, items, async (itemIndex) => {
		const settings = readListSettings(this, itemIndex);
		const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
		const qs: IDataObject = {};
		const status = enumFilter(this, itemIndex, 'review task status', filters.status, REVIEW_TASK_STATUSES);
		const workflowId = idFilter(this, itemIndex, 'workflowId', filters.workflowId);
		const runId = idFilter(this, itemIndex, 'runId', filters.runId);
		if (status) qs.status = status;
		if (workflowId) qs.workflowId = workflowId;
		if (runId) qs.runId = runId;
		return await readPagedList(this, '/review-tasks', qs, settings, itemIndex);
	});
}
