import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import type { WaitTarget } from '../../waiting/policy';
import { requireUuid } from '../../../shared/transport';
import { optionsCollection, outputBinaryField, runIdField } from '../fields';
import { errorItem, withItemIndex } from '../forEachItem';
import { readWaitSettings, waitIntoOutput, waitOptionFields } from '../waitOptions';

const show = { resource: ['run'], operation: ['wait'] };

export const description: INodeProperties[] = [
	runIdField(show),
	// Used only by Include Output (inside Options), so shown only once that is on. The path starts
	// at the root ("/"): n8n 1.x resolves a top-level field's conditions only on other top-level
	// fields or root paths, and fails every workflow with this node otherwise. Not required: n8n
	// stores no default in a saved workflow and does not fill in one whose condition lies inside a
	// collection, so a required field would fail saved workflows with Include Output on; empty means `data`.
	outputBinaryField(
		{ ...show, '/options.includeOutput': [true] },
		"The name of the binary field to put the run's output in when it is a file (e.g. a PDF), with its file name and media type. An AI agent receives JSON only, never the file.",
		false,
	),
	optionsCollection(show, waitOptionFields(false)),
];

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const continueOnFail = this.continueOnFail();
	const options = this.getNodeParameter('options', 0, {}) as IDataObject;
	const binaryPropertyName =
		String(this.getNodeParameter('binaryPropertyName', 0, 'data')).trim() || 'data';
	const settings = readWaitSettings(this, options, binaryPropertyName);

	const output: Array<INodeExecutionData | undefined> = new Array(items.length).fill(undefined);
	const targets: WaitTarget[] = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const runId = requireUuid(
				this.getNode(),
				'runId',
				this.getNodeParameter('runId', itemIndex),
				itemIndex,
			);
			// Ages count from the start of the wait: when these runs began is not known here.
			targets.push({ itemIndex, runId });
		} catch (error) {
			if (!continueOnFail) throw withItemIndex(this, error, itemIndex);
			output[itemIndex] = errorItem(error, itemIndex);
		}
	}
	await waitIntoOutput(this, targets, settings, output);
	return output.filter((item): item is INodeExecutionData => item !== undefined);
}
