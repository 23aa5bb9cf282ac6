// n8n 1.123.81 on Node 22: the same suite (see n8n-suite.js).
const { PORTS } = require('../../scripts/e2e/ports');

require('./n8n-suite').defineN8nSuite('1', { port: PORTS.e2eN8n1 });
