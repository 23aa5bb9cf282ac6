# Sourced by .ci/run and the test scripts: `timed <label> <command...>` runs the command, then
# prints `[timing] <label>: <seconds> s` (with the exit code when it failed) and returns its
# status. scripts/timings.js reads these lines from a CI log into docs/development.md.
timed() {
  local label="$1" t0 rc=0
  shift
  t0=$(date +%s.%N)
  "$@" || rc=$?
  awk -v t0="$t0" -v t1="$(date +%s.%N)" -v label="$label" -v rc="$rc" 'BEGIN {
    printf "[timing] %s: %.1f s%s\n", label, t1 - t0, (rc != 0 ? " (failed, exit " rc ")" : "") }'
  return "$rc"
}
