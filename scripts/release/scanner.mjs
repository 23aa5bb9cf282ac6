// n8n's official scanner (@n8n/scan-community-package, a dev dependency: the same code n8n runs
// to verify a package), applied the way its CLI applies it, but to local files:
//   - the source, with SOURCE_FILE_PATTERNS (package.json and {nodes,credentials}/**), which the
//     CLI lints on the GitHub commit named in the package's npm provenance;
//   - the unpacked tarball, with the patterns the CLI passes for the published package.
// The CLI itself only scans packages already on the registry (it downloads them and requires
// provenance first); analyzePackage is the part that decides the findings.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const scannerPath = require.resolve('@n8n/scan-community-package/scanner/scanner.mjs');
const scanner = await import(scannerPath);

export const {
	SOURCE_FILE_PATTERNS,
	analyzePackage,
	buildScanConfig,
	parseSourceRepo,
	findPackageRoot,
} = scanner;
// The scanner's own ESLint and glob, for the warnings pass below.
const fromScanner = createRequire(scannerPath);
const { ESLint } = fromScanner('eslint');
const glob = fromScanner('fast-glob');

// The CLI passes the tarball patterns inline (scanner.mjs, analyzePackageByName), so they are
// repeated here and checked against its source: a scanner upgrade that changes them fails
// release:check instead of silently scanning something else.
export const TARBALL_FILE_PATTERNS = ['**/*.js', 'package.json'];

export function scannerVersion() {
	return require('@n8n/scan-community-package/package.json').version;
}

export function assertTarballPatternsMatchScanner() {
	const source = readFileSync(scannerPath, 'utf8');
	const call = `analyzePackage(packageDir, ${JSON.stringify(TARBALL_FILE_PATTERNS).replaceAll('"', "'").replaceAll(',', ', ')})`;
	if (!source.includes(call)) {
		throw new Error(
			`${path.relative(process.cwd(), scannerPath)} no longer calls ${call} for the tarball; ` +
				'read how it scans the tarball now and update TARBALL_FILE_PATTERNS in scripts/release/scanner.mjs.',
		);
	}
}

/**
 * Scans `dir` with `patterns`. `verdict` is analyzePackage's own answer (it fails on errors
 * only); `findings` lists every error and warning, from a second lint with the scanner's config,
 * files and options (analyzePackage reports warnings nowhere, and this package allows none).
 */
export async function scan(dir, patterns) {
	const verdict = await analyzePackage(dir, patterns);
	const eslint = new ESLint({
		cwd: dir,
		allowInlineConfig: false,
		overrideConfigFile: true,
		overrideConfig: await buildScanConfig(),
	});
	const files = glob.sync(patterns, {
		cwd: dir,
		absolute: true,
		ignore: ['node_modules/**', '**/package-lock.json'],
	});
	const results = files.length ? await eslint.lintFiles(files) : [];
	const findings = results.flatMap((r) =>
		r.messages.map((m) => ({
			file: path.relative(dir, r.filePath),
			line: m.line,
			severity: m.severity === 2 ? 'error' : 'warning',
			rule: m.ruleId ?? 'parse',
			message: m.message,
		})),
	);
	const errors = findings.filter((f) => f.severity === 'error').length;
	if (verdict.passed !== (errors === 0)) {
		throw new Error(
			`analyzePackage says passed=${verdict.passed} but the same lint found ${errors} errors in ${dir}`,
		);
	}
	return { verdict, files: files.length, findings };
}

export const formatFinding = (f) => `${f.file}:${f.line}  ${f.severity}  ${f.message}  ${f.rule}`;
export const scanSource = (dir) => scan(dir, SOURCE_FILE_PATTERNS);
export const scanTarball = (dir) => scan(dir, TARBALL_FILE_PATTERNS);
