/** Jest globalTeardown of `npm test`: the run-wide key scan, and the run's temporary folders removed (also when the scan fails). */
import keyScanTeardown from './key-scan.teardown';
import { removeRunTempRoot } from './tempFolders';
const { selectedTier } = require('../tiers') as { selectedTier: () => string };

export default function teardown(): void {
	const scanStarted = Date.now();
	try {
		keyScanTeardown();
	} finally {
		removeRunTempRoot();
		// The whole jest process, from its start to here (scripts/timings.js reads this line).
		process.stdout.write(
			`[timing] jest ${selectedTier()} whole run: ${process.uptime().toFixed(1)} s (key scan and clean-up ${((Date.now() - scanStarted) / 1000).toFixed(1)} s)\n`,
		);
	}
}
