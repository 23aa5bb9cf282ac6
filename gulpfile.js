// tsc compiles the TypeScript; n8n also needs the SVG icons next to the compiled
// nodes and credential, which tsc does not copy.
const path = require('path');
const { task, src, dest, parallel } = require('gulp');

function copyIconsOf(folder) {
	const copy = () =>
		src(path.resolve(folder, '**', '*.{png,svg}'), { encoding: false }).pipe(
			dest(path.resolve('dist', folder)),
		);
	copy.displayName = `copy ${folder} icons`;
	return copy;
}

task('build:icons', parallel(copyIconsOf('nodes'), copyIconsOf('credentials')));
