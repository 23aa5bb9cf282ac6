/**
 * The sandbox's domain state and the run state machine.
 *
 * Time is the sandbox clock (real time + an offset). Runs follow scripts; their timed
 * transitions sit in one min-heap and are applied in time order by `settle()`, which the
 * ticker calls every few ms and every request calls first. So thousands of runs cost
 * nothing between transitions, and after a clock jump every due transition is applied at
 * its own scheduled time (startedOn/completedOn/event times are exact, children finish
 * before their parent resumes).
 */
import { rmSync } from 'node:fs';

import { EventStore } from './event-store';
import { newApiKey, uuid } from './ids';
import type {
	ChildSpec,
	DocumentInfo,
	Environment,
	EventInfo,
	KeyInfo,
	OrgInfo,
	OutputNode,
	ReviewTaskInfo,
	RunInfo,
	RunScript,
	RunScriptInput,
	ScriptStep,
	WorkflowInfo,
	WorkspaceInfo,
} from './types';
import { ALL_FORMATS, ALL_SCOPES, FINAL_RUN_STATUSES } from './types';
import type { EventRec } from './event-store';

export class Clock {
	offsetMs = 0;
	now(): number {
		return Date.now() + this.offsetMs;
	}
}

export const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null | undefined): string | null =>
	ms === null || ms === undefined ? null : iso(ms);

export interface OrgRec {
	id: string;
	name: string;
	apiAccess: boolean;
	defaultWorkspaceId: string;
	workspaces: Map<string, WorkspaceInfo>;
}

export interface KeyRec {
	id: string;
	key: string;
	orgId: string;
	name: string;
	scopes: Set<string>;
	environment: Environment;
	expiresOnMs: number | null;
	active: boolean;
	createdOnMs: number;
}

export interface WorkflowRec {
	id: string;
	orgId: string;
	workspaceId: string;
	name: string;
	environment: Environment;
	isEnabled: boolean;
	autoRun: boolean;
	triggerFormats: string[];
	script: RunScript;
	outputs: OutputNode[];
	createdOnMs: number;
	updatedOnMs: number;
	pending: Array<{ script: RunScript; remaining: number }>;
}

export interface DocumentRec {
	id: string;
	orgId: string;
	workspaceId: string;
	workflowId: string;
	filename: string;
	contentType: string;
	format: string | null;
	sizeBytes: number;
	sha256: string;
	head: Buffer;
	filePath: string;
	reference: string | null;
	createdOnMs: number;
	/** Top-level runs, creation order. */
	runIds: string[];
	/** A status the document takes when it has no visible run (held, or a run that never starts). */
	fixed: { status: string; reason: string; atMs: number } | null;
}

export interface RunRec {
	id: string;
	seq: number;
	orgId: string;
	workspaceId: string;
	workflowId: string;
	documentId: string;
	rootRunId: string;
	parentRunId: string | null;
	sourceRunId: string | null;
	kind: string;
	status: string;
	steps: ScriptStep[];
	stepIndex: number;
	gen: number;
	visibleAtMs: number;
	started: boolean;
	startedOnMs: number | null;
	completedOnMs: number | null;
	billedCredits: number;
	error: { code: string; message?: string } | null;
	reference: string | null;
	childRunIds: string[];
	outputs: OutputNode[];
	reviewTaskId: string | null;
	extraFields: Record<string, unknown> | undefined;
	/** Run ids whose `runId` review-task filter matches this run's tasks: itself + callers through sub_workflow_call. */
	matchRunIds: string[];
}

export interface TaskRec {
	id: string;
	seq: number;
	runId: string;
	rootRunId: string;
	workflowId: string;
	documentId: string;
	orgId: string;
	workspaceId: string;
	status: string;
	round: number;
	step: string;
	createdOnMs: number;
	completedOnMs: number | null;
	decision: 'approved' | 'rejected' | null;
	matchRunIds: string[];
}

interface HeapEntry {
	at: number;
	seq: number;
	runId: string;
	gen: number;
	kind: 'start' | 'step' | 'autoReview';
}

class MinHeap {
	private a: HeapEntry[] = [];
	get size(): number {
		return this.a.length;
	}
	clear(): void {
		this.a = [];
	}
	private less(i: number, j: number): boolean {
		const x = this.a[i]!;
		const y = this.a[j]!;
		return x.at < y.at || (x.at === y.at && x.seq < y.seq);
	}
	push(e: HeapEntry): void {
		const a = this.a;
		a.push(e);
		let i = a.length - 1;
		while (i > 0) {
			const p = (i - 1) >> 1;
			if (!this.less(i, p)) break;
			[a[i], a[p]] = [a[p]!, a[i]!];
			i = p;
		}
	}
	peek(): HeapEntry | undefined {
		return this.a[0];
	}
	pop(): HeapEntry | undefined {
		const a = this.a;
		if (a.length === 0) return undefined;
		const top = a[0]!;
		const last = a.pop()!;
		if (a.length > 0) {
			a[0] = last;
			let i = 0;
			for (;;) {
				const l = 2 * i + 1;
				const r = l + 1;
				let m = i;
				if (l < a.length && this.less(l, m)) m = l;
				if (r < a.length && this.less(r, m)) m = r;
				if (m === i) break;
				[a[i], a[m]] = [a[m]!, a[i]!];
				i = m;
			}
		}
		return top;
	}
}

export class EngineError extends Error {
	constructor(
		readonly status: number,
		message: string,
	) {
		super(message);
	}
}

export const DEFAULT_ORG_ID = 'default';

export const DEFAULT_STEPS: ScriptStep[] = [
	{ status: 'queued', ms: 20 },
	{ status: 'running', ms: 80 },
	{ status: 'completed' },
];

const DEFAULT_CHILD_STEPS: ScriptStep[] = [{ status: 'running', ms: 50 }, { status: 'completed' }];

export const DEFAULT_OUTPUTS: OutputNode[] = [
	{
		nodeId: 'output',
		kind: 'json',
		contentType: 'application/json',
		filename: 'result.json',
		value: { extracted: { invoiceNumber: 'INV-0001', total: 123.45, currency: 'EUR' }, pages: 1 },
	},
];

export function normalizeScript(input: RunScriptInput | undefined, fallback: RunScript): RunScript {
	if (input === undefined || input === null) return fallback;
	if (Array.isArray(input)) return { steps: input };
	if (!Array.isArray(input.steps)) throw new EngineError(400, 'script.steps must be an array');
	return { ...input };
}

export interface Settings {
	eventCommitDelayMs: number;
	originalLinkTtlMs: number;
	maxOutputBytes: number;
	eventPageLatencyMs: number;
	/** Sandbox-clock time each answered page of `GET /events` moves the clock on, so events leave the 7-day window while a read runs. */
	eventPageClockAdvanceMs: number;
	sendDateHeader: boolean;
	/** Whether a `run.*` event's `data` names its run (`runId`, `documentId`); the spec does not show what `data` holds. */
	runEventsNameRun: boolean;
}

export const DEFAULT_SETTINGS: Settings = {
	eventCommitDelayMs: 0,
	originalLinkTtlMs: 5 * 60 * 1000,
	maxOutputBytes: 10 * 1024 * 1024,
	eventPageLatencyMs: 0,
	eventPageClockAdvanceMs: 0,
	sendDateHeader: true,
	runEventsNameRun: true,
};

export interface StoredFile {
	filename: string;
	contentType: string;
	format: string | null;
	sizeBytes: number;
	sha256: string;
	head: Buffer;
	filePath: string;
}

export interface TriggerOutcome {
	documentId: string;
	runId: string | null;
	status: 'queued' | 'held';
	reference: string | null;
}

export class Engine {
	readonly clock = new Clock();
	readonly events = new EventStore();
	settings: Settings = { ...DEFAULT_SETTINGS };
	readonly orgs = new Map<string, OrgRec>();
	readonly keysById = new Map<string, KeyRec>();
	readonly keysByValue = new Map<string, KeyRec>();
	readonly workflows = new Map<string, WorkflowRec>();
	readonly documents = new Map<string, DocumentRec>();
	readonly runs = new Map<string, RunRec>();
	readonly tasks = new Map<string, TaskRec>();
	/** Tasks in creation order. */
	private taskList: TaskRec[] = [];
	private readonly heap = new MinHeap();
	private seq = 0;

	now(): number {
		return this.clock.now();
	}

	private nextSeq(): number {
		this.seq += 1;
		return this.seq;
	}

	/** Clears everything (files of documents are deleted). */
	clear(): void {
		for (const d of this.documents.values()) {
			try {
				rmSync(d.filePath, { force: true });
			} catch {
				/* ignore */
			}
		}
		this.orgs.clear();
		this.keysById.clear();
		this.keysByValue.clear();
		this.workflows.clear();
		this.documents.clear();
		this.runs.clear();
		this.tasks.clear();
		this.taskList = [];
		this.heap.clear();
		this.events.clear();
		this.clock.offsetMs = 0;
		this.settings = { ...DEFAULT_SETTINGS };
	}

	// ------------------------------------------------------------------ orgs, keys

	createOrg(input: {
		id?: string;
		name?: string;
		apiAccess?: boolean;
		workspaces?: string[];
		defaultWorkspaceId?: string;
	}): OrgRec {
		const id = input.id ?? uuid();
		if (this.orgs.has(id)) throw new EngineError(409, `org ${id} exists`);
		const wsId = input.defaultWorkspaceId ?? uuid();
		const org: OrgRec = {
			id,
			name: input.name ?? `Org ${id}`,
			apiAccess: input.apiAccess ?? true,
			defaultWorkspaceId: wsId,
			workspaces: new Map([[wsId, { id: wsId, name: 'Default', isDefault: true }]]),
		};
		for (const name of input.workspaces ?? []) {
			const w = uuid();
			org.workspaces.set(w, { id: w, name, isDefault: false });
		}
		this.orgs.set(id, org);
		return org;
	}

	org(id: string): OrgRec {
		const o = this.orgs.get(id);
		if (!o) throw new EngineError(404, `org ${id} not found`);
		return o;
	}

	orgInfo(o: OrgRec): OrgInfo {
		return {
			id: o.id,
			name: o.name,
			apiAccess: o.apiAccess,
			defaultWorkspaceId: o.defaultWorkspaceId,
			workspaces: [...o.workspaces.values()],
		};
	}

	createKey(input: {
		orgId?: string;
		name?: string;
		scopes?: string[];
		environment?: Environment;
		expiresOn?: string | null;
		active?: boolean;
		key?: string;
		id?: string;
	}): KeyRec {
		const org = this.org(input.orgId ?? DEFAULT_ORG_ID);
		const rec: KeyRec = {
			id: input.id ?? uuid(),
			key: input.key ?? newApiKey(),
			orgId: org.id,
			name: input.name ?? 'sandbox key',
			scopes: new Set(input.scopes ?? ALL_SCOPES),
			environment: checkEnv(input.environment ?? 'prod'),
			expiresOnMs: parseDateOrNull(input.expiresOn),
			active: input.active ?? true,
			createdOnMs: this.now(),
		};
		if (this.keysByValue.has(rec.key)) throw new EngineError(409, 'key value exists');
		this.keysById.set(rec.id, rec);
		this.keysByValue.set(rec.key, rec);
		return rec;
	}

	key(id: string): KeyRec {
		const k = this.keysById.get(id);
		if (!k) throw new EngineError(404, `key ${id} not found`);
		return k;
	}

	updateKey(
		id: string,
		patch: {
			name?: string;
			scopes?: string[];
			environment?: Environment;
			expiresOn?: string | null;
			active?: boolean;
		},
	): KeyRec {
		const k = this.key(id);
		if (patch.name !== undefined) k.name = patch.name;
		if (patch.scopes !== undefined) k.scopes = new Set(patch.scopes);
		if (patch.environment !== undefined) k.environment = checkEnv(patch.environment);
		if (patch.expiresOn !== undefined) k.expiresOnMs = parseDateOrNull(patch.expiresOn);
		if (patch.active !== undefined) k.active = patch.active;
		return k;
	}

	deleteKey(id: string): void {
		const k = this.key(id);
		this.keysById.delete(id);
		this.keysByValue.delete(k.key);
	}

	keyInfo(k: KeyRec): KeyInfo {
		return {
			id: k.id,
			key: k.key,
			orgId: k.orgId,
			name: k.name,
			scopes: [...k.scopes],
			environment: k.environment,
			expiresOn: isoOrNull(k.expiresOnMs),
			active: k.active,
			createdOn: iso(k.createdOnMs),
		};
	}

	// ------------------------------------------------------------------ workflows

	createWorkflow(input: {
		id?: string;
		orgId?: string;
		workspaceId?: string;
		name?: string;
		environment?: Environment;
		isEnabled?: boolean;
		autoRun?: boolean;
		triggerFormats?: string[];
		script?: RunScriptInput;
		outputs?: OutputNode[];
	}): WorkflowRec {
		const org = this.org(input.orgId ?? DEFAULT_ORG_ID);
		const workspaceId = input.workspaceId ?? org.defaultWorkspaceId;
		if (!org.workspaces.has(workspaceId))
			throw new EngineError(400, `workspace ${workspaceId} is not in org ${org.id}`);
		const id = input.id ?? uuid();
		if (this.workflows.has(id)) throw new EngineError(409, `workflow ${id} exists`);
		const now = this.now();
		const wf: WorkflowRec = {
			id,
			orgId: org.id,
			workspaceId,
			name: input.name ?? 'Sandbox workflow',
			environment: checkEnv(input.environment ?? 'prod'),
			isEnabled: input.isEnabled ?? true,
			autoRun: input.autoRun ?? true,
			triggerFormats: [...(input.triggerFormats ?? ALL_FORMATS)],
			script: normalizeScript(input.script, { steps: DEFAULT_STEPS }),
			outputs: input.outputs ?? DEFAULT_OUTPUTS,
			createdOnMs: now,
			updatedOnMs: now,
			pending: [],
		};
		this.workflows.set(id, wf);
		return wf;
	}

	workflow(id: string): WorkflowRec {
		const w = this.workflows.get(id);
		if (!w) throw new EngineError(404, `workflow ${id} not found`);
		return w;
	}

	/** `updatedOn` moves only when the name or the enabled state actually changes. */
	updateWorkflow(
		id: string,
		patch: {
			name?: string;
			environment?: Environment;
			isEnabled?: boolean;
			autoRun?: boolean;
			triggerFormats?: string[];
			script?: RunScriptInput;
			outputs?: OutputNode[];
			workspaceId?: string;
		},
	): WorkflowRec {
		const wf = this.workflow(id);
		let moved = false;
		if (patch.name !== undefined && patch.name !== wf.name) {
			wf.name = patch.name;
			moved = true;
		}
		if (patch.isEnabled !== undefined && patch.isEnabled !== wf.isEnabled) {
			wf.isEnabled = patch.isEnabled;
			moved = true;
		}
		if (patch.environment !== undefined) wf.environment = checkEnv(patch.environment);
		if (patch.autoRun !== undefined) wf.autoRun = patch.autoRun;
		if (patch.triggerFormats !== undefined) wf.triggerFormats = [...patch.triggerFormats];
		if (patch.script !== undefined) wf.script = normalizeScript(patch.script, wf.script);
		if (patch.outputs !== undefined) wf.outputs = patch.outputs;
		if (patch.workspaceId !== undefined) {
			if (!this.org(wf.orgId).workspaces.has(patch.workspaceId))
				throw new EngineError(400, 'workspace not in org');
			wf.workspaceId = patch.workspaceId;
		}
		if (moved) {
			// Never let updatedOn go backwards or stay equal on a real change.
			wf.updatedOnMs = Math.max(this.now(), wf.updatedOnMs + 1);
		}
		return wf;
	}

	setNextScripts(id: string, script: RunScriptInput, count: number): WorkflowRec {
		const wf = this.workflow(id);
		wf.pending.push({
			script: normalizeScript(script, wf.script),
			remaining: Math.max(1, Math.floor(count)),
		});
		return wf;
	}

	clearNextScripts(id: string): WorkflowRec {
		const wf = this.workflow(id);
		wf.pending = [];
		return wf;
	}

	workflowInfo(w: WorkflowRec): WorkflowInfo {
		return {
			id: w.id,
			orgId: w.orgId,
			workspaceId: w.workspaceId,
			name: w.name,
			environment: w.environment,
			isEnabled: w.isEnabled,
			autoRun: w.autoRun,
			triggerFormats: [...w.triggerFormats],
			script: w.script,
			outputs: w.outputs,
			createdOn: iso(w.createdOnMs),
			updatedOn: iso(w.updatedOnMs),
			pendingScripts: w.pending.reduce((n, p) => n + p.remaining, 0),
		};
	}

	/** The public Workflow resource. */
	workflowJson(w: WorkflowRec): Record<string, unknown> {
		return {
			id: w.id,
			name: w.name,
			environment: w.environment,
			isEnabled: w.isEnabled,
			triggerFormats: [...w.triggerFormats],
			createdOn: iso(w.createdOnMs),
			updatedOn: iso(w.updatedOnMs),
		};
	}

	private takeScript(wf: WorkflowRec): RunScript {
		const p = wf.pending[0];
		if (!p) return wf.script;
		p.remaining -= 1;
		if (p.remaining <= 0) wf.pending.shift();
		return p.script;
	}

	// ------------------------------------------------------------------ documents and triggers

	/**
	 * A trigger whose file is already stored. Disabled workflow (a choice; the spec is
	 * silent): the document is accepted (202, `queued` with a runId) but its run never
	 * starts: the runId answers 404 forever and the document's status is `failed` with
	 * statusReason `workflow_disabled`.
	 */
	trigger(wf: WorkflowRec, file: StoredFile, reference: string | null): TriggerOutcome {
		const now = this.now();
		const doc: DocumentRec = {
			id: uuid(),
			orgId: wf.orgId,
			workspaceId: wf.workspaceId,
			workflowId: wf.id,
			filename: file.filename,
			contentType: file.contentType,
			format: file.format,
			sizeBytes: file.sizeBytes,
			sha256: file.sha256,
			head: file.head,
			filePath: file.filePath,
			reference,
			createdOnMs: now,
			runIds: [],
			fixed: null,
		};
		this.documents.set(doc.id, doc);
		this.emit(wf.orgId, wf.environment, 'document.received', now, {
			documentId: doc.id,
			workflowId: wf.id,
			filename: doc.filename,
			contentType: doc.contentType,
			reference,
		});
		if (!wf.isEnabled) {
			doc.fixed = { status: 'failed', reason: 'workflow_disabled', atMs: now };
			return { documentId: doc.id, runId: uuid(), status: 'queued', reference };
		}
		if (!wf.autoRun) {
			doc.fixed = { status: 'held', reason: 'automatic_run_off', atMs: now };
			return { documentId: doc.id, runId: null, status: 'held', reference };
		}
		const script = this.takeScript(wf);
		const delay = Math.max(0, script.startDelayMs ?? 0);
		if (script.neverStarts) {
			doc.fixed = { status: script.neverStarts, reason: 'run_never_started', atMs: now + delay };
			return { documentId: doc.id, runId: uuid(), status: 'queued', reference };
		}
		const run = this.createRun(doc, wf, script, { visibleAtMs: now + delay });
		return { documentId: doc.id, runId: run.id, status: 'queued', reference };
	}

	document(id: string): DocumentRec {
		const d = this.documents.get(id);
		if (!d) throw new EngineError(404, `document ${id} not found`);
		return d;
	}

	documentStatus(d: DocumentRec): { status: string; reason: string | null } {
		const now = this.now();
		for (let i = d.runIds.length - 1; i >= 0; i--) {
			const r = this.runs.get(d.runIds[i]!);
			if (r && r.started) return { status: r.status, reason: null };
		}
		if (d.fixed && now >= d.fixed.atMs) return { status: d.fixed.status, reason: d.fixed.reason };
		return { status: 'queued', reason: null };
	}

	/** The public Document resource (id, status and a few pass-through fields). */
	documentJson(d: DocumentRec): Record<string, unknown> {
		const s = this.documentStatus(d);
		return {
			id: d.id,
			status: s.status,
			statusReason: s.reason,
			workflowId: d.workflowId,
			filename: d.filename,
			contentType: d.contentType,
			sizeBytes: d.sizeBytes,
			reference: d.reference,
			createdOn: iso(d.createdOnMs),
		};
	}

	documentInfo(d: DocumentRec): DocumentInfo {
		const s = this.documentStatus(d);
		return {
			id: d.id,
			orgId: d.orgId,
			workspaceId: d.workspaceId,
			workflowId: d.workflowId,
			status: s.status,
			statusReason: s.reason,
			filename: d.filename,
			contentType: d.contentType,
			format: d.format,
			sizeBytes: d.sizeBytes,
			sha256: d.sha256,
			headBase64: d.head.toString('base64'),
			reference: d.reference,
			createdOn: iso(d.createdOnMs),
			runIds: [...d.runIds],
			filePath: d.filePath,
		};
	}

	/** Runs a held (or any) document as a person would: a new top-level run, visible now. */
	startDocument(docId: string, script?: RunScriptInput): RunRec {
		const d = this.document(docId);
		const wf = this.workflow(d.workflowId);
		const run = this.createRun(d, wf, normalizeScript(script, wf.script), {
			visibleAtMs: this.now(),
		});
		this.settle();
		return run;
	}

	addRun(
		docId: string,
		input: { kind?: string; sourceRunId?: string; script?: RunScriptInput },
	): RunRec {
		const d = this.document(docId);
		const wf = this.workflow(d.workflowId);
		const script = normalizeScript(input.script, wf.script);
		const run = this.createRun(d, wf, script, {
			visibleAtMs: this.now() + Math.max(0, script.startDelayMs ?? 0),
			kind: input.kind,
			sourceRunId: input.sourceRunId ?? null,
		});
		this.settle();
		return run;
	}

	// ------------------------------------------------------------------ runs

	private createRun(
		doc: DocumentRec,
		wf: WorkflowRec,
		script: RunScript,
		opts: {
			visibleAtMs: number;
			kind?: string;
			sourceRunId?: string | null;
			parent?: RunRec;
			childKind?: string;
		},
	): RunRec {
		const id = uuid();
		const parent = opts.parent;
		const kind = opts.childKind ?? opts.kind ?? script.kind ?? 'full';
		const run: RunRec = {
			id,
			seq: this.nextSeq(),
			orgId: wf.orgId,
			workspaceId: doc.workspaceId,
			workflowId: wf.id,
			documentId: doc.id,
			rootRunId: parent ? parent.rootRunId : id,
			parentRunId: parent ? parent.id : null,
			sourceRunId: opts.sourceRunId ?? null,
			kind,
			status: 'queued',
			steps: script.steps.map((s) => ({ ...s })),
			stepIndex: -1,
			gen: 0,
			visibleAtMs: opts.visibleAtMs,
			started: false,
			startedOnMs: null,
			completedOnMs: null,
			billedCredits: 0,
			error: null,
			reference: doc.reference,
			childRunIds: [],
			outputs: script.outputs ?? wf.outputs,
			reviewTaskId: null,
			extraFields: script.extraFields,
			matchRunIds: [id],
		};
		if (parent) {
			parent.childRunIds.push(id);
			// The runId filter of review tasks matches the run and the runs that called it as a sub-workflow.
			if (kind === 'sub_workflow_call') run.matchRunIds = [id, ...parent.matchRunIds];
		} else {
			doc.runIds.push(id);
		}
		this.runs.set(id, run);
		this.heap.push({ at: opts.visibleAtMs, seq: this.nextSeq(), runId: id, gen: 0, kind: 'start' });
		return run;
	}

	run(id: string): RunRec {
		const r = this.runs.get(id);
		if (!r) throw new EngineError(404, `run ${id} not found`);
		return r;
	}

	/** Applies every transition due at or before now, in time order. */
	settle(): void {
		const now = this.now();
		for (;;) {
			const top = this.heap.peek();
			if (!top || top.at > now) break;
			this.heap.pop();
			const run = this.runs.get(top.runId);
			if (!run) continue;
			if (top.kind === 'start') {
				if (run.started) continue;
				run.started = true;
				this.enterStep(run, 0, top.at);
				continue;
			}
			if (top.gen !== run.gen) continue;
			if (top.kind === 'autoReview') {
				const task = run.reviewTaskId ? this.tasks.get(run.reviewTaskId) : undefined;
				const step = run.steps[run.stepIndex];
				if (task) this.decide(task, step?.decision ?? 'approved', top.at);
				else this.enterStep(run, run.stepIndex + 1, top.at);
				continue;
			}
			this.enterStep(run, run.stepIndex + 1, top.at);
		}
	}

	private schedule(run: RunRec, at: number, kind: 'step' | 'autoReview'): void {
		this.heap.push({ at, seq: this.nextSeq(), runId: run.id, gen: run.gen, kind });
	}

	private enterStep(run: RunRec, idx: number, t: number): void {
		run.gen += 1;
		if (idx >= run.steps.length) {
			// Script exhausted on a non-final step: the run stays where it is.
			run.stepIndex = run.steps.length;
			return;
		}
		run.stepIndex = idx;
		const step = run.steps[idx]!;
		run.status = String(step.status);
		if (run.status !== 'queued' && run.startedOnMs === null) run.startedOnMs = t;
		if (step.billedCredits !== undefined) run.billedCredits = step.billedCredits;
		switch (run.status) {
			case 'completed':
			case 'failed':
			case 'cancelled':
				this.finish(run, step, t);
				return;
			case 'review':
				this.createTask(run, step, t);
				if (step.ms !== undefined) this.schedule(run, t + Math.max(0, step.ms), 'autoReview');
				return;
			case 'awaiting_children': {
				this.spawnChildren(run, step, t);
				if (run.childRunIds.length === 0 || this.childrenDone(run)) this.schedule(run, t, 'step');
				return;
			}
			default:
				if (step.ms !== undefined) this.schedule(run, t + Math.max(0, step.ms), 'step');
		}
	}

	private finish(run: RunRec, step: ScriptStep, t: number): void {
		run.completedOnMs = t;
		if (run.startedOnMs === null) run.startedOnMs = t;
		if (run.status === 'failed') {
			run.error = {
				code: step.error?.code ?? 'processing_error',
				message: step.error?.message ?? 'The run stopped on an error (sandbox script).',
			};
		} else if (run.status === 'cancelled') {
			run.error = step.error ? { ...step.error } : { code: 'cancelled_by_user' };
		} else {
			run.error = null;
			if (step.billedCredits === undefined && run.billedCredits === 0) run.billedCredits = 1;
		}
		if (run.parentRunId === null) {
			const wf = this.workflows.get(run.workflowId);
			const names = this.settings.runEventsNameRun
				? { runId: run.id, documentId: run.documentId }
				: {};
			this.emit(run.orgId, wf?.environment ?? 'prod', `run.${run.status}`, t, {
				...names,
				workflowId: run.workflowId,
				status: run.status,
				reference: run.reference,
				...(run.error ? { error: run.error } : {}),
			});
		} else {
			const parent = this.runs.get(run.parentRunId);
			if (parent && parent.status === 'awaiting_children' && this.childrenDone(parent)) {
				this.enterStep(parent, parent.stepIndex + 1, t);
			}
		}
	}

	private childrenDone(run: RunRec): boolean {
		return run.childRunIds.every((c) => {
			const r = this.runs.get(c);
			return !r || FINAL_RUN_STATUSES.includes(r.status);
		});
	}

	private spawnChildren(run: RunRec, step: ScriptStep, t: number): void {
		const doc = this.documents.get(run.documentId);
		if (!doc) return;
		const specs: ChildSpec[] =
			typeof step.children === 'number'
				? Array.from({ length: step.children }, () => ({ kind: 'fan_out_child' as const }))
				: (step.children ?? [{ kind: 'fan_out_child' as const }]);
		run.childRunIds = [];
		for (const spec of specs) {
			const wf =
				(spec.workflowId ? this.workflows.get(spec.workflowId) : undefined) ??
				this.workflows.get(run.workflowId);
			if (!wf) continue;
			this.createRun(
				doc,
				wf,
				{ steps: spec.script ?? DEFAULT_CHILD_STEPS, outputs: wf.outputs },
				{
					visibleAtMs: t,
					parent: run,
					childKind: spec.kind ?? 'fan_out_child',
				},
			);
		}
	}

	/** Moves a run to its next step now (control API). */
	advanceRun(id: string): RunRec {
		this.settle();
		const run = this.run(id);
		if (!run.started) {
			run.started = true;
			run.visibleAtMs = Math.min(run.visibleAtMs, this.now());
			this.enterStep(run, 0, this.now());
		} else {
			if (run.status === 'review' && run.reviewTaskId) run.reviewTaskId = null;
			this.enterStep(run, run.stepIndex + 1, this.now());
		}
		this.settle();
		return run;
	}

	setRunState(
		id: string,
		patch: {
			status?: string;
			error?: { code: string; message?: string } | null;
			billedCredits?: number;
		},
	): RunRec {
		this.settle();
		const run = this.run(id);
		if (patch.status !== undefined) {
			run.gen += 1; // cancels the pending timed transition
			run.status = patch.status;
			if (FINAL_RUN_STATUSES.includes(patch.status) && run.completedOnMs === null)
				run.completedOnMs = this.now();
			if (patch.status !== 'queued' && run.startedOnMs === null) run.startedOnMs = this.now();
		}
		if (patch.error !== undefined) run.error = patch.error;
		if (patch.billedCredits !== undefined) run.billedCredits = patch.billedCredits;
		return run;
	}

	/** The public Run resource. */
	runJson(r: RunRec): Record<string, unknown> {
		const out: Record<string, unknown> = {
			id: r.id,
			workflowId: r.workflowId,
			documentId: r.documentId,
			kind: r.kind,
			status: r.status,
			startedOn: isoOrNull(r.startedOnMs),
			completedOn: isoOrNull(r.completedOnMs),
			billedCredits: r.billedCredits,
			parentRunId: r.parentRunId,
			sourceRunId: r.sourceRunId,
			reference: r.reference,
		};
		if (r.error && (r.status === 'failed' || r.status === 'cancelled')) out.error = { ...r.error };
		if (r.extraFields) Object.assign(out, r.extraFields);
		return out;
	}

	/** A Run list item (listing a document's runs). */
	runListItem(r: RunRec): Record<string, unknown> {
		return {
			id: r.id,
			workflowId: r.workflowId,
			status: r.status,
			kind: r.kind,
			startedOn: isoOrNull(r.startedOnMs),
			sourceRunId: r.sourceRunId,
			completedOn: isoOrNull(r.completedOnMs),
		};
	}

	runInfo(r: RunRec): RunInfo {
		return {
			id: r.id,
			orgId: r.orgId,
			workspaceId: r.workspaceId,
			workflowId: r.workflowId,
			documentId: r.documentId,
			rootRunId: r.rootRunId,
			parentRunId: r.parentRunId,
			sourceRunId: r.sourceRunId,
			kind: r.kind,
			status: r.status,
			stepIndex: r.stepIndex,
			steps: r.steps,
			visible: r.started,
			visibleOn: iso(r.visibleAtMs),
			startedOn: isoOrNull(r.startedOnMs),
			completedOn: isoOrNull(r.completedOnMs),
			billedCredits: r.billedCredits,
			error: r.error,
			reference: r.reference,
			childRunIds: [...r.childRunIds],
			outputs: r.outputs,
			reviewTaskId: r.reviewTaskId,
		};
	}

	/** Top-level visible runs of a document, newest first. */
	documentRuns(d: DocumentRec): RunRec[] {
		const out: RunRec[] = [];
		for (const id of d.runIds) {
			const r = this.runs.get(id);
			if (r && r.started && r.parentRunId === null) out.push(r);
		}
		return out.sort((a, b) => b.visibleAtMs - a.visibleAtMs || b.seq - a.seq);
	}

	// ------------------------------------------------------------------ review tasks

	private createTask(run: RunRec, step: ScriptStep, t: number): void {
		const stepName = step.step ?? 'review';
		let round = 1;
		for (const task of this.taskList) if (task.runId === run.id && task.step === stepName) round++;
		const task: TaskRec = {
			id: uuid(),
			seq: this.nextSeq(),
			runId: run.id,
			rootRunId: run.rootRunId,
			workflowId: run.workflowId,
			documentId: run.documentId,
			orgId: run.orgId,
			workspaceId: run.workspaceId,
			status: 'pending',
			round,
			step: stepName,
			createdOnMs: t,
			completedOnMs: null,
			decision: null,
			matchRunIds: run.matchRunIds,
		};
		this.tasks.set(task.id, task);
		this.taskList.push(task);
		run.reviewTaskId = task.id;
		const wf = this.workflows.get(run.workflowId);
		this.emit(run.orgId, wf?.environment ?? 'prod', 'review.created', t, {
			reviewTaskId: task.id,
			runId: run.id,
			rootRunId: run.rootRunId,
			workflowId: run.workflowId,
			documentId: run.documentId,
			round,
		});
	}

	task(id: string): TaskRec {
		const t = this.tasks.get(id);
		if (!t) throw new EngineError(404, `review task ${id} not found`);
		return t;
	}

	private decide(task: TaskRec, decision: 'approved' | 'rejected', t: number): void {
		task.status = decision;
		task.decision = decision;
		task.completedOnMs = t;
		const wf = this.workflows.get(task.workflowId);
		this.emit(task.orgId, wf?.environment ?? 'prod', 'review.completed', t, {
			reviewTaskId: task.id,
			runId: task.runId,
			rootRunId: task.rootRunId,
			workflowId: task.workflowId,
			documentId: task.documentId,
			decision,
		});
		const run = this.runs.get(task.runId);
		if (run && run.reviewTaskId === task.id && run.status === 'review') {
			run.reviewTaskId = null;
			const step = run.steps[run.stepIndex];
			if (decision === 'rejected' && step?.ifRejected) {
				run.steps = [
					...run.steps.slice(0, run.stepIndex + 1),
					...step.ifRejected.map((s) => ({ ...s })),
				];
			}
			this.enterStep(run, run.stepIndex + 1, t);
		}
	}

	decideTask(id: string, decision: 'approved' | 'rejected'): TaskRec {
		if (decision !== 'approved' && decision !== 'rejected')
			throw new EngineError(400, 'decision must be approved or rejected');
		this.settle();
		const task = this.task(id);
		if (task.decision !== null)
			throw new EngineError(409, `review task ${id} is already ${task.status}`);
		this.decide(task, decision, this.now());
		this.settle();
		return task;
	}

	setTaskStatus(id: string, status: string): TaskRec {
		if (status === 'approved' || status === 'rejected') return this.decideTask(id, status);
		this.settle();
		const task = this.task(id);
		task.status = status;
		if (status === 'cancelled' || status === 'resume_failed') task.completedOnMs = this.now();
		return task;
	}

	/** Tasks newest first. */
	tasksNewestFirst(): TaskRec[] {
		return [...this.taskList].sort((a, b) => b.createdOnMs - a.createdOnMs || b.seq - a.seq);
	}

	taskJson(t: TaskRec): Record<string, unknown> {
		return {
			id: t.id,
			runId: t.runId,
			rootRunId: t.rootRunId,
			workflowId: t.workflowId,
			documentId: t.documentId,
			status: t.status,
			round: t.round,
			createdOn: iso(t.createdOnMs),
			completedOn: isoOrNull(t.completedOnMs),
			decision: t.status === 'approved' || t.status === 'rejected' ? t.decision : null,
		};
	}

	taskInfo(t: TaskRec): ReviewTaskInfo {
		return {
			...(this.taskJson(t) as Omit<ReviewTaskInfo, 'orgId' | 'workspaceId' | 'step'>),
			step: t.step,
			orgId: t.orgId,
			workspaceId: t.workspaceId,
		};
	}

	// ------------------------------------------------------------------ events

	emit(
		orgId: string,
		env: Environment,
		type: string,
		t: number,
		data: Record<string, unknown>,
	): EventRec {
		return this.events.create(orgId, env, type, data, t, this.settings.eventCommitDelayMs);
	}

	eventJson(e: EventRec): Record<string, unknown> {
		return {
			id: e.id,
			type: e.type,
			createdOn: iso(e.createdOnMs),
			environment: e.environment,
			data: e.data,
		};
	}

	eventInfo(e: EventRec, now: number): EventInfo {
		return {
			id: e.id,
			type: e.type,
			createdOn: iso(e.createdOnMs),
			environment: e.environment,
			data: e.data,
			orgId: e.orgId,
			commitOn: iso(e.commitAtMs),
			committed: e.commitAtMs <= now,
		};
	}
}

function checkEnv(env: string): Environment {
	if (env !== 'dev' && env !== 'prod')
		throw new EngineError(400, `environment must be dev or prod, got ${env}`);
	return env;
}

function parseDateOrNull(v: string | null | undefined): number | null {
	if (v === null || v === undefined) return null;
	const ms = Date.parse(v);
	if (Number.isNaN(ms)) throw new EngineError(400, `invalid date ${v}`);
	return ms;
}
