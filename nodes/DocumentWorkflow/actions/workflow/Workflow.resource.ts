import type { INodeProperties } from 'n8n-workflow';
import * as get from './get.operation';
import * as trigger from './trigger.operation';

export const operations = { get, trigger };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['workflow'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description:
					'Get a workflow by its ID: its name, environment, whether it is enabled, and the file formats it accepts',
				action: 'Get a workflow',
			},
			{
				name: 'Submit Document',
				value: 'trigger',
				description:
					"Upload the input item's file (from an earlier node) to a workflow; returns documentId, runId and status, or waits for the run to finish",
				action: 'Submit a document to a workflow',
			},
		],
		default: 'trigger',
	},
	...get.description,
	...trigger.description,
];
