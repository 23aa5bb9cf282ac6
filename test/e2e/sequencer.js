// Runs the e2e files in name order: n8n 2.x first, then 1.x, then the browser test, then the
// trigger with n8n 2.41's durable poll cursors off and on (04-), then the AI agent test (05-agent, n8n 2.x), then the trigger rename in both polling modes (06-).
const Sequencer = require('@jest/test-sequencer').default;

class ByName extends Sequencer {
	sort(tests) {
		return [...tests].sort((a, b) => a.path.localeCompare(b.path));
	}
}

module.exports = ByName;
