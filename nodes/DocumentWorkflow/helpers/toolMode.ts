import type { IExecuteFunctions } from 'n8n-workflow';

/**
 * Whether n8n runs this node as a tool of an AI agent. n8n offers every `usableAsTool` node as a
 * second node type named `<type>Tool` (e.g. `n8n-nodes-document-workflow.documentWorkflowTool`),
 * and the node it executes as a tool carries that type, whichever way the agent calls it (Agent
 * 2.x through its tool wrapper, 3.x as an engine request). Saved workflows that use the node
 * itself never see this type, so what depends on it cannot change their output.
 */
export function isRunAsTool(ctx: Pick<IExecuteFunctions, 'getNode'>): boolean {
	return ctx.getNode().type.endsWith('Tool');
}
