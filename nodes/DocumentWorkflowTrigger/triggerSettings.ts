/**
 * The trigger's settings as the user set them (Events, Options), checked once per poll. Which
 * events they select is the shared event filter's (`../shared/eventFilter.ts`).
 */
import type { IDataObject, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { CursorSettings } from '../shared/cursorRead';
import { DEFAULT_OVERLAP_MINUTES, cursorSettings } from '../shared/cursorRead';
import { readEventFilter } from '../shared/eventFilter';

export type StartFrom = 'now' | 'oldest';

export interface TriggerSettings extends CursorSettings {
	startFrom: StartFrom;
}

export function readSettings(ctx: IPollFunctions): TriggerSettings {
	const filter = readEventFilter(ctx.getNode(), ctx.getNodeParameter('events', []));
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	const minutes =
		options.overlapMinutes === undefined ? DEFAULT_OVERLAP_MINUTES : Number(options.overlapMinutes);
	if (!Number.isFinite(minutes) || minutes <= 0) {
		throw new NodeOperationError(
			ctx.getNode(),
			`The overlap window must be a positive number of minutes, not "${String(options.overlapMinutes)}"`,
			{
				description: 'Set Options → Overlap Window (Minutes) to e.g. 5.',
			},
		);
	}
	const startFrom: StartFrom = options.startFrom === 'oldest' ? 'oldest' : 'now';
	return { ...cursorSettings(filter, Math.round(minutes * 60_000)), startFrom };
}
