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

test(`MODEL_SEED=1038346441: a crash while a copied workflow's activation poll still reads: ${POLLING_PROPERTIES.bounded}`, async () => {
	// n8n restarts and activates both workflows; one's activation emits and the process crashes
	// after the save. The other's poll, cut off by the crash, still waited on a timer in this one JS
	// process until its next request was refused (a real crash ends it at once): the model counted
	// that timer as one the node left running with no poll, as it forgot the activations a crash
	// cut off.
	await checkPollingHistory(
		'bounded',
		{
			mode: 'default',
			parameters: { events: ['run.completed', 'run.failed'], overlapMinutes: 1, startFrom: 'now' },
			api: { dateHeader: false, latencyMs: 0, skewMs: 0, beyondLastPage: 'empty' },
			startOffsetMs: 0,
			durableOffsetMs: 0,
			history: { spread: 0, recent: 0, expiring: 0 },
			activationFaults: [],
		},
		[step.copyWorkflow(), step.crashNextEmitAfterItsSave(), step.burst(101), step.restart(0)],
	);
}, 60_000);

test(`MODEL_SEED=-1528528110: a copied workflow with its static data: ${POLLING_PROPERTIES.once}`, async () => {
	await checkPollingHistory(
		'once',
		{
			mode: 'default',
			parameters: { events: [], overlapMinutes: 1, startFrom: 'now' },
			api: { dateHeader: false, latencyMs: 0, skewMs: 0, beyondLastPage: 'empty' },
			startOffsetMs: 0,
			durableOffsetMs: 0,
			history: { spread: 0, recent: 0, expiring: 0 },
			activationFaults: [],
		},
		[step.create({ type: 0, lateMs: 1000 }, { type: 0, lateMs: 0 }), step.copyWorkflow()],
	);
}, 60_000);
