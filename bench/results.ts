/**
 * What a benchmark suite reports (the shape BENCH-FORMAT.md describes): each suite writes
 * `.bench-results/<suite>.json`, and `scripts/bench/report.js` renders them all into
 * docs/benchmarks.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Section {
	heading: string;
	text?: string;
	table?: { columns: string[]; rows: string[][] };
}

export interface Goal {
	goal: string;
	figure: string;
	met: boolean;
}

export interface SuiteResults {
	suite: string;
	title: string;
	sections: Section[];
	goals: Goal[];
}

export const RESULTS_DIR = join(__dirname, '..', '.bench-results');

export function writeSuiteResults(results: SuiteResults): void {
	mkdirSync(RESULTS_DIR, { recursive: true });
	writeFileSync(
		join(RESULTS_DIR, `${results.suite}.json`),
		`${JSON.stringify(results, null, 2)}\n`,
	);
}

export const median = (values: number[]): number => {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export const round = (value: number, digits = 1): number =>
	Math.round(value * 10 ** digits) / 10 ** digits;
