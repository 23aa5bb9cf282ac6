// The rules n8n's community-package verification applies: @n8n/eslint-plugin-community-nodes
// (recommended) plus eslint-plugin-n8n-nodes-base's community, credentials and nodes sets,
// with no console. `npm run lint` runs it with --max-warnings 0.
import { n8nCommunityNodesPlugin } from '@n8n/eslint-plugin-community-nodes';
import n8nNodesBase from 'eslint-plugin-n8n-nodes-base';
import tsParser from '@typescript-eslint/parser';
import * as jsoncParser from 'jsonc-eslint-parser';

const legacy = n8nNodesBase.configs;

export default [
	{ ignores: ['dist/**', 'node_modules/**', '.e2e/**', '.sandbox-build/**', 'test/**', 'sandbox/**', 'scripts/**'] },
	{
		files: ['package.json'],
		languageOptions: { parser: jsoncParser },
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: { ...legacy.community.rules },
	},
	{
		...n8nCommunityNodesPlugin.configs.recommended,
		files: ['nodes/**/*.ts', 'credentials/**/*.ts', 'package.json'],
	},
	{
		files: ['nodes/**/*.ts', 'credentials/**/*.ts'],
		languageOptions: { parser: tsParser, parserOptions: { sourceType: 'module', project: './tsconfig.json' } },
		rules: { 'no-console': 'error' },
	},
	{
		files: ['credentials/**/*.ts'],
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...legacy.credentials.rules,
			// Contradicts @n8n/community-nodes/credential-documentation-url, which allows a URL: a
			// camelCase slug links to docs.n8n.io, where a community credential has no page.
			'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
		},
	},
	{
		files: ['nodes/**/*.ts'],
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...legacy.nodes.rules,
			// Both demand the string literal ['main'], which the newer
			// @n8n/community-nodes/node-connection-type-literal forbids in favour of NodeConnectionTypes.
			'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
			'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
		},
	},
];
