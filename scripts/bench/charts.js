'use strict';
/**
 * Line charts of benchmark figures as SVG, written by report.js beside the tables they
 * illustrate. Hand-written SVG, no dependency: plain axes with ticks, a line and points per
 * series, reference lines (a floor: what the API allows) and a legend, on a white background
 * so that the chart reads the same on GitHub's light and dark pages.
 *
 * A chart, as a suite's results carry it (section.charts, BENCH-FORMAT in bench/results.ts):
 *
 *   {
 *     id: 'requests-by-run-length',            // part of the file name
 *     title: 'Requests per document against run length',
 *     caption: 'what is drawn, and the floor it uses',
 *     x: { label: 'run length (s)', scale: 'log' },       // scale: 'linear' (default) or 'log'
 *     y: { label: 'requests per document', format: 'percent' },  // format: 'number' (default) or 'percent'
 *     series: [
 *       { label: 'node', points: [[5, 3.2], [60, 3.1]] },
 *       { label: 'node: worst', group: 'node', dashed: true, points: [...] },  // same colour as its group
 *       { label: 'floor: 3', reference: true, y: 3 },     // a horizontal line across the chart
 *       { label: 'the limit', reference: true, x: 10 },   // a vertical one
 *     ],
 *   }
 *
 * Points whose x or y is not a finite number (a figure that could not be measured) are left out.
 * `drawable`: whether a chart has anything measured to draw (a reference line alone is not).
 */

const WIDTH = 640;
/** The plotting area, in pixels of the SVG. */
const PLOT = { left: 70, right: 620, top: 40, bottom: 290 };
const LEGEND_TOP = 354;
const LEGEND_ROW = 18;
/** Colours readable on white: one a group of series, in the order the groups first come. */
const PALETTE = ['#1f6fb4', '#c8361b', '#2a8a2a', '#7b4bb0', '#b86e00', '#8c564b'];
const REFERENCE_COLOUR = '#555555';
/** Dashes of the reference lines, in order, so that two references differ. */
const REFERENCE_DASHES = ['2 3', '9 3 2 3', '12 5'];
/** About how many characters fit a line: of the title (14 px bold), of a legend entry (12 px). */
const TITLE_CHARS = 72;
const LEGEND_CHARS = 82;

const escape = (text) =>
	String(text)
		.replace(/&/g, '&amp;')
		.replace(/</g, '&lt;')
		.replace(/>/g, '&gt;')
		.replace(/"/g, '&quot;');

/** A pixel coordinate as written: one decimal. */
const px = (value) => Math.round(value * 10) / 10;

/** A tick value as written: no float noise (0.30000000000000004 is 0.3). */
const num = (value) => String(Number(value.toPrecision(6)));

/** Words into lines of at most about `width` characters. */
function wrap(text, width) {
	const lines = [];
	for (const word of String(text).split(/\s+/)) {
		const last = lines.length - 1;
		if (last >= 0 && lines[last].length + 1 + word.length <= width) lines[last] += ` ${word}`;
		else lines.push(word);
	}
	return lines;
}

const finitePoints = (series) =>
	(series.points ?? []).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));

/** Whether the chart has a measured series with at least one point. */
function drawable(chart) {
	return Boolean(
		chart?.series?.some((series) => !series.reference && finitePoints(series).length > 0),
	);
}

/** A step of 1, 2, 2.5 or 5 times a power of ten that cuts `span` into about `count` parts. */
function niceStep(span, count = 5) {
	const raw = span / count;
	const power = 10 ** Math.floor(Math.log10(raw));
	return [1, 2, 2.5, 5, 10].map((m) => m * power).find((step) => step >= raw) ?? 10 * power;
}

/** A linear axis over `values`: from a whole step at or below the least to one at or above the most. */
function linearAxis(values, { fromZero = false } = {}) {
	let low = Math.min(...values);
	let high = Math.max(...values);
	if (fromZero) low = Math.min(0, low);
	if (high === low) {
		const pad = Math.abs(high) * 0.1 || 1;
		high += pad;
		if (!fromZero || low !== 0) low -= pad;
	}
	const step = niceStep(high - low);
	const from = Math.floor(low / step + 1e-9) * step;
	const to = Math.ceil(high / step - 1e-9) * step;
	const ticks = [];
	for (let i = 0; from + i * step <= to + step * 1e-9; i++) ticks.push(from + i * step);
	return { domain: [from, to], ticks, at: (v) => (v - from) / (to - from) };
}

/** A logarithmic axis over `values` (all above 0): whole decades, ticks at 1, 2 and 5 of each. */
function logAxis(values) {
	const positive = values.filter((v) => v > 0);
	let low = Math.floor(Math.log10(Math.min(...positive)));
	let high = Math.ceil(Math.log10(Math.max(...positive)));
	if (high === low) high += 1;
	const ticks = [];
	for (let power = low; power <= high; power++)
		for (const m of [1, 2, 5]) {
			const v = m * 10 ** power;
			if (Math.log10(v) <= high + 1e-9) ticks.push(Number(v.toPrecision(6)));
		}
	const at = (v) => (Math.log10(v) - low) / (high - low);
	return { domain: [10 ** low, 10 ** high], ticks, at };
}

/** The two axes of a chart, each with its domain, ticks and `at` (0 to 1 along the plot). */
function axesOf(chart) {
	const drawn = chart.series.filter((series) => !series.reference);
	const xs = drawn.flatMap((series) => finitePoints(series).map(([x]) => x));
	const ys = drawn.flatMap((series) => finitePoints(series).map(([, y]) => y));
	for (const series of chart.series.filter((s) => s.reference)) {
		if (Number.isFinite(series.x)) xs.push(series.x);
		if (Number.isFinite(series.y)) ys.push(series.y);
	}
	const log = chart.x.scale === 'log' && xs.every((v) => v > 0);
	return {
		x: log ? logAxis(xs) : linearAxis(xs),
		y: linearAxis(ys, { fromZero: true }),
	};
}

/** Where a value falls on the chart, in pixels. */
function position(axes, x, y) {
	return {
		x: px(PLOT.left + axes.x.at(x) * (PLOT.right - PLOT.left)),
		y: px(PLOT.bottom - axes.y.at(y) * (PLOT.bottom - PLOT.top)),
	};
}

const tickLabel = (value, format) => (format === 'percent' ? `${num(value * 100)}%` : num(value));

/** The SVG of one chart (see the top of this file for its shape). */
function renderChart(chart) {
	const axes = axesOf(chart);
	const groups = [];
	for (const series of chart.series)
		if (!series.reference && !groups.includes(series.group ?? series.label))
			groups.push(series.group ?? series.label);
	const colour = (series) =>
		series.reference
			? REFERENCE_COLOUR
			: PALETTE[groups.indexOf(series.group ?? series.label) % PALETTE.length];
	const references = chart.series.filter((series) => series.reference);
	const dash = (series) =>
		series.reference
			? REFERENCE_DASHES[references.indexOf(series) % REFERENCE_DASHES.length]
			: series.dashed
				? '6 4'
				: undefined;
	const legend = chart.series
		.filter((series) => series.reference || finitePoints(series).length > 0)
		.map((series) => ({ series, lines: wrap(series.label, LEGEND_CHARS) }));
	const titleLines = wrap(chart.title, TITLE_CHARS);
	// A title of more than one line moves everything under it down.
	const shift = (titleLines.length - 1) * 18;
	const legendHeight = legend.reduce((sum, entry) => sum + entry.lines.length * LEGEND_ROW, 0);
	const height = shift + LEGEND_TOP + legendHeight + 6;
	const out = [
		`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${escape(chart.title)}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
		`<title>${escape(chart.title)}</title>`,
		`<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
		...titleLines.map(
			(line, i) =>
				`<text x="${WIDTH / 2}" y="${22 + i * 18}" text-anchor="middle" font-size="14" font-weight="bold" fill="#222222">${escape(line)}</text>`,
		),
		`<g transform="translate(0 ${shift})">`,
	];
	// Grid and ticks.
	for (const tick of axes.y.ticks) {
		const { y } = position(axes, axes.x.domain[0], tick);
		out.push(
			`<line x1="${PLOT.left}" y1="${y}" x2="${PLOT.right}" y2="${y}" stroke="#e4e4e4" stroke-width="1"/>`,
			`<text x="${PLOT.left - 6}" y="${px(y + 4)}" text-anchor="end" fill="#333333">${escape(tickLabel(tick, chart.y.format))}</text>`,
		);
	}
	for (const tick of axes.x.ticks) {
		const { x } = position(axes, tick, axes.y.domain[0]);
		out.push(
			`<line x1="${x}" y1="${PLOT.bottom}" x2="${x}" y2="${PLOT.bottom + 5}" stroke="#333333" stroke-width="1"/>`,
			`<text x="${x}" y="${PLOT.bottom + 18}" text-anchor="middle" fill="#333333">${escape(tickLabel(tick, chart.x.format))}</text>`,
		);
	}
	out.push(
		`<line x1="${PLOT.left}" y1="${PLOT.bottom}" x2="${PLOT.right}" y2="${PLOT.bottom}" stroke="#333333" stroke-width="1"/>`,
		`<line x1="${PLOT.left}" y1="${PLOT.top}" x2="${PLOT.left}" y2="${PLOT.bottom}" stroke="#333333" stroke-width="1"/>`,
		`<text x="${(PLOT.left + PLOT.right) / 2}" y="${PLOT.bottom + 38}" text-anchor="middle" fill="#222222">${escape(chart.x.label)}</text>`,
		`<text x="16" y="${(PLOT.top + PLOT.bottom) / 2}" text-anchor="middle" fill="#222222" transform="rotate(-90 16 ${(PLOT.top + PLOT.bottom) / 2})">${escape(chart.y.label)}</text>`,
	);
	// Reference lines, then the measured series over them.
	for (const series of chart.series.filter((s) => s.reference)) {
		const [from, to] = Number.isFinite(series.y)
			? [position(axes, axes.x.domain[0], series.y), position(axes, axes.x.domain[1], series.y)]
			: Number.isFinite(series.x)
				? [position(axes, series.x, axes.y.domain[0]), position(axes, series.x, axes.y.domain[1])]
				: [];
		if (!from) continue;
		out.push(
			`<line class="reference" x1="${from.x}" y1="${from.y}" x2="${to.x}" y2="${to.y}" stroke="${REFERENCE_COLOUR}" stroke-width="1.5" stroke-dasharray="${dash(series)}"><title>${escape(series.label)}</title></line>`,
		);
	}
	for (const series of chart.series.filter((s) => !s.reference)) {
		const points = finitePoints(series)
			.sort((a, b) => a[0] - b[0])
			.map(([x, y]) => ({ x, y, at: position(axes, x, y) }));
		if (points.length === 0) continue;
		const stroke = colour(series);
		if (points.length > 1)
			out.push(
				`<polyline class="series" points="${points.map((p) => `${p.at.x},${p.at.y}`).join(' ')}" fill="none" stroke="${stroke}" stroke-width="2"${series.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
			);
		for (const p of points)
			out.push(
				series.dashed
					? `<rect class="point" x="${px(p.at.x - 3.5)}" y="${px(p.at.y - 3.5)}" width="7" height="7" fill="#ffffff" stroke="${stroke}" stroke-width="1.5"><title>${escape(`${series.label}: ${num(p.x)}, ${tickLabel(p.y, chart.y.format)}`)}</title></rect>`
					: `<circle class="point" cx="${p.at.x}" cy="${p.at.y}" r="3.5" fill="${stroke}"><title>${escape(`${series.label}: ${num(p.x)}, ${tickLabel(p.y, chart.y.format)}`)}</title></circle>`,
			);
	}
	// The legend under the plot: one series a row, a long label on more.
	let y = LEGEND_TOP;
	for (const { series, lines } of legend) {
		const dashes = dash(series) ? ` stroke-dasharray="${dash(series)}"` : '';
		out.push(
			`<line x1="${PLOT.left}" y1="${y - 4}" x2="${PLOT.left + 28}" y2="${y - 4}" stroke="${colour(series)}" stroke-width="2"${dashes}/>`,
			`<text class="legend" x="${PLOT.left + 36}" y="${y}" fill="#222222">${lines
				.map(
					(line, i) =>
						`<tspan x="${PLOT.left + 36}" dy="${i ? LEGEND_ROW : 0}">${escape(line)}</tspan>`,
				)
				.join('')}</text>`,
		);
		y += lines.length * LEGEND_ROW;
	}
	out.push('</g>', '</svg>', '');
	return out.join('\n');
}

module.exports = { PLOT, WIDTH, axesOf, drawable, position, renderChart };
