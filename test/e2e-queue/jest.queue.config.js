/**
 * The queue-mode end-to-end test: `npm run test:e2e:queue`
 * (jest -c test/e2e-queue/jest.queue.config.js). Needs redis-server and PostgreSQL from
 * Debian's packages and the cached n8n 2.41.1 install; scripts/e2e/ci-queue.sh provides them.
 *   E2E_SKIP_BUILD=1   pack the current dist/ without `npm run build`
 *   E2E_QUEUE_PORT     the main's editor port (default 5700)
 */
const path = require('node:path');

module.exports = {
	rootDir: path.resolve(__dirname, '..', '..'),
	roots: ['<rootDir>/test/e2e-queue'],
	testMatch: ['**/*.e2e.test.js'],
	testEnvironment: 'node',
	transform: {},
	maxWorkers: 1,
	testTimeout: 15 * 60 * 1000,
	verbose: true,
	// Each file's duration as a `[timing]` line (scripts/timings.js reads them from the CI log).
	reporters: ['default', ['<rootDir>/test/harness/timing-reporter.js', { label: 'e2e-queue' }]],
};
