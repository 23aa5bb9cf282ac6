#!/usr/bin/env bash
# What the end-to-end suites need, on a fresh machine with nothing installed by hand, each part
# skipped when already there: Debian's chromium (browser test), redis-server and postgresql (queue
# mode), the n8n installs of the lines in E2E_N8N (user-level cache, scripts/e2e/n8n-install.js,
# both lines at once), and `npm run build`. Run by scripts/test-all.sh once, and by ci-e2e.sh and
# ci-queue.sh when run alone. Usage: prepare.sh [e2e] [queue] (default both).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/timing.sh
parts="${*:-e2e queue}"

if [[ ! -d node_modules/jest ]]; then
  timed "prepare npm ci (dependencies missing)" npm ci --no-audit --no-fund
fi

need=()
if [[ "$parts" == *e2e* && "${E2E_BROWSER:-1}" != "0" && ! -x "${CHROMIUM_PATH:-}" ]] && ! command -v chromium >/dev/null 2>&1; then
  # A browser named by CHROMIUM_PATH (e.g. the GitHub runner's Chrome) needs no apt install.
  need+=(chromium)
fi
if [[ "$parts" == *queue* ]]; then
  command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
  ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
fi
apt_install() {
  local SUDO="" made_policy=0
  [[ "$(id -u)" != "0" ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  # policy-rc.d: the packages' own services are not started (the tests run their own, on free ports).
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    made_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
  if [[ "$made_policy" == 1 ]]; then $SUDO rm -f /usr/sbin/policy-rc.d; fi
}
if ((${#need[@]})); then
  timed "prepare apt-get install ${need[*]}" apt_install "${need[@]}"
fi

# The lines to install: E2E_N8N's for the e2e suite, line 2 for queue mode.
lines=""
[[ "$parts" == *e2e* ]] && lines="${E2E_N8N:-2,1}"
[[ "$parts" == *queue* && ",$lines," != *",2,"* ]] && lines="${lines:+$lines,}2"
install_lines() {
  local logs="${E2E_CACHE:-$PWD/.e2e}/logs" pids=() entry pid line
  mkdir -p "$logs"
  # Each install is mostly network and disk: both at once, logs kept apart.
  for line in ${lines//,/ }; do
    node scripts/e2e/n8n-install.js "$line" >"$logs/install-$line.log" 2>&1 &
    pids+=("$!:$line")
  done
  for entry in "${pids[@]}"; do
    pid="${entry%%:*}"; line="${entry##*:}"
    if ! wait "$pid"; then
      echo "n8n line $line failed to install:"; tail -50 "$logs/install-$line.log"; return 1
    fi
    grep -h "^\[timing\]" "$logs/install-$line.log" || tail -1 "$logs/install-$line.log"
  done
}
timed "prepare n8n installs (${lines})" install_lines

timed "prepare build" npm run build
