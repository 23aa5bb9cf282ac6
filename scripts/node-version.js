'use strict';
/**
 * Whether the Node running a script is one package.json's `engines.node` allows, checked before
 * anything else runs (scripts/dev.js): on an older Node the build, the sandbox or a test fails
 * much later with an error that does not name the cause. Reads the usual forms of a range:
 * comparators (`>=20.15 <25`), joined by `||`; any other form is refused, never taken for a pass.
 */
// No `node:` prefix and no `?.`: Node 12 must be able to read this file to be told it is too old.
const fs = require('fs');
const path = require('path');

const PACKAGE_JSON = path.join(__dirname, '..', 'package.json');

/** [major, minor, patch] of `20`, `20.15`, `v20.15.1` (missing parts are 0); null if not a version. */
function parseVersion(text) {
	const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(String(text).trim());
	return m ? [Number(m[1]), Number(m[2] || 0), Number(m[3] || 0)] : null;
}

function compare(a, b) {
	for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
	return 0;
}

const OPERATORS = {
	'>=': (c) => c >= 0,
	'>': (c) => c > 0,
	'<=': (c) => c <= 0,
	'<': (c) => c < 0,
	'=': (c) => c === 0,
	'': (c) => c === 0,
};

/** Whether `version` satisfies `range`; throws when the range has a form this reader does not know. */
function satisfies(version, range) {
	const v = parseVersion(version);
	if (!v) throw new Error(`"${version}" is not a Node version`);
	return range.split('||').some((alternative) => {
		const comparators = alternative.trim().split(/\s+/).filter(Boolean);
		if (!comparators.length) throw new Error(`engines.node "${range}" has an empty alternative`);
		return comparators.every((comparator) => {
			const m = /^(>=|<=|>|<|=)?(.*)$/.exec(comparator);
			const bound = parseVersion(m[2]);
			if (!bound) throw new Error(`engines.node "${range}": cannot read "${comparator}"`);
			return OPERATORS[m[1] || ''](compare(v, bound));
		});
	});
}

/**
 * null when this Node is one package.json allows, else a message saying which Node runs, which
 * the package needs and how to get it.
 */
function unsupportedNodeMessage(version = process.versions.node, packageJson = PACKAGE_JSON) {
	const range = (JSON.parse(fs.readFileSync(packageJson, 'utf8')).engines || {}).node;
	if (!range || satisfies(version, range)) return null;
	return [
		`This is Node ${version} (${process.execPath}); this repository needs Node ${range} (package.json "engines").`,
		'Install a newer Node (Node 22 or 24, e.g. from https://nodejs.org, your package manager or',
		'`nvm install 22`), make it the `node` on your PATH (`node --version`), then run',
		'`npm ci && npm run dev` again.',
	].join('\n');
}

module.exports = { parseVersion, satisfies, unsupportedNodeMessage };
