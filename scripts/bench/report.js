#!/usr/bin/env node
'use strict';
/**
 * Renders benchmark results into markdown (the format is in BENCH-FORMAT.md): every
 * `<suite>.json` in the results folder becomes one document with a header (the commit
 * measured, whether the tree had uncommitted changes, the date, the machine), one goals
 * table over all suites, then each suite's sections in order. Nothing here claims a result:
 * every figure and every sentence about one comes from a results file.
 *
 *   node scripts/bench/report.js                       .bench-results/ -> docs/benchmarks.md
 *   node scripts/bench/report.js --results DIR --out FILE
 *   node scripts/bench/report.js --clean               removes the results of an earlier run
 *
 * Exits non-zero when a goal was missed or there is nothing to report.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const args = process.argv.slice(2);
const option = (name, fallback) =>
	args.includes(name) ? path.resolve(args[args.indexOf(name) + 1]) : fallback;
const resultsDir = option('--results', path.join(ROOT, '.bench-results'));
const outFile = option('--out', path.join(ROOT, 'docs', 'benchmarks.md'));

function git(command) {
	try {
		return execSync(`git ${command}`, {
			cwd: ROOT,
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'ignore'],
		}).trim();
	} catch {
		return undefined;
	}
}

function machine() {
	const cpus = os.cpus();
	const load = os
		.loadavg()
		.map((value) => value.toFixed(1))
		.join(', ');
	return `${cpus.length} × ${cpus[0]?.model?.trim() ?? 'CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GB, ${os.type()} ${os.release()}, Node ${process.version}; load average when the report was written: ${load}`;
}

const cell = (value) => String(value).replace(/\|/g, '\\|').replace(/\n/g, ' ');

function table({ columns, rows }) {
	return [
		`| ${columns.map(cell).join(' | ')} |`,
		`|${columns.map(() => '---').join('|')}|`,
		...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
	].join('\n');
}

function readSuites() {
	if (!fs.existsSync(resultsDir)) return [];
	return fs
		.readdirSync(resultsDir)
		.filter((name) => name.endsWith('.json'))
		.sort()
		.map((name) => JSON.parse(fs.readFileSync(path.join(resultsDir, name), 'utf8')));
}

function render(suites) {
	const commit = git('rev-parse --short HEAD') ?? 'unknown';
	// Changes that could alter what was measured: anything but this generator's own outputs and a
	// worktree's node_modules link.
	const outputs = new Set([
		'docs/benchmarks.md',
		'docs/benchmarks-queue.md',
		path.relative(ROOT, outFile),
	]);
	const dirty = (git('status --porcelain') ?? '')
		.split('\n')
		.filter((line) => line.trim() !== '')
		.map((line) => line.slice(3).trim())
		.some((file) => !outputs.has(file) && file !== 'node_modules');
	const lines = [
		'# Benchmarks',
		'',
		`Written by \`scripts/bench/report.js\` from ${suites.map((s) => `\`${s.suite}\``).join(', ')}; not edited by hand.`,
		'',
		`- Commit measured: \`${commit}\`${dirty ? ' (the tree had uncommitted changes)' : ''}`,
		`- Date: ${new Date().toISOString()}`,
		`- Machine: ${machine()}`,
		'',
		'## Goals',
		'',
		table({
			columns: ['suite', 'goal', 'figure', 'met'],
			rows: suites.flatMap((suite) =>
				suite.goals.map((goal) => [
					suite.suite,
					goal.goal,
					goal.figure,
					goal.met ? 'yes' : '**no**',
				]),
			),
		}),
		'',
	];
	for (const suite of suites) {
		lines.push(`## ${suite.title}`, '');
		for (const section of suite.sections) {
			lines.push(`### ${section.heading}`, '');
			if (section.text) lines.push(section.text, '');
			if (section.table) lines.push(table(section.table), '');
		}
	}
	return lines.join('\n');
}

if (args.includes('--clean')) {
	for (const name of fs.existsSync(resultsDir) ? fs.readdirSync(resultsDir) : [])
		if (name.endsWith('.json')) fs.rmSync(path.join(resultsDir, name));
	process.exit(0);
}

const suites = readSuites();
if (suites.length === 0) {
	console.error(`No results in ${resultsDir}: run the benchmark first.`);
	process.exit(1);
}
fs.mkdirSync(path.dirname(outFile), { recursive: true });
fs.writeFileSync(outFile, render(suites));
const missed = suites.flatMap((suite) =>
	suite.goals
		.filter((goal) => !goal.met)
		.map((goal) => `${suite.suite}: ${goal.goal} (${goal.figure})`),
);
console.log(`Wrote ${path.relative(ROOT, outFile)} from ${suites.length} suite(s).`);
if (missed.length > 0) {
	console.error(`Missed goals:\n- ${missed.join('\n- ')}`);
	process.exit(2);
}
