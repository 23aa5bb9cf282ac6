import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { idLabel, optionalUuid } from '../../../shared/transport';
import { forEachItem } from '../forEachItem';
import { enumFilter, listFields, readListSettings, readPagedList } from '../listing';
import { filtersCollection } from '../fields';

const show = { resource: ['reviewTask'], operation: ['getMany'] };

/** Review task statuses in lifecycle order (the order messages list them in), with their labels. */
const REVIEW_TASK_STATUS_LABELS: Record<string, string> = {
	pending: 'Pending',
	in_review: 'In Review',
	approved_pending_resume: 'Approved (Pending Resume)',
	rejected_pending_resume: 'Rejected (Pending Resume)',
	approved: 'Approved',
	rejected: 'Rejected',
	resume_failed: 'Resume Failed',
	cancelled: 'Cancelled',
};

const REVIEW_TASK_STATUSES = Object.keys(REVIEW_TASK_STATUS_LABELS);

/** The editor lists the options alphabetically. */
const REVIEW_TASK_STATUS_OPTIONS = Object.entries(REVIEW_TASK_STATUS_LABELS)
	.map(([value, name]) => ({ name, value }))
	.sort((a, b) => a.name.localeCompare(b.name));

export const description: INodeProperties[] = [
	...listFields(show),
	filtersCollection(show, [
		{
			displayName: idLabel('runId'),
			name: 'runId',
			type: 'string',
			default: '',
			description:
				'Only tasks of this run: its ID, a UUID ("runId" on submissions and review tasks); includes tasks of sub-workflows the run called',
		},
		{
			displayName: 'Status',
			name: 'status',
			type: 'options',
			options: REVIEW_TASK_STATUS_OPTIONS,
			default: 'pending',
			description: `Only tasks with this status; as text, one of: ${REVIEW_TASK_STATUSES.join(', ')}`,
		},
		{
			displayName: idLabel('workflowId'),
			name: 'workflowId',
			type: 'string',
			default: '',
			description:
				'Only tasks of this workflow: its ID, a UUID ("workflowId" on runs and review tasks)',
		},
	]),
];

/** Review tasks, newest first (the API's order), one item each. */
export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await forEachItem(this, items, async (itemIndex) => {
		const settings = readListSettings(this, itemIndex);
		const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
		const qs: IDataObject = {};
		const status = enumFilter(
			this,
			itemIndex,
			'review task status',
			filters.status,
			REVIEW_TASK_STATUSES,
		);
		const workflowId = optionalUuid(this.getNode(), 'workflowId', filters.workflowId, itemIndex);
		const runId = optionalUuid(this.getNode(), 'runId', filters.runId, itemIndex);
		if (status) qs.status = status;
		if (workflowId) qs.workflowId = workflowId;
		if (runId) qs.runId = runId;
		return await readPagedList(this, '/review-tasks', qs, settings, itemIndex);
	});
}
