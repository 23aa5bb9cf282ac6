// n8n-core writes its instance settings (an encryption key) into N8N_USER_FOLDER at load time,
// so each test file gets its own folder before n8n-core is imported. It lives inside the run's
// temporary root, which the global teardown removes (see tempFolders.ts).
import { makeTestFileFolder } from './tempFolders';

process.env.N8N_USER_FOLDER ??= makeTestFileFolder('n8n-dw-test-');
process.env.N8N_DIAGNOSTICS_ENABLED = 'false';
process.env.N8N_BINARY_DATA_SIGNING_SECRET ??= 'test-signing-secret';
process.env.N8N_LOG_LEVEL ??= 'silent';
