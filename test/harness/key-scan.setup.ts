/** Jest globalSetup: one fresh key-scan journal directory for the whole run (see journal.ts). */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): void {
	// Workers are started after this and inherit the variable.
	process.env.DW_KEY_JOURNAL_DIR = mkdtempSync(join(tmpdir(), 'dw-key-journal-'));
}
