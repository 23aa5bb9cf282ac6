// The order the e2e files start in: the longest first (measured, see docs/development.md), so that
// the files running side by side end together; files not listed start last, in name order.
const Sequencer = require('@jest/test-sequencer').default;
const path = require('node:path');

const LONGEST_FIRST = [
	'07-webhook-restart', // one n8n per line, one after the other, two orders each: about 12 minutes
	'06-trigger-rename', // two n8n (default and durable cursors), about 7 minutes of polls
	'04-trigger-durable', // two n8n, about 5 minutes
	'01-n8n2', // its trigger test waits for scheduled polls and two restarts
	'02-n8n1',
	'05-agent',
	'03-browser',
];

const rank = (test) => {
	const name = path.basename(test.path).replace(/\.e2e\.test\.js$/, '');
	const at = LONGEST_FIRST.indexOf(name);
	return at === -1 ? LONGEST_FIRST.length : at;
};

class LongestFirst extends Sequencer {
	sort(tests) {
		return [...tests].sort((a, b) => rank(a) - rank(b) || a.path.localeCompare(b.path));
	}
}

module.exports = LongestFirst;
