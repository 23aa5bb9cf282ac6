/**
 * What came out, checked against what the API listed: shared by the polling and the webhook
 * model. Every failure names its events the way a history prints them (`#7 run.failed, created
 * +62.3 s, listed +66.0 s`), times relative to the start of the history.
 */
import type { IDataObject } from 'n8n-workflow';

import type { ApiEvent, ModelApi } from './api';

/** The model's properties; each jest test asserts one of them. */
export type PropertyName = 'once' | 'start' | 'order' | 'bounded' | 'deliveries' | 'forged';

export interface Violation {
	property: PropertyName;
	message: string;
}

/** One execution's items, in the order n8n got them. */
export interface Emitted {
	/** The trigger it belongs to (workflow and node id). */
	trigger: string;
	at: number;
	items: IDataObject[];
}

export class Ledger {
	readonly byId = new Map<string, ApiEvent>();

	constructor(
		readonly api: ModelApi,
		/** n8n's clock when the history began. */
		readonly t0: number,
	) {}

	event(id: string): ApiEvent | undefined {
		if (!this.byId.has(id)) for (const event of this.api.events) this.byId.set(event.id, event);
		return this.byId.get(id);
	}

	/** `+62.3 s` (relative to the start, n8n's clock). */
	time(ms: number): string {
		const s = (ms - this.t0) / 1000;
		if (Math.abs(s) >= 86_400) return `${s >= 0 ? '+' : ''}${(s / 86_400).toFixed(2)} d`;
		if (Math.abs(s) >= 3600) return `${s >= 0 ? '+' : ''}${(s / 3600).toFixed(2)} h`;
		return `${s >= 0 ? '+' : ''}${s.toFixed(1)} s`;
	}

	/** An event as a history prints it (API times shown on n8n's clock). */
	describe(id: string): string {
		const event = this.event(id);
		if (!event) return `${id} (never created)`;
		const skew = this.api.settings.skewMs;
		return `#${event.n} ${event.type}, created ${this.time(event.createdOnMs - skew)}, listed ${this.time(event.commitAtMs - skew)}`;
	}

	/** How many times each id came out, per trigger. */
	counts(emitted: Emitted[]): Map<string, Map<string, number>> {
		const counts = new Map<string, Map<string, number>>();
		for (const execution of emitted) {
			const perTrigger = counts.get(execution.trigger) ?? new Map<string, number>();
			counts.set(execution.trigger, perTrigger);
			for (const item of execution.items) {
				const id = String(item.id);
				perTrigger.set(id, (perTrigger.get(id) ?? 0) + 1);
			}
		}
		return counts;
	}

	/** Items that are not the API's listed copy of a created event. */
	notListedCopies(emitted: Emitted[]): Violation[] {
		const violations: Violation[] = [];
		for (const execution of emitted)
			for (const item of execution.items) {
				const event = this.event(String(item.id));
				if (!event)
					violations.push({
						property: 'once',
						message: `${String(item.id)} came out (at ${this.time(execution.at)}) but the API never created it`,
					});
				else if (
					item.type !== event.type ||
					item.createdOn !== new Date(event.createdOnMs).toISOString()
				)
					violations.push({
						property: 'once',
						message: `${this.describe(event.id)} came out as something else than the API's copy: ${JSON.stringify(item)}`,
					});
			}
		return violations;
	}

	/** Ids that came out more than once for one trigger (once more per time `repeats` counts: n8n never saved what emitted it). */
	duplicates(
		emitted: Emitted[],
		repeats: (trigger: string, id: string) => number = () => 0,
	): Violation[] {
		const violations: Violation[] = [];
		for (const [trigger, perTrigger] of this.counts(emitted))
			for (const [id, n] of perTrigger)
				if (n > 1 + repeats(trigger, id))
					violations.push({
						property: 'once',
						message: `${this.describe(id)} came out ${n} times (${trigger}), at ${emitted
							.filter((e) => e.trigger === trigger && e.items.some((item) => item.id === id))
							.map((e) => this.time(e.at))
							.join(', ')}`,
					});
		return violations;
	}

	/** Within each execution, items oldest (lowest id) first. */
	ascendingWithin(emitted: Emitted[]): Violation[] {
		const violations: Violation[] = [];
		for (const execution of emitted) {
			const ids = execution.items.map((item) => String(item.id));
			for (let i = 1; i < ids.length; i++)
				if (ids[i] < ids[i - 1]) {
					violations.push({
						property: 'order',
						message: `an execution at ${this.time(execution.at)} has ${this.describe(ids[i])} after ${this.describe(ids[i - 1])}`,
					});
					break;
				}
		}
		return violations;
	}

	/**
	 * A backlog comes out oldest first: an event listed at once (committed at creation) never
	 * comes out in a later execution than a newer event of the same trigger. (Events listed late
	 * legitimately come out after newer ones.)
	 */
	oldestFirst(emitted: Emitted[]): Violation[] {
		const violations: Violation[] = [];
		const newestSoFar = new Map<string, string>();
		for (const execution of emitted) {
			const newest = newestSoFar.get(execution.trigger);
			for (const item of execution.items) {
				const event = this.event(String(item.id));
				if (!event || newest === undefined || event.id > newest) continue;
				if (event.commitAtMs === event.createdOnMs)
					violations.push({
						property: 'order',
						message: `${this.describe(event.id)}, listed at once, came out at ${this.time(execution.at)}, after the newer ${this.describe(newest)} had come out`,
					});
			}
			for (const item of execution.items) {
				const id = String(item.id);
				const current = newestSoFar.get(execution.trigger);
				if (current === undefined || id > current) newestSoFar.set(execution.trigger, id);
			}
		}
		return violations;
	}
}

export function failWith(violations: Violation[], context: string): void {
	if (violations.length === 0) return;
	const shown = violations.slice(0, 12).map((v) => `  [${v.property}] ${v.message}`);
	if (violations.length > 12) shown.push(`  ... and ${violations.length - 12} more`);
	throw new Error(`${shown.join('\n')}\n${context}`);
}
