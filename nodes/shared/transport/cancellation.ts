/** The contexts that call the API, and waiting that ends when the execution is cancelled: every pause of every node goes through here. */
import type {
	IExecuteFunctions,
	IHookFunctions,
	IPollFunctions,
	IWebhookFunctions,
} from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

/** The contexts that may call the API: the action node, the polling trigger and the webhook trigger (its requests and its activation). */
export type ApiContext = IExecuteFunctions | IPollFunctions | IWebhookFunctions | IHookFunctions;

/** The execution's cancel signal where this n8n version provides one. */
export function cancelSignalOf(ctx: ApiContext): AbortSignal | undefined {
	const candidate = ctx as Partial<Pick<IExecuteFunctions, 'getExecutionCancelSignal'>>;
	return typeof candidate.getExecutionCancelSignal === 'function'
		? candidate.getExecutionCancelSignal()
		: undefined;
}

/**
 * The context to send a request with so that it ends with `signal`. n8n-core (2.x) sets
 * every request's abort signal from `this.getExecutionCancelSignal()`, replacing the
 * request's own; so a request that must also end when, say, a wait is over is sent with a
 * context that reports the combined signal and is the node's context in every other way.
 */
export function contextEndingWith<T extends ApiContext>(ctx: T, signal: AbortSignal): T {
	return Object.create(ctx, { getExecutionCancelSignal: { value: () => signal } }) as T;
}

/** Thrown when a wait ends because the execution was cancelled. */
export class ExecutionCancelledError extends Error {
	constructor() {
		super('The execution was cancelled');
	}
}

/** The longest single sleep of a pause: a cancelled pause ends within it, and leaves no timer behind. */
const PAUSE_SLICE_MS = 100;

/**
 * Sleeps `ms`, ending early (with `ExecutionCancelledError`) when the execution is cancelled.
 * It sleeps in short slices instead of racing one long sleep against the signal: n8n's
 * `sleep` cannot be cleared, and a raced sleep would keep its timer alive after the
 * execution ended.
 */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
	if (signal?.aborted) throw new ExecutionCancelledError();
	if (ms <= 0) return;
	if (!signal) return await sleep(ms);
	const end = Date.now() + ms;
	for (let left = ms; left > 0; left = end - Date.now()) {
		await sleep(Math.min(left, PAUSE_SLICE_MS));
		if (signal.aborted) throw new ExecutionCancelledError();
	}
}
