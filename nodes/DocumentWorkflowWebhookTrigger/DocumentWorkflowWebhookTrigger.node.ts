/**
 * The Document Workflow Webhook Trigger: starts the workflow when the service delivers an
 * event to a subscription set up by hand with this node's URL. A delivery is a signal: the node
 * reads the event list after its own cursor, kept in static data as the polling trigger keeps it,
 * and emits the API's copy of each new event (`reader.ts`, `readPolicy.ts`); n8n answers the
 * delivery once it has saved what the read changed. `delivery.ts` reads the body's ids; the
 * folder's reasoning is in `README.md`.
 */
import type {
	IDataObject,
	IHookFunctions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { CREDENTIAL_TYPE } from '../shared/credentialType';
import { DEFAULT_OVERLAP_MINUTES, startBefore } from '../shared/cursorRead';
import { loadCursor, mergeCursors, storeCursor } from '../shared/eventCursor';
import { EVENTS_PROPERTY, readEventFilter } from '../shared/eventFilter';
import { parseDelivery } from './delivery';
import type { TriggerSettings } from './reader';
import { FRESH_START_LOOK_BACK_MS, WebhookReaders, pageReader } from './reader';

/** The notice's words: the set-up steps (docs/webhook-trigger.md quotes them). */
export const SETUP_NOTICE =
	"Set up by hand: in the Document Workflow service's settings, create a subscription with this node's Production URL (shown above under \"Webhook URLs\") and the event types you want. Deliveries are not signed, so each delivered event is checked against the API's event list and only the API's own copy is emitted, once.";

/** How late the service may list an event after its delivery and still have it emitted (the polling trigger's default window). */
const OVERLAP_MS = DEFAULT_OVERLAP_MINUTES * 60_000;
function settingsOf(ctx: IHookFunctions | IWebhookFunctions): TriggerSettings {
	return {
		filter: readEventFilter(ctx.getNode(), ctx.getNodeParameter('events', [])),
		overlapMs: OVERLAP_MS,
	};
}

/** The status of a delivery's answer: accepted (what it brought is saved; its events may start an execution). */
const ACCEPTED = 202;

/** A plain JSON answer to a request n8n must not process, written at once (n8n then sends nothing itself). */
function answer(ctx: IWebhookFunctions, status: number, body: IDataObject): void {
	const res = ctx.getResponseObject();
	const text = JSON.stringify(body);
	res.writeHead(status, {
		'Content-Type': 'application/json; charset=utf-8',
		'Content-Length': Buffer.byteLength(text),
	});
	res.end(text);
}

export class DocumentWorkflowWebhookTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Document Workflow Webhook Trigger',
		name: 'documentWorkflowWebhookTrigger',
		icon: { light: 'file:documentWorkflow.svg', dark: 'file:documentWorkflow.dark.svg' },
		group: ['trigger'],
		// Version 2 has version 1's parameters and behaviour. It exists for n8n itself: for a start
		// node of version 1, n8n (1.x and 2.x, `parseRequestBody` in its webhook helpers, a legacy of
		// its own Webhook node) evaluates an expression on every request, which on n8n 2.x builds an
		// expression isolate per delivery even with N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true. Saved
		// workflows keep version 1, unchanged.
		version: [1, 2],
		defaultVersion: 2,
		subtitle:
			'={{"Events: " + ($parameter["events"].length ? $parameter["events"].join(", ") : "all")}}',
		description: 'Starts the workflow as soon as the service delivers a Document Workflow event',
		defaults: { name: 'Document Workflow Webhook Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: CREDENTIAL_TYPE, required: true }],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				path: 'webhook',
				// n8n answers after the node returns and n8n has saved the static data (its
				// `live-webhooks` save precedes the answer), with the node's `webhookResponse` as the body
				// (an empty `responseData` selects it). A number, as Express requires; the type names only strings.
				responseCode: ACCEPTED as unknown as string,
				responseData: '',
			},
		],
		properties: [
			{
				displayName: SETUP_NOTICE,
				name: 'notice',
				type: 'notice',
				default: '',
			},
			EVENTS_PROPERTY,
		],
	};

	// The subscription is set up by hand in the service (the API has no endpoint for it), so
	// there is nothing to create or delete; n8n requires the three methods all the same. n8n
	// calls `checkExists` at activation and at every start of an active workflow, after it has
	// registered the webhook, then saves the static data it loaded before: a trigger without a
	// cursor starts one there, looking back a minute, kept together with the cursor and the owed
	// ids of any delivery this process has read for meanwhile, so the save does not take them back.
	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				if (!loadCursor(this)) {
					const start = await startBefore(pageReader(this), FRESH_START_LOOK_BACK_MS);
					const held = WebhookReaders.getInstance().activated(this);
					storeCursor(this, held ? mergeCursors(held.cursor, start) : start, undefined, held?.owed);
				}
				return true;
			},
			async create(this: IHookFunctions): Promise<boolean> {
				return true;
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const parsed = parseDelivery(this.getBodyData() as unknown);
		if (!parsed.ok) {
			answer(this, 400, { error: parsed.message });
			return { noWebhookResponse: true };
		}
		let settings: TriggerSettings;
		try {
			settings = settingsOf(this);
		} catch (error) {
			answer(this, 500, {
				error: `The trigger's settings are invalid: ${(error as Error).message}`,
			});
			return { noWebhookResponse: true };
		}
		// A stated type the filter excludes: the event would not be emitted anyway.
		const types = settings.filter.types;
		const ids = parsed.events
			.filter((event) => !types || event.statedType === undefined || types.has(event.statedType))
			.map((event) => event.id);
		const { events, owes } = await WebhookReaders.getInstance().receive(this, ids, settings);
		// An answered delivery is the service's last word (docs/webhook-trigger.md). One that brought
		// ids still owed is answered by n8n once it has saved them. One that emits is answered here,
		// so n8n saves the cursor as it starts the execution (n8n 2.x saves after it when it answers).
		const webhookResponse = { received: parsed.events.length };
		const workflowData = [events.map((json) => ({ json }))];
		if (events.length === 0) return { webhookResponse };
		if (owes) return { webhookResponse, workflowData };
		answer(this, ACCEPTED, webhookResponse);
		return { noWebhookResponse: true, workflowData };
	}
}
