/**
 * Unit and integration tests: nodes run through n8n-core against the in-process sandbox, in two
 * tiers (test/tiers.js says which files are slow): `npm test` runs the fast tier, `npm run
 * test:slow` the slow one (both set DW_TEST_TIER), `npx jest` and `npm run test:all` both in one
 * run; `npx jest <file>` runs any file.
 */
const { SLOW_GLOBS, SLOW_IGNORE_PATTERNS, selectedTier } = require('./test/tiers');

const NOT_UNIT = ['/node_modules/', '<rootDir>/test/e2e/', '<rootDir>/test/e2e-queue/'];

const project = (displayName, tier) => ({
	displayName,
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	...tier,
	transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
	setupFiles: ['<rootDir>/test/harness/env.ts'],
});

module.exports = {
	projects: [
		project('fast', {
			testMatch: ['**/*.test.ts'],
			testPathIgnorePatterns: [...NOT_UNIT, ...SLOW_IGNORE_PATTERNS],
		}),
		project('slow', { testMatch: SLOW_GLOBS, testPathIgnorePatterns: NOT_UNIT }),
	].filter((p) => [p.displayName, 'all'].includes(selectedTier())),
	// The key scan of the whole run (a journal directory for the workers, scanned at the end) and
	// the run's temporary folders (made at the start, removed at the end).
	globalSetup: '<rootDir>/test/harness/global-setup.ts',
	globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
	reporters: ['default', '<rootDir>/test/harness/timing-reporter.js'],
	testTimeout: 120000,
	// The fast tier's time is mostly waiting on real HTTP and timers: on 2 cores it took 134 s with
	// 2 workers, 90 s with 4 and 81 s with 6. The slow tier's bursts need the CPU: both tiers at
	// once with 6 workers made timing tests of the fast tier fail, with 4 all pass (222 s).
	maxWorkers: selectedTier() === 'fast' ? 6 : 4,
};
