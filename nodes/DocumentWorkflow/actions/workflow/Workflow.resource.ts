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
				description: 'Get a workflow: its name, environment, enabled state and accepted file formats',
				action: 'Get a workflow',
			},
			{
				name: 'Submit Document',
				value: 'trigger',
				description: "Upload a file to a workflow's API trigger, optionally waiting for the run to finish",
				action: 'Submit a document to a workflow',
			},
		],
		default: 'trigger',
	},
	...get.description,
	...trigger.description,
];
