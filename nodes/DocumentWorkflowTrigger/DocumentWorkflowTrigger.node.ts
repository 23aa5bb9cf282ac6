/**
 * The Document Workflow Trigger node (polling). This folder holds everything only the trigger
 * uses: `poll.ts` reads new events from the API within n8n's poll budget (the list itself
 * through `eventList.ts`) with the cursor both triggers share (`../shared/eventCursor.ts`, kept
 * in static data: what was seen, where to resume) that makes each event fire exactly once.
 * `testEvents.ts` answers "Fetch Test Event"; `triggerSettings.ts` holds the options and reads them.
 */
import type {
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { EVENTS_PROPERTY } from '../shared/eventFilter';
import { pollNewEvents } from './poll';
import { fetchTestEvents } from './testEvents';
import { TRIGGER_OPTIONS, readSettings } from './triggerSettings';

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
			TRIGGER_OPTIONS,
		],
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const settings = readSettings(this);
		if (this.getMode() === 'manual') return await fetchTestEvents(this, settings);
		return await pollNewEvents(this, settings);
	}
}
