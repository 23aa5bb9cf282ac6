/**
 * The polling trigger against the model of the API and of n8n (test/harness/model/README.md):
 * generated histories, each property its own test, so a failing one is named. The slow tier
 * (`model.slow.test.ts`) runs the same with thousands of longer histories. `MODEL_RUNS`,
 * `MODEL_SEED`, `MODEL_MODE`, `MODEL_WITHOUT` and `MODEL_STATS`: see the README.
 */
import { describePollingModel } from '../../harness/model/pollingModel';

describePollingModel({
	runs: { once: 40, start: 30, order: 15, bounded: 15 },
	maxCommands: 12,
	limitMs: 6_000,
});
