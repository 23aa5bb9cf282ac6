/** The polling trigger's model (see model.test.ts), with thousands of longer histories: the slow tier. */
import { describePollingModel } from '../../harness/model/pollingModel';

describePollingModel({
	runs: { once: 1500, start: 600, order: 300, bounded: 300 },
	maxCommands: 30,
});
