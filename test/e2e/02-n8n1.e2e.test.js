// n8n 1.123.81 on Node 22: the same suite (see n8n-suite.js).
require('./n8n-suite').defineN8nSuite('1', { port: 5692 });
