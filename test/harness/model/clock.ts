/**
 * The clock the model controls: jest's modern fake timers (`Date`, `setTimeout`, `setInterval`),
 * which n8n-workflow's `sleep` and every wait of the nodes use, so the node code runs unchanged.
 * `setImmediate`, `process.nextTick` and `queueMicrotask` stay real: promise chains run at once,
 * and `flush()` lets everything not waiting on a timer finish.
 */

import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';

/** Warnings and errors the nodes logged through n8n's logger in the current history. */
export const logged: string[] = [];

/**
 * Call once per test file (`beforeAll`), before anything starts a timer: the fake clock, and
 * n8n's logger kept quiet. Every n8n log call captures a stack (`callsites`) and the harness's
 * journal writes it to a file; over thousands of histories that is most of the time, and the
 * model's key is a dummy that is never a secret. Warnings and errors are kept in `logged`.
 * Returns what undoes both (`afterAll`).
 */
export function useModelClock(): () => void {
	jest.useFakeTimers({
		doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'performance', 'hrtime'],
	});
	watchForBusyLoops();
	const logger = Container.get(Logger);
	const spies = [
		jest.spyOn(logger, 'debug').mockImplementation(() => {}),
		jest.spyOn(logger, 'info').mockImplementation(() => {}),
		jest.spyOn(logger, 'warn').mockImplementation((message: string) => void logged.push(message)),
		jest.spyOn(logger, 'error').mockImplementation((message: string) => void logged.push(message)),
	];
	return () => {
		for (const spy of spies) spy.mockRestore();
		jest.useRealTimers();
	};
}

/** The model's clock for every test of this file (histories written out, `model.found.test.ts`). */
export function useModelClockInThisFile(): void {
	let restore = () => {};
	beforeAll(() => {
		restore = useModelClock();
	});
	afterAll(() => restore());
}

/**
 * The fake clock stands still while code runs without waiting for a timer, so a loop that never
 * waits (retrying at once what fails at once) would spin for ever here, and in n8n would hold the
 * event loop until the real clock ends it. `Date.now` is counted at each instant: after
 * BUSY_CALLS calls without the clock moving, the loop is recorded in `busyLoops` and every call
 * from the package's code throws, which unwinds it, until the clock moves or the model next takes
 * over (`flush`).
 */
export const busyLoops: number[] = [];
const BUSY_CALLS = 1_000_000;
let busy = { at: NaN, calls: 0, tripped: false };

/** A stack frame of the package's own code (`nodes/`), not of the tests. */
function isPackageCode(frame: string): boolean {
	return /[/\\]nodes[/\\]/.test(frame) && !/[/\\]test[/\\]/.test(frame);
}

function watchForBusyLoops(): void {
	const fakeNow = Date.now.bind(Date);
	Date.now = () => {
		const now = fakeNow();
		if (now !== busy.at) busy = { at: now, calls: 0, tripped: false };
		if (!busy.tripped && ++busy.calls > BUSY_CALLS) {
			busy.tripped = true;
			busyLoops.push(now);
		}
		// Only the package's code is stopped: the model's own code reads the clock as usual.
		if (busy.tripped && isPackageCode(new Error().stack?.split('\n')[2] ?? ''))
			throw new Error('model: a busy loop (the clock does not move while it runs)');
		return now;
	};
}

/** Counts histories: a wait of an abandoned history (one that did not end in time) stops at the next one. */
let generation = 0;

function stillCurrent(started: number): void {
	if (generation !== started) throw new Error('abandoned: a later history has started');
}

/** A new history: no timer of an earlier one runs again, and the clock is set. */
export function resetClock(nowMs: number): void {
	generation++;
	logged.length = 0;
	busyLoops.length = 0;
	busy = { at: NaN, calls: 0, tripped: false };
	jest.clearAllTimers();
	jest.setSystemTime(nowMs);
}

/** Lets every promise chain that waits on no timer run to its end. */
export async function flush(): Promise<void> {
	for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
	busy = { at: NaN, calls: 0, tripped: false };
}

/** Moves the clock on by `ms`, firing every timer due on the way in order, its promise chains included. */
export async function advance(ms: number): Promise<void> {
	const started = generation;
	await jest.advanceTimersByTimeAsync(Math.max(0, ms));
	await flush();
	stillCurrent(started);
}

/** Moves the clock on until `done()` or `limitMs`, in steps of at most `stepMs`. */
export async function advanceUntil(
	done: () => boolean,
	limitMs: number,
	stepMs = 1000,
): Promise<void> {
	const started = generation;
	const end = Date.now() + limitMs;
	await flush();
	while (!done() && Date.now() < end) {
		stillCurrent(started);
		await advance(Math.min(stepMs, end - Date.now()));
	}
}

/**
 * Waits for `promise` while the clock moves on, timer by timer, as n8n would have waited for it
 * (an activation's poll, a start): throws when nothing is left that could settle it, or after
 * `limitMs` of the model's time.
 */
export async function drive<T>(promise: Promise<T>, limitMs = 60 * 60_000): Promise<T> {
	let settled = false;
	const watched = promise.finally(() => {
		settled = true;
	});
	watched.catch(() => {});
	const started = generation;
	const end = Date.now() + limitMs;
	await flush();
	while (!settled) {
		stillCurrent(started);
		if (jest.getTimerCount() === 0)
			throw new Error('stuck: the promise waits for nothing the clock can bring');
		if (Date.now() > end) throw new Error(`not settled within ${limitMs} ms of the model's time`);
		await jest.advanceTimersToNextTimerAsync();
		await flush();
	}
	return await watched;
}
