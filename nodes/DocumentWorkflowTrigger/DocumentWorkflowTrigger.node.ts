/**
 * The Document Workflow Trigger node (polling). This folder holds everything only the trigger
 * uses: `poll.ts` reads new events from the API within n8n's poll budget (the list itself
 * through `eventList.ts`) with the cursor both triggers share (`../shared/eventCursor.ts`, kept
 * in static data: what was seen, where to resume) that makes each event fire exactly once.
 * `testEvents.ts` answers "Fetch Test Event"; `triggerSettings.ts` reads the node's settings.
 */
import type {
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { DEFAULT_OVERLAP_MINUTES } from '../shared/cursorRead';
import { EVENTS_PROPERTY } from '../shared/eventFilter';
import { pollNewEvents } from './poll';
import { fetchTestEvents } from './testEvents';
import { readSettings } from './triggerSettings';

export class DocumentWorkflowTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Document Workflow Trigger',
		name: 'documentWorkflowTrigger',
		icon: { light: 'file:documentWorkflow.svg', dark: 'file:documentWorkflow.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle:
			'={{"Events: " + ($parameter["events"].length ? $parameter["events"].join(", ") : "all")}}',
		description: 'Starts the workflow when Document Workflow events happen',
		defaults: { name: 'Document Workflow Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'documentWorkflowApi', required: true }],
		properties: [
			{
				displayName:
					'Emits each new event once, as the API returns it. On activation it starts from now: events from before are not emitted (see Options → Start From).',
				name: 'notice',
				type: 'notice',
				default: '',
			},
			EVENTS_PROPERTY,
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					{
						displayName: 'Overlap Window (Minutes)',
						name: 'overlapMinutes',
						type: 'number',
						typeOptions: { minValue: 1, maxValue: 1440 },
						default: DEFAULT_OVERLAP_MINUTES,
						description:
							'How far back each poll looks again for events that became visible late (the API gives an event its ID when it is created, but lists it only once it is committed). Raise it if the service commits events later than this; a larger window costs a few more requests per poll. Events are still emitted only once.',
					},
					{
						displayName: 'Start From',
						name: 'startFrom',
						type: 'options',
						options: [
							{
								name: 'Now',
								value: 'now',
								description: 'Only events that happen after the workflow is activated',
							},
							{
								name: 'Oldest Available Event',
								value: 'oldest',
								description: 'Also every event of the last 7 days (the API keeps no older ones)',
							},
						],
						default: 'now',
						description:
							'Where the trigger starts the first time the workflow is activated. Later changes take effect only when the trigger starts afresh (a new trigger node; renaming keeps its place).',
					},
				],
			},
		],
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const settings = readSettings(this);
		if (this.getMode() === 'manual') return await fetchTestEvents(this, settings);
		return await pollNewEvents(this, settings);
	}
}
