// `npm run release:tag-check -- v1.2.3` (publish.yml passes the pushed tag): refuses to publish
// when the tag is not "v" + package.json's version, when CHANGELOG.md has no section for that
// version, when the workflow runs in another GitHub repository than package.json's repository
// (npm would refuse the provenance publish; a fork must not publish), or when this npm cannot
// publish through trusted publishing (npm 11.5.1 or later).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { version, repository } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const tag = process.argv[2] ?? process.env.GITHUB_REF_NAME;
const problems = [];

if (tag !== `v${version}`) {
	problems.push(
		`tag "${tag ?? '(none)'}" does not match package.json's version ${version}: tag v${version}, or set the version first (npm version <x.y.z> --no-git-tag-version)`,
	);
}
const changelog = readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');
if (!changelog.split('\n').some((line) => line.startsWith(`## [${version}]`))) {
	problems.push(
		`CHANGELOG.md has no "## [${version}]" section: move the Unreleased entries under it`,
	);
}
const repoUrl = typeof repository === 'string' ? repository : repository?.url;
const ownRepo = /github\.com\/([^/]+\/[^/]+?)(?:\.git)?$/.exec(String(repoUrl))?.[1];
const runningIn = process.env.GITHUB_REPOSITORY;
if (runningIn && runningIn.toLowerCase() !== ownRepo?.toLowerCase()) {
	problems.push(
		`this workflow runs in ${runningIn}, but package.json's repository is ${ownRepo ?? repoUrl}: npm refuses a provenance publish from another repository`,
	);
}
const npmVersion = execFileSync('npm', ['--version'], { encoding: 'utf8' }).trim();
const [major, minor, patch] = npmVersion.split('.').map(Number);
if (major < 11 || (major === 11 && (minor < 5 || (minor === 5 && patch < 1)))) {
	problems.push(
		`npm ${npmVersion} cannot publish through trusted publishing (needs 11.5.1 or later; Node 24 ships it)`,
	);
}

if (problems.length) {
	console.error(`release:tag-check failed:\n  ${problems.join('\n  ')}`);
	process.exit(1);
}
console.log(
	`release:tag-check: tag ${tag} = package.json ${version}, CHANGELOG.md has its section, npm ${npmVersion}`,
);
