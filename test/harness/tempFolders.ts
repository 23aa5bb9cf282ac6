/**
 * The temporary folders of a test run. The global setup makes one root per run in the system
 * temp folder; each test file's n8n user folder (see env.ts; n8n-core writes its settings and,
 * in filesystem binary mode, the binaries there) is made inside it; the global teardown removes
 * the root, so a run leaves nothing behind. Without the global setup (another jest config), a
 * file's folder goes straight into the system temp folder, as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const TEMP_ROOT_ENV = 'DW_TEST_TEMP_ROOT';

/** Jest globalSetup part: the run's root folder; workers started after this inherit the variable. */
export function makeRunTempRoot(): string {
	const root = mkdtempSync(join(tmpdir(), 'n8n-dw-test-run-'));
	process.env[TEMP_ROOT_ENV] = root;
	return root;
}

/** Jest globalTeardown part: removes the run's root and everything in it. */
export function removeRunTempRoot(): void {
	const root = process.env[TEMP_ROOT_ENV];
	if (root) rmSync(root, { recursive: true, force: true });
}

/** A fresh folder for this test file, inside the run's root when there is one. */
export function makeTestFileFolder(prefix: string): string {
	return mkdtempSync(join(process.env[TEMP_ROOT_ENV] ?? tmpdir(), prefix));
}
