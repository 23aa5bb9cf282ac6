/** The benchmark (`npm run bench`): not part of the tests; writes docs/benchmarks.md. */
module.exports = {
	rootDir: '..',
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/bench'],
	// BENCH_SUITES=webhook,trigger runs only those files' suites (`<name>.bench.ts`). By default every
	// suite but the webhook trigger's, which `npm run bench:webhook` runs into its own report
	// (docs/benchmarks-webhook.md): they start n8n many times and take a quarter of an hour.
	testMatch: process.env.BENCH_SUITES
		? process.env.BENCH_SUITES.split(',').map((name) => `**/${name.trim()}.bench.ts`)
		: ['**/*.bench.ts'],
	// The queue-mode model goes into docs/benchmarks-queue.md beside the real row (`npm run bench:queue`).
	testPathIgnorePatterns: process.env.BENCH_SUITES
		? []
		: ['/webhook[^/]*\\.bench\\.ts$', '/queue-model\\.bench\\.ts$'],
	transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
	setupFiles: ['<rootDir>/test/harness/env.ts'],
	// The same run-wide key scan and temporary-folder root as `npm test`, so a bench run leaves no folder behind.
	globalSetup: '<rootDir>/test/harness/global-setup.ts',
	globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
	testTimeout: 30 * 60_000,
	maxWorkers: 1,
};
