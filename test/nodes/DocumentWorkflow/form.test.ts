/**
 * The node's form as n8n's editor shows it: which fields appear for which settings, decided by
 * n8n-workflow's own displayParameter (what the editor and the loader call). Fields shown where
 * nothing uses them make users fill in what has no effect.
 */
import type { INode, INodeParameters, INodeProperties } from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';
import { DocumentWorkflow } from '../../../nodes/DocumentWorkflow/DocumentWorkflow.node';

const description = new DocumentWorkflow().description;
const node: INode = {
	id: 'form',
	name: 'Document Workflow',
	type: 'n8n-nodes-document-workflow.documentWorkflow',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

/** The top-level fields the editor shows for these parameters (display names). */
function shownFields(parameters: INodeParameters): string[] {
	return description.properties
		.filter((p) => NodeHelpers.displayParameter(parameters, p, node, description, parameters))
		.map((p) => p.displayName);
}

/** The options "Add Option" offers in the Options collection for these parameters. */
function offeredOptions(parameters: INodeParameters): string[] {
	const shown = description.properties.filter(
		(p) =>
			p.name === 'options' &&
			NodeHelpers.displayParameter(parameters, p, node, description, parameters),
	);
	expect(shown).toHaveLength(1);
	const values = (parameters.options ?? {}) as INodeParameters;
	return (shown[0].options as INodeProperties[])
		.filter((o) => NodeHelpers.displayParameter(values, o, node, description, parameters))
		.map((o) => o.displayName);
}

describe('the form', () => {
	const wait = (options: INodeParameters = {}) => ({
		resource: 'run',
		operation: 'wait',
		runId: '',
		options,
	});
	const submit = (waitForCompletion: boolean, options: INodeParameters = {}) => ({
		resource: 'workflow',
		operation: 'trigger',
		workflowId: '',
		waitForCompletion,
		options,
	});

	it('Run → Wait for Completion shows Output Binary Field only with Include Output on', () => {
		expect(shownFields(wait())).not.toContain('Output Binary Field');
		expect(shownFields(wait({ includeOutput: false }))).not.toContain('Output Binary Field');
		expect(shownFields(wait({ includeOutput: true }))).toContain('Output Binary Field');
		expect(shownFields(wait({ includeOutput: true }))).toEqual([
			'Resource',
			'Operation',
			'Run ID',
			'Output Binary Field',
			'Options',
		]);
	});

	it('Output Node ID is offered only with Include Output on', () => {
		expect(offeredOptions(wait())).not.toContain('Output Node ID');
		expect(offeredOptions(wait({ includeOutput: true }))).toContain('Output Node ID');
		expect(offeredOptions(submit(true))).not.toContain('Output Node ID');
		expect(offeredOptions(submit(true, { includeOutput: true }))).toContain('Output Node ID');
	});

	it('Submit Document offers the wait options only with Wait for Completion on', () => {
		const waitOnly = [
			'First Check Interval (Seconds)',
			'Include Output',
			'Max Wait Time (Minutes)',
			'On Time Limit',
			'Return Early When Status Is',
		];
		for (const option of waitOnly) expect(offeredOptions(submit(false))).not.toContain(option);
		for (const option of waitOnly) expect(offeredOptions(submit(true))).toContain(option);
		// Used by the upload itself, waiting or not.
		expect(offeredOptions(submit(false))).toEqual(
			expect.arrayContaining(['Concurrent Checks', 'Idempotency Key', 'Upload Timeout (Seconds)']),
		);
	});

	it('every condition of a top-level field names another top-level field or a root path, as n8n 1.x requires', () => {
		// n8n 1.x orders parameters by their conditions and throws "Could not resolve parameter
		// dependencies" for a condition on anything else (e.g. "options.includeOutput" without "/"),
		// which fails every workflow using the node.
		const topLevel = new Set(description.properties.map((p) => p.name));
		const unresolvable = description.properties.flatMap((p) =>
			Object.values(p.displayOptions ?? {}).flatMap((rule) =>
				Object.keys(rule ?? {})
					.filter((key) => !key.startsWith('/') && !key.startsWith('@') && !topLevel.has(key))
					.map((key) => `${p.displayName}: ${key}`),
			),
		);
		expect(unresolvable).toEqual([]);
	});

	it('Include Output names the field a file output goes into, as the form labels it', () => {
		const includeOutput = (parameters: INodeParameters) =>
			(
				description.properties.find(
					(p) =>
						p.name === 'options' &&
						NodeHelpers.displayParameter(parameters, p, node, description, parameters),
				)!.options as INodeProperties[]
			).find((o) => o.name === 'includeOutput')!.description;
		expect(includeOutput(wait())).toContain('Output Binary Field');
		expect(includeOutput(submit(true))).toContain('Input Binary Field');
	});
});
