// Once per e2e run: the n8n installs (cached under .e2e/), `npm run build` and `npm pack`.
// The tarball's path goes to .e2e/pack/latest.json for the test files.
const fs = require('node:fs');
const path = require('node:path');
const e2e = require('../../scripts/e2e/n8n');
const { lines } = require('./helpers');

module.exports = async () => {
	const t0 = Date.now();
	for (const major of lines()) e2e.ensureInstalled(major);
	const tgz = e2e.buildAndPack({ build: process.env.E2E_SKIP_BUILD !== '1' });
	fs.writeFileSync(path.join(path.dirname(tgz), 'latest.json'), JSON.stringify({ tgz }));
	e2e.log(`global setup done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
};
