/**
 * Proof that a change of the waiting code changes none of its decisions: every simulated history
 * of policy.test.ts (its tests run here again, each traced) and the queue model's (queueModel.ts,
 * 20 seeds in each of its four ways) is written line by line (simulator.ts `trace`: each turn and
 * what the policy said, each request on the wire and its answer, each check's answer, each
 * execution's end) and hashed; the hashes must be those in trace-hashes.json, recorded on the code
 * before a restructuring. A change meant to alter behaviour records them anew:
 * `WRITE_TRACE_HASHES=1 npx jest test/nodes/DocumentWorkflow/waiting/trace.slow.test.ts`.
 */
import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SEEDS, queueModelRun } from './queueModel';
import { trace } from './simulator';

const RECORDED = join(__dirname, 'trace-hashes.json');
const hashes: Record<string, string> = {};
let hash: Hash | undefined;
let lines = 0;

beforeEach(() => {
	hash = createHash('sha256');
	lines = 0;
	trace.write = (line) => {
		hash!.update(`${line}\n`);
		lines++;
	};
});

afterEach(() => {
	trace.write = undefined;
	const name = expect.getState().currentTestName!;
	// Tests of policy.test.ts that drive a Policy by hand leave no trace: their assertions say it all.
	if (lines > 0) {
		expect(hashes[name]).toBeUndefined();
		hashes[name] = `${lines} ${hash!.digest('hex')}`;
	}
});

describe('policy.test.ts', () => {
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	require('./policy.test');
});

describe('queue model', () => {
	const ways = [
		['own pacers', false, true],
		['one pacer', true, true],
		['own pacers, no stalls', false, false],
		['one pacer, no stalls', true, false],
	] as const;
	const cases = ways.flatMap(([way, onePacer, stalls]) =>
		Array.from({ length: SEEDS }, (_, i) => [way, i + 1, onePacer, stalls] as const),
	);
	it.each(cases)('%s, seed %i', (_way, seed, onePacer, stalls) => {
		expect(queueModelRun(seed, onePacer, stalls).documents).toBeGreaterThan(0);
	});
});

it('every history is the one recorded (trace-hashes.json): no decision changed', () => {
	if (process.env.WRITE_TRACE_HASHES)
		writeFileSync(RECORDED, `${JSON.stringify(hashes, null, '\t')}\n`);
	const recorded = JSON.parse(readFileSync(RECORDED, 'utf8')) as Record<string, string>;
	expect(hashes).toEqual(recorded);
});
