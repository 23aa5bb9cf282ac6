/** The webhook trigger's model (see model.test.ts), with thousands of longer histories: the slow tier. */
import { describeWebhookModel } from '../../harness/model/webhookModel';

describeWebhookModel({
	runs: { once: 800, deliveries: 800, start: 300, forged: 400, bounded: 300 },
	maxCommands: 25,
});
