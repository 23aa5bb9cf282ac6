#!/usr/bin/env bash
# CI end-to-end run (npm run test:e2e:ci; scripts/test-all.sh runs it after preparing once): on a
# fresh machine with nothing installed by hand, prepare.sh installs Debian's chromium, the n8n
# installs (n8n 2.41.1 on Node 24 and 1.123.81 on Node 22, in the user-level cache) and builds;
# then the e2e suite, its files side by side (test/e2e/jest.e2e.config.js), each printing its own
# duration. Env: E2E_N8N=2,1 (lines), E2E_BROWSER=0, E2E_CACHE=<dir> (work folders),
# E2E_N8N_CACHE=<dir> (installs), E2E_PREPARED=1 (skip prepare.sh); extra arguments go to jest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/timing.sh

if [[ "${E2E_PREPARED:-0}" != "1" ]]; then
  timed "e2e prepare" bash scripts/e2e/prepare.sh e2e
fi
echo "== e2e suite (jest -c test/e2e/jest.e2e.config.js)"
timed "e2e suite" env E2E_SKIP_BUILD=1 npx jest -c test/e2e/jest.e2e.config.js --ci "$@"
