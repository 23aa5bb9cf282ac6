import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';
import type { IdName } from '../../shared/transport';
import { ID_KINDS } from '../../shared/transport';

/** Identifier fields shared by several operations; names and labels are fixed by saved workflows (see ID_KINDS). */
function idField(name: IdName, show: IDisplayOptions['show']): INodeProperties {
	const { label, what } = ID_KINDS[name];
	return {
		displayName: label,
		name,
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70',
		description: `The ID of the ${what}, a UUID such as 3f0c1a9e-8b2d-4c6f-9e1a-2b3c4d5e6f70, found as "${name}" in other operations' results`,
		displayOptions: { show },
	};
}

export const workflowIdField = (show: IDisplayOptions['show']) => idField('workflowId', show);
export const runIdField = (show: IDisplayOptions['show']) => idField('runId', show);
export const documentIdField = (show: IDisplayOptions['show']) => idField('documentId', show);
export const reviewTaskIdField = (show: IDisplayOptions['show']) => idField('reviewTaskId', show);

/** The "Options" collection of an operation: optional settings, closed by default. */
export function optionsCollection(
	show: IDisplayOptions['show'],
	options: INodeProperties['options'],
): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show },
		options,
	};
}

/** The "Filters" collection of a list operation. */
export function filtersCollection(
	show: IDisplayOptions['show'],
	options: INodeProperties['options'],
): INodeProperties {
	return {
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		displayOptions: { show },
		options,
	};
}

/** Where an operation puts a file it outputs; `binaryPropertyName` is fixed by saved workflows. */
export function outputBinaryField(
	show: IDisplayOptions['show'],
	description: string,
	required = true,
): INodeProperties {
	return {
		displayName: 'Output Binary Field',
		name: 'binaryPropertyName',
		type: 'string',
		required,
		default: 'data',
		description,
		displayOptions: { show },
	};
}
