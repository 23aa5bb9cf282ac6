// `npm run workflows:check`: the GitHub Actions workflows parse as YAML (the `yaml` package, a
// dev dependency) and every step either uses a well-known action (actions/checkout,
// actions/setup-node, actions/cache) or runs this repository's own commands (npm ci, an npm
// script that exists in package.json, npm publish, .ci/run). publish.yml must also publish with
// provenance through trusted publishing only: id-token: write, a v* tag trigger, the release
// checks before `npm publish --provenance`, and no token or secret anywhere.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = path.join(root, '.github', 'workflows');
const { scripts } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const ACTIONS = ['actions/checkout@', 'actions/setup-node@', 'actions/cache@'];
const problems = [];

function allowedCommand(line) {
	const npmRun = /^npm run (\S+)(\s+--\s.*)?$/.exec(line);
	if (npmRun) return Object.hasOwn(scripts, npmRun[1]);
	return (
		/^npm ci( --[a-z-]+)*$/.test(line) ||
		line === 'npm publish --provenance --access public' ||
		line === 'bash .ci/run'
	);
}

function loadWorkflow(file) {
	const doc = parseDocument(readFileSync(path.join(dir, file), 'utf8'), { uniqueKeys: true });
	if (doc.errors.length) {
		problems.push(`${file}: not valid YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
		return null;
	}
	return doc.toJS();
}

function checkSteps(file, workflow) {
	const steps = [];
	for (const [jobName, job] of Object.entries(workflow.jobs ?? {})) {
		for (const [i, s] of (job.steps ?? []).entries()) {
			const where = `${file} ${jobName} step ${i + 1}${s.name ? ` (${s.name})` : ''}`;
			if (Boolean(s.uses) === Boolean(s.run))
				problems.push(`${where}: needs exactly one of uses/run`);
			if (s.uses && !ACTIONS.some((a) => s.uses.startsWith(a)))
				problems.push(`${where}: uses ${s.uses}, not one of ${ACTIONS.join(', ')}`);
			if (s.run) {
				const lines = s.run
					.split('\n')
					.map((l) => l.trim())
					.filter((l) => l && !l.startsWith('#'));
				for (const line of lines)
					if (!allowedCommand(line))
						problems.push(`${where}: runs "${line}", not a command of this repository`);
			}
			steps.push({ ...s, job: jobName });
		}
	}
	if (!steps.length) problems.push(`${file}: no steps`);
	return steps;
}

const files = existsSync(dir) ? readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)) : [];
const workflows = Object.fromEntries(files.map((f) => [f, loadWorkflow(f)]));
const steps = Object.fromEntries(
	files.filter((f) => workflows[f]).map((f) => [f, checkSteps(f, workflows[f])]),
);
const require = (cond, message) => cond || problems.push(message);

const ci = workflows['ci.yml'];
require(ci, 'ci.yml: missing');
if (ci) {
	require(ci.on &&
		'push' in ci.on &&
		'pull_request' in ci.on, 'ci.yml: must run on push and pull_request');
	require(steps['ci.yml'].some(
		(s) => s.run === 'bash .ci/run',
	), 'ci.yml: must run .ci/run (the same checks as CI here)');
	// The installs' own cache folder, keyed on what the installs are keyed on (n8n-install.js).
	const cache = steps['ci.yml'].find((s) => s.uses?.startsWith('actions/cache@'));
	require(cache?.with?.path === '~/.cache/document-workflow-e2e/n8n' &&
		[
			'scripts/e2e/n8n-versions.json',
			'scripts/e2e/n8n-*.package-lock.json',
			'scripts/e2e/n8n-install.js',
		].every((file) =>
			cache?.with?.key?.includes(`'${file}'`),
		), 'ci.yml: the n8n installs must be cached (~/.cache/document-workflow-e2e/n8n), keyed on n8n-versions.json, the n8n lockfiles and n8n-install.js');
}

const publish = workflows['publish.yml'];
require(publish, 'publish.yml: missing');
if (publish) {
	const text = readFileSync(path.join(dir, 'publish.yml'), 'utf8');
	require(JSON.stringify(publish.on?.push?.tags) === JSON.stringify(['v*']) &&
		Object.keys(publish.on).length === 1, 'publish.yml: must run on v* tags only');
	require(publish.permissions?.['id-token'] ===
		'write', 'publish.yml: needs permissions id-token: write');
	require(!/secrets\.|NODE_AUTH_TOKEN|NPM_TOKEN|_authToken/.test(
		text,
	), 'publish.yml: no token or secret (trusted publishing only)');
	const runs = steps['publish.yml'].map((s) => s.run ?? '');
	const at = (re) => runs.findIndex((r) => re.test(r));
	const publishAt = at(/^npm publish --provenance/);
	require(publishAt >= 0, 'publish.yml: must publish with npm publish --provenance');
	for (const [label, re] of [
		['the tag check', /release:tag-check/],
		['the build', /^npm run build$/],
		['release:check', /release:check/],
	]) {
		const i = at(re);
		require(i >= 0 && i < publishAt, `publish.yml: ${label} must run before npm publish`);
	}
}

if (problems.length) {
	console.error(`workflows:check failed:\n  ${problems.join('\n  ')}`);
	process.exit(1);
}
console.log(
	`workflows:check: ${files.join(', ')} parse as YAML; every step uses ${ACTIONS.map((a) => a.slice(0, -1)).join(', ')} or runs this repository's commands`,
);
