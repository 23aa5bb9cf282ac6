/**
 * The trigger's settings as the user set them (Events, Options), checked once per poll, and
 * which events they select.
 */
import type { IDataObject, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { EVENT_TYPES } from '../shared/eventTypes';

export const DEFAULT_OVERLAP_MINUTES = 5;

export type StartFrom = 'now' | 'oldest';

export interface TriggerSettings {
	/** Types to emit; undefined emits every type (also types the API adds later). */
	types?: Set<string>;
	/** The API's `type` filter, when exactly one type is selected. */
	apiType?: string;
	overlapMs: number;
	startFrom: StartFrom;
}

export function readSettings(ctx: IPollFunctions): TriggerSettings {
	const rawEvents = ctx.getNodeParameter('events', []) as unknown;
	const selected = Array.isArray(rawEvents) ? [...new Set(rawEvents.map((value) => String(value)))] : [];
	const unknown = selected.filter((value) => !EVENT_TYPES.includes(value));
	if (unknown.length > 0) {
		throw new NodeOperationError(ctx.getNode(), `Unknown event type "${unknown[0]}" in "Events"`, {
			description: `Choose among: ${EVENT_TYPES.join(', ')}, or leave "Events" empty for all of them.`,
		});
	}
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	const minutes = options.overlapMinutes === undefined ? DEFAULT_OVERLAP_MINUTES : Number(options.overlapMinutes);
	if (!Number.isFinite(minutes) || minutes <= 0) {
		throw new NodeOperationError(ctx.getNode(), `The overlap window must be a positive number of minutes, not "${String(options.overlapMinutes)}"`, {
			description: 'Set Options → Overlap Window (Minutes) to e.g. 5.',
		});
	}
	const startFrom: StartFrom = options.startFrom === 'oldest' ? 'oldest' : 'now';
	const settings: TriggerSettings = { overlapMs: Math.round(minutes * 60_000), startFrom };
	if (selected.length > 0) settings.types = new Set(selected);
	if (selected.length === 1) settings.apiType = selected[0];
	return settings;
}

export function matches(settings: TriggerSettings, event: IDataObject): boolean {
	return settings.types === undefined || settings.types.has(String(event.type));
}

export function describeTypes(settings: TriggerSettings): string {
	if (!settings.types) return 'events';
	return `${[...settings.types].join(', ')} events`;
}
