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
	/** Drawn by scripts/bench/charts.js under the table; a chart with nothing measured is left out. */
	charts?: Chart[];
}

/**
 * A line chart of figures (scripts/bench/charts.js draws it): measured series of [x, y] points,
 * and reference lines (a floor) at a fixed y or x. A point that is not a finite number is left out.
 */
export interface Chart {
	/** Part of the SVG's file name: unique within its suite. */
	id: string;
	title: string;
	/** Printed under the chart: what is drawn, and which floor, from what. */
	caption?: string;
	x: { label: string; scale?: 'linear' | 'log'; format?: 'number' | 'percent' };
	y: { label: string; format?: 'number' | 'percent' };
	series: ChartSeries[];
}

export interface ChartSeries {
	label: string;
	points?: Array<[number, number]>;
	/** Series of one group share a colour (e.g. a way's median and its worst). */
	group?: string;
	dashed?: boolean;
	/** A reference line, not a measurement: horizontal at `y`, or vertical at `x`. */
	reference?: boolean;
	x?: number;
	y?: number;
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

/** BENCH_RESULTS_DIR: a report of its own (`npm run bench:queue` puts its suites in one folder). */
export const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ?? join(__dirname, '..', '.bench-results');

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
