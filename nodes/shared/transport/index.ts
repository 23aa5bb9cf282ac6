/**
 * The API client both nodes use: one request function (`apiRequest`) and what it is made
 * of, one concern per module:
 *
 * - `request.ts`: sending, waiting out rate limits and retrying what is safe to retry
 * - `errors.ts`: problem+json and network failures turned into errors with advice
 * - `rateLimits.ts`: the separate read, trigger and original-file limits, `Retry-After`, and
 *   the reads on their way that a 429 holds back
 * - `readPacer.ts`: one pace for every read made with an API key in this n8n process
 * - `cancellation.ts`: pauses that end when the execution is cancelled
 * - `ids.ts` and `url.ts`: ids checked before they reach a path; the credential's base URL
 * - `responses.ts`: header names and bodies as the API sends them
 */
export * from './cancellation';
export * from './errors';
export * from './ids';
export * from './rateLimits';
export * from './readPacer';
export * from './request';
export * from './responses';
export * from './url';
export { CREDENTIAL_TYPE } from '../credentialType';
