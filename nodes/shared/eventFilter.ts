/**
 * The `events` setting both triggers share (the polling and the webhook trigger): its field,
 * how it is read and checked, and which events it selects. Empty selects every type, also
 * types the API adds later.
 */
import type { IDataObject, INode, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { EVENT_TYPE_OPTIONS, EVENT_TYPES } from './eventTypes';

export interface EventFilter {
	/** Types to emit; undefined emits every type. */
	types?: Set<string>;
}

/** The triggers' `events` field (its name and default are fixed by saved workflows). */
export const EVENTS_PROPERTY: INodeProperties = {
	displayName: 'Events',
	name: 'events',
	type: 'multiOptions',
	options: EVENT_TYPE_OPTIONS,
	default: [],
	description: 'The event types that start the workflow. Leave empty for all of them.',
};

/** The selection as the user made it, checked: an unknown type is an error that lists the known ones. */
export function readEventFilter(node: INode, rawEvents: unknown): EventFilter {
	const selected = Array.isArray(rawEvents)
		? [...new Set(rawEvents.map((value) => String(value)))]
		: [];
	const unknown = selected.filter((value) => !EVENT_TYPES.includes(value));
	if (unknown.length > 0) {
		throw new NodeOperationError(node, `Unknown event type "${unknown[0]}" in "Events"`, {
			description: `Choose among: ${EVENT_TYPES.join(', ')}, or leave "Events" empty for all of them.`,
		});
	}
	return selected.length > 0 ? { types: new Set(selected) } : {};
}

export function matches(filter: EventFilter, event: IDataObject): boolean {
	return filter.types === undefined || filter.types.has(String(event.type));
}

export function describeTypes(filter: EventFilter): string {
	if (!filter.types) return 'events';
	return `${[...filter.types].join(', ')} events`;
}
