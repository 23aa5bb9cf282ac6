// n8n finds the nodes and the credential through the `n8n` section of package.json, not
// through an entry point; this file is kept for tools that expect one at the repository
// root and is not part of the published package (package.json `files` lists only dist).
module.exports = {};
