/** The credential type both nodes authenticate with; its name is fixed by saved workflows. */
export const CREDENTIAL_TYPE = 'documentWorkflowApi';
