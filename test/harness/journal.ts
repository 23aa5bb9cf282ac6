/**
 * The key-scan journal: every API key the harness hands to a node, and everything the nodes
 * produce that a user or an operator could see — output items, error messages, descriptions
 * and all other error fields, static data, credential-test messages, and every line written
 * to n8n's logger (`Container.get(Logger)`, which node contexts use as `this.logger`).
 *
 * Each jest worker appends JSON lines to its own file in one directory per test run
 * (`DW_KEY_JOURNAL_DIR`, made by `test/harness/key-scan.setup.ts`). At the end of every test
 * file the harness scans what that file produced (fails the file), and at the end of the run
 * `test/harness/key-scan.teardown.ts` scans the whole directory (fails the run), listing each
 * offending entry. Without the global setup (e.g. another jest config) the worker uses its own
 * temporary directory and the per-file scan still runs.
 */
import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';

import { filesOriginApiKeySightingsInProcess } from '../../sandbox/src/infra';

export const JOURNAL_DIR_ENV = 'DW_KEY_JOURNAL_DIR';

export type JournalKind =
	| 'secret'
	| 'output'
	| 'error'
	| 'log'
	| 'staticData'
	| 'credentialTest'
	| 'filesOrigin';

export interface JournalEntry {
	kind: JournalKind;
	/** Where it came from: the harness function and the test file. */
	source: string;
	text: string;
}

function journalDir(): string {
	let dir = process.env[JOURNAL_DIR_ENV];
	if (!dir) {
		dir = mkdtempSync(join(tmpdir(), 'dw-key-journal-'));
		process.env[JOURNAL_DIR_ENV] = dir;
	}
	mkdirSync(dir, { recursive: true });
	return dir;
}

const workerFile = (): string =>
	join(journalDir(), `worker-${process.env.JEST_WORKER_ID ?? '0'}-${process.pid}.jsonl`);

/** Entries of this test file (the module is evaluated once per test file). */
const fileEntries: JournalEntry[] = [];

function currentTest(): string {
	try {
		return expect.getState().testPath?.replace(process.cwd(), '.') ?? '';
	} catch {
		return '';
	}
}

export function journal(kind: JournalKind, source: string, text: string): void {
	const entry: JournalEntry = { kind, source: `${source} @ ${currentTest()}`, text };
	fileEntries.push(entry);
	appendFileSync(workerFile(), JSON.stringify(entry) + '\n');
}

/** Records a key given to a node, so every later entry is scanned for it. */
export function journalSecret(key: unknown, source: string): void {
	if (typeof key === 'string' && key.length > 0) journal('secret', source, key);
}

/** A bounded, cycle-safe rendering of any value (errors with their cause chain and own fields included). */
export function render(value: unknown): string {
	return inspect(value, {
		depth: 8,
		maxStringLength: 20_000,
		maxArrayLength: 200,
		breakLength: Infinity,
		showHidden: false,
		getters: false,
	});
}

/** JSON of item data with the base64 content of binaries shortened (files are not scanned, their metadata is). */
export function renderData(value: unknown): string {
	try {
		return JSON.stringify(value, (key, inner: unknown) =>
			key === 'data' && typeof inner === 'string' && inner.length > 4096
				? `[${inner.length} characters of binary data]`
				: inner,
		);
	} catch {
		return render(value);
	}
}

/** Journals an error the harness saw: its message, description and every other field, cause chain included. */
export function journalError(error: unknown, source: string): void {
	if (error === undefined || error === null) return;
	const e = error as { message?: unknown; description?: unknown; stack?: unknown };
	journal('error', `${source} (message)`, String(e.message ?? ''));
	if (e.description) journal('error', `${source} (description)`, String(e.description));
	journal('error', `${source} (all fields)`, render(error));
}

// ---- n8n's logger ---------------------------------------------------------------------------

interface InternalLogger {
	log(level: string, message: unknown, metadata?: unknown): void;
	child(options: unknown): InternalLogger;
}

/** Stands in for the winston logger inside n8n's Logger: every call, at every level, is journaled. */
const capturingLogger: InternalLogger = {
	log(level, message, metadata) {
		journal('log', `n8n logger (${level})`, `${String(message)} ${render(metadata)}`);
	},
	child() {
		return capturingLogger;
	},
};

let loggerHooked = false;

/** Routes n8n's root logger (which node contexts use) into the journal; idempotent. */
export function captureN8nLogger(): void {
	if (loggerHooked) return;
	const logger = Container.get(Logger) as unknown as {
		setInternalLogger(internal: InternalLogger): void;
	};
	logger.setInternalLogger(capturingLogger);
	loggerHooked = true;
}

// ---- scanning -------------------------------------------------------------------------------

export interface Offender {
	secret: string;
	entry: JournalEntry;
	form: string;
}

/** The forms in which a key counts as leaked: as is, its unique part after the prefix, and base64. */
function leakForms(secret: string): Array<{ form: string; needle: string }> {
	const forms = [{ form: 'as is', needle: secret }];
	const unique = secret.replace(/^[a-z]+_/i, '');
	if (unique !== secret && unique.length >= 16)
		forms.push({ form: 'without its prefix', needle: unique });
	forms.push({ form: 'base64', needle: Buffer.from(secret).toString('base64').replace(/=+$/, '') });
	return forms;
}

/**
 * Finds every leak form of many keys in one pass over a text (Aho–Corasick over the lower-cased
 * text), so scanning a run costs the length of what it journaled, not that times the number of keys.
 */
class LeakMatcher {
	private readonly next: Array<Map<number, number>> = [new Map()];
	private readonly fail: number[] = [0];
	/** Per state: the (key, form) pairs whose needle ends there, suffix matches included. */
	private readonly ends: Array<Array<{ key: number; form: number }>> = [[]];
	/** ASCII character code → its class: 0 for characters in no needle, else 1 + its index. */
	private readonly classOf = new Int32Array(128);
	private classes = 1;
	/** The automaton's moves for ASCII characters, failures resolved: `moves[state * classes + class]`. */
	private moves = new Int32Array(0);

	constructor(secrets: string[]) {
		secrets.forEach((secret, key) =>
			leakForms(secret).forEach(({ needle }, form) => this.add(needle.toLowerCase(), key, form)),
		);
		this.link();
	}

	private add(word: string, key: number, form: number): void {
		let state = 0;
		for (let i = 0; i < word.length; i++) {
			const c = word.charCodeAt(i);
			if (c < 128 && this.classOf[c] === 0) this.classOf[c] = this.classes++;
			let to = this.next[state].get(c);
			if (to === undefined) {
				to = this.next.length;
				this.next.push(new Map());
				this.fail.push(0);
				this.ends.push([]);
				this.next[state].set(c, to);
			}
			state = to;
		}
		this.ends[state].push({ key, form });
	}

	private link(): void {
		const width = this.classes;
		const codes = [...this.classOf.keys()].filter((c) => this.classOf[c] !== 0);
		this.moves = new Int32Array(this.next.length * width);
		const queue = [0];
		for (let head = 0; head < queue.length; head++) {
			const state = queue[head];
			const failRow = this.fail[state] * width;
			for (const c of codes) {
				const to = this.next[state].get(c);
				this.moves[state * width + this.classOf[c]] =
					to ?? (state === 0 ? 0 : this.moves[failRow + this.classOf[c]]);
			}
			for (const [c, to] of this.next[state]) {
				const target = state === 0 ? 0 : this.step(this.fail[state], c);
				this.fail[to] = target;
				this.ends[to] = this.ends[to].concat(this.ends[target]);
				queue.push(to);
			}
		}
	}

	/** The state after reading character `c` in `state`. */
	private step(state: number, c: number): number {
		if (c < 128) return this.moves[state * this.classes + this.classOf[c]];
		for (;;) {
			const to = this.next[state].get(c);
			if (to !== undefined) return to;
			if (state === 0) return 0;
			state = this.fail[state];
		}
	}

	/** For each key found in `text` (case-insensitively): the first of its forms (leakForms order) found. */
	scan(text: string): Map<number, number> {
		const found = new Map<number, number>();
		const lower = text.toLowerCase();
		const { moves, classOf, classes } = this;
		let state = 0;
		for (let i = 0; i < lower.length; i++) {
			const c = lower.charCodeAt(i);
			state = c < 128 ? moves[state * classes + classOf[c]] : this.step(state, c);
			const ends = this.ends[state];
			for (let e = 0; e < ends.length; e++) {
				const { key, form } = ends[e];
				const earlier = found.get(key);
				if (earlier === undefined || form < earlier) found.set(key, form);
			}
		}
		return found;
	}
}

/** Every entry that contains one of the secrets (keys shorter than 8 characters cannot be scanned for meaningfully and are skipped). */
export function findLeaks(entries: JournalEntry[]): Offender[] {
	const secrets = [
		...new Set(entries.filter((e) => e.kind === 'secret').map((e) => e.text)),
	].filter((s) => s.length >= 8);
	const matcher = new LeakMatcher(secrets);
	const forms = secrets.map((secret) => leakForms(secret));
	const offenders: Offender[] = [];
	for (const entry of entries) {
		if (entry.kind === 'secret') continue;
		if (entry.kind === 'filesOrigin') {
			offenders.push({ secret: '(any)', entry, form: 'sent to the file-link origin' });
			continue;
		}
		const found = matcher.scan(entry.text);
		for (const key of [...found.keys()].sort((a, b) => a - b)) {
			const secret = secrets[key];
			offenders.push({ secret, entry, form: forms[key][found.get(key)!].form });
		}
	}
	return offenders;
}

export function readJournal(dir: string): JournalEntry[] {
	const entries: JournalEntry[] = [];
	for (const name of readdirSync(dir)) {
		if (!name.endsWith('.jsonl')) continue;
		for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
			if (line.trim()) entries.push(JSON.parse(line) as JournalEntry);
		}
	}
	return entries;
}

export function describeLeaks(offenders: Offender[]): string {
	const mask = (secret: string) =>
		secret.length > 10 ? `${secret.slice(0, 6)}…${secret.slice(-2)}` : '…';
	return offenders
		.slice(0, 50)
		.map(
			(o) =>
				`- key ${mask(o.secret)} (${o.form}) in ${o.entry.kind} from ${o.entry.source}: ${o.entry.text.slice(0, 300).split(o.secret).join('<KEY>')}`,
		)
		.join('\n');
}

/** What this test file has journaled so far. */
export function entriesOfThisFile(): JournalEntry[] {
	return [...fileEntries];
}

/** At the end of each test file: no key in anything it produced, and no key ever sent to a file-link origin. */
export function scanThisFile(): void {
	for (const sighting of filesOriginApiKeySightingsInProcess()) {
		if (!fileEntries.some((e) => e.kind === 'filesOrigin' && e.text.includes(sighting.path))) {
			journal(
				'filesOrigin',
				'sandbox request log',
				`X-Api-Key received by the file-link origin: ${sighting.path} at ${sighting.time}`,
			);
		}
	}
	const offenders = findLeaks(fileEntries);
	if (offenders.length > 0) {
		throw new Error(
			`The API key leaked in ${offenders.length} place(s) during this test file:\n${describeLeaks(offenders)}`,
		);
	}
}
