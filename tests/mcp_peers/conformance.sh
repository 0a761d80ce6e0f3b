#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, server mode, active
# suite) against slurm-mcp's Streamable HTTP transport, with an exact baseline of expected failures.
#
#   conformance.sh [SLURM_MCP_BINARY] [SOURCE_DIR]
#
# Needs tests/mcp_peers/setup.sh to have run (the suite and a Node 22 live in
# ${SLURM_RCA_NPM_CACHE:-$HOME/.cache/slurm-rca/npm-peers}/conformance).
# The server replays fixtures/demo with --conformance-fixtures (the suite's test_* tools) on
# 127.0.0.1:0 (a free port; the server names it on stderr), with sessions by default (see
# EXPECTED-FAILURES.md for why).
# Environment: SLURM_MCP_CONFORMANCE_SESSIONS=off adds --no-sessions and uses the baseline
# expected-failures-no-sessions.yaml; SLURM_MCP_CONFORMANCE_SPEC=2026-07-28 runs the suite's frozen
# 2026-07-28 requirements instead (0.2.0-alpha.12, `--requirements 2026-07-28`, baseline
# expected-failures-2026-07-28.yaml; the stateless era needs no sessions, so the server keeps its
# default); SLURM_MCP_REPLAY=DIR replays another bundle;
# SLURM_MCP_CONFORMANCE_RESULTS=DIR keeps the suite's result files.
# The suite's "Total: N passed, M failed" line is reworded so that a CI log reader does not take it
# for the closing line of the test run (it counts expected failures as failed).
# Exit status: conformance's own (0 when every failure is in the baseline and no entry there
# passes), 2 when the peers or the server cannot be started.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "${2:-$here/../..}" && pwd)"
bin="${1:-$src/build/bin/slurm-mcp}"
cache="${SLURM_RCA_NPM_CACHE:-$HOME/.cache/slurm-rca/npm-peers}"
prefix="$cache/conformance"
node22="$prefix/node_modules/.bin/node"
suite="$prefix/node_modules/@modelcontextprotocol/conformance/dist/index.js"
sessions="${SLURM_MCP_CONFORMANCE_SESSIONS:-on}"
spec="${SLURM_MCP_CONFORMANCE_SPEC:-2025-11-25}"
baseline="$here/expected-failures.yaml"
[[ "$sessions" == off ]] && baseline="$here/expected-failures-no-sessions.yaml"
selection=()  # 0.1.16: the active suite
case "$spec" in
  2025-11-25) ;;
  2026-07-28)
    suite="$prefix/node_modules/conformance-2026-07-28/dist/index.js"
    baseline="$here/expected-failures-2026-07-28.yaml"
    selection=(--requirements 2026-07-28)
    ;;
  *) echo "conformance.sh: SLURM_MCP_CONFORMANCE_SPEC must be 2025-11-25 or 2026-07-28, not $spec" >&2; exit 2 ;;
esac

[[ -x "$bin" ]] || { echo "conformance.sh: no server binary at $bin" >&2; exit 2; }
if [[ ! -x "$node22" || ! -f "$suite" ]]; then
  echo "conformance.sh: the conformance peer is not installed in $prefix; run tests/mcp_peers/setup.sh" >&2
  exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/slurm-mcp-conformance.XXXXXX")"
pid=""
stop_server() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "conformance.sh: server $pid ignored SIGTERM; killing it" >&2
      kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
  fi
  pid=""
}
cleanup() { stop_server; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

args=(serve --http 127.0.0.1:0 --replay "${SLURM_MCP_REPLAY:-$src/fixtures/demo}" --conformance-fixtures)
[[ "$sessions" == off ]] && args+=(--no-sessions)
"$bin" "${args[@]}" 2>"$work/server.err" &
pid=$!

url=""
for _ in $(seq 100); do
  url="$(grep -o 'serving MCP on http://[^ ]*/mcp' "$work/server.err" 2>/dev/null | head -1 | sed 's/^serving MCP on //')"
  [[ -n "$url" ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [[ -z "$url" ]]; then
  echo "conformance.sh: the server did not start; its stderr:" >&2
  cat "$work/server.err" >&2
  exit 2
fi

echo "conformance.sh: @modelcontextprotocol/conformance $("$node22" -p 'require(process.argv[1]).version' "$(dirname "$(dirname "$suite")")/package.json") (spec $spec)" \
     "on node $("$node22" --version) against $url (sessions $sessions, pid $pid), baseline ${baseline#$src/}"
start=$SECONDS
# Node 22 first on PATH: conformance 0.1.16 imports fs.globSync, which Node 20 lacks.
# Run from the scratch folder so the suite's result files never land in the source tree.
(cd "$work" && PATH="$(dirname "$node22"):$PATH" "$node22" "$suite" server \
   --url "$url" "${selection[@]}" --expected-failures "$baseline" -o "$work/results") 2>&1 \
  | sed -e 's/\x1b\[[0-9;]*[A-Za-z]//g' -e 's/^Total: /Conformance scenarios, total: /'
rc=${PIPESTATUS[0]}

# Why each failing scenario failed (and any warning), from the suite's per-scenario checks.json, so
# a CI log says it without the result files.
echo "=== Failed and warning checks (from checks.json) ==="
"$node22" -e '
  const fs = require("fs"), path = require("path");
  const dir = process.argv[1];
  let names = [];
  try { names = fs.readdirSync(dir).sort(); } catch { console.log("(no results written)"); process.exit(0); }
  for (const d of names) {
    const scenario = d.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
    let checks;
    try { checks = JSON.parse(fs.readFileSync(path.join(dir, d, "checks.json"), "utf8")); } catch { continue; }
    for (const c of checks) {
      if (c.status !== "FAILURE" && c.status !== "WARNING") continue;
      const why = (c.errorMessage ?? c.description ?? "").replace(/\s+/g, " ").slice(0, 240);
      console.log(`${c.status} ${scenario} [${c.id}] ${why}`);
    }
  }' "$work/results"
if [[ -n "${SLURM_MCP_CONFORMANCE_RESULTS:-}" ]]; then
  mkdir -p "$SLURM_MCP_CONFORMANCE_RESULTS" && cp -r "$work/results/." "$SLURM_MCP_CONFORMANCE_RESULTS/"
  echo "conformance.sh: result files copied to $SLURM_MCP_CONFORMANCE_RESULTS"
fi

if ! kill -0 "$pid" 2>/dev/null; then
  echo "conformance.sh: the server died during the run; its stderr:" >&2
  cat "$work/server.err" >&2
  [[ $rc -eq 0 ]] && rc=1
fi
stop_server
echo "conformance.sh: conformance exited $rc after $((SECONDS - start)) s"
exit "$rc"
