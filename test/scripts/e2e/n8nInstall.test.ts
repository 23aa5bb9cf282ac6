/**
 * The n8n install cache (scripts/e2e/n8n-install.js) without installing anything: where an
 * install goes follows what it is made from, and the check before use finds an install that is
 * not the one recorded.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface InstallInfo {
	version: string;
	key: string;
	dir: string;
	nodeBin: string;
	marker: string;
	lockText: string | null;
}
interface Installer {
	installInfo(line: string): InstallInfo;
	checkInstall(info: InstallInfo): { ok: boolean; reason?: string };
}

const cache = mkdtempSync(join(tmpdir(), 'n8n-install-test-'));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

/** The installer module, loaded with the given environment (it reads E2E_N8N_CACHE and N8N2_VERSION at load). */
function installer(env: Record<string, string | undefined> = {}): Installer {
	const saved = { ...process.env };
	Object.assign(process.env, { E2E_N8N_CACHE: cache, ...env });
	for (const [name, value] of Object.entries(env))
		if (value === undefined) delete process.env[name];
	try {
		let loaded: Installer | undefined;
		jest.isolateModules(() => {
			loaded = require('../../../scripts/e2e/n8n-install') as Installer;
		});
		return loaded!;
	} finally {
		process.env = saved;
	}
}

/** A stand-in for a finished install of `info`: what checkInstall reads, with this process's Node as the Node build. */
function fakeInstall(info: InstallInfo): void {
	const modules = join(info.dir, 'node_modules');
	mkdirSync(join(modules, 'n8n'), { recursive: true });
	writeFileSync(join(modules, 'n8n', 'package.json'), JSON.stringify({ version: info.version }));
	mkdirSync(join(info.nodeBin, '..'), { recursive: true });
	symlinkSync(process.execPath, info.nodeBin);
	mkdirSync(join(modules, 'sqlite3', 'build', 'Release'), { recursive: true });
	writeFileSync(join(modules, 'sqlite3', 'build', 'Release', 'node_sqlite3.node'), '');
	const tree = JSON.stringify({ packages: { 'node_modules/n8n': { version: info.version } } });
	writeFileSync(join(modules, '.package-lock.json'), tree);
	const marker = {
		key: info.key,
		n8n: info.version,
		node: process.version,
		tree: createHash('sha256').update(tree).digest('hex'),
	};
	writeFileSync(info.marker, JSON.stringify(marker));
}

describe('the n8n install cache', () => {
	test('an install lives under the cache, in a folder named by its version and key', () => {
		const info = installer().installInfo('2');
		expect(info.dir.startsWith(cache)).toBe(true);
		expect(info.dir).toMatch(
			new RegExp(`/n8n-${info.version.replace(/\./g, '\\.')}-${info.key.slice(0, 12)}$`),
		);
	});

	test('another version is another key and another folder; the committed lockfile is not used for it', () => {
		const { installInfo } = installer();
		const pinned = installInfo('2');
		process.env.N8N2_VERSION = '2.40.0';
		let other: InstallInfo;
		try {
			other = installInfo('2');
		} finally {
			delete process.env.N8N2_VERSION;
		}
		expect(other.key).not.toBe(pinned.key);
		expect(other.dir).not.toBe(pinned.dir);
		expect(other.lockText).toBeNull();
	});

	test('the check passes a complete install and names what is wrong with a changed one', () => {
		const { installInfo, checkInstall } = installer();
		const info = installInfo('2');
		expect(checkInstall(info)).toEqual({ ok: false, reason: 'not installed' });
		fakeInstall(info);
		expect(checkInstall(info).ok).toBe(true);

		writeFileSync(join(info.dir, 'node_modules', '.package-lock.json'), '{"changed":true}');
		expect(checkInstall(info).reason).toBe('the installed tree differs from the one recorded');

		rmSync(join(info.dir, 'node_modules', 'sqlite3'), { recursive: true });
		expect(checkInstall(info).reason).toBe('sqlite3 not built');

		writeFileSync(info.marker, JSON.stringify({ key: 'another' }));
		expect(checkInstall(info).reason).toBe('marker of another key');
	});
});
