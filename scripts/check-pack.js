// The published tarball must hold only the built package and its docs: dist/**, README.md,
// LICENSE, CHANGELOG.md and package.json (no sources, tests, sandbox or e2e installs).
// Run directly, it checks what `npm pack` would put in the tarball; scripts/release-check.mjs
// calls checkPackFiles on the file list of the tarball it really packed.
const { execFileSync } = require('node:child_process');

const DOCS = ['README.md', 'LICENSE', 'CHANGELOG.md', 'package.json'];
const REQUIRED = [
	...DOCS,
	'dist/credentials/DocumentWorkflowApi.credentials.js',
	'dist/nodes/DocumentWorkflow/DocumentWorkflow.node.js',
	'dist/nodes/DocumentWorkflowTrigger/DocumentWorkflowTrigger.node.js',
	'dist/nodes/DocumentWorkflow/documentWorkflow.svg',
	'dist/credentials/documentWorkflow.svg',
];

/** Returns the problems with a tarball's file list (paths relative to the package root). */
function checkPackFiles(paths) {
	const allowed = (path) => path.startsWith('dist/') || DOCS.includes(path);
	const unexpected = paths.filter((p) => !allowed(p));
	const missing = REQUIRED.filter((p) => !paths.includes(p));
	const problems = [];
	if (unexpected.length) problems.push(`unexpected: ${unexpected.join(', ')}`);
	if (missing.length) problems.push(`missing: ${missing.join(', ')}`);
	return problems;
}

module.exports = { checkPackFiles };

if (require.main === module) {
	const [{ files }] = JSON.parse(
		execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' }),
	);
	const problems = checkPackFiles(files.map((f) => f.path));
	if (problems.length) {
		console.error(`npm pack check failed.\n  ${problems.join('\n  ')}`);
		process.exit(1);
	}
	console.log(`npm pack check: ${files.length} files, all under dist/ or ${DOCS.join(', ')}`);
}
