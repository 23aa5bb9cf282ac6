/** Jest globalSetup of `npm test`: the key-scan journal and the run's temporary folder root. */
import keyScanSetup from './key-scan.setup';
import { makeRunTempRoot } from './tempFolders';

export default function setup(): void {
	keyScanSetup();
	makeRunTempRoot();
}
