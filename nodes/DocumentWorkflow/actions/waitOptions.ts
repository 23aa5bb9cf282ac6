import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import type { OpenWait } from '../waiting/loop';
import { openWaitForRuns } from '../waiting/loop';
import type { WaitSettings, WaitTarget } from '../waiting/policy';
import { errorItem, withItemIndex } from './forEachItem';

/**
 * The wait settings shown in the `options` collection of "Submit Document" (only with
 * "Wait for Completion" on) and of "Run → Wait for Completion".
 * `whenWaiting` adds the condition on the root `waitForCompletion` parameter.
 */
export function waitOptionFields(whenWaiting: boolean): INodeProperties[] {
	const waiting = whenWaiting ? { '/waitForCompletion': [true] } : {};
	const show = whenWaiting ? { displayOptions: { show: waiting } } : {};
	// Where a file output goes: Submit Document reuses its Input Binary Field's name; Run → Wait for Completion has its own field.
	const binaryFieldLabel = whenWaiting ? 'Input Binary Field' : 'Output Binary Field';
	return [
		{
			displayName: 'Concurrent Checks',
			name: 'concurrency',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 100 },
			default: 10,
			description:
				"The most uploads, and the most checks, the node makes at once (at most 100 each). Documents are uploaded in parts and each part's runs are waited on as soon as it is uploaded, all in one wait, so a batch takes about as long as its slowest run.",
		},
		{
			displayName: 'First Check Interval (Seconds)',
			name: 'initialPollIntervalSeconds',
			type: 'number',
			typeOptions: { minValue: 0.1, numberPrecision: 1 },
			default: 1,
			description:
				'No run is checked sooner than this after it was submitted. The node learns how long the runs of the batch take from the first ones it sees finish, and checks most runs only once, when they are likely done.',
			...show,
		},
		{
			displayName: 'Include Output',
			name: 'includeOutput',
			type: 'boolean',
			default: false,
			description: `Whether to add the output a completed run captured to the item: JSON as "output", text as an "output" string, a file in the binary field named in ${binaryFieldLabel}. A run without output gets "outputError" instead of failing.`,
			...show,
		},
		{
			displayName: 'Longest Check Interval (Seconds)',
			name: 'maxPollIntervalSeconds',
			type: 'number',
			typeOptions: { minValue: 0.1, numberPrecision: 1 },
			default: 20,
			description:
				'The longest time between two checks of a run the node is watching to learn how long the runs take',
			...show,
		},
		{
			displayName: 'Max Wait Time (Minutes)',
			name: 'maxWaitMinutes',
			type: 'number',
			typeOptions: { minValue: 0, numberPrecision: 2 },
			default: 60,
			description:
				'How long to wait for each run before giving up; 0 waits without limit. What happens at the limit is set by "On Time Limit". The run itself goes on in the service. As an AI agent\'s tool, keep it to a few minutes: the agent waits as long.',
			...show,
		},
		{
			displayName: 'Not Found Grace Period (Seconds)',
			name: 'notFoundGraceSeconds',
			type: 'number',
			typeOptions: { minValue: 0, numberPrecision: 1 },
			default: 30,
			description:
				"A new run can answer 404 briefly before it exists. For this long it is checked again; then the document's status tells why it never started (held, failed or cancelled).",
			...show,
		},
		{
			displayName: 'On Failed or Cancelled Run',
			name: 'onFailed',
			type: 'options',
			options: [
				{
					name: 'Fail the Node',
					value: 'error',
					description:
						'Stop with an error naming the run and its error (or an error item with Continue On Fail)',
				},
				{
					name: 'Return an Item',
					value: 'item',
					description:
						'Output the run with its status and error, to route it with an IF or Switch node',
				},
			],
			default: 'error',
			...show,
		},
		{
			displayName: 'On Time Limit',
			name: 'onTimeLimit',
			type: 'options',
			options: [
				{
					name: 'Fail the Node',
					value: 'error',
					description: 'Stop with an error naming the run and its last status',
				},
				{
					name: 'Return an Item',
					value: 'item',
					description: 'Output the run with its last status and waitOutcome "timeLimit"',
				},
			],
			default: 'error',
			...show,
		},
		{
			displayName: 'Output Node ID',
			name: 'outputNodeId',
			type: 'string',
			default: '',
			description:
				'The ID of the Download Output node whose output to include, when the workflow has several. Empty: the most recently started Download Output node.',
			// Used only by Include Output.
			displayOptions: { show: { ...waiting, includeOutput: [true] } },
		},
		{
			displayName: 'Return Early When Status Is',
			name: 'stopAt',
			type: 'multiOptions',
			options: [
				{
					name: 'Review',
					value: 'review',
					description: 'The run waits for a person to finish a review task (can take hours)',
				},
				{
					name: 'Waiting',
					value: 'waiting',
					description: 'The run is parked on a Wait node (can take hours)',
				},
			],
			default: [],
			description:
				'Stop waiting and return the run when it reaches one of these statuses, instead of waiting for it to finish',
			...show,
		},
	];
}

/** The default of one wait option, as its field above declares it (the one place defaults are written). */
function fieldDefault<T>(name: string): T {
	return waitOptionFields(false).find((field) => field.name === name)!.default as T;
}

/** The upper bound of "Concurrent Checks", as its field declares it. */
export const MAX_CONCURRENCY: number = waitOptionFields(false).find(
	(field) => field.name === 'concurrency',
)!.typeOptions!.maxValue!;

/** The wait settings when no option is set: read from the fields' defaults. */
export const DEFAULT_WAIT_SETTINGS: WaitSettings = {
	maxWaitMs: fieldDefault<number>('maxWaitMinutes') * 60_000,
	stopAt: fieldDefault<string[]>('stopAt'),
	includeOutput: fieldDefault<boolean>('includeOutput'),
	binaryPropertyName: 'data',
	onFailed: fieldDefault<'error' | 'item'>('onFailed'),
	onTimeLimit: fieldDefault<'error' | 'item'>('onTimeLimit'),
	concurrency: fieldDefault<number>('concurrency'),
	initialPollIntervalMs: fieldDefault<number>('initialPollIntervalSeconds') * 1000,
	maxPollIntervalMs: fieldDefault<number>('maxPollIntervalSeconds') * 1000,
	notFoundGraceMs: fieldDefault<number>('notFoundGraceSeconds') * 1000,
};

function numberOption(
	ctx: IExecuteFunctions,
	options: IDataObject,
	name: string,
	label: string,
	fallback: number,
	min: number,
	max = Infinity,
): number {
	const raw = options[name];
	if (raw === undefined || raw === null || raw === '') return fallback;
	const value = Number(raw);
	if (!Number.isFinite(value) || value < min) {
		throw new NodeOperationError(
			ctx.getNode(),
			`The option "${label}" must be a number of at least ${min}, not "${String(raw)}"`,
			{
				description: 'Correct the value in the node options.',
			},
		);
	}
	if (value > max) {
		throw new NodeOperationError(
			ctx.getNode(),
			`The option "${label}" must be a number of at most ${max}, not "${String(raw)}"`,
			{
				description: 'Correct the value in the node options.',
			},
		);
	}
	return value;
}

/** Reads the wait settings (taken from the first item; they apply to the whole batch). */
export function readWaitSettings(
	ctx: IExecuteFunctions,
	options: IDataObject,
	binaryPropertyName: string,
): WaitSettings {
	const d = DEFAULT_WAIT_SETTINGS;
	const stopAt = Array.isArray(options.stopAt) ? (options.stopAt as string[]) : [];
	for (const status of stopAt) {
		if (status !== 'review' && status !== 'waiting') {
			throw new NodeOperationError(
				ctx.getNode(),
				`"${status}" is not a status the wait can return early at`,
				{
					description: 'Choose "review" and/or "waiting" in "Return Early When Status Is".',
				},
			);
		}
	}
	const choice = (name: string, label: string): 'error' | 'item' => {
		const value = options[name] ?? 'error';
		if (value !== 'error' && value !== 'item') {
			throw new NodeOperationError(
				ctx.getNode(),
				`The option "${label}" must be "error" or "item", not "${String(value)}"`,
			);
		}
		return value;
	};
	const initial =
		numberOption(
			ctx,
			options,
			'initialPollIntervalSeconds',
			'First Check Interval',
			d.initialPollIntervalMs / 1000,
			0.1,
		) * 1000;
	const max =
		numberOption(
			ctx,
			options,
			'maxPollIntervalSeconds',
			'Longest Check Interval',
			d.maxPollIntervalMs / 1000,
			0.1,
		) * 1000;
	return {
		maxWaitMs: Math.round(
			numberOption(ctx, options, 'maxWaitMinutes', 'Max Wait Time', d.maxWaitMs / 60_000, 0) *
				60_000,
		),
		stopAt,
		includeOutput: options.includeOutput === true,
		outputNodeId:
			typeof options.outputNodeId === 'string' && options.outputNodeId.trim()
				? options.outputNodeId.trim()
				: undefined,
		binaryPropertyName,
		onFailed: choice('onFailed', 'On Failed or Cancelled Run'),
		onTimeLimit: choice('onTimeLimit', 'On Time Limit'),
		concurrency: Math.floor(
			numberOption(
				ctx,
				options,
				'concurrency',
				'Concurrent Checks',
				d.concurrency,
				1,
				MAX_CONCURRENCY,
			),
		),
		initialPollIntervalMs: initial,
		maxPollIntervalMs: Math.max(initial, max),
		notFoundGraceMs:
			numberOption(
				ctx,
				options,
				'notFoundGraceSeconds',
				'Not Found Grace Period',
				d.notFoundGraceMs / 1000,
				0,
			) * 1000,
	};
}

/**
 * Waits for all targets together and puts each outcome into `output` at its item's
 * position: the finished item, or (with Continue On Fail) an error item. Without Continue
 * On Fail the first error stops the node, naming its item.
 */
export async function waitIntoOutput(
	ctx: IExecuteFunctions,
	targets: WaitTarget[],
	settings: WaitSettings,
	output: Array<INodeExecutionData | undefined>,
): Promise<void> {
	if (targets.length === 0) return;
	const waiting = await openWait(ctx, settings);
	waiting.add(targets);
	waiting.close();
	await outcomesIntoOutput(ctx, waiting, output, targets[0].itemIndex);
}

/** A wait that runs join as their documents are uploaded (`OpenWait`); it fails fast unless Continue On Fail is on. */
export async function openWait(ctx: IExecuteFunctions, settings: WaitSettings): Promise<OpenWait> {
	return await openWaitForRuns(ctx, settings, !ctx.continueOnFail());
}

/** Once the wait has ended, each outcome into `output` at its item's position; its error, named by item, thrown. */
export async function outcomesIntoOutput(
	ctx: IExecuteFunctions,
	waiting: OpenWait,
	output: Array<INodeExecutionData | undefined>,
	firstItemIndex: number,
): Promise<void> {
	let outcomes;
	try {
		outcomes = await waiting.outcomes;
	} catch (error) {
		const itemIndex =
			(error as { context?: { itemIndex?: number } }).context?.itemIndex ?? firstItemIndex;
		throw withItemIndex(ctx, error, itemIndex);
	}
	for (const outcome of outcomes) {
		output[outcome.itemIndex] = outcome.error
			? errorItem(outcome.error, outcome.itemIndex)
			: outcome.item;
	}
}
