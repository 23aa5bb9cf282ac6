/**
 * Histories the polling trigger's model found (`MODEL_RANDOM=1`), written out and kept as tests:
 * each failed before its fix, of the node or of the model's own accounting. Same world and checks
 * as the generated histories (test/harness/model/README.md), so a failure prints the same report.
 */
import { useModelClockInThisFile } from '../../harness/model/clock';
import {
	POLLING_PROPERTIES,
	checkPollingHistory,
	pollingStep as step,
} from '../../harness/model/pollingModel';

useModelClockInThisFile();

/** Start From: Now, an overlap window of a minute, an API at once with no `Date` header, no history. */
const quietSetup = (mode: 'default' | 'durable', events: string[]) => ({
	mode,
	parameters: { events, overlapMinutes: 1, startFrom: 'now' as const },
	api: { dateHeader: false, latencyMs: 0, skewMs: 0, beyondLastPage: 'empty' as const },
	startOffsetMs: 0,
	durableOffsetMs: 0,
	history: { spread: 0, recent: 0, expiring: 0 },
	activationFaults: [],
});

test(`MODEL_SEED=1038346441: a crash while a copied workflow's activation poll still reads: ${POLLING_PROPERTIES.bounded}`, async () => {
	// n8n restarts and activates both workflows; one's activation emits and the process crashes
	// after the save. The other's poll, cut off by the crash, still waited on a timer in this one JS
	// process until its next request was refused (a real crash ends it at once): the model counted
	// that timer as one the node left running with no poll, as it forgot the activations a crash
	// cut off.
	await checkPollingHistory('bounded', quietSetup('default', ['run.completed', 'run.failed']), [
		step.copyWorkflow(),
		step.crashNextEmitAfterItsSave(),
		step.burst(101),
		step.restart(0),
	]);
}, 60_000);

test(`MODEL_SEED=-1528528110: a copied workflow with its static data: ${POLLING_PROPERTIES.once}`, async () => {
	await checkPollingHistory('once', quietSetup('default', []), [
		step.create({ type: 0, lateMs: 1000 }, { type: 0, lateMs: 0 }),
		step.copyWorkflow(),
	]);
}, 60_000);

test(`MODEL_SEED=-1737018938: a node added to an active workflow whose activation poll saved its cursor before a crash began there: ${POLLING_PROPERTIES.start}`, async () => {
	// The new node's activation poll (mode update) emitted a burst's listed events and n8n crashed
	// after the save. Two hours on, the next process went on from that cursor and emitted two of
	// the burst listed late (4 s and 30 s after that poll). The model took the node's activation
	// to be the first that ended, two hours on, and counted them as listed before it; the crash
	// left no record of the activation whose save landed.
	await checkPollingHistory('start', quietSetup('default', ['run.completed']), [
		step.crashNextEmitAfterItsSave(),
		step.burst(101, 0.1),
		step.replaceNode(),
		step.restart(7_200_000),
	]);
}, 60_000);

test(`MODEL_SEED=-974237942: the same in durable mode, the crash after the copy's save at emit, before the commit: ${POLLING_PROPERTIES.start}`, async () => {
	// The new node's activation poll emitted the burst and n8n crashed before the commit: the copy
	// saved at emit keeps where its polls began, and the next process goes back there and emits
	// the burst again (its execution never ran). The model took the activation two hours on for
	// the start, as above.
	await checkPollingHistory('start', quietSetup('durable', ['run.completed', 'run.failed']), [
		step.burst(101),
		step.crashNextEmitBeforeItsCommit(),
		step.replaceNode(),
		step.restart(7_200_000),
		step.restart(0),
	]);
}, 60_000);

test(`MODEL_SEED=-1136154074: a burst, two hours down, a rename, one new event: ${POLLING_PROPERTIES.bounded}`, async () => {
	// No `Date` header: the node knew the API's time only from the newest event listed, the burst's,
	// two hours old at the poll after the restart, so none of its 274 ids was folded into `after`:
	// the static data held them four times (the cursor under both names, the copy and its `base`).
	await checkPollingHistory('bounded', quietSetup('default', ['run.completed', 'run.failed']), [
		step.burst(274),
		step.restart(7_200_000),
		step.rename('Documents arrived'),
		step.create({ type: 0, lateMs: 1000 }),
	]);
}, 60_000);
