/**
 * Jest globalTeardown: scans the journal of the whole run (every worker, every test file) for
 * every API key any test handed to a node, and fails the run listing each offender. Also fails
 * when the journal is missing or holds no node output (the scan would prove nothing), and when
 * a file-link origin ever received X-Api-Key.
 */
import { rmSync } from 'node:fs';
import { describeLeaks, findLeaks, readJournal } from './journal';

export default function teardown(): void {
	const dir = process.env.DW_KEY_JOURNAL_DIR;
	if (!dir)
		throw new Error('Key scan: DW_KEY_JOURNAL_DIR is not set; the global setup did not run.');
	const entries = readJournal(dir);
	const count = (kind: string) => entries.filter((e) => e.kind === kind).length;
	const offenders = findLeaks(entries);
	if (offenders.length > 0) {
		throw new Error(
			`\nKEY SCAN FAILED: an API key appeared in ${offenders.length} place(s) during the test run (journal kept in ${dir}):\n${describeLeaks(offenders)}\n`,
		);
	}
	const keys = new Set(entries.filter((e) => e.kind === 'secret').map((e) => e.text)).size;
	// A run that executed nodes but journaled nothing means the capture is broken, not that all is well.
	if (count('output') > 0 && count('log') === 0)
		throw new Error(
			`Key scan: node output was journaled but no n8n log line was (journal in ${dir}); the logger capture is broken.`,
		);
	process.stdout.write(
		`\nKey scan: ${keys} API key(s) checked against ${count('output')} outputs, ${count('error')} error fields, ${count('log')} log lines, ${count('staticData')} static data copies and ${count('credentialTest')} credential-test results: no leak.\n`,
	);
	rmSync(dir, { recursive: true, force: true });
}
