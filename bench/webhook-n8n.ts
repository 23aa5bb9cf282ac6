/**
 * What the webhook trigger's real-n8n benchmarks share (not a suite itself): one trigger's
 * organization, key, credential and copy of the example workflow; posting to its Production URL;
 * the API reads one key made; the events each execution emitted, read from n8n's own SQLite.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Sandbox } from '../sandbox/src';

// The real-n8n launcher the end-to-end suites use (plain CommonJS).
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const e2e = require('../scripts/e2e/n8n');

// n8n's own log at info level: the bench's jest setup silences n8n-core (test/harness/env.ts), and
// the launcher hands N8N_LOG_LEVEL on to every n8n it starts, which would leave their logs empty
// (and a queue worker never says it is ready).
process.env.N8N_LOG_LEVEL = 'info';

export const TYPES = ['run.completed', 'run.failed'];

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const seconds = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : '–');

/** An id in the API's form (time first) for the millisecond `ms`, which the API does not list. */
export function forgedId(ms = Date.now()): string {
	const t = Math.floor(ms).toString(16).padStart(12, '0');
	const r = randomBytes(10).toString('hex');
	return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${r.slice(0, 3)}-8${r.slice(3, 6)}-${r.slice(6, 18)}`;
}

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
/** CPU time (user + system, ms) a process has used so far, from /proc. */
export function cpuMs(pid: number): number {
	const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
	const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** The parts of the e2e launcher's N8nInstance these benchmarks use. */
export interface RunningN8n {
	baseUrl: string;
	userFolder: string;
	proc: { pid: number };
	start(): Promise<void>;
	stop(): Promise<void>;
	setupOwner(): Promise<unknown>;
	importCredentials(credentials: unknown[]): Promise<void>;
	importWorkflows(workflows: unknown[]): Promise<void>;
	activateWorkflow(id: string): Promise<void>;
	unflatten(text: string): unknown;
	logTail(lines?: number): string;
}

/** One trigger: its own organization and key in the sandbox, its own workflow and Production URL in n8n. */
export interface Target {
	name: string;
	orgId: string;
	apiKey: string;
	workflowId: string;
	webhookId: string;
	triggerName: string;
	typeVersion: number;
	credential: unknown;
	workflow: { id: string; name: string; nodes: Array<Record<string, unknown>> };
}

/** A copy of examples/webhook-trigger.json for a new organization of the sandbox. */
export async function makeTarget(sb: Sandbox, name: string): Promise<Target> {
	const org = await sb.control.createOrg({ name: `hookbench ${name}` });
	const key = await sb.control.createKey({ orgId: org.id, name: `hookbench ${name}` });
	const credentialId = e2e.n8nId();
	const credentialName = `Document Workflow API (${name})`;
	const credential = e2e.documentWorkflowCredential({
		id: credentialId,
		name: credentialName,
		baseUrl: sb.baseUrl,
		apiKey: key.key,
	});
	const example = e2e
		.loadExamples({ CREDENTIAL_ID: credentialId, CREDENTIAL_NAME: credentialName })
		.find((entry: { file: string }) => entry.file === 'webhook-trigger.json');
	const workflow = example.workflow;
	workflow.name = `${workflow.name} (${name})`;
	const trigger = workflow.nodes.find((node: { type: string }) => node.type === e2e.NODE_TYPES[2]);
	if (JSON.stringify(trigger.parameters.events) !== JSON.stringify(TYPES))
		throw new Error(`the example's Events changed: ${JSON.stringify(trigger.parameters.events)}`);
	trigger.webhookId = randomUUID();
	return {
		name,
		orgId: org.id,
		apiKey: key.key,
		workflowId: workflow.id,
		webhookId: trigger.webhookId,
		triggerName: trigger.name,
		typeVersion: trigger.typeVersion,
		credential,
		workflow,
	};
}

export const productionUrl = (n8n: { baseUrl: string }, target: Target) =>
	`${n8n.baseUrl}/webhook/${target.webhookId}/webhook`;

/** POSTs JSON; resolves with the status (0: no answer) and how long the answer took. */
export async function post(url: string, body: unknown): Promise<{ status: number; ms: number }> {
	const t0 = Date.now();
	try {
		const res = await fetch(url, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(body),
		});
		await res.arrayBuffer();
		return { status: res.status, ms: Date.now() - t0 };
	} catch {
		return { status: 0, ms: Date.now() - t0 };
	}
}

/** Resolves once n8n hands the URL to the trigger (a malformed body answered 400 by the node). */
export async function waitUntilActive(url: string, timeoutMs = 90_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while ((await post(url, { id: 'warm-up' })).status !== 400) {
		if (Date.now() > deadline) throw new Error(`${url} never became active`);
		await sleep(1000);
	}
}

/** Every `GET /events` the sandbox answered for `apiKey`, with its real time. */
export async function readsBy(sb: Sandbox, apiKey: string): Promise<number[]> {
	return (await sb.control.getRequests({ origin: 'api', pathPrefix: '/events' }))
		.filter((request) => request.headers['x-api-key'] === apiKey)
		.map((request) => request.realTimeMs);
}

export const countBetween = (times: number[], from: number, to = Infinity) =>
	times.filter((t) => t >= from && t < to).length;

/** One execution of a trigger's workflow: when n8n started it and the event ids the trigger emitted. */
export interface Emission {
	id: string;
	startedAtMs: number;
	ids: string[];
}

/**
 * The executions of `workflowId`, read from n8n's SQLite database (the REST API needs one request
 * per execution, too slow for thousands), with the ids `triggerName` output in each.
 */
export function emissions(n8n: RunningN8n, workflowId: string, triggerName: string): Emission[] {
	const database = join(n8n.userFolder, '.n8n', 'database.sqlite');
	const sql = `select e.id as id, coalesce(e.startedAt, e.createdAt) as startedAt, d.data as data from execution_entity e join execution_data d on d.executionId = e.id where e.workflowId = '${workflowId.replace(/'/g, "''")}' order by e.id`;
	const out = execFileSync('sqlite3', ['-json', '-cmd', '.timeout 10000', database, sql], {
		encoding: 'utf8',
		maxBuffer: 1 << 30,
	}).trim();
	const rows: Array<{ id: number | string; startedAt: string; data: string }> = out
		? JSON.parse(out)
		: [];
	return rows.map((row) => {
		const data = n8n.unflatten(row.data) as Record<string, unknown>;
		const items: Array<{ json: { id: unknown } }> =
			e2e.N8nInstance.nodeOutput(data, triggerName) ?? [];
		return {
			id: String(row.id),
			startedAtMs: Date.parse(`${row.startedAt.replace(' ', 'T')}Z`),
			ids: items.map((item) => String(item.json.id)),
		};
	});
}

/** How many times each id was emitted, over `list`. */
export function timesEmitted(list: Emission[]): Map<string, number> {
	const counts = new Map<string, number>();
	for (const execution of list)
		for (const id of execution.ids) counts.set(id, (counts.get(id) ?? 0) + 1);
	return counts;
}

/** Polls `emissions` until `done` holds or `timeoutMs` passed; returns the last list. */
export async function waitForEmissions(
	n8n: RunningN8n,
	target: Target,
	done: (list: Emission[]) => boolean,
	timeoutMs: number,
): Promise<Emission[]> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const list = emissions(n8n, target.workflowId, target.triggerName);
		if (done(list) || Date.now() > deadline) return list;
		await sleep(500);
	}
}

/** n8n 2.41.1 (or the line `major`) with the packed package, in a user folder of its own. */
export function newN8n(
	name: string,
	port: number,
	env: Record<string, string> = {},
	fresh = false,
	major = '2',
): RunningN8n {
	return new e2e.N8nInstance({
		major,
		userFolder: join(e2e.CACHE, `hookbench-${name}`),
		fresh,
		port,
		env,
	});
}

/** Builds (unless BENCH_SKIP_BUILD=1) and packs the package into a folder of its own. */
export function packOnce(): string {
	return e2e.buildAndPack({
		build: process.env.BENCH_SKIP_BUILD !== '1',
		destDir: join(e2e.CACHE, 'hookbench-pack'),
	});
}

/** A fresh n8n with the package installed, the targets' credentials and workflows imported and active. */
export async function n8nWithTargets(
	n8n: RunningN8n,
	tgz: string,
	targets: Target[],
	extraWorkflows: unknown[] = [],
): Promise<void> {
	e2e.installPackageInto(n8n.userFolder, tgz);
	await n8n.start();
	await n8n.setupOwner();
	await n8n.importCredentials(targets.map((target) => target.credential));
	const workflows = [...targets.map((target) => target.workflow), ...extraWorkflows] as Array<{
		id: string;
	}>;
	await n8n.importWorkflows(workflows);
	for (const workflow of workflows) await n8n.activateWorkflow(workflow.id);
	await n8n.stop();
}
