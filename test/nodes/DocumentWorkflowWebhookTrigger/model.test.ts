/**
 * The webhook trigger against the model of the API and of n8n (test/harness/model/README.md):
 * generated histories, each property its own test, so a failing one is named. The slow tier
 * (`model.slow.test.ts`) runs the same with thousands of longer histories. `MODEL_RUNS`,
 * `MODEL_SEED`, `MODEL_WITHOUT` and `MODEL_STATS`: see the README.
 */
import { describeWebhookModel } from '../../harness/model/webhookModel';

describeWebhookModel({
	runs: { once: 30, deliveries: 30, start: 15, forged: 20, bounded: 15 },
	maxCommands: 10,
	limitMs: 6_000,
});
