/** Waiting that ends when the execution is cancelled: every pause of both nodes goes through here. */
import type { IExecuteFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';
import type { ApiContext } from './request';

/** The execution's cancel signal where this n8n version provides one. */
export function cancelSignalOf(ctx: ApiContext): AbortSignal | undefined {
	const candidate = ctx as Partial<Pick<IExecuteFunctions, 'getExecutionCancelSignal'>>;
	return typeof candidate.getExecutionCancelSignal === 'function'
		? candidate.getExecutionCancelSignal()
		: undefined;
}

/** Thrown when a wait ends because the execution was cancelled. */
export class ExecutionCancelledError extends Error {
	constructor() {
		super('The execution was cancelled');
	}
}

/** Sleeps `ms`, ending early (with `ExecutionCancelledError`) when the execution is cancelled. */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
	if (signal?.aborted) throw new ExecutionCancelledError();
	if (ms <= 0) return;
	if (!signal) return await sleep(ms);
	let onAbort: (() => void) | undefined;
	const aborted = new Promise<void>((resolve) => {
		onAbort = resolve;
		signal.addEventListener('abort', onAbort, { once: true });
	});
	await Promise.race([sleep(ms), aborted]);
	if (onAbort) signal.removeEventListener('abort', onAbort);
	if (signal.aborted) throw new ExecutionCancelledError();
}
