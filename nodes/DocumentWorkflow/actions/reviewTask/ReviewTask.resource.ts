import type { INodeProperties } from 'n8n-workflow';
import * as get from './get.operation';
import * as getMany from './getMany.operation';

export const operations = { get, getMany };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['reviewTask'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description: 'Get a review task by its ID, with its status and decision',
				action: 'Get a review task',
			},
			{
				name: 'Get Many',
				value: 'getMany',
				description: 'List review tasks, newest first, by status, workflow or run',
				action: 'Get many review tasks',
			},
		],
		default: 'getMany',
	},
	...get.description,
	...getMany.description,
];
