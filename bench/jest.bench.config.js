/** The benchmark (`npm run bench`): not part of the tests; writes docs/benchmarks.md. */
module.exports = {
	rootDir: '..',
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/bench'],
	testMatch: ['**/*.bench.ts'],
	transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
	setupFiles: ['<rootDir>/test/harness/env.ts'],
	testTimeout: 30 * 60_000,
	maxWorkers: 1,
};
