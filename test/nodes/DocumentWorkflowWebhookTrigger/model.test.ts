/**
 * The webhook trigger against the model of the API and of n8n (test/harness/model/README.md):
 * generated histories, each property its own test, so a failing one is named. The slow tier
 * (`model.slow.test.ts`) runs the same with thousands of longer histories. `MODEL_RUNS`,
 * `MODEL_SEED`, `MODEL_WITHOUT` and `MODEL_STATS`: see the README.
 */
import { describeWebhookModel } from '../../harness/model/webhookModel';

describeWebhookModel({
	runs: { once: 40, deliveries: 40, start: 20, forged: 25, bounded: 20 },
	maxCommands: 10,
	limitMs: 10_000,
});
