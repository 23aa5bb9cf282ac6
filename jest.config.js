/** Unit and integration tests: nodes run through n8n-core against the in-process sandbox. */
module.exports = {
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	testPathIgnorePatterns: ['/node_modules/', '/test/e2e/'],
	transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
	setupFiles: ['<rootDir>/test/harness/env.ts'],
	// The key scan of the whole run (a journal directory for the workers, scanned at the end) and
	// the run's temporary folders (made at the start, removed at the end).
	globalSetup: '<rootDir>/test/harness/global-setup.ts',
	globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
	testTimeout: 120000,
	maxWorkers: 2,
};
