// n8n discovers the nodes and credential through the `n8n` section of package.json;
// this entry point exists only so that `require('n8n-nodes-document-workflow')` resolves.
module.exports = {};
