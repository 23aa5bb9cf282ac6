/**
 * The Node version check `npm run dev` makes before anything else (scripts/node-version.js):
 * package.json's range read as npm reads it, and a range it cannot read refused, never passed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { satisfies, unsupportedNodeMessage } = require('../../scripts/node-version') as {
	satisfies(version: string, range: string): boolean;
	unsupportedNodeMessage(version?: string, packageJson?: string): string | null;
};

describe('the Node version check of npm run dev', () => {
	test.each([
		['20.15.0', '>=20.15', true],
		['20.14.9', '>=20.15', false],
		['v22.1.0', '>=20.15', true],
		['18.19.0', '>=20.15', false],
		['24.0.0', '>=20.15 <24', false],
		['23.11.1', '>=20.15 <24', true],
	])('%s against "%s": %s', (version, range, expected) => {
		expect(satisfies(version, range)).toBe(expected);
	});

	test('a range in a form it does not read is refused, not passed', () => {
		expect(() => satisfies('22.0.0', '^16 || >=20')).toThrow(/cannot read "\^16"/);
	});

	test('alternatives joined by || pass when one does', () => {
		expect(satisfies('18.20.0', '>=16 <17 || >=18.20')).toBe(true);
		expect(satisfies('17.0.0', '>=16 <17 || >=18.20')).toBe(false);
	});

	test("this repository's own Node passes; an older one is told what to install", () => {
		expect(unsupportedNodeMessage()).toBeNull();
		const message = unsupportedNodeMessage('18.19.0');
		expect(message).toMatch(
			/This is Node 18\.19\.0 .*needs Node >=20\.15 \(package\.json "engines"\)/,
		);
		expect(message).toMatch(/npm ci && npm run dev/);
	});

	test('a package.json without engines.node asks nothing', () => {
		const dir = mkdtempSync(join(tmpdir(), 'node-version-'));
		try {
			writeFileSync(join(dir, 'package.json'), '{"name":"x"}');
			expect(unsupportedNodeMessage('10.0.0', join(dir, 'package.json'))).toBeNull();
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
