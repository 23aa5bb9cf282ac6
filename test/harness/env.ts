// n8n-core writes its instance settings (an encryption key) into N8N_USER_FOLDER at load time,
// so each jest worker gets its own temporary folder before n8n-core is imported.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.N8N_USER_FOLDER ??= mkdtempSync(join(tmpdir(), 'n8n-dw-test-'));
process.env.N8N_DIAGNOSTICS_ENABLED = 'false';
process.env.N8N_BINARY_DATA_SIGNING_SECRET ??= 'test-signing-secret';
process.env.N8N_LOG_LEVEL ??= 'silent';
