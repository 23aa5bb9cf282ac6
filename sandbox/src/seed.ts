/** Demo data for `npm run sandbox` (and `startSandbox({ seedDemo: true })`). */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Engine, StoredFile, WorkflowRec } from './engine';
import { uuid } from './ids';

/** A 1x1 PNG. */
export const TINY_PNG_BASE64 =
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const SAMPLE_PDF = Buffer.from(
	'%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
);

function store(
	tmpDir: string,
	filename: string,
	contentType: string,
	format: string,
	data: Buffer,
): StoredFile {
	const filePath = join(tmpDir, uuid());
	writeFileSync(filePath, data);
	return {
		filename,
		contentType,
		format,
		sizeBytes: data.length,
		sha256: createHash('sha256').update(data).digest('hex'),
		head: data.subarray(0, 4096),
		filePath,
	};
}

export interface DemoIds {
	pngWorkflowId: string;
	heldWorkflowId: string;
	reviewWorkflowId: string;
	csvWorkflowId: string;
}

export function seedDemo(engine: Engine, tmpDir: string): DemoIds {
	const png = engine.createWorkflow({
		name: 'Page render (PNG output)',
		triggerFormats: ['pdf', 'png', 'jpeg', 'tiff'],
		outputs: [
			{
				nodeId: 'meta',
				kind: 'json',
				contentType: 'application/json',
				filename: 'meta.json',
				value: { pages: 1, dpi: 150 },
			},
			{
				nodeId: 'render',
				kind: 'binary',
				contentType: 'image/png',
				filename: 'page-1.png',
				base64: TINY_PNG_BASE64,
			},
		],
	});
	const held = engine.createWorkflow({
		name: 'Manual intake (held: automatic run off)',
		autoRun: false,
		triggerFormats: ['pdf', 'docx'],
	});
	const review = engine.createWorkflow({
		name: 'Approval flow (review step)',
		triggerFormats: ['pdf'],
		script: [
			{ status: 'queued', ms: 20 },
			{ status: 'running', ms: 100 },
			{ status: 'review', step: 'approval' },
			{ status: 'running', ms: 100 },
			{ status: 'completed', billedCredits: 3 },
		],
	});
	const csv = engine.createWorkflow({
		name: 'Table export (CSV output)',
		environment: 'dev',
		triggerFormats: ['xlsx', 'csv', 'pdf'],
		outputs: [
			{
				nodeId: 'csv',
				kind: 'text',
				contentType: 'text/csv',
				filename: 'table.csv',
				value: 'name,amount\nwidget,3\ngadget,5\n',
			},
		],
	});

	const pdf = (name: string): StoredFile =>
		store(tmpDir, name, 'application/pdf', 'pdf', SAMPLE_PDF);
	const def = [...engine.workflows.values()].find((w) => w.name === 'Invoice extraction') as
		| WorkflowRec
		| undefined;
	if (def) engine.trigger(def, pdf('invoice-0001.pdf'), 'demo-invoice-1');
	engine.trigger(png, pdf('scan.pdf'), 'demo-render');
	engine.trigger(held, pdf('held-contract.pdf'), 'demo-held');
	engine.trigger(csv, pdf('table.pdf'), 'demo-csv');
	// Two documents waiting in review right away; the first one's task gets approved.
	const fast = [
		{ status: 'running', ms: 0 },
		{ status: 'review', step: 'approval' },
		{ status: 'running', ms: 50 },
		{ status: 'completed', billedCredits: 3 },
	];
	engine.setNextScripts(review.id, fast, 2);
	engine.trigger(review, pdf('approval-a.pdf'), 'demo-review-a');
	engine.trigger(review, pdf('approval-b.pdf'), 'demo-review-b');
	engine.settle();
	const first = engine.tasksNewestFirst().at(-1);
	if (first) engine.decideTask(first.id, 'approved');

	// A few older events, as if the organization had been busy earlier this week.
	const now = engine.now();
	engine.events.createMany(
		Array.from({ length: 6 }, (_, i) => ({
			type: i % 2 ? 'run.completed' : 'document.received',
			createdOnMs: now - (6 - i) * 3_600_000,
			environment: 'prod' as const,
			data: { documentId: uuid(), runId: uuid(), workflowId: def?.id ?? uuid(), demo: true },
			orgId: 'default',
			commitDelayMs: 0,
		})),
	);
	return {
		pngWorkflowId: png.id,
		heldWorkflowId: held.id,
		reviewWorkflowId: review.id,
		csvWorkflowId: csv.id,
	};
}
