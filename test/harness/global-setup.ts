/** Jest globalSetup of `npm test`: the key-scan journal and the run's temporary folder root. */
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';

import keyScanSetup from './key-scan.setup';
import { makeRunTempRoot } from './tempFolders';

const { selectedTier } = require('../tiers') as { selectedTier: () => string };

/** The commit the run tests, and whether the tree differs from it (scripts/timings.js reads this line). */
function commitLine(): string {
	try {
		const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();
		const dirty = git('status', '--porcelain', '--untracked-files=no')
			? ' (uncommitted changes)'
			: '';
		return `commit ${git('rev-parse', 'HEAD')}${dirty}`;
	} catch {
		return 'commit unknown';
	}
}

export default function setup(): void {
	keyScanSetup();
	makeRunTempRoot();
	process.stdout.write(
		`\n[timing] jest ${selectedTier()} start: ${commitLine()}, ${new Date().toISOString().slice(0, 19)}Z, ${cpus().length} cores\n`,
	);
}
