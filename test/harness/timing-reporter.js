'use strict';
/**
 * A jest reporter beside the default one: each test file's duration as it ends, and the run's,
 * as `[timing] ...` lines, which scripts/timings.js reads from a CI log (docs/development.md).
 */
const path = require('node:path');
const { selectedTier } = require('../tiers');

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

class TimingReporter {
	constructor(globalConfig, options = {}) {
		this.rootDir = globalConfig.rootDir;
		// `jest fast`, `jest slow`, `jest all` (both tiers), or the label a config gives (e2e, queue).
		this.label = options.label || `jest ${selectedTier()}`;
		this.started = Date.now();
	}

	onTestResult(test, result) {
		const file = path.relative(this.rootDir, result.testFilePath);
		const tests = result.numPassingTests + result.numFailingTests + result.numPendingTests;
		const ms = result.perfStats.end - result.perfStats.start;
		process.stderr.write(`[timing] ${this.label} ${file}: ${seconds(ms)} (${tests} tests)\n`);
	}

	onRunComplete(contexts, results) {
		process.stderr.write(
			`[timing] ${this.label} tests: ${seconds(Date.now() - this.started)} (${results.numTotalTestSuites} files, ${results.numTotalTests} tests, ${results.numFailedTests} failed)\n`,
		);
	}
}

module.exports = TimingReporter;
