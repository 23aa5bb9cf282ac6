#!/usr/bin/env bash
# CI end-to-end run, called by .ci/run after `npm ci` (works on a fresh machine with nothing
# installed by hand): Debian chromium for the browser test, the cached n8n installs
# (n8n 2.41.1 on Node 24 and 1.123.81 on Node 22, under .e2e/ or $E2E_CACHE), then the e2e suite.
# Measured here (2 cores): both n8n installs in parallel 4.5 min when not cached, build 3 s,
# then the suites in name order (n8n 2.x, 1.x, the browser, the trigger under durable poll
# cursors, the AI agent); chromium from apt about 1 min.
# Env: E2E_N8N=2,1 (lines), E2E_BROWSER=0, E2E_CACHE=<dir>; extra arguments go to jest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
t0=$SECONDS
step() { echo "== [e2e $((SECONDS - t0)) s] $*"; }

if [[ ! -d node_modules/jest ]]; then
  step "npm ci (dependencies missing)"
  npm ci --no-audit --no-fund
fi

# A browser named by CHROMIUM_PATH (e.g. the GitHub runner's Chrome) needs no apt install.
if [[ "${E2E_BROWSER:-1}" != "0" && ! -x "${CHROMIUM_PATH:-}" ]] && ! command -v chromium >/dev/null 2>&1; then
  step "apt-get install chromium"
  SUDO=""; [[ "$(id -u)" != "0" ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

# Both installs download in parallel (each is mostly network and disk), logs kept apart.
step "n8n installs (cached when done before)"
CACHE="${E2E_CACHE:-$PWD/.e2e}"
mkdir -p "$CACHE"
pids=()
lines="${E2E_N8N:-2,1}"
for line in ${lines//,/ }; do
  bash scripts/e2e/install-n8n.sh "$line" >"$CACHE/install-$line.log" 2>&1 &
  pids+=("$!:$line")
done
for entry in "${pids[@]}"; do
  pid="${entry%%:*}"; line="${entry##*:}"
  if ! wait "$pid"; then
    echo "n8n line $line failed to install:"; tail -50 "$CACHE/install-$line.log"; exit 1
  fi
  tail -1 "$CACHE/install-$line.log"
done

step "build"
npm run build

step "e2e suite (jest -c test/e2e/jest.e2e.config.js)"
E2E_SKIP_BUILD=1 npx jest -c test/e2e/jest.e2e.config.js --ci "$@"
step "done"
