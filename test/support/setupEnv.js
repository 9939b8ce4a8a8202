// n8n-core writes its instance settings under $N8N_USER_FOLDER/.n8n; keep them out of the home folder.
const { mkdtempSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

process.env.N8N_USER_FOLDER ??= mkdtempSync(path.join(os.tmpdir(), 'idem-n8n-'));
process.env.N8N_DIAGNOSTICS_ENABLED = 'false';
process.env.N8N_LOG_LEVEL ??= 'silent';
