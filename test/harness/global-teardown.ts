/** Jest globalTeardown of `npm test`: the run-wide key scan, and the run's temporary folders removed (also when the scan fails). */
import keyScanTeardown from './key-scan.teardown';
import { removeRunTempRoot } from './tempFolders';

export default function teardown(): void {
	try {
		keyScanTeardown();
	} finally {
		removeRunTempRoot();
	}
}
