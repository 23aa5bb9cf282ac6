// The published tarball must hold only the built package and its docs: dist/**, README.md,
// LICENSE and package.json (no sources, tests, sandbox or e2e installs).
const { execFileSync } = require('node:child_process');

const [{ files }] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' }));
const allowed = (path) => path.startsWith('dist/') || ['README.md', 'LICENSE', 'package.json'].includes(path);
const unexpected = files.map((f) => f.path).filter((p) => !allowed(p));
const required = ['package.json', 'README.md', 'LICENSE', 'dist/credentials/DocumentWorkflowApi.credentials.js',
	'dist/nodes/DocumentWorkflow/DocumentWorkflow.node.js', 'dist/nodes/DocumentWorkflowTrigger/DocumentWorkflowTrigger.node.js',
	'dist/nodes/DocumentWorkflow/documentWorkflow.svg', 'dist/credentials/documentWorkflow.svg'];
const missing = required.filter((p) => !files.some((f) => f.path === p));
if (unexpected.length || missing.length) {
	console.error(`npm pack check failed.\n  unexpected: ${unexpected.join(', ') || 'none'}\n  missing: ${missing.join(', ') || 'none'}`);
	process.exit(1);
}
console.log(`npm pack check: ${files.length} files, all under dist/ or README.md, LICENSE, package.json`);
