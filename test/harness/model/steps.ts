/**
 * The steps both triggers' models take alike: time passes, the API fails or slows down, n8n
 * restarts, and a user renames the trigger, replaces it, deactivates the workflow for a while or
 * copies it. Each model lists them among its own steps (`commands()` of `pollingModel.ts` and
 * `webhookModel.ts`) in the order it always has, so a seed draws the same histories, and prints
 * them as it always has (`StepStyle`): a shrunk history reads the same.
 */
import fc from 'fast-check';

import type { Fault, ModelApi } from './api';
import type { World } from './runner';
import { Step, faultArb } from './runner';

/** What these steps need of a world: both models' worlds are one. */
export interface StepWorld extends World {
	readonly api: ModelApi;
	/** A line of the history, for a failure's report. */
	step(line: string): void;
	/** The trigger of the workflow the user changes. */
	node(): { name: string };
	wait(ms: number): Promise<void>;
	restart(downMs: number): Promise<void>;
	rename(name: string): Promise<void>;
	replaceNode(): Promise<void>;
	deactivate(downMs: number): Promise<void>;
	copyWorkflow(): Promise<void>;
}

/** How a model prints these steps. */
export interface StepStyle {
	/** Decimals of the seconds a restart or a deactivation lasts. */
	downDigits: 0 | 1;
	/** Whether a 429 whose `Retry-After` is a date says so. */
	retryAfterAsDate: boolean;
}

/** Milliseconds as the steps print them: `seconds(1500)` is `1.5s`. */
export const seconds = (ms: number, digits = 1) => `${(ms / 1000).toFixed(digits)}s`;

class Wait extends Step<StepWorld> {
	constructor(readonly ms: number) {
		super();
	}
	toString() {
		return `wait(${seconds(this.ms)})`;
	}
	async act(world: StepWorld) {
		await world.wait(this.ms);
	}
}

class ApiFaults extends Step<StepWorld> {
	constructor(
		readonly faults: Fault[],
		readonly style: StepStyle,
	) {
		super();
	}
	toString() {
		return `apiFails(${this.faults.map((f) => (f.kind === '429' ? `429 Retry-After ${f.retryAfterS}s${this.style.retryAfterAsDate && f.asDate ? ' as date' : ''}` : f.kind)).join(', ')})`;
	}
	async act(world: StepWorld) {
		world.api.fail(...this.faults);
		world.step(this.toString());
	}
}

class Latency extends Step<StepWorld> {
	constructor(readonly ms: number) {
		super();
	}
	toString() {
		return `apiLatency(${this.ms}ms)`;
	}
	async act(world: StepWorld) {
		world.api.settings.latencyMs = this.ms;
		world.step(this.toString());
	}
}

class Restart extends Step<StepWorld> {
	constructor(
		readonly downMs: number,
		readonly style: StepStyle,
	) {
		super();
	}
	toString() {
		return `restartN8n(down ${seconds(this.downMs, this.style.downDigits)})`;
	}
	async act(world: StepWorld) {
		await world.restart(this.downMs);
	}
}

class Rename extends Step<StepWorld> {
	constructor(readonly name: string) {
		super();
	}
	toString() {
		return `rename("${this.name}")`;
	}
	async act(world: StepWorld) {
		if (world.node().name !== this.name) await world.rename(this.name);
	}
}

class ReplaceNode extends Step<StepWorld> {
	toString() {
		return 'replaceTriggerWithNewNodeOfSameName()';
	}
	async act(world: StepWorld) {
		await world.replaceNode();
	}
}

class Deactivate extends Step<StepWorld> {
	constructor(
		readonly downMs: number,
		readonly style: StepStyle,
	) {
		super();
	}
	toString() {
		return `deactivateFor(${seconds(this.downMs, this.style.downDigits)})`;
	}
	async act(world: StepWorld) {
		await world.deactivate(this.downMs);
	}
}

class CopyWorkflow extends Step<StepWorld> {
	toString() {
		return 'copyWorkflowWithItsStaticData()';
	}
	async act(world: StepWorld) {
		await world.copyWorkflow();
	}
}

/** The shared steps one by one, to write a history out (one the model found, kept as a test). */
export const sharedStep = {
	wait: (ms: number) => new Wait(ms),
	apiFails: (faults: Fault[], style: StepStyle) => new ApiFaults(faults, style),
	deactivateFor: (downMs: number, style: StepStyle) => new Deactivate(downMs, style),
	restart: (downMs: number, style: StepStyle) => new Restart(downMs, style),
	rename: (name: string) => new Rename(name),
	copyWorkflow: () => new CopyWorkflow(),
	replaceNode: () => new ReplaceNode(),
	latency: (ms: number) => new Latency(ms),
};

export interface SharedStepsOptions {
	style: StepStyle;
	/** The names a rename picks from. */
	names: readonly string[];
	/** How long a wait lasts. */
	waitMs: fc.Arbitrary<number>;
	/** How long n8n is down at a restart. */
	restartDownMs: fc.Arbitrary<number>;
	/** The longest a deactivation lasts. */
	deactivateMaxMs: number;
}

/**
 * The shared commands, by name (`MODEL_WITHOUT` leaves some out), in two groups each model puts
 * where its list has always had them: what happens around n8n (time, the API, a restart), and
 * what users do to the workflow.
 */
export function sharedCommands<W extends StepWorld>(
	options: SharedStepsOptions,
): {
	around: Record<string, fc.Arbitrary<Step<W>>>;
	users: Record<string, fc.Arbitrary<Step<W>>>;
} {
	const { style, names } = options;
	return {
		around: {
			wait: options.waitMs.map((ms) => new Wait(ms)),
			apiFaults: fc
				.array(faultArb, { minLength: 1, maxLength: 3 })
				.map((faults) => new ApiFaults(faults, style)),
			latency: fc.constantFrom(0, 50, 2000).map((ms) => new Latency(ms)),
			restart: options.restartDownMs.map((ms) => new Restart(ms, style)),
		},
		users: {
			rename: fc.integer({ min: 0, max: names.length - 1 }).map((name) => new Rename(names[name])),
			replaceNode: fc.constant(new ReplaceNode()),
			deactivate: fc
				.integer({ min: 0, max: options.deactivateMaxMs })
				.map((ms) => new Deactivate(ms, style)),
			copyWorkflow: fc.constant(new CopyWorkflow()),
		},
	};
}
