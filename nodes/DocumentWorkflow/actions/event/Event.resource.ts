import type { INodeProperties } from 'n8n-workflow';
import * as getMany from './getMany.operation';

export const operations = { getMany };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['event'] } },
		options: [
			{
				name: 'Get Many',
				value: 'getMany',
				description: 'List events of the last 7 days, oldest first, by type',
				action: 'Get many events',
			},
		],
		default: 'getMany',
	},
	...getMany.description,
];
