import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	INodeProperties,
	Icon,
} from 'n8n-workflow';

/** The scope the credential test reads with; see `test` below for why this one. */
export const CREDENTIAL_TEST_SCOPE = 'events:read';

function originOf(url: string): string | undefined {
	try {
		return new URL(url).origin;
	} catch {
		return undefined;
	}
}

/**
 * Where a request is really going: n8n joins `baseURL` and `url` only when `url` is relative.
 */
function targetOrigin(request: IHttpRequestOptions): string | undefined {
	const url = String(request.url ?? '');
	if (/^https?:\/\//i.test(url)) return originOf(url);
	return request.baseURL ? originOf(String(request.baseURL)) : undefined;
}

export class DocumentWorkflowApi implements ICredentialType {
	name = 'documentWorkflowApi';

	displayName = 'Document Workflow API';

	icon: Icon = {
		light: 'file:documentWorkflow.svg',
		dark: 'file:documentWorkflow.dark.svg',
	};

	documentationUrl = 'https://github.com/document-workflow/n8n-nodes-document-workflow#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://api.example.com',
			description:
				'Address of the Document Workflow API, without a version segment. A trailing slash is fine.',
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'Created in the service settings; the full key is shown only once. Sent as the X-Api-Key header.',
		},
		{
			displayName: 'Workspace ID',
			name: 'workspaceId',
			type: 'string',
			default: '',
			description:
				'Optional. Sent as X-Workspace-Id to work in that workspace; leave empty for the default workspace.',
		},
	];

	/**
	 * Adds the key only to requests bound for the configured base URL's origin, so a
	 * request to any other host (such as an original-file link) never carries it, even
	 * if a caller asked for authentication by mistake.
	 */
	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		const apiOrigin = originOf(String(credentials.baseUrl ?? '').trim());
		if (!apiOrigin || targetOrigin(requestOptions) !== apiOrigin) return requestOptions;

		const headers: Record<string, string> = {
			...((requestOptions.headers as Record<string, string> | undefined) ?? {}),
			'X-Api-Key': String(credentials.apiKey ?? ''),
		};
		const workspaceId = String(credentials.workspaceId ?? '').trim();
		if (workspaceId) headers['X-Workspace-Id'] = workspaceId;
		return { ...requestOptions, headers };
	}

	/**
	 * Every endpoint needs a scope, so no request passes for every valid key. The test
	 * lists one event: `events:read` is what the trigger needs, and a 403 here proves
	 * the key itself was accepted (401 is reserved for bad keys), so the 403 message
	 * says the key is valid and names the missing scope instead of calling it invalid.
	 */
	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{String($credentials.baseUrl).trim().replace(/\\/+$/, "")}}',
			url: '/events',
			qs: { pageSize: 1 },
			method: 'GET',
		},
		rules: [
			{
				type: 'responseCode',
				properties: {
					value: 401,
					message:
						'The API key was rejected (401): it is missing, mistyped, expired or deactivated. Create a new key in the service settings and paste it whole.',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 403,
					message: `The API key is valid, but it lacks the ${CREDENTIAL_TEST_SCOPE} scope this test reads with (or the plan has no API access). Operations covered by the key's other scopes still work; add ${CREDENTIAL_TEST_SCOPE} to the key for the trigger node and for this test to pass.`,
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 404,
					message:
						'The Base URL answered 404 for /events: check that it points at the Document Workflow API root (without a version segment).',
				},
			},
		],
	};
}
