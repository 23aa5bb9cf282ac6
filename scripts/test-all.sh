#!/usr/bin/env bash
# npm run test:all (what .ci/run runs): the type check, then what the end-to-end suites need
# (scripts/e2e/prepare.sh: Debian packages, the n8n installs, the build; each skipped when there),
# then the jest tests of both tiers, the e2e suite and the queue-mode suite. Each part prints its
# duration as a `[timing]` line. TEST_ALL_OVERLAP says which parts run at the same time:
#   suites (default)  the jest tests, then the e2e and queue-mode suites side by side
#   all               all three side by side
#   none              one after another
# A part that runs beside another writes its output to $E2E_CACHE/logs/<part>.log, printed whole
# when it ends. Extra arguments: none (use the suites' own scripts for a subset).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/timing.sh
overlap="${TEST_ALL_OVERLAP:-suites}"
logs="${E2E_CACHE:-$PWD/.e2e}/logs"
mkdir -p "$logs"

unit() { DW_TEST_TIER=all npx jest --ci; }
e2e() { bash scripts/e2e/ci-e2e.sh; }
queue() { bash scripts/e2e/ci-queue.sh; }

# parts <name>...: runs the named parts side by side, each into its own log (printed whole when it
# ends); fails when any failed, after all have ended.
parts() {
  local name pids=() failed=()
  for name in "$@"; do
    echo "== test:all: $name running beside the others (log: $logs/$name.log)"
    ( timed "test:all $name" "$name" >"$logs/$name.log" 2>&1 ) &
    pids+=("$!:$name")
  done
  local entry
  for entry in "${pids[@]}"; do
    name="${entry##*:}"
    wait "${entry%%:*}" || failed+=("$name")
    echo "== test:all: $name ended; its output:"
    cat "$logs/$name.log"
  done
  if ((${#failed[@]})); then echo "test:all: failed: ${failed[*]}"; return 1; fi
}

timed "test:all typecheck" npm run typecheck
timed "test:all prepare" bash scripts/e2e/prepare.sh e2e queue
export E2E_PREPARED=1

case "$overlap" in
  none) timed "test:all unit" unit; timed "test:all e2e" e2e; timed "test:all queue" queue ;;
  suites) timed "test:all unit" unit; timed "test:all e2e and queue" parts e2e queue ;;
  all) timed "test:all unit, e2e and queue" parts unit e2e queue ;;
  *) echo "TEST_ALL_OVERLAP=$overlap: use suites, all or none" >&2; exit 2 ;;
esac
