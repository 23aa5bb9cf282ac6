/**
 * Verifying delivered event ids against the API's event list, shared by the deliveries that
 * arrive close together.
 *
 * State lives per n8n process, one entry per trigger (a hash of the credential's id, the
 * workflow, the node and the mode: never the secret itself), created on first use, bounded in number,
 * and holding no execution's context: the read is made with the context of one of the
 * deliveries waiting for it (whichever started the sweep), and nothing runs once no delivery
 * waits, so no timer is left behind.
 *
 * Invariants:
 * - An id is claimed by the first delivery that names it while it is neither pending nor
 *   remembered as emitted. A repeat gets nothing for it, so a repeated delivery starts the
 *   workflow once (in this process, while the id is remembered). The events one sweep finds
 *   are all emitted by one of the deliveries waiting for it (the first whose event was found),
 *   as the items of one execution: a burst of deliveries starts a few executions, not one each.
 * - An event is emitted only as the API lists it: the copy from `GET /events`, never the
 *   delivered body. A read `after` the id just below a delivered id lists that id first if it
 *   is listed; an id inside the range a page covered and absent from it is not listed now. It
 *   is looked for again after `retryMs`, then after gaps twice as long each time, those of
 *   `gridMs` or more on a grid of `gridMs`, where the ids of close deliveries share one page
 *   (ids reflect creation, not commit), and dropped with a
 *   log line once a read that started `lookForMs` or more after the delivery did not list it:
 *   a slow API delays the emission, it never drops an event by itself.
 */
import { createHash } from 'node:crypto';
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { readEventPage } from '../shared/eventList';
import type { DeliveredEvent } from './delivery';
import { idJustBelow } from './eventIds';

export interface VerifyTiming {
	/** How long a new id waits for others to arrive before it is read (one read for all of them). */
	gatherMs: number;
	/** The shortest time between two reads of one trigger. */
	minReadGapMs: number;
	/** How soon an id not listed yet is looked for again the first time; each later gap is twice the one before. */
	retryMs: number;
	/** Looks at least this far apart are made on a grid of this step, so ids delivered close together are looked for by one read. */
	gridMs: number;
	/** An id is dropped once a read that started this long after its delivery did not list it. */
	lookForMs: number;
	/** An id that could not be looked for (the API failing) is dropped this long after its delivery. */
	giveUpMs: number;
}

export const DEFAULT_TIMING: VerifyTiming = {
	gatherMs: 100,
	minReadGapMs: 250,
	retryMs: 500,
	gridMs: 1000,
	lookForMs: 5000,
	giveUpMs: 60_000,
};

/** Emitted ids remembered per trigger, newest kept: repeats of older ones are not recognised. */
export const MAX_REMEMBERED_IDS = 10_000;
/** Triggers with state in one process; the least recently used idle one is let go beyond it. */
export const MAX_TRIGGERS = 100;
/** Reads one sweep makes at most (ids beyond it wait for the next sweep). */
const MAX_READS_PER_SWEEP = 10;
/** Retries of one read: few and short, since the id is looked for again soon anyway. */
const READ_RETRY = { maxRetries: 2, baseDelayMs: 200, maxDelayMs: 1000 };
/** A slow list is waited for: dropping an event because the API is slow would lose it. */
const READ_TIMEOUT_MS = 30_000;

/** The events one delivery claimed, and how many of them are still being looked for. */
interface Claim {
	open: number;
	found: IDataObject[];
}

interface Pending {
	id: string;
	since: number;
	checkAt: number;
	/** The gap before its next look, if this one does not list it. */
	retryGap: number;
	claim: Claim;
}

interface TriggerState {
	pending: Map<string, Pending>;
	/** Emitted ids, oldest first. */
	emitted: Set<string>;
	sweep?: Promise<void>;
	lastReadAt: number;
}

const states = new Map<string, TriggerState>();

/** The key of one trigger's state: a hash, so no secret is kept as a key. */
export function triggerKey(parts: Array<string | undefined>): string {
	return createHash('sha256')
		.update(parts.map((part) => part ?? '').join('\u0000'))
		.digest('hex');
}

function stateFor(key: string): TriggerState {
	let state = states.get(key);
	if (state) {
		states.delete(key);
	} else {
		state = { pending: new Map(), emitted: new Set(), lastReadAt: 0 };
	}
	states.set(key, state);
	if (states.size > MAX_TRIGGERS) {
		for (const [other, candidate] of states) {
			if (states.size <= MAX_TRIGGERS) break;
			if (candidate.pending.size === 0 && !candidate.sweep) states.delete(other);
		}
	}
	return state;
}

/** How many triggers have state in this process, and how many ids are pending (for tests). */
export function verifierSize(): { triggers: number; pending: number } {
	let pending = 0;
	for (const state of states.values()) pending += state.pending.size;
	return { triggers: states.size, pending };
}

/** Forgets every trigger's state, as a restart of n8n does. */
export function forgetAll(): void {
	states.clear();
}

export interface VerifyOptions {
	/** Event types to read for; undefined reads for every type. A stated type outside it is not looked for. */
	types?: Set<string>;
	timing?: VerifyTiming;
}

/**
 * The API's copies of events to emit from this delivery, as listed, in id order: the events
 * found by the sweeps this delivery carried (its own and those of deliveries waiting with it),
 * or none. Resolves once each id it was the first to name is found or dropped.
 */
export async function verifyDelivery(
	ctx: IWebhookFunctions,
	key: string,
	delivered: DeliveredEvent[],
	options: VerifyOptions = {},
): Promise<IDataObject[]> {
	const timing = options.timing ?? DEFAULT_TIMING;
	const state = stateFor(key);
	const now = Date.now();
	const claim: Claim = { open: 0, found: [] };
	for (const event of delivered) {
		if (options.types && event.statedType !== undefined && !options.types.has(event.statedType))
			continue;
		if (state.emitted.has(event.id) || state.pending.has(event.id)) continue;
		state.pending.set(event.id, {
			id: event.id,
			since: now,
			checkAt: now + timing.gatherMs,
			retryGap: timing.retryMs,
			claim,
		});
		claim.open++;
	}
	while (claim.open > 0 && ownsPending(state, claim)) {
		state.sweep ??= sweepWhenDue(ctx, state, timing).finally(() => {
			state.sweep = undefined;
		});
		await state.sweep;
	}
	return claim.found.sort((a, b) => (String(a.id) < String(b.id) ? -1 : 1));
}

/** Whether any id is still being looked for for this claim (a guard: `open` counts them too). */
function ownsPending(state: TriggerState, claim: Claim): boolean {
	for (const pending of state.pending.values()) if (pending.claim === claim) return true;
	return false;
}

async function sweepWhenDue(
	ctx: IWebhookFunctions,
	state: TriggerState,
	timing: VerifyTiming,
): Promise<void> {
	let due = Infinity;
	for (const pending of state.pending.values()) due = Math.min(due, pending.checkAt);
	if (due === Infinity) return;
	const at = Math.max(due, state.lastReadAt + timing.minReadGapMs);
	const wait = at - Date.now();
	if (wait > 0) await sleep(wait);
	await sweep(ctx, state, timing);
}

interface Page {
	events: IDataObject[];
	/** The greatest id the page covers; undefined when the page ends the list (it covers every greater id). */
	coversTo?: string;
	/** When the read was sent: the list shows every event committed before then. */
	startedAt: number;
}

async function sweep(
	ctx: IWebhookFunctions,
	state: TriggerState,
	timing: VerifyTiming,
): Promise<void> {
	const started = Date.now();
	state.lastReadAt = started;
	const due = [...state.pending.values()]
		.filter((pending) => pending.checkAt <= started)
		.map((pending) => pending.id)
		.sort();
	const carrier: Carrier = {};
	let index = 0;
	let reads = 0;
	while (index < due.length && reads < MAX_READS_PER_SWEEP) {
		let page: Page;
		try {
			page = await readAfter(ctx, idJustBelow(due[index]));
		} catch (error) {
			const message = (error as Error).message;
			ctx.logger?.error(
				`Document Workflow Webhook Trigger: could not read the event list to verify a delivery: ${message}`,
			);
			for (const id of due.slice(index)) notReadable(ctx, state, id, timing, message);
			return;
		}
		reads++;
		for (const event of page.events) found(state, event, carrier);
		while (index < due.length && (page.coversTo === undefined || due[index] <= page.coversTo)) {
			notListed(ctx, state, due[index], timing, page.startedAt);
			index++;
		}
	}
}

async function readAfter(ctx: IWebhookFunctions, after: string | undefined): Promise<Page> {
	const startedAt = Date.now();
	const page = await readEventPage(
		ctx,
		{ after },
		{
			retry: { ...READ_RETRY, deadline: Date.now() + READ_TIMEOUT_MS },
			timeoutMs: READ_TIMEOUT_MS,
		},
	);
	const ids = page.events.map((event) => String(event.id).toLowerCase()).sort();
	return { events: page.events, coversTo: page.full ? ids[ids.length - 1] : undefined, startedAt };
}

/** The delivery that emits every event one sweep finds: one execution per sweep, not one per delivery. */
interface Carrier {
	claim?: Claim;
}

function found(state: TriggerState, event: IDataObject, carrier: Carrier): void {
	const id = String(event.id).toLowerCase();
	const pending = state.pending.get(id);
	if (!pending) return;
	state.pending.delete(id);
	state.emitted.add(id);
	if (state.emitted.size > MAX_REMEMBERED_IDS)
		state.emitted.delete(state.emitted.values().next().value as string);
	// Safe to hand over: every claim waits for this sweep to end before it looks at what it found.
	carrier.claim ??= pending.claim;
	carrier.claim.found.push(event);
	pending.claim.open--;
}

/** A read that started at `readAt` did not list the id: looked for again, or dropped once a read started late enough missed it. */
function notListed(
	ctx: IWebhookFunctions,
	state: TriggerState,
	id: string,
	timing: VerifyTiming,
	readAt: number,
): void {
	const pending = state.pending.get(id);
	if (!pending) return;
	if (readAt - pending.since < timing.lookForMs) {
		// Soon at first (an event listed a moment late is found within a gap that is short), then
		// further apart; later looks on a grid, where the ids of close deliveries share their reads.
		let next = Math.min(pending.since + timing.lookForMs, readAt + pending.retryGap);
		if (pending.retryGap >= timing.gridMs || next === pending.since + timing.lookForMs)
			next = Math.ceil(next / timing.gridMs) * timing.gridMs;
		pending.retryGap *= 2;
		pending.checkAt = Math.max(Date.now(), next);
		return;
	}
	state.pending.delete(id);
	pending.claim.open--;
	ctx.logger?.warn(
		`Document Workflow Webhook Trigger: event ${id} was delivered but the API did not list it within ${timing.lookForMs / 1000} s, so it starts nothing (a forged delivery, a test ping, an event of another environment, or one the API lists later than that)`,
	);
}

/** The list could not be read: the id is looked for again, until `giveUpMs` after its delivery. */
function notReadable(
	ctx: IWebhookFunctions,
	state: TriggerState,
	id: string,
	timing: VerifyTiming,
	reason: string,
): void {
	const pending = state.pending.get(id);
	if (!pending) return;
	const now = Date.now();
	if (now - pending.since < timing.giveUpMs) {
		pending.checkAt = now + Math.max(timing.retryMs, 1000);
		return;
	}
	state.pending.delete(id);
	pending.claim.open--;
	ctx.logger?.error(
		`Document Workflow Webhook Trigger: event ${id} was delivered but could not be checked against the API's event list for ${timing.giveUpMs / 1000} s, so it starts nothing (${reason})`,
	);
}
