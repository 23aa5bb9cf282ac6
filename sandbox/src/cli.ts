/**
 * `npm run sandbox`: starts the sandbox with demo data and prints how to reach it.
 * Ports from SANDBOX_PORT / SANDBOX_FILES_PORT / SANDBOX_CONTROL_PORT (defaults 5680/5681/5682);
 * SANDBOX_API_KEY sets the key (default a fixed dev key). Demo data is seeded by default
 * (`--seed-demo`, the default) unless `--no-seed` is given.
 */
import { startSandbox } from './index';

const FIXED_DEV_KEY = 'dwk_0123456789abcdef0123456789abcdef';
const FIXED_DEV_WORKFLOW = '7d1f3a52-0c4e-4b8a-9e0f-2a6b5c8d9e01';

function port(name: string, def: number): number {
	const v = process.env[name];
	if (v === undefined || v === '') return def;
	const n = Number(v);
	if (!Number.isInteger(n) || n < 0 || n > 65535)
		throw new Error(`${name} must be a port number, got ${v}`);
	return n;
}

async function main(): Promise<void> {
	const seed = !process.argv.includes('--no-seed');
	const sb = await startSandbox({
		host: process.env.SANDBOX_HOST ?? '127.0.0.1',
		port: port('SANDBOX_PORT', 5680),
		filesPort: port('SANDBOX_FILES_PORT', 5681),
		controlPort: port('SANDBOX_CONTROL_PORT', 5682),
		apiKey: process.env.SANDBOX_API_KEY ?? FIXED_DEV_KEY,
		defaultWorkflowId: process.env.SANDBOX_WORKFLOW_ID ?? FIXED_DEV_WORKFLOW,
		seedDemo: seed,
	});
	const workflows = await sb.control.listWorkflows();
	const tasks = await sb.control.listReviewTasks();
	const docs = await sb.control.countDocuments();
	const lines = [
		'Document Workflow API sandbox is running.',
		`  Base URL (credential baseUrl): ${sb.baseUrl}`,
		`  API key (all scopes, prod):    ${sb.apiKey}`,
		`  Default workflow id:           ${sb.defaultWorkflowId}`,
		`  File-link origin:              ${sb.fileBaseUrl}`,
		`  Control API:                   ${sb.controlUrl}`,
		'  Workflows:',
		...workflows.map(
			(w) =>
				`    ${w.id}  ${w.name} (${w.environment}, formats: ${w.triggerFormats.join('/') || 'none'})`,
		),
		seed
			? `  Demo data: ${docs} documents, ${tasks.length} review tasks (${tasks.filter((t) => t.status === 'pending').length} pending), a few events.`
			: '  No demo data (--no-seed).',
		'Ctrl-C stops.',
	];
	process.stdout.write(`${lines.join('\n')}\n`);
	let stopping = false;
	const shutdown = (): void => {
		if (stopping) return;
		stopping = true;
		setTimeout(() => process.exit(0), 2000).unref(); // never hang on shutdown
		void sb.stop().then(
			() => process.exit(0),
			() => process.exit(1),
		);
	};
	process.on('SIGINT', shutdown);
	process.on('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
	process.stderr.write(`sandbox failed to start: ${(err as Error).message}\n`);
	process.exit(1);
});
