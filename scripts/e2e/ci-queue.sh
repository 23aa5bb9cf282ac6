#!/usr/bin/env bash
# CI queue-mode end-to-end run (npm run test:e2e:queue:ci; scripts/test-all.sh runs it after
# preparing once), on a fresh Debian machine: prepare.sh installs Debian's redis-server and
# postgresql, the n8n 2.41.1 install (user-level cache) and builds; then
# jest -c test/e2e-queue/jest.queue.config.js: Redis and a throw-away PostgreSQL on loopback, an
# n8n main and two workers, the sandbox. Every process the test starts is stopped at its end, also
# on failure; a trap here ends any process group the run left behind (recorded by pid, never by
# name). Env: E2E_PREPARED=1 (skip prepare.sh); extra arguments go to jest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/timing.sh

if [[ "${E2E_PREPARED:-0}" != "1" ]]; then
  timed "e2e-queue prepare" bash scripts/e2e/prepare.sh queue
fi

echo "== queue-mode suite (jest -c test/e2e-queue/jest.queue.config.js)"
queue_dir="${E2E_CACHE:-$PWD/.e2e}/queue"
jest_pid=""
cleanup() {
  # The test stops what it starts; this only catches a killed jest. Process groups it left
  # (redis, postgres, n8n main/workers run detached, each its own group) are found by the
  # scratch folders they run in (their working directory under .e2e/queue/), never by a broad name.
  if [[ -n "$jest_pid" ]] && kill -0 "$jest_pid" 2>/dev/null; then kill -TERM "$jest_pid" 2>/dev/null || true; sleep 5; kill -KILL "$jest_pid" 2>/dev/null || true; fi
  # PostgreSQL may run in a folder of the system temp folder, linked from $queue_dir/pg (queue.js).
  local pg_dir=""; [[ -L "$queue_dir/pg" ]] && pg_dir="$(readlink -f "$queue_dir/pg")/"
  for d in /proc/[0-9]*; do
    cwd="$(readlink "$d/cwd" 2>/dev/null || true)"
    [[ "$cwd/" == "$queue_dir/"* || ( -n "$pg_dir" && "$cwd/" == "$pg_dir"* ) ]] || continue
    pgid="$(ps -o pgid= -p "${d#/proc/}" | tr -d ' ')"; [[ -n "$pgid" ]] && kill -KILL "-$pgid" 2>/dev/null || true
  done
}
trap cleanup EXIT
run_suite() {
  E2E_SKIP_BUILD=1 npx jest -c test/e2e-queue/jest.queue.config.js --ci "$@" &
  jest_pid=$!
  wait "$jest_pid"
}
timed "e2e-queue suite" run_suite "$@"
