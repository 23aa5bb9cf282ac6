/**
 * What a delivery's body may say: one event in the listed shape, or an array of them. Only
 * the ids are used (lower-cased); a stated `type` only lets the trigger skip reading for an
 * event the filter would not emit anyway. A body that is not in that shape is refused with a
 * message that names what was wrong.
 */
import { isObject, isUuid } from '../shared/transport';

/** The most events one delivery may name: a larger body is refused, not read in part. */
export const MAX_EVENTS_PER_DELIVERY = 1000;

export interface DeliveredEvent {
	id: string;
	/** The type the body states: untrusted, used only to skip events the filter excludes. */
	statedType?: string;
}

export type ParsedDelivery =
	| { ok: true; events: DeliveredEvent[] }
	| { ok: false; message: string };

const SHAPE =
	'The body must be one event as the API lists it ({"id": "<event UUID>", "type": ..., ...}) or a JSON array of them.';

function shown(value: unknown): string {
	const text = typeof value === 'string' ? `"${value}"` : (JSON.stringify(value) ?? String(value));
	return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

export function parseDelivery(body: unknown): ParsedDelivery {
	const list = Array.isArray(body) ? body : [body];
	if (!Array.isArray(body) && (!isObject(body) || Object.keys(body).length === 0)) {
		return { ok: false, message: `The delivery has no event. ${SHAPE}` };
	}
	if (list.length === 0) return { ok: false, message: `The delivery is an empty array. ${SHAPE}` };
	if (list.length > MAX_EVENTS_PER_DELIVERY) {
		return {
			ok: false,
			message: `The delivery names ${list.length} events; at most ${MAX_EVENTS_PER_DELIVERY} are accepted at once.`,
		};
	}
	const events: DeliveredEvent[] = [];
	for (const [index, entry] of list.entries()) {
		const where = Array.isArray(body) ? `Event ${index} of the delivery` : 'The delivered event';
		if (!isObject(entry)) return { ok: false, message: `${where} is not an object. ${SHAPE}` };
		if (entry.id === undefined) return { ok: false, message: `${where} has no "id". ${SHAPE}` };
		if (!isUuid(entry.id))
			return {
				ok: false,
				message: `${where} has the id ${shown(entry.id)}, which is not an event id (a UUID).`,
			};
		events.push({
			id: entry.id.toLowerCase(),
			...(typeof entry.type === 'string' ? { statedType: entry.type } : {}),
		});
	}
	return { ok: true, events };
}
