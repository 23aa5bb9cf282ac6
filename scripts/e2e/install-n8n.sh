#!/usr/bin/env bash
# The real n8n versions the end-to-end tests, the benchmarks and `npm run dev` use, installed into
# the user-level cache (scripts/e2e/n8n-install.js: keyed by the committed lockfile, checked before
# use, shared by every clone on the machine; E2E_N8N_CACHE moves it):
#
#   scripts/e2e/install-n8n.sh            # both lines (2.x then 1.x)
#   scripts/e2e/install-n8n.sh 2          # the pinned n8n 2.x on Node 24 only
#   scripts/e2e/install-n8n.sh 1          # the pinned n8n 1.x on Node 22 only
#   scripts/e2e/install-n8n.sh check      # what is installed, nothing installed
#
# The pinned versions, their Node majors and npm overrides: n8n-versions.json. N8N2_VERSION /
# N8N1_VERSION install another version.
set -euo pipefail
exec node "$(dirname "${BASH_SOURCE[0]}")/n8n-install.js" "$@"
