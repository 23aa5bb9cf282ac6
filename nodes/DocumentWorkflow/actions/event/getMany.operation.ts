import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { idLabel, optionalUuid } from '../../../shared/transport';
import { forEachItem } from '../forEachItem';
import { enumFilter, listFields, readListSettings, readPagedList } from '../listing';
import { EVENT_TYPE_OPTIONS, EVENT_TYPES } from '../../../shared/eventTypes';
import { filtersCollection } from '../fields';

const show = { resource: ['event'], operation: ['getMany'] };

export const description: INodeProperties[] = [
	...listFields(show),
	filtersCollection(show, [
		{
			displayName: idLabel('after'),
			name: 'after',
			type: 'string',
			default: '',
			placeholder: 'e.g. 0190f5a2-7c1e-7a3b-9c4d-5e6f70819203',
			description:
				'Only events whose ID is greater than this event ID. Event IDs reflect creation time, so a late event can appear with a lower ID: to poll without gaps, use an ID seen a few minutes before the newest and de-duplicate on ID (the Document Workflow Trigger node does this for you).',
		},
		{
			displayName: 'Type',
			name: 'type',
			type: 'options',
			options: EVENT_TYPE_OPTIONS,
			default: 'run.completed',
			description: `Only events of this type; as text, one of: ${EVENT_TYPES.join(', ')}`,
		},
	]),
];

/** Events of the last 7 days in the key's environment, oldest first (the API's order), one item each. */
export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await forEachItem(this, items, async (itemIndex) => {
		const settings = readListSettings(this, itemIndex);
		const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
		const qs: IDataObject = {};
		const type = enumFilter(this, itemIndex, 'event type', filters.type, EVENT_TYPES);
		if (type) qs.type = type;
		const after = optionalUuid(this.getNode(), 'after', filters.after, itemIndex);
		if (after) qs.after = after;
		return await readPagedList(this, '/events', qs, settings, itemIndex);
	});
}
