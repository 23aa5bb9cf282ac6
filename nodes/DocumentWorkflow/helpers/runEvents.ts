/**
 * The event list as a hint for the watcher: one read tells which runs ended, for every wait
 * of an API key at once; a run it names is still read before its item is given. How the hint
 * is used, and what is assumed of the list: README.md, "The event list as a hint".
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { readEventPage, readNewestPage } from '../../shared/eventList';

/** What each value sets: README.md, "The values, and why". */
const MAX_PAGES = 3;
const OVERLAP_MS = 3_000;
const NAMING_EVIDENCE_MS = 5_000;
const NAMING_MISSES = 3;
const RETRY_AFTER_FAILURE_MS = 10 * 60_000;
const SEEN_LIMIT = 5_000;
const UNEXPLAINED_MS = 10_000;
const RECENTLY_FINAL_MS = 120_000;
const RECENTLY_FINAL_KEPT = 5_000;

/** What one read of the list tells the watcher. */
export interface EventHint {
	/** Runs that events named as ended (to be confirmed by reading each). */
	named: Set<string>;
	/** Ended runs to find (events named no run we know): each such event counts until a run is seen final, or for `UNEXPLAINED_MS`. */
	unexplained: number;
	/** False when the read skipped pages to reach the newest: it may have missed run events. */
	complete: boolean;
}

const RUN_EVENT = /^run\./;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The ids in an event's `data`, at most two levels deep (the spec does not show what it holds). */
function idsIn(value: unknown, depth = 0, found = new Set<string>()): Set<string> {
	if (typeof value === 'string' && UUID.test(value)) found.add(value.toLowerCase());
	else if (value && typeof value === 'object' && depth < 3)
		for (const inner of Object.values(value)) idsIn(inner, depth + 1, found);
	return found;
}

export class RunEventReader {
	/** Whether this API's run events name their run: unknown until seen. */
	namesRuns: boolean | undefined;
	/** Whether the first read found where the list ends (until then a read tells nothing about runs). */
	anchored = false;
	/** Ids already read, with when they were read, in that order. */
	private readonly seen = new Map<string, number>();
	/** Runs seen final by their own reads lately: an event naming one still shows that events name runs. */
	private readonly recentlyFinal = new Map<string, number>();
	/** When each run was seen final while naming was unknown: evidence once no event named it in time. */
	private unconfirmedAt: number[] = [];
	/** When run events that named no run were read, not yet matched by a run seen final. */
	private unexplainedAt: number[] = [];
	private misses = 0;
	private unusableUntil = 0;

	usable(now: number): boolean {
		return now >= this.unusableUntil && this.namesRuns !== false;
	}

	/** A run was seen final by its own read: it explains an event that named no run; if no event ever names such runs, events name no run. */
	seenFinal(runId: string, now: number): void {
		this.unexplainedAt.shift();
		if (this.namesRuns === undefined) this.unconfirmedAt.push(now);
		this.recentlyFinal.set(runId.toLowerCase(), now);
		for (const [id, at] of this.recentlyFinal)
			if (at < now - RECENTLY_FINAL_MS || this.recentlyFinal.size > RECENTLY_FINAL_KEPT)
				this.recentlyFinal.delete(id);
	}

	/** One read of what was added since the last (`pending`: the runs the watcher waits on); undefined if unreadable. */
	async read(
		ctx: IExecuteFunctions,
		signal: AbortSignal,
		pending: Set<string>,
	): Promise<EventHint | undefined> {
		const hint: EventHint = { named: new Set(), unexplained: 0, complete: true };
		const now = Date.now();
		let events: IDataObject[];
		try {
			if (!this.anchored) return await this.anchor(ctx, signal);
			events = await this.readSince(ctx, signal, hint);
		} catch {
			// No `events:read` scope, say: the waits go on with their own checks only.
			if (!signal.aborted) this.unusableUntil = now + RETRY_AFTER_FAILURE_MS;
			return undefined;
		}
		let unnamed = 0;
		for (const event of events) {
			if (!RUN_EVENT.test(String(event.type))) continue;
			const runIds = [...idsIn(event.data)].filter(
				(runId) => pending.has(runId) || this.recentlyFinal.has(runId),
			);
			for (const runId of runIds) hint.named.add(runId);
			if (runIds.length === 0) unnamed++;
		}
		this.learnNaming(hint, now);
		if (this.namesRuns !== true)
			hint.unexplained = this.countUnexplained(Date.now(), unnamed, pending.size);
		return hint;
	}

	private learnNaming(hint: EventHint, now: number): void {
		if (hint.named.size > 0) this.namesRuns = true;
		const unknown = this.namesRuns === undefined;
		this.misses += unknown
			? this.unconfirmedAt.filter((at) => now - at >= NAMING_EVIDENCE_MS).length
			: 0;
		this.unconfirmedAt = unknown
			? this.unconfirmedAt.filter((at) => now - at < NAMING_EVIDENCE_MS)
			: [];
		if (this.misses >= NAMING_MISSES) this.namesRuns ??= false;
	}

	private countUnexplained(now: number, unnamed: number, cap: number): number {
		this.unexplainedAt = this.unexplainedAt.filter((at) => at > now - UNEXPLAINED_MS);
		for (let i = 0; i < unnamed; i++) this.unexplainedAt.push(now);
		this.unexplainedAt.splice(0, Math.max(0, this.unexplainedAt.length - cap));
		return this.unexplainedAt.length;
	}

	/** The first read: the newest page, whose events are taken as read (at most two requests). */
	private async anchor(ctx: IExecuteFunctions, signal: AbortSignal): Promise<undefined> {
		const page = await readNewestPage(ctx, {}, { signal });
		this.anchored = true;
		this.remember(page.events);
		return undefined;
	}

	/** Pages by key from an id read `OVERLAP_MS` ago; past `MAX_PAGES`, on to the newest page. */
	private async readSince(
		ctx: IExecuteFunctions,
		signal: AbortSignal,
		hint: EventHint,
	): Promise<IDataObject[]> {
		const fresh: IDataObject[] = [];
		let after = this.overlapStart();
		for (let read = 0; ; read++) {
			const page = await readEventPage(ctx, { after }, { signal });
			fresh.push(...this.remember(page.events));
			if (!page.full || page.pages <= 1) return fresh;
			if (read + 1 >= MAX_PAGES) {
				hint.complete = false;
				const newest = await readEventPage(
					ctx,
					{ after: String(page.events[page.events.length - 1].id), page: page.pages - 1 },
					{ signal },
				);
				fresh.push(...this.remember(newest.events));
				return fresh;
			}
			after = String(page.events[page.events.length - 1].id);
		}
	}

	/** The last id read at least `OVERLAP_MS` ago, else the first still remembered (ids are kept in the order read). */
	private overlapStart(): string | undefined {
		const cutoff = Date.now() - OVERLAP_MS;
		let start: string | undefined;
		for (const [id, at] of this.seen) {
			if (at > cutoff) return start ?? id;
			start = id;
		}
		return start;
	}

	/** Keeps the ids of `events`; returns those not read before. */
	private remember(events: IDataObject[]): IDataObject[] {
		const now = Date.now();
		const fresh = events.filter(
			(event) => typeof event.id === 'string' && !this.seen.has(event.id),
		);
		for (const event of fresh) this.seen.set(String(event.id), now);
		for (const id of this.seen.keys()) {
			if (this.seen.size <= SEEN_LIMIT) break;
			this.seen.delete(id);
		}
		return fresh;
	}
}
