import type { INodeProperties } from 'n8n-workflow';
import * as get from './get.operation';
import * as getOriginal from './getOriginal.operation';
import * as getRuns from './getRuns.operation';

export const operations = { get, getRuns, getOriginal };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['document'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description: 'Get a document by its ID, with its status',
				action: 'Get a document',
			},
			{
				name: 'Get Original File',
				value: 'getOriginal',
				description:
					'Get a 5-minute link to the file as uploaded (the link needs no API key), or the file itself',
				action: 'Get the original file of a document',
			},
			{
				name: 'Get Runs',
				value: 'getRuns',
				description: "List a document's top-level runs by document ID, newest first",
				action: 'Get the runs of a document',
			},
		],
		default: 'get',
	},
	...get.description,
	...getRuns.description,
	...getOriginal.description,
];
