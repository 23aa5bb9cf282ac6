/**
 * Typed client of the sandbox control API (JSON over HTTP on its own port).
 *
 * Usable from the test process that started the sandbox (`sandbox.control`) or from any
 * other process: `new SandboxControl(controlUrl)`. Every method maps to one control route.
 */
import type {
	ClockInfo,
	CreateEventsResult,
	CreateRunInput,
	DocumentFilter,
	DocumentInfo,
	EventFilter,
	EventInfo,
	EventInput,
	FaultInfo,
	FaultRule,
	KeyInfo,
	KeyInput,
	KeyPatch,
	OrgInfo,
	OrgInput,
	RateLimitsInput,
	RequestFilter,
	RequestLogEntry,
	ReviewTaskInfo,
	RunInfo,
	RunPatch,
	RunScriptInput,
	SandboxInfo,
	SandboxSettings,
	WorkflowInfo,
	WorkflowInput,
	WorkflowPatch,
	WorkspaceInfo,
} from './types';
import type { DeliveryRecord, SubscriptionInfo, SubscriptionInput } from './subscriptions';

export class SandboxControlError extends Error {
	constructor(
		message: string,
		readonly status: number,
		readonly body: unknown,
	) {
		super(message);
		this.name = 'SandboxControlError';
	}
}

function qs(params: object | undefined): string {
	if (!params) return '';
	const search = new URLSearchParams();
	for (const [k, v] of Object.entries(params)) {
		if (v === undefined || v === null) continue;
		search.set(k, String(v));
	}
	const s = search.toString();
	return s ? `?${s}` : '';
}

export class SandboxControl {
	readonly controlUrl: string;

	constructor(controlUrl: string) {
		this.controlUrl = controlUrl.replace(/\/+$/, '');
	}

	private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
		const res = await fetch(`${this.controlUrl}${path}`, {
			method,
			headers: body === undefined ? {} : { 'content-type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await res.text();
		const parsed: unknown = text ? JSON.parse(text) : undefined;
		if (!res.ok) {
			const msg =
				parsed && typeof parsed === 'object' && 'error' in parsed
					? String((parsed as { error: unknown }).error)
					: text;
			throw new SandboxControlError(
				`sandbox control ${method} ${path} -> ${res.status}: ${msg}`,
				res.status,
				parsed,
			);
		}
		return parsed as T;
	}

	// ---- whole sandbox ----

	/** Back to the initial state: same default org, key and workflow ids; clock offset 0; no faults, limits, requests. */
	reset(): Promise<SandboxInfo> {
		return this.call('POST', '/reset', {});
	}

	info(): Promise<SandboxInfo> {
		return this.call('GET', '/info');
	}

	setSettings(settings: SandboxSettings): Promise<Required<SandboxSettings>> {
		return this.call('PUT', '/settings', settings);
	}

	// ---- organizations, workspaces, keys ----

	createOrg(input: OrgInput = {}): Promise<OrgInfo> {
		return this.call('POST', '/orgs', input);
	}

	updateOrg(orgId: string, patch: { name?: string; apiAccess?: boolean }): Promise<OrgInfo> {
		return this.call('PATCH', `/orgs/${encodeURIComponent(orgId)}`, patch);
	}

	getOrg(orgId: string): Promise<OrgInfo> {
		return this.call('GET', `/orgs/${encodeURIComponent(orgId)}`);
	}

	createWorkspace(orgId: string, input: { name?: string } = {}): Promise<WorkspaceInfo> {
		return this.call('POST', `/orgs/${encodeURIComponent(orgId)}/workspaces`, input);
	}

	createKey(input: KeyInput = {}): Promise<KeyInfo> {
		return this.call('POST', '/keys', input);
	}

	updateKey(keyId: string, patch: KeyPatch): Promise<KeyInfo> {
		return this.call('PATCH', `/keys/${encodeURIComponent(keyId)}`, patch);
	}

	deleteKey(keyId: string): Promise<{ deleted: true }> {
		return this.call('DELETE', `/keys/${encodeURIComponent(keyId)}`);
	}

	listKeys(orgId?: string): Promise<KeyInfo[]> {
		return this.call('GET', `/keys${qs({ orgId })}`);
	}

	// ---- workflows ----

	createWorkflow(input: WorkflowInput = {}): Promise<WorkflowInfo> {
		return this.call('POST', '/workflows', input);
	}

	updateWorkflow(workflowId: string, patch: WorkflowPatch): Promise<WorkflowInfo> {
		return this.call('PATCH', `/workflows/${encodeURIComponent(workflowId)}`, patch);
	}

	getWorkflow(workflowId: string): Promise<WorkflowInfo> {
		return this.call('GET', `/workflows/${encodeURIComponent(workflowId)}`);
	}

	listWorkflows(): Promise<WorkflowInfo[]> {
		return this.call('GET', '/workflows');
	}

	/** The next `count` triggers of the workflow (default 1) use this script instead of the workflow's. */
	setNextScripts(workflowId: string, script: RunScriptInput, count = 1): Promise<WorkflowInfo> {
		return this.call('POST', `/workflows/${encodeURIComponent(workflowId)}/next-scripts`, {
			script,
			count,
		});
	}

	clearNextScripts(workflowId: string): Promise<WorkflowInfo> {
		return this.call('DELETE', `/workflows/${encodeURIComponent(workflowId)}/next-scripts`);
	}

	// ---- documents and runs ----

	listDocuments(filter: DocumentFilter = {}): Promise<DocumentInfo[]> {
		return this.call('GET', `/documents${qs(filter)}`);
	}

	countDocuments(filter: DocumentFilter = {}): Promise<number> {
		return this.call<{ count: number }>('GET', `/documents/count${qs(filter)}`).then(
			(r) => r.count,
		);
	}

	getDocument(documentId: string): Promise<DocumentInfo> {
		return this.call('GET', `/documents/${encodeURIComponent(documentId)}`);
	}

	/** Runs a held document (as a person would): creates a top-level run, visible at once. */
	startHeldDocument(documentId: string, script?: RunScriptInput): Promise<RunInfo> {
		return this.call('POST', `/documents/${encodeURIComponent(documentId)}/start`, { script });
	}

	/** Adds a top-level run of any kind to a document (e.g. `restart_from_node` with `sourceRunId`). */
	createRun(documentId: string, input: CreateRunInput = {}): Promise<RunInfo> {
		return this.call('POST', `/documents/${encodeURIComponent(documentId)}/runs`, input);
	}

	listRuns(filter: { documentId?: string; workflowId?: string } = {}): Promise<RunInfo[]> {
		return this.call('GET', `/runs${qs(filter)}`);
	}

	getRun(runId: string): Promise<RunInfo> {
		return this.call('GET', `/runs/${encodeURIComponent(runId)}`);
	}

	/** Sets run fields directly (no script step change). */
	setRunState(runId: string, patch: RunPatch): Promise<RunInfo> {
		return this.call('PATCH', `/runs/${encodeURIComponent(runId)}`, patch);
	}

	/** Moves the run to its next script step now (for steps without `ms`). */
	advanceRun(runId: string): Promise<RunInfo> {
		return this.call('POST', `/runs/${encodeURIComponent(runId)}/advance`, {});
	}

	// ---- review tasks ----

	listReviewTasks(
		filter: { runId?: string; workflowId?: string; status?: string; orgId?: string } = {},
	): Promise<ReviewTaskInfo[]> {
		return this.call('GET', `/review-tasks${qs(filter)}`);
	}

	/** Decides a task as a person in the review queue would; the run resumes. */
	decideReviewTask(taskId: string, decision: 'approved' | 'rejected'): Promise<ReviewTaskInfo> {
		return this.call('POST', `/review-tasks/${encodeURIComponent(taskId)}/decide`, { decision });
	}

	/** Sets any task status (e.g. `in_review`, `resume_failed`); approved/rejected behave as decideReviewTask. */
	setReviewTaskStatus(taskId: string, status: string): Promise<ReviewTaskInfo> {
		return this.call('PATCH', `/review-tasks/${encodeURIComponent(taskId)}`, { status });
	}

	// ---- clock ----

	getClock(): Promise<ClockInfo> {
		return this.call('GET', '/clock');
	}

	/** Moves the sandbox clock forward; every due state change is applied before this returns. */
	advanceClock(ms: number): Promise<ClockInfo> {
		return this.call('POST', '/clock/advance', { ms });
	}

	// ---- rate limits and faults ----

	setRateLimits(input: RateLimitsInput): Promise<RateLimitsInput> {
		return this.call('PUT', '/rate-limits', input);
	}

	/** Replaces all fault rules. */
	setFaults(rules: FaultRule[]): Promise<FaultInfo[]> {
		return this.call('PUT', '/faults', { rules });
	}

	addFault(rule: FaultRule): Promise<FaultInfo> {
		return this.call('POST', '/faults', rule);
	}

	listFaults(): Promise<FaultInfo[]> {
		return this.call('GET', '/faults');
	}

	clearFaults(): Promise<{ cleared: true }> {
		return this.call('DELETE', '/faults');
	}

	// ---- request log ----

	getRequests(filter: RequestFilter = {}): Promise<RequestLogEntry[]> {
		return this.call('GET', `/requests${qs(filter)}`);
	}

	clearRequests(): Promise<{ cleared: true }> {
		return this.call('DELETE', '/requests');
	}

	/** True when any request to the file-link origin carried an `X-Api-Key` header (since start/reset). */
	fileOriginSawApiKey(): Promise<boolean> {
		return this.call<{ sawApiKey: boolean }>('GET', '/files-origin').then((r) => r.sawApiKey);
	}

	// ---- events ----

	/** All events (by default committed or not), oldest first by id. */
	listEvents(filter: EventFilter = {}): Promise<EventInfo[]> {
		return this.call('GET', `/events${qs(filter)}`);
	}

	/** Bulk creation (50,000 in well under a second). */
	createEvents(
		events: EventInput[],
		options: { orgId?: string; returnIds?: boolean } = {},
	): Promise<CreateEventsResult> {
		return this.call('POST', '/events/bulk', { events, ...options });
	}

	// ---- subscriptions (subscriptions.ts) ----

	/** Registers a URL: each event created from now on is delivered to it (see SubscriptionInput for repeats, delays, batches and pings). */
	addSubscription(input: SubscriptionInput): Promise<SubscriptionInfo> {
		return this.call('POST', '/subscriptions', input);
	}

	listSubscriptions(): Promise<SubscriptionInfo[]> {
		return this.call('GET', '/subscriptions');
	}

	removeSubscription(id: string): Promise<{ deleted: boolean }> {
		return this.call('DELETE', `/subscriptions/${encodeURIComponent(id)}`);
	}

	/** Sends a test ping (never listed) to the subscription's URL now; returns the ping's id. */
	pingSubscription(id: string): Promise<{ id: string }> {
		return this.call('POST', `/subscriptions/${encodeURIComponent(id)}/ping`);
	}

	/** Every delivery so far (each copy of a repeated one too), in the order they were queued. */
	getDeliveries(filter: { subscriptionId?: string } = {}): Promise<DeliveryRecord[]> {
		return this.call(
			'GET',
			`/deliveries${filter.subscriptionId ? `?subscriptionId=${encodeURIComponent(filter.subscriptionId)}` : ''}`,
		);
	}
}
