/**
 * The two tiers of the jest tests (jest.config.js): `npm test` runs the fast tier (the everyday
 * loop, under 2 minutes), `npm run test:slow` the slow one, `npx jest` and `npm run test:all`
 * both (DW_TEST_TIER=fast|slow|all chooses). A test file is in the slow tier when it is listed here, or when its name ends in
 * `.slow.test.ts`: tests that need minutes of real time or very large volumes.
 */
const fs = require('node:fs');
const path = require('node:path');

const SLOW_FILES = [
	// 100,000-event bursts, each read through n8n-core in real time.
	'test/nodes/DocumentWorkflowTrigger/burst.test.ts',
	// 10,000+ events with faults, half-way failures and restarts, twice.
	'test/nodes/DocumentWorkflowTrigger/exactly-once.test.ts',
	// 6 hours of polling every minute, twice.
	'test/nodes/DocumentWorkflowTrigger/memory.test.ts',
	// Runs of tens of seconds, waited for in real time.
	'test/nodes/DocumentWorkflow/batchWait.test.ts',
];

/** Files named this way are in the slow tier without being listed. */
const SLOW_NAME_GLOB = '**/*.slow.test.ts';

/** jest testMatch globs of the slow tier. */
const SLOW_GLOBS = [...SLOW_FILES.map((file) => `<rootDir>/${file}`), SLOW_NAME_GLOB];

/** jest testPathIgnorePatterns (regular expressions) that leave the slow tier out. */
const SLOW_IGNORE_PATTERNS = [
	...SLOW_FILES.map((file) => `<rootDir>/${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
	'\\.slow\\.test\\.ts$',
];

for (const file of SLOW_FILES) {
	if (!fs.existsSync(path.join(__dirname, '..', file)))
		throw new Error(`test/tiers.js lists ${file}, which does not exist: remove or rename it there`);
}

/** Which tier this jest process runs: DW_TEST_TIER (fast, slow or all; `npm test` sets fast), else all. */
function selectedTier(env = process.env) {
	const tier = env.DW_TEST_TIER || 'all';
	if (!['fast', 'slow', 'all'].includes(tier))
		throw new Error(`DW_TEST_TIER=${tier}: use fast, slow or all`);
	return tier;
}

module.exports = { SLOW_FILES, SLOW_GLOBS, SLOW_IGNORE_PATTERNS, selectedTier };
