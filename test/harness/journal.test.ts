/**
 * The key scan itself: one pass over each journal entry finds every form of every key, as the
 * plain per-key search did (that search is kept here as the reference), and in time that does
 * not grow with the number of keys times the journal's length.
 */
import { randomBytes } from 'node:crypto';

import { findLeaks, type JournalEntry } from './journal';

/** The scan as it was before it became one pass: each key, each form, searched in each entry. */
function referenceLeaks(
	entries: JournalEntry[],
): Array<{ secret: string; form: string; at: number }> {
	const secrets = [
		...new Set(entries.filter((e) => e.kind === 'secret').map((e) => e.text)),
	].filter((s) => s.length >= 8);
	const found: Array<{ secret: string; form: string; at: number }> = [];
	entries.forEach((entry, at) => {
		if (entry.kind === 'secret' || entry.kind === 'filesOrigin') return;
		for (const secret of secrets) {
			const unique = secret.replace(/^[a-z]+_/i, '');
			const forms = [{ form: 'as is', needle: secret }];
			if (unique !== secret && unique.length >= 16)
				forms.push({ form: 'without its prefix', needle: unique });
			forms.push({
				form: 'base64',
				needle: Buffer.from(secret).toString('base64').replace(/=+$/, ''),
			});
			const hit = forms.find(({ needle }) =>
				entry.text.toLowerCase().includes(needle.toLowerCase()),
			);
			if (hit) found.push({ secret, form: hit.form, at });
		}
	});
	return found;
}

const secret = (text: string): JournalEntry => ({ kind: 'secret', source: 'test', text });
const log = (text: string): JournalEntry => ({ kind: 'log', source: 'test', text });
const key = () => `dwk_${randomBytes(16).toString('hex')}`;

function leaksOf(entries: JournalEntry[]) {
	return findLeaks(entries).map((o) => ({
		secret: o.secret,
		form: o.form,
		at: entries.indexOf(o.entry),
	}));
}

describe('the key scan', () => {
	test('finds each key as is, without its prefix, in base64 and in any letter case; skips short keys', () => {
		const [a, b, c, d] = [key(), key(), key(), key()];
		const entries = [
			secret(a),
			secret(b),
			secret(c),
			secret(d),
			secret('short'),
			log(`header X-Api-Key: ${a} sent`),
			log(`the key's body ${b.slice(4)} in an error`),
			log(`basic ${Buffer.from(c).toString('base64')}`),
			log(`shouting ${d.toUpperCase()}`),
			log('short, and nothing else'),
			log(`${a.slice(0, -1)} is one character short of a key`),
		];
		expect(leaksOf(entries)).toEqual([
			{ secret: a, form: 'as is', at: 5 },
			{ secret: b, form: 'without its prefix', at: 6 },
			{ secret: c, form: 'base64', at: 7 },
			{ secret: d, form: 'as is', at: 8 },
		]);
		expect(leaksOf(entries)).toEqual(referenceLeaks(entries));
	});

	test('reports what the per-key search reports, on random journals with overlapping keys', () => {
		let seed = 7;
		const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
		for (let round = 0; round < 30; round++) {
			const keys = Array.from({ length: 2 + Math.floor(rand() * 12) }, key);
			// Keys that share long prefixes, so that partial matches must fall back correctly.
			keys.push(keys[0].slice(0, 20) + keys[1].slice(20));
			const pieces = (): string => {
				const k = keys[Math.floor(rand() * keys.length)];
				const forms = [k, k.slice(4), Buffer.from(k).toString('base64'), k.toUpperCase()];
				const form = forms[Math.floor(rand() * forms.length)];
				const cut = rand() < 0.5 ? form : form.slice(0, Math.floor(rand() * form.length));
				return `${randomBytes(Math.floor(rand() * 20)).toString('hex')}${cut}`;
			};
			const entries: JournalEntry[] = keys.map(secret);
			for (let i = 0; i < 40; i++)
				entries.push(log(Array.from({ length: Math.floor(rand() * 4) }, pieces).join(' ')));
			expect(leaksOf(entries)).toEqual(referenceLeaks(entries));
		}
	});

	test('a file-link origin that saw a key is reported whatever the keys', () => {
		const entries: JournalEntry[] = [{ kind: 'filesOrigin', source: 'sandbox', text: '/f/1' }];
		expect(findLeaks(entries).map((o) => o.form)).toEqual(['sent to the file-link origin']);
	});

	test('costs about the same with 300 keys as with 3: one pass over each entry, not one per key', () => {
		const line = `n8n logger (debug) request to https://api.example.com/runs/1 ${'x'.repeat(2000)}`;
		const lines = Array.from({ length: 4_000 }, () => log(line));
		/** The fastest of three scans (a loaded machine slows some, never speeds any up). */
		const time = (keys: number) => {
			const entries = [...Array.from({ length: keys }, () => secret(key())), ...lines];
			let best = Infinity;
			for (let round = 0; round < 3; round++) {
				const t0 = process.hrtime.bigint();
				expect(findLeaks(entries)).toEqual([]);
				best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6);
			}
			return best;
		};
		const few = time(3);
		const many = time(300);
		// The per-key search took about 100 times longer with 300 keys than with 3; the margin is
		// wide so that a loaded machine cannot fail it (building the automaton grows with the keys).
		expect(many).toBeLessThan(10 * few + 200);
	});
});
