/**
 * Types shared by the sandbox server and its control client (`control-client.ts`).
 *
 * Everything here is plain JSON, so the control API can be used from another process.
 * Times are ISO 8601 strings on the sandbox clock (real time + an offset the control
 * API can advance).
 */

export type Environment = 'dev' | 'prod';

export type Scope =
	| 'workflows:trigger'
	| 'workflows:read'
	| 'runs:read'
	| 'reviews:read'
	| 'events:read'
	| 'documents:read';

export const ALL_SCOPES: readonly Scope[] = [
	'workflows:trigger',
	'workflows:read',
	'runs:read',
	'reviews:read',
	'events:read',
	'documents:read',
];

export type TriggerFormat =
	| 'pdf'
	| 'docx'
	| 'xlsx'
	| 'pptx'
	| 'csv'
	| 'png'
	| 'jpeg'
	| 'tiff'
	| 'gif'
	| 'webp';

export const ALL_FORMATS: readonly TriggerFormat[] = [
	'pdf',
	'docx',
	'xlsx',
	'pptx',
	'csv',
	'png',
	'jpeg',
	'tiff',
	'gif',
	'webp',
];

export type RunKind =
	| 'full'
	| 'step_test'
	| 'up_to_node_test'
	| 'restart_from_node'
	| 'fan_out_child'
	| 'sub_workflow_call';

export const FINAL_RUN_STATUSES: readonly string[] = ['completed', 'failed', 'cancelled'];

export type ReviewTaskStatus =
	| 'pending'
	| 'in_review'
	| 'approved_pending_resume'
	| 'rejected_pending_resume'
	| 'approved'
	| 'rejected'
	| 'resume_failed'
	| 'cancelled';

export const REVIEW_TASK_STATUSES: readonly ReviewTaskStatus[] = [
	'pending',
	'in_review',
	'approved_pending_resume',
	'rejected_pending_resume',
	'approved',
	'rejected',
	'resume_failed',
	'cancelled',
];

export type EventType =
	| 'document.received'
	| 'run.completed'
	| 'run.failed'
	| 'run.cancelled'
	| 'review.created'
	| 'review.completed';

/** Type of subscription test pings: they can be created through the control API but are never listed. */
export const TEST_PING_EVENT_TYPE = 'subscription.test';

export const EVENT_TYPES: readonly EventType[] = [
	'document.received',
	'run.completed',
	'run.failed',
	'run.cancelled',
	'review.created',
	'review.completed',
];

/** A child run started by an `awaiting_children` step. */
export interface ChildSpec {
	/** Default `fan_out_child`. */
	kind?: 'fan_out_child' | 'sub_workflow_call';
	/** Workflow the child runs (a sub-workflow); default: the parent's workflow. */
	workflowId?: string;
	/** Steps of the child; default `[{status:'running', ms:50}, {status:'completed'}]`. */
	script?: ScriptStep[];
}

/**
 * One step of a run script. The run shows `status` from the moment it enters the step.
 *
 * How long a step lasts:
 * - `completed` / `failed` / `cancelled`: final, the run stays there.
 * - `review`: creates a review task and stays until the task is decided through the
 *   control API (`decideReviewTask`), or, with `ms`, is decided automatically after `ms`
 *   (`decision`, default `approved`).
 * - `awaiting_children`: starts `children` and stays until every child is final
 *   (children are not listed among the document's runs).
 * - any other status (`queued`, `running`, `waiting`, or an unknown one such as
 *   `paused_for_audit`): lasts `ms`; without `ms` it stays until `advanceRun` is called.
 * A script that ends on a non-final step stays there.
 */
export interface ScriptStep {
	status: string;
	ms?: number;
	/** Review step name; a second review step with the same name in a run makes `round` 2. Default `review`. */
	step?: string;
	/** Automatic decision of a timed review step (`ms` set). Default `approved`. */
	decision?: 'approved' | 'rejected';
	/** Steps that replace the rest of the script when this review is rejected. */
	ifRejected?: ScriptStep[];
	/** For `awaiting_children`: a count (fan-out children with the default child script) or specs. */
	children?: number | ChildSpec[];
	/** For `failed` (code and message) and `cancelled` (code, optional message). */
	error?: { code: string; message?: string };
	/** Credits billed, set when the run enters this step. Default on final steps: 1 for completed, 0 otherwise. */
	billedCredits?: number;
}

/** How a triggered run behaves. */
export interface RunScript {
	steps: ScriptStep[];
	/** The run id from the trigger answers 404 until this many ms after the trigger. */
	startDelayMs?: number;
	/**
	 * The run never starts: its id answers 404 forever; the document status becomes this value
	 * (after `startDelayMs`, default immediately).
	 */
	neverStarts?: 'failed' | 'cancelled' | 'held';
	/** Outputs of this run, replacing the workflow's. */
	outputs?: OutputNode[];
	/** Run kind shown (default `full`); any string is allowed to test unknown enum values. */
	kind?: string;
	/** Extra fields merged into the Run JSON (to test that clients keep/ignore unknown fields). */
	extraFields?: Record<string, unknown>;
}

/** A script given as a full RunScript or only as its steps. */
export type RunScriptInput = RunScript | ScriptStep[];

/** A Download Output node of a workflow graph. */
export interface OutputNode {
	nodeId: string;
	contentType?: string;
	filename?: string;
	kind: 'json' | 'text' | 'binary';
	/** JSON value (kind json) or string (kind text). */
	value?: unknown;
	/** Binary content (kind binary). */
	base64?: string;
	/**
	 * Size in bytes: a generated output of exactly this many bytes (binary: byte i = i % 251;
	 * text: 'a' repeated; json: a string value of about this size). Over 10 MB answers 413
	 * without generating anything.
	 */
	sizeBytes?: number;
}

export interface OrgInput {
	/** Default: a new UUID. */
	id?: string;
	name?: string;
	/** Plan includes API access. Default true. */
	apiAccess?: boolean;
	/** Names of extra (non-default) workspaces to create. */
	workspaces?: string[];
}

export interface WorkspaceInfo {
	id: string;
	name: string;
	isDefault: boolean;
}

export interface OrgInfo {
	id: string;
	name: string;
	apiAccess: boolean;
	defaultWorkspaceId: string;
	workspaces: WorkspaceInfo[];
}

export interface KeyInput {
	/** Default org `default`. */
	orgId?: string;
	name?: string;
	/** Default: all scopes. */
	scopes?: string[];
	/** Default `prod`. */
	environment?: Environment;
	/** ISO date-time (sandbox clock); null = never expires. */
	expiresOn?: string | null;
	/** Default true. */
	active?: boolean;
}

export interface KeyPatch {
	name?: string;
	scopes?: string[];
	environment?: Environment;
	expiresOn?: string | null;
	active?: boolean;
}

export interface KeyInfo {
	id: string;
	/** The full key (`dwk_` + 32 hex). */
	key: string;
	orgId: string;
	name: string;
	scopes: string[];
	environment: Environment;
	expiresOn: string | null;
	active: boolean;
	createdOn: string;
}

export interface WorkflowInput {
	id?: string;
	/** Default org `default`. */
	orgId?: string;
	/** Default: the org's default workspace. */
	workspaceId?: string;
	name?: string;
	/** Default `prod`. */
	environment?: Environment;
	/** Default true. */
	isEnabled?: boolean;
	/** Automatic-run setting of the webhook trigger; off → triggers answer `held`. Default true. */
	autoRun?: boolean;
	/** Default: all formats. */
	triggerFormats?: string[];
	/** Default: queued 20 ms, running 80 ms, completed. */
	script?: RunScriptInput;
	/** Default: one JSON output node `output`. */
	outputs?: OutputNode[];
}

export interface WorkflowPatch {
	name?: string;
	environment?: Environment;
	isEnabled?: boolean;
	autoRun?: boolean;
	triggerFormats?: string[];
	script?: RunScriptInput;
	outputs?: OutputNode[];
	workspaceId?: string;
}

export interface WorkflowInfo {
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
	createdOn: string;
	updatedOn: string;
	/** Scripts queued for the next triggers (consumed first). */
	pendingScripts: number;
}

export interface RunInfo {
	id: string;
	orgId: string;
	workspaceId: string;
	workflowId: string;
	documentId: string;
	rootRunId: string;
	parentRunId: string | null;
	sourceRunId: string | null;
	kind: string;
	status: string;
	stepIndex: number;
	steps: ScriptStep[];
	/** False while the run is still answering 404 (start delay). */
	visible: boolean;
	visibleOn: string;
	startedOn: string | null;
	completedOn: string | null;
	billedCredits: number;
	error: { code: string; message?: string } | null;
	reference: string | null;
	childRunIds: string[];
	outputs: OutputNode[];
	/** The review task the run is waiting for, if any. */
	reviewTaskId: string | null;
}

export interface RunPatch {
	status?: string;
	error?: { code: string; message?: string } | null;
	billedCredits?: number;
}

export interface CreateRunInput {
	kind?: string;
	sourceRunId?: string;
	script?: RunScriptInput;
}

export interface ReviewTaskInfo {
	id: string;
	runId: string;
	rootRunId: string;
	workflowId: string;
	documentId: string;
	status: string;
	round: number;
	step: string;
	createdOn: string;
	completedOn: string | null;
	decision: 'approved' | 'rejected' | null;
	orgId: string;
	workspaceId: string;
}

export interface DocumentInfo {
	id: string;
	orgId: string;
	workspaceId: string;
	workflowId: string;
	status: string;
	statusReason: string | null;
	filename: string;
	contentType: string;
	format: string | null;
	sizeBytes: number;
	sha256: string;
	/** Base64 of the first 4 KB of the file. */
	headBase64: string;
	reference: string | null;
	createdOn: string;
	runIds: string[];
	/** Path of the stored original file. */
	filePath: string;
}

export interface DocumentFilter {
	orgId?: string;
	workflowId?: string;
}

export interface EventInput {
	type: string;
	/** Default `prod`. */
	environment?: Environment;
	data?: Record<string, unknown>;
	/** Default: now (sandbox clock). The id is derived from it. */
	createdOn?: string;
	/** Visible from createdOn + commitDelayMs. Default 0. */
	commitDelayMs?: number;
}

export interface EventInfo {
	id: string;
	type: string;
	createdOn: string;
	environment: Environment;
	data: Record<string, unknown>;
	orgId: string;
	commitOn: string;
	committed: boolean;
}

export interface EventFilter {
	orgId?: string;
	environment?: Environment;
	type?: string;
	/** Default true. */
	includeUncommitted?: boolean;
}

export interface CreateEventsResult {
	count: number;
	firstId: string | null;
	lastId: string | null;
	/** Only when `returnIds` was asked for. */
	ids?: string[];
}

export interface ClockInfo {
	now: string;
	nowMs: number;
	offsetMs: number;
}

export interface RateLimit {
	/** Requests allowed per window. */
	limit: number;
	windowMs: number;
}

export interface RateLimitsInput {
	/** Default org `default`. */
	orgId?: string;
	/** null or omitted = unlimited. */
	reads?: RateLimit | null;
	triggers?: RateLimit | null;
	originals?: RateLimit | null;
	/** `Retry-After` as seconds (default) or as an HTTP date. */
	retryAfterFormat?: 'seconds' | 'date';
}

export type FaultKind =
	| 'status5xx'
	| 'drop'
	| 'dropAfterProcess'
	| 'latency'
	| 'rate429'
	| 'badBody';

export interface FaultRule {
	id?: string;
	/** Which public origin; default both. */
	origin?: 'api' | 'files';
	/** Default any method. */
	method?: string;
	/** Matches the path (without query) by prefix, e.g. `/workflows/` or `/runs`. */
	pathPrefix?: string;
	kind: FaultKind;
	/** For status5xx: 500 (default), 502 or 503. For badBody: any status (default 200). */
	status?: number;
	/** For badBody: the Content-Type sent (default `text/plain; charset=utf-8`). */
	contentType?: string;
	/** For badBody: the raw body sent as it is (default empty), e.g. broken JSON or an HTML error page. */
	body?: string;
	/** For badBody: a Location header, to answer with a redirect. */
	location?: string;
	/** For latency. */
	ms?: number;
	/** For rate429: seconds (default 1). */
	retryAfter?: number;
	/** For rate429: send Retry-After as an HTTP date. */
	retryAfterAsDate?: boolean;
	/** Applies to the next `count` matching requests only. */
	count?: number;
	/** Applies with this probability (seeded PRNG). Without count and probability: every match. */
	probability?: number;
	/** PRNG seed (default 1). */
	seed?: number;
}

export interface FaultInfo extends FaultRule {
	id: string;
	/** How many requests this rule has hit. */
	hits: number;
	/** Remaining count, if count-based. */
	remaining: number | null;
}

export interface RequestLogEntry {
	seq: number;
	origin: 'api' | 'files';
	method: string;
	/** Path and query as received. */
	path: string;
	/** Lower-cased header names. */
	headers: Record<string, string | string[]>;
	/** Status sent, or null when the socket was dropped without a response. */
	status: number | null;
	/** Status the processing produced, even if the response was dropped. */
	processedStatus: number | null;
	dropped: boolean;
	fault: FaultKind | null;
	correlationId: string;
	/** Sandbox clock, ISO. */
	time: string;
	/** Real time, ms since epoch. */
	realTimeMs: number;
}

export interface RequestFilter {
	origin?: 'api' | 'files';
	method?: string;
	pathPrefix?: string;
	/** Only entries with seq greater than this. */
	afterSeq?: number;
}

export interface SandboxSettings {
	/** Commit delay of events the sandbox generates itself (runs, documents, reviews). Default 0. */
	eventCommitDelayMs?: number;
	/** Lifetime of original-file links. Default 300000 (5 minutes). */
	originalLinkTtlMs?: number;
	/** Maximum inline output size. Default 10 MB (10 * 1024 * 1024). */
	maxOutputBytes?: number;
	/** Real time each answered page of `GET /events` takes (a slow API, or a large account). Default 0. */
	eventPageLatencyMs?: number;
	/**
	 * Sandbox-clock time each answered page of `GET /events` moves the clock forward (after
	 * the page is evaluated): a long read during which the oldest events leave the 7-day
	 * window, with every due state change applied as `POST /clock/advance` does. Default 0.
	 */
	eventPageClockAdvanceMs?: number;
	/** Whether answers carry a `Date` header (the API's clock). Default true; the spec does not promise one. */
	sendDateHeader?: boolean;
	/** Whether `run.*` events' `data` names the run (`runId`, `documentId`). Default true; false: an API whose events name no run. */
	runEventsNameRun?: boolean;
}

export interface SandboxInfo {
	baseUrl: string;
	fileBaseUrl: string;
	controlUrl: string;
	apiKey: string;
	apiKeyId: string;
	defaultOrgId: string;
	defaultWorkspaceId: string;
	defaultWorkflowId: string;
}
