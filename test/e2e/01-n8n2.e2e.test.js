// n8n 2.41.1 on Node 24: the whole suite (see n8n-suite.js).
const { PORTS } = require('../../scripts/e2e/ports');

require('./n8n-suite').defineN8nSuite('2', { port: PORTS.e2eN8n2 });
