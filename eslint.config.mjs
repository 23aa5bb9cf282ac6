// n8n's own lint for community nodes, unchanged: the config `n8n-node lint` runs, exported by
// @n8n/node-cli (n8n Cloud rules included). It lints every *.ts file and package.json.
//
// The one extension: this repository also holds development-only trees that are never
// published (tests, the sandbox API, benchmarks, scripts). They run in Node, not inside n8n,
// and must use fs, process and timers, which the community-node rules forbid; n8n's scanner
// does not read them either (it lints package.json and {nodes,credentials}/**). So the lint
// covers exactly what is published: package.json, nodes/ and credentials/.
//
// `n8n.strict` is false in package.json because strict mode means "eslint.config.mjs is
// n8n-node's two-line template" (compared with whitespace normalised); with it, `npx n8n-node
// lint` would stop before linting. Why the template alone cannot lint this repository:
// docs/verification.md, "n8n Cloud: strict mode and cloud-support". `npm run lint` and
// `npx n8n-node lint` both lint with this file.
import { config } from '@n8n/node-cli/eslint';
import { globalIgnores } from 'eslint/config';

const developmentOnly = globalIgnores(
	[
		'test/',
		'sandbox/',
		'bench/',
		'scripts/',
		'examples/',
		'docs/',
		'.sandbox-build/',
		'.e2e/',
		'coverage/',
	],
	'Development-only trees, never published',
);

export default [...config, developmentOnly];
