// `npm run release:verify-published [-- <version>]`: after publish.yml has published, runs n8n's
// scanner on the package exactly as n8n does before verifying it (analyzePackageByName, what
// `npx @n8n/scan-community-package <name>@<version>` runs): the npm provenance check, the source
// downloaded from the GitHub commit the provenance names, and the published tarball.
// The scanner's own CLI exits 0 even when the package fails, so this script is the gate.
// The registry can take a little while to serve a new version: a few attempts, a minute apart.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { analyzePackageByName } = await import(
	require.resolve('@n8n/scan-community-package/scanner/scanner.mjs')
);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const version = process.argv[2] ?? pkg.version;
const attempts = 5;

for (let attempt = 1; ; attempt++) {
	const result = await analyzePackageByName(pkg.name, version);
	if (result.passed) {
		console.log(
			`${pkg.name}@${result.version} passes n8n's scanner: provenance, source and tarball.`,
		);
		process.exit(0);
	}
	console.log(
		`attempt ${attempt}/${attempts}: ${result.message}${result.details ? `\n${result.details}` : ''}`,
	);
	const notYetVisible = /No package metadata|404|No version found/.test(result.message ?? '');
	if (!notYetVisible || attempt === attempts) process.exit(1);
	await sleep(60_000);
}
