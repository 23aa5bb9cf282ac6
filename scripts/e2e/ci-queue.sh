#!/usr/bin/env bash
# CI queue-mode end-to-end run, for .ci/run (works on a fresh Debian machine):
#   1. Debian's redis-server and postgresql (apt-get, when missing);
#   2. the cached n8n 2.41.1 install on Node 24 (scripts/e2e/install-n8n.sh 2; ~4 min uncached);
#   3. npm run build, then jest -c test/e2e-queue/jest.queue.config.js (~4 min): Redis and a
#      throw-away PostgreSQL on loopback, an n8n main and two workers, the sandbox.
# Every process the test starts is stopped at its end, also on failure; a trap here ends any
# process group the run left behind (recorded by pid, never by name).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
t0=$SECONDS
step() { echo "== [e2e-queue $((SECONDS - t0)) s] $*"; }

SUDO=""; [[ "$(id -u)" != "0" ]] && SUDO="sudo"
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
if ((${#need[@]})); then
  step "apt-get install ${need[*]}"
  $SUDO apt-get update -qq
  # policy-rc.d: the packages' own services are not started (the test runs its own, on free ports).
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null; $SUDO chmod +x /usr/sbin/policy-rc.d; made_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  [[ "${made_policy:-0}" == 1 ]] && $SUDO rm -f /usr/sbin/policy-rc.d
fi

if [[ ! -d node_modules/jest ]]; then
  step "npm ci (dependencies missing)"
  npm ci --no-audit --no-fund
fi

step "n8n 2.41.1 install (cached when done before)"
mkdir -p .e2e
if ! bash scripts/e2e/install-n8n.sh 2 >.e2e/install-2.log 2>&1; then
  echo "n8n install failed:"; tail -50 .e2e/install-2.log; exit 1
fi
tail -1 .e2e/install-2.log

step "build"
npm run build

step "queue-mode suite (jest -c test/e2e-queue/jest.queue.config.js)"
jest_pid=""
cleanup() {
  # The test stops what it starts; this only catches a killed jest. Process groups it left
  # (redis, postgres, n8n main/workers run detached, each its own group) are found by the
  # scratch folders they run in (their working directory under .e2e/queue/), never by a broad name.
  if [[ -n "$jest_pid" ]] && kill -0 "$jest_pid" 2>/dev/null; then kill -TERM "$jest_pid" 2>/dev/null || true; sleep 5; kill -KILL "$jest_pid" 2>/dev/null || true; fi
  for d in /proc/[0-9]*; do
    cwd="$(readlink "$d/cwd" 2>/dev/null || true)"
    [[ "$cwd" == "$PWD/.e2e/queue/"* ]] || continue
    pgid="$(ps -o pgid= -p "${d#/proc/}" | tr -d ' ')"; [[ -n "$pgid" ]] && kill -KILL "-$pgid" 2>/dev/null || true
  done
}
trap cleanup EXIT
E2E_SKIP_BUILD=1 npx jest -c test/e2e-queue/jest.queue.config.js --ci "$@" &
jest_pid=$!
wait "$jest_pid"
step "done"
