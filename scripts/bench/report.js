#!/usr/bin/env node
'use strict';
/**
 * Renders benchmark results into markdown (the format is in BENCH-FORMAT.md): every
 * `<suite>.json` in the results folder becomes one document with a header (the commit
 * measured, whether the tree had uncommitted changes, the date, the machine), one goals
 * table over all suites, then each suite's sections in order. Nothing here claims a result:
 * every figure and every sentence about one comes from a results file.
 *
 * A section's charts (charts.js) are drawn into `images/bench/<out's name>/` beside the output
 * (docs/images/bench/benchmarks/ for docs/benchmarks.md) and linked under the section's table;
 * a chart with nothing measured to draw is left out. Writing an output first removes the charts
 * it wrote before, so none outlives the results it was drawn from.
 *
 *   node scripts/bench/report.js                       .bench-results/ -> docs/benchmarks.md
 *   node scripts/bench/report.js --results DIR --out FILE
 *   node scripts/bench/report.js --clean               removes the results of an earlier run
 *   node scripts/bench/report.js --clean --out FILE    and the charts written for FILE
 *
 * Exits non-zero when a goal was missed or there is nothing to report.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execSync } = require('node:child_process');
const { drawable, renderChart } = require('./charts');

const ROOT = path.join(__dirname, '..', '..');
const args = process.argv.slice(2);
const option = (name, fallback) =>
	args.includes(name) ? path.resolve(args[args.indexOf(name) + 1]) : fallback;
const resultsDir = option('--results', path.join(ROOT, '.bench-results'));
const outFile = option('--out', path.join(ROOT, 'docs', 'benchmarks.md'));
/** Where this output's charts go: a folder of its own, so that one output's charts are never another's. */
const chartsDir = path.join(
	path.dirname(outFile),
	'images',
	'bench',
	path.basename(outFile, path.extname(outFile)),
);

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

/** Removes the charts an earlier report wrote for this output. */
function removeCharts() {
	if (!fs.existsSync(chartsDir)) return;
	for (const name of fs.readdirSync(chartsDir))
		if (name.endsWith('.svg')) fs.rmSync(path.join(chartsDir, name));
	if (fs.readdirSync(chartsDir).length === 0) fs.rmdirSync(chartsDir);
}

/** Draws a section's charts that have data into chartsDir; the markdown that links them. */
function charts(suite, section) {
	const lines = [];
	for (const chart of section.charts ?? []) {
		if (!drawable(chart)) continue;
		const file = path.join(chartsDir, `${suite.suite}-${chart.id}.svg`);
		fs.mkdirSync(chartsDir, { recursive: true });
		fs.writeFileSync(file, renderChart(chart));
		const link = path.relative(path.dirname(outFile), file).split(path.sep).join('/');
		lines.push(`![${cell(chart.title)}](${link})`, '');
		if (chart.caption) lines.push(`*${chart.caption}*`, '');
	}
	return lines;
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
	const chartsPath = `${path.relative(ROOT, path.join(chartsDir, '..'))}/`;
	const dirty = (git('status --porcelain') ?? '')
		.split('\n')
		.filter((line) => line.trim() !== '')
		// `git` trims its output, so the first line may have lost the space of its status column.
		.map((line) => line.replace(/^\s*\S{1,2}\s+/, '').trim())
		.some((file) => !outputs.has(file) && !file.startsWith(chartsPath) && file !== 'node_modules');
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
			lines.push(...charts(suite, section));
		}
	}
	return lines.join('\n');
}

if (args.includes('--clean')) {
	for (const name of fs.existsSync(resultsDir) ? fs.readdirSync(resultsDir) : [])
		if (name.endsWith('.json')) fs.rmSync(path.join(resultsDir, name));
	// Only an output named here: the other outputs' charts stay with the documents that link them.
	if (args.includes('--out')) removeCharts();
	process.exit(0);
}

const suites = readSuites();
if (suites.length === 0) {
	console.error(`No results in ${resultsDir}: run the benchmark first.`);
	process.exit(1);
}
fs.mkdirSync(path.dirname(outFile), { recursive: true });
removeCharts();
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
