'use strict';
/**
 * The figures of docs/development.md ("How long the checks take"), from logs, never by hand:
 * `node scripts/timings.js [--write] <log>...` reads the `[timing]` lines of `bash .ci/run` logs
 * and `npm test` logs, checks each against its goal, prints the section (--write: puts it into
 * docs/development.md) and exits 1 when a goal is missed or a check has fewer than two runs.
 */
const fs = require('node:fs');
const path = require('node:path');

const DOC = path.join(__dirname, '..', 'docs', 'development.md');
const BEGIN =
	'<!-- timings:begin: written by `node scripts/timings.js --write <logs>`, not by hand -->';
const END = '<!-- timings:end -->';
const MINUTE = 60;

/** The checks, their goals (issue 35) and how a log shows that it is one of them. */
const CHECKS = [
	{
		id: 'ci-cached',
		what: '`bash .ci/run` in a fresh clone, the n8n installs in the machine’s cache',
		goalSeconds: 25 * MINUTE,
	},
	{
		id: 'ci-cold',
		what: '`bash .ci/run` in a fresh clone, nothing cached (n8n installed, npm’s cache empty)',
		goalSeconds: 45 * MINUTE,
	},
	{ id: 'npm-test', what: '`npm test` (the fast tier)', goalSeconds: 2 * MINUTE },
];
const RUNS_NEEDED = 2;

/** The `[timing] <label>: <n> s<rest>` lines of a log, in order. */
function timingLines(text) {
	const lines = [];
	for (const line of text.split('\n')) {
		const m = /^\[timing\] (.+?): (.*)$/.exec(line.trim());
		if (!m) continue;
		const seconds = /^(\d+(?:\.\d+)?) s\b/.exec(m[2]);
		lines.push({ label: m[1], value: m[2], seconds: seconds ? Number(seconds[1]) : undefined });
	}
	return lines;
}

/** What one log measured: its check, commit, date, total and steps; null when it is neither kind. */
function readRun(file) {
	const lines = timingLines(fs.readFileSync(file, 'utf8'));
	const find = (label) => lines.find((l) => l.label === label);
	const ciStart = find('ci start');
	const ciTotal = find('ci total');
	const fastStart = find('jest fast start');
	const fastRun = find('jest fast whole run');
	const start = ciStart ?? fastStart;
	if (!start) return null;
	const m = /^commit (\S+)( \(uncommitted changes\))?, (\S+)/.exec(start.value);
	const run = {
		file,
		commit: m?.[1] ?? 'unknown',
		dirty: Boolean(m?.[2]),
		date: (m?.[3] ?? '').slice(0, 10),
		lines,
		failed: lines.some((l) => /\(failed/.test(l.value) || /, [1-9]\d* failed\)/.test(l.value)),
	};
	if (ciStart) {
		const installed = lines.some(
			(l) => /^n8n install /.test(l.label) && /\(installed\)/.test(l.value),
		);
		return { ...run, check: installed ? 'ci-cold' : 'ci-cached', seconds: ciTotal?.seconds };
	}
	return { ...run, check: 'npm-test', seconds: fastRun?.seconds };
}

const minutes = (seconds) =>
	seconds === undefined ? 'unfinished' : `${(seconds / MINUTE).toFixed(1)} min`;

/** The steps worth showing of one run: every step but the unit tests' files, of which the 5 slowest. */
function stepRows(run) {
	const unitFile = (l) => /^jest (fast|slow|all) \S+\.test\.ts$/.test(l.label);
	const slowest = run.lines
		.filter(unitFile)
		.sort((a, b) => b.seconds - a.seconds)
		.slice(0, 5);
	return run.lines
		.filter((l) => l.seconds !== undefined && (!unitFile(l) || slowest.includes(l)))
		.map((l) => `| ${l.label} | ${l.value} |`);
}

function section(runs) {
	const problems = [];
	const commits = [...new Set(runs.map((r) => r.commit))];
	if (commits.length > 1)
		problems.push(`the logs are of ${commits.length} commits: ${commits.join(', ')}`);
	if (runs.some((r) => r.dirty)) problems.push('a run had uncommitted changes');
	const dates = [...new Set(runs.map((r) => r.date))].sort();
	const out = [
		BEGIN,
		'',
		'## How long the checks take',
		'',
		`Measured on ${dates.join(' and ')} at commit ${commits.map((c) => c.slice(0, 10)).join(', ')}${runs.some((r) => r.dirty) ? ' (with uncommitted changes)' : ''} on this project's ${coresOf(runs)}-core machine, from the runs' own \`[timing]\` lines (\`node scripts/timings.js --write <logs>\`; how to make the logs: "Measuring the checks" below).`,
		'',
		'| check | goal | runs | met |',
		'|---|---|---|---|',
	];
	for (const check of CHECKS) {
		const own = runs.filter((r) => r.check === check.id);
		const met =
			own.length >= RUNS_NEEDED &&
			own.every((r) => !r.failed && r.seconds !== undefined && r.seconds <= check.goalSeconds);
		if (own.length < RUNS_NEEDED)
			problems.push(`${check.id}: ${own.length} run(s), ${RUNS_NEEDED} needed`);
		else if (!met) problems.push(`${check.id}: goal missed or a run failed`);
		const figures = own
			.map((r) => `${minutes(r.seconds)}${r.failed ? ' (failed)' : ''}`)
			.join(', ');
		out.push(
			`| ${check.what} | ≤ ${check.goalSeconds / MINUTE} min | ${figures || 'none'} | ${met ? 'yes' : own.length < RUNS_NEEDED ? `**${own.length} of ${RUNS_NEEDED} runs**` : '**no**'} |`,
		);
	}
	for (const check of CHECKS.filter((c) => c.id !== 'npm-test')) {
		const last = runs.filter((r) => r.check === check.id).at(-1);
		if (!last) continue;
		out.push(
			'',
			`Steps of the last run, ${check.what} (${path.basename(last.file)}):`,
			'',
			'| step | took |',
			'|---|---|',
			...stepRows(last),
		);
	}
	out.push('', END);
	return { text: out.join('\n'), problems };
}

function coresOf(runs) {
	for (const r of runs) {
		const start = r.lines.find((l) => /start$/.test(l.label));
		const m = /, (\d+) cores/.exec(start?.value ?? '');
		if (m) return m[1];
	}
	return '?';
}

function main(args) {
	const write = args.includes('--write');
	const files = args.filter((a) => a !== '--write');
	if (!files.length) {
		process.stderr.write(
			'usage: node scripts/timings.js [--write] <log of bash .ci/run or npm test>...\n',
		);
		return 2;
	}
	const runs = [];
	for (const file of files) {
		const run = readRun(file);
		if (run) runs.push(run);
		else
			process.stderr.write(
				`${file}: no "[timing] ci start" or "[timing] jest fast start" line; skipped\n`,
			);
	}
	const { text, problems } = section(runs);
	process.stdout.write(`${text}\n`);
	if (write) {
		const doc = fs.readFileSync(DOC, 'utf8');
		const a = doc.indexOf(BEGIN);
		const b = doc.indexOf(END);
		if (a === -1 || b === -1) throw new Error(`${DOC} has no timings section markers`);
		fs.writeFileSync(DOC, doc.slice(0, a) + text + doc.slice(b + END.length));
		process.stderr.write(`wrote the timings section of ${path.relative(process.cwd(), DOC)}\n`);
	}
	for (const p of problems) process.stderr.write(`timings: ${p}\n`);
	return problems.length ? 1 : 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));

module.exports = { timingLines, readRun, section };
