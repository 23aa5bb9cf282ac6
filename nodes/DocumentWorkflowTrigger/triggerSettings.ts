/**
 * The trigger's settings as the user set them (Events, Options), checked once per poll, with the
 * options' fields: their defaults live here. Which events they select is the shared event filter's
 * (`../shared/eventFilter.ts`).
 */
import type { IDataObject, INodeProperties, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { DEFAULT_OVERLAP_MINUTES } from '../shared/cursorRead';
import type { EventFilter } from '../shared/eventFilter';
import { readEventFilter } from '../shared/eventFilter';

export type StartFrom = 'now' | 'oldest';

/**
 * Events one poll emits at most (one execution): a backlog after downtime comes out in executions
 * of this size, oldest first, one a poll. Large enough to keep up with 80 events a second at n8n's
 * default of a poll a minute, small enough that an execution's items (a few MB) stay easy for n8n
 * to store and show, and that one failing item holds back no more (docs/polling-trigger.md).
 */
export const DEFAULT_MAX_EVENTS_PER_POLL = 5000;

export interface TriggerSettings {
	filter: EventFilter;
	overlapMs: number;
	startFrom: StartFrom;
	maxEvents: number;
}

export const TRIGGER_OPTIONS: INodeProperties = {
	displayName: 'Options',
	name: 'options',
	type: 'collection',
	placeholder: 'Add Option',
	default: {},
	options: [
		{
			displayName: 'Max Events per Poll',
			name: 'maxEventsPerPoll',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 100000 },
			default: DEFAULT_MAX_EVENTS_PER_POLL,
			description:
				'The most events one poll emits (each poll is one execution). After a pause, a backlog comes out oldest first in executions of at most this many events, one per poll.',
		},
		{
			displayName: 'Overlap Window (Minutes)',
			name: 'overlapMinutes',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 1440 },
			default: DEFAULT_OVERLAP_MINUTES,
			description:
				'How far back each poll looks again for events that became visible late (the API gives an event its ID when it is created, but lists it only once it is committed). Raise it if the service commits events later than this. Events are still emitted only once.',
		},
		{
			displayName: 'Start From',
			name: 'startFrom',
			type: 'options',
			options: [
				{
					name: 'Now',
					value: 'now',
					description: 'Only events that happen after the workflow is activated',
				},
				{
					name: 'Oldest Available Event',
					value: 'oldest',
					description: 'Also every event of the last 7 days (the API keeps no older ones)',
				},
			],
			default: 'now',
			description:
				'Where the trigger starts the first time the workflow is activated. Later changes take effect only when the trigger starts afresh (a new trigger node; renaming keeps its place).',
		},
	],
};

function positive(ctx: IPollFunctions, value: unknown, fallback: number, what: string): number {
	const number = value === undefined ? fallback : Number(value);
	if (Number.isFinite(number) && number > 0) return number;
	throw new NodeOperationError(
		ctx.getNode(),
		`${what} must be a positive number, not "${String(value)}"`,
		{
			description: `Set Options → ${what} to e.g. ${fallback}.`,
		},
	);
}

export function readSettings(ctx: IPollFunctions): TriggerSettings {
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	const minutes = positive(
		ctx,
		options.overlapMinutes,
		DEFAULT_OVERLAP_MINUTES,
		'Overlap Window (Minutes)',
	);
	const maxEvents = positive(
		ctx,
		options.maxEventsPerPoll,
		DEFAULT_MAX_EVENTS_PER_POLL,
		'Max Events per Poll',
	);
	return {
		filter: readEventFilter(ctx.getNode(), ctx.getNodeParameter('events', [])),
		overlapMs: Math.round(minutes * 60_000),
		startFrom: options.startFrom === 'oldest' ? 'oldest' : 'now',
		maxEvents: Math.floor(maxEvents),
	};
}
