import type { INodeProperties } from 'n8n-workflow';
import * as get from './get.operation';
import * as getOutput from './getOutput.operation';
import * as wait from './wait.operation';

export const operations = { get, getOutput, wait };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['run'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description:
					'Get a run by its ID: status (completed, failed and cancelled are final), workflowId, documentId, times and error',
				action: 'Get a run',
			},
			{
				name: 'Get Output',
				value: 'getOutput',
				description:
					'Get the output a completed run captured, by run ID: JSON or text in "output", a file as binary data',
				action: 'Get the output of a run',
			},
			{
				name: 'Wait for Completion',
				value: 'wait',
				description:
					'Wait until a run (by run ID) is completed, failed or cancelled, then return it',
				action: 'Wait for a run to finish',
			},
		],
		default: 'get',
	},
	...get.description,
	...getOutput.description,
	...wait.description,
];
