/**
 * End-to-end tests: a real n8n (2.41.1 on Node 24, then 1.123.81 on Node 22) with the packed
 * package installed, against the in-process sandbox, plus a browser test of the editor, the
 * trigger under n8n 2.41's durable poll cursors (04-trigger-durable, n8n 2 only) and the node
 * as an AI agent's tool (05-agent, n8n 2.41.1, with a local stand-in of the OpenAI API).
 * Run with `npm run test:e2e` (jest -c test/e2e/jest.e2e.config.js). Files run side by side,
 * each with its own n8n on its own port (scripts/e2e/ports.js), the longest first (sequencer.js).
 * Environment:
 *   E2E_N8N=2,1          n8n lines to test (default both)
 *   E2E_SKIP_BUILD=1     pack the current dist/ without `npm run build`
 *   E2E_BROWSER=0        skip the browser test
 *   E2E_WORKERS=<n>      how many files at once (default 5; 1 = one after another)
 */
const path = require('node:path');

module.exports = {
	rootDir: path.resolve(__dirname, '..', '..'),
	roots: ['<rootDir>/test/e2e'],
	testMatch: ['**/*.e2e.test.js'],
	testEnvironment: 'node',
	// The sandbox is TypeScript: tests load sandbox/src/index.ts through ts-jest (transpile only).
	transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }] },
	moduleFileExtensions: ['js', 'ts', 'json'],
	globalSetup: '<rootDir>/test/e2e/global-setup.js',
	testSequencer: '<rootDir>/test/e2e/sequencer.js',
	// Most of an e2e file's time is spent waiting for n8n's poll schedule (every minute), so files
	// overlap well even on 2 cores (measured: docs/development.md). Five: the five long files
	// start together, so no long file waits for another to end (with four, two of them ran one
	// after the other and set the suite's length).
	maxWorkers: Number(process.env.E2E_WORKERS || 5),
	testTimeout: 15 * 60 * 1000,
	verbose: true,
	// Each file's duration as a `[timing]` line (scripts/timings.js reads them from the CI log).
	reporters: ['default', ['<rootDir>/test/harness/timing-reporter.js', { label: 'e2e' }]],
};
