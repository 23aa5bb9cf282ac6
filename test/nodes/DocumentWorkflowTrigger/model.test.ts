/** The polling trigger against the model of the API and of n8n (test/harness/model/). */
import { checkPollingProperty, setupArb, useModelClock } from '../../harness/model/pollingModel';

const RUNS = Number(process.env.MODEL_RUNS ?? 10);
const SEED = process.env.MODEL_SEED === undefined ? undefined : Number(process.env.MODEL_SEED);

beforeAll(() => (restore = useModelClock()));
afterAll(() => restore());
let restore = () => {};

test('exactly once', async () => {
	await checkPollingProperty('once', setupArb(), { runs: RUNS, maxCommands: 12, seed: SEED });
});
test('start', async () => {
	await checkPollingProperty('start', setupArb(), { runs: RUNS, maxCommands: 12, seed: SEED });
});
test('order', async () => {
	await checkPollingProperty('order', setupArb(), { runs: RUNS, maxCommands: 12, seed: SEED });
});
test('bounded', async () => {
	await checkPollingProperty('bounded', setupArb(), { runs: RUNS, maxCommands: 12, seed: SEED });
});
