// `npm run release:check`: what n8n checks before it verifies a community package, run here on
// the working tree, with zero findings allowed (errors and warnings):
//   1. lint: eslint.config.mjs is n8n-node's config plus ignores only, and `npm run lint` passes;
//   2. build (tsc + gulp), then `npm pack` into a temporary folder;
//   3. the tarball holds only dist/ and the docs (scripts/check-pack.js), and its code requires
//      only what n8n provides (the scanner's import rule exempts devDependencies, which n8n
//      never installs);
//   4. n8n's scanner on the source and on the unpacked tarball (scripts/release/scanner.mjs);
//   5. provenance: what the scanner reads from the npm provenance statement resolves to this
//      repository (the statement itself only exists once GitHub Actions publishes);
//   6. the gates can fail: a finding added to a copy fails the lint and both scans.
// Options: --no-build (pack the current dist/), --keep (keep the temporary folder).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import {
	assertTarballPatternsMatchScanner,
	findPackageRoot,
	formatFinding,
	parseSourceRepo,
	scanSource,
	scannerVersion,
	scanTarball,
} from './scanner.mjs';

const require = createRequire(import.meta.url);
const { checkPackFiles } = require('../check-pack.js');

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = new Set(process.argv.slice(2));
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const work = mkdtempSync(path.join(os.tmpdir(), 'release-check-'));
const failures = [];
let stepNo = 0;

const step = (title) => console.log(`\n== ${++stepNo}. ${title}`);
const ok = (line) => console.log(`   ok  ${line}`);
const fail = (line) => {
	failures.push(line);
	console.log(`   FAIL  ${line}`);
};
const run = (cmd, cmdArgs, options = {}) => {
	const r = spawnSync(cmd, cmdArgs, { cwd: root, stdio: 'inherit', ...options });
	if (r.status !== 0) throw new Error(`${cmd} ${cmdArgs.join(' ')} exited with ${r.status}`);
};

async function checkLint() {
	step("lint: n8n-node's eslint config, zero errors and warnings");
	const official = (await import('@n8n/node-cli/eslint')).config;
	const ours = (await import(path.join(root, 'eslint.config.mjs'))).default;
	const sameHead = official.every((entry, i) => ours[i] === entry);
	const extras = ours.slice(official.length);
	const ignoresOnly = extras.every((entry) =>
		Object.keys(entry).every((k) => k === 'ignores' || k === 'name'),
	);
	if (sameHead && ignoresOnly) {
		ok(
			`eslint.config.mjs = @n8n/node-cli/eslint's ${official.length} entries, unchanged, + ${extras.length} ignore entry`,
		);
	} else {
		fail(
			"eslint.config.mjs must be @n8n/node-cli/eslint's config, unchanged, followed by ignore entries only",
		);
	}
	const lint = spawnSync('npm', ['run', '--silent', 'lint'], { cwd: root, stdio: 'inherit' });
	if (lint.status === 0) ok('npm run lint: 0 errors, 0 warnings');
	else fail('npm run lint reports findings (above)');
}

function buildAndPack() {
	if (args.has('--no-build')) {
		step('build skipped (--no-build): packing the current dist/');
	} else {
		step('build (tsc, then gulp copies the icons)');
		run('npm', ['run', '--silent', 'build']);
		ok('dist/ built');
	}
	step('npm pack');
	const [{ filename }] = JSON.parse(
		execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
			cwd: root,
			encoding: 'utf8',
		}),
	);
	const tarball = path.join(work, filename);
	const entries = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
		.split('\n')
		.filter((line) => line && !line.endsWith('/'))
		.map((line) => line.replace(/^package\//, ''));
	ok(`${filename}: ${entries.length} files`);
	const problems = checkPackFiles(entries);
	if (problems.length) problems.forEach((p) => fail(`tarball contents ${p}`));
	else
		ok(
			'contents: only dist/, README.md, LICENSE, CHANGELOG.md, package.json; every node, credential and icon present',
		);
	const unpacked = path.join(work, 'package');
	execFileSync('tar', ['-xzf', tarball, '-C', work]);
	checkRuntimeRequires(
		unpacked,
		entries.filter((e) => e.endsWith('.js')),
	);
	return unpacked;
}

// @n8n/community-nodes/no-restricted-imports allows the modules n8n ships (n8n-workflow, crypto,
// lodash, …) and also any devDependency: node code importing one (axios, busboy here) would pass
// the lint and the scanner, then fail in n8n, which installs no devDependencies. So the compiled
// code may require only the rule's own list (read from the scanner's copy of the rule).
const PROVIDED_BY_N8N = allowedModulesOfImportRule();
function allowedModulesOfImportRule() {
	const scanner = require.resolve('@n8n/scan-community-package/scanner/scanner.mjs');
	const rule = createRequire(scanner)
		.resolve('@n8n/eslint-plugin-community-nodes')
		.replace(/plugin\.js$/, 'rules/no-restricted-imports.js');
	const list = /const allowedModules = \[([^\]]*)\]/.exec(readFileSync(rule, 'utf8'));
	if (!list)
		throw new Error(
			`${rule} no longer has its allowedModules list; update allowedModulesOfImportRule in scripts/release/release-check.mjs`,
		);
	return [...list[1].matchAll(/'([^']+)'/g)].map((m) => m[1]);
}
const moduleNameOf = (spec) =>
	spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
function requiresOf(unpacked, jsFiles) {
	const required = new Map();
	for (const file of jsFiles) {
		for (const [, spec] of readFileSync(path.join(unpacked, file), 'utf8').matchAll(
			/\brequire\((?:"|')([^"']+)(?:"|')\)/g,
		)) {
			if (!spec.startsWith('.')) required.set(spec, [...(required.get(spec) ?? []), file]);
		}
	}
	return required;
}
const foreignRequires = (required) =>
	[...required].filter(([spec]) => !PROVIDED_BY_N8N.includes(moduleNameOf(spec)));

function checkRuntimeRequires(unpacked, jsFiles) {
	const required = requiresOf(unpacked, jsFiles);
	const foreign = foreignRequires(required);
	if (foreign.length)
		foreign.forEach(([spec, files]) =>
			fail(`dist requires "${spec}", which n8n does not provide (${files.join(', ')})`),
		);
	else ok(`dist/ requires only ${[...required.keys()].join(', ')} and its own files`);
}

function report(label, result) {
	const { verdict, files, findings } = result;
	if (findings.length === 0 && verdict.passed) {
		ok(`${label}: ${files} files, 0 findings (analyzePackage: passed)`);
		return;
	}
	fail(
		`${label}: ${findings.length} findings (analyzePackage: ${verdict.passed ? 'passed' : 'failed'})`,
	);
	findings.forEach((f) => console.log(`         ${formatFinding(f)}`));
}

async function checkScanner(unpacked) {
	step(
		`n8n's scanner, @n8n/scan-community-package ${scannerVersion()} (its analyzePackage and file patterns)`,
	);
	assertTarballPatternsMatchScanner();
	report('source (package.json, nodes/, credentials/)', await scanSource(root));
	report('tarball (**/*.js, package.json)', await scanTarball(unpacked));
}

function checkProvenanceTarget() {
	step('provenance: the source the scanner will fetch is this repository');
	// npm refuses a provenance publish whose package.json repository differs from the GitHub
	// repository running the workflow; the scanner then downloads the source from the
	// repository and commit the statement names and looks for this package's package.json.
	const repoUrl = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
	let commit = '0'.repeat(40);
	try {
		commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
	} catch {
		console.log('   (not a git checkout: a placeholder commit stands in for HEAD)');
	}
	const uri = `${String(repoUrl).replace(/\.git$/, '')}@refs/tags/v${pkg.version}`;
	const statement = {
		predicate: {
			buildDefinition: { resolvedDependencies: [{ uri, digest: { gitCommit: commit } }] },
		},
	};
	const source = parseSourceRepo([
		{
			predicateType: 'https://slsa.dev/provenance/v1',
			bundle: {
				dsseEnvelope: { payload: Buffer.from(JSON.stringify(statement)).toString('base64') },
			},
		},
	]);
	if (!source) {
		fail(
			`repository.url "${repoUrl}" is not a public GitHub repository URL the scanner can fetch (git+https://github.com/<owner>/<repo>.git)`,
		);
		return;
	}
	ok(
		`repository.url names github.com/${source.owner}/${source.repo}; commit ${source.gitCommit.slice(0, 7)}`,
	);
	const found = findPackageRoot(root, pkg.name);
	if (found === root) ok(`the scanner finds ${pkg.name}'s package.json at the repository root`);
	else
		fail(
			`the scanner would look for ${pkg.name} in ${found ?? 'nowhere'}, not the repository root`,
		);
	console.log(
		"   (the statement itself, and npm's provenance check, exist only after publishing: docs/verification.md)",
	);
}

function copySource(to) {
	for (const entry of ['package.json', 'nodes', 'credentials'])
		cpSync(path.join(root, entry), path.join(to, entry), { recursive: true });
}

function expectRule(label, findings, rule) {
	const hit = findings.find((f) => f.rule === rule);
	if (hit) ok(`${label}: caught (${rule})`);
	else
		fail(
			`${label}: expected ${rule}, got ${findings.map((f) => f.rule).join(', ') || 'no finding'}`,
		);
}

async function checkGatesFail(unpacked) {
	step('the gates fail on a finding (each added to a copy, never to the repository)');
	const withoutEmail = { ...pkg, author: { name: pkg.author.name } };
	const nodeFile = 'nodes/DocumentWorkflow/DocumentWorkflow.node.ts';
	const fsImport = "import { readFileSync } from 'fs';\nexport const leak = readFileSync;\n";

	const eslint = new ESLint({ cwd: root });
	const lintText = async (text, file) =>
		(await eslint.lintText(text, { filePath: path.join(root, file) })).flatMap((r) =>
			r.messages.map((m) => ({ rule: m.ruleId, severity: m.severity })),
		);
	expectRule(
		'lint, package.json author without email',
		await lintText(JSON.stringify(withoutEmail, null, 2), 'package.json'),
		'@n8n/community-nodes/valid-author',
	);
	expectRule(
		`lint, ${nodeFile} importing fs`,
		await lintText(fsImport + readFileSync(path.join(root, nodeFile), 'utf8'), nodeFile),
		'@n8n/community-nodes/no-restricted-imports',
	);

	const source = path.join(work, 'source-with-finding');
	copySource(source);
	writeFileSync(path.join(source, 'package.json'), JSON.stringify(withoutEmail, null, 2));
	expectRule(
		'scanner on the source, author without email',
		(await scanSource(source)).findings,
		'@n8n/community-nodes/valid-author',
	);

	const tarball = path.join(work, 'tarball-with-finding');
	cpSync(unpacked, tarball, { recursive: true });
	const built = path.join(tarball, 'dist', nodeFile.replace(/\.ts$/, '.js'));
	writeFileSync(
		built,
		`${readFileSync(built, 'utf8')}\nrequire('child_process').execSync('id');\n`,
	);
	expectRule(
		'scanner on the tarball, dist/ requiring child_process',
		(await scanTarball(tarball)).findings,
		'@n8n/community-nodes/no-restricted-imports',
	);

	const devDependency = path.join(work, 'tarball-requiring-a-dev-dependency');
	cpSync(unpacked, devDependency, { recursive: true });
	const builtCopy = path.join(devDependency, 'dist', nodeFile.replace(/\.ts$/, '.js'));
	writeFileSync(builtCopy, `${readFileSync(builtCopy, 'utf8')}\nrequire('axios');\n`);
	const missed = (await scanTarball(devDependency)).findings.length === 0;
	const caught = foreignRequires(
		requiresOf(devDependency, [path.relative(devDependency, builtCopy)]),
	).some(([spec]) => spec === 'axios');
	if (caught)
		ok(
			`dist/ requiring the devDependency axios: caught by the runtime-require check${missed ? ' (the scanner lets it pass)' : ''}`,
		);
	else fail('dist/ requiring the devDependency axios: not caught by the runtime-require check');
}

try {
	await checkLint();
	const unpacked = buildAndPack();
	await checkScanner(unpacked);
	checkProvenanceTarget();
	await checkGatesFail(unpacked);
} catch (error) {
	fail(error.message);
} finally {
	if (args.has('--keep')) console.log(`\n(kept ${work})`);
	else rmSync(work, { recursive: true, force: true });
}

if (failures.length) {
	console.log(`\nrelease:check FAILED (${failures.length}):\n  ${failures.join('\n  ')}`);
	process.exit(1);
}
console.log(`\nrelease:check passed: ${pkg.name}@${pkg.version} is ready for n8n's verification.`);
