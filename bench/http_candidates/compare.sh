#!/usr/bin/env bash
# Issue #20's comparison of HTTP cores on one workload, side by side in one run: slurm-mcp's
# current server (cpp-httplib, a thread per connection) and the two candidates, each answering
# the same stateless tools/call slurm_query nodes on the replay back-end of fixtures/demo.
# Driven by wrk (C, keep-alive, one thread) with post.lua, which checks every answer.
# Rows: 1, 8 and 64 connections; slowloris (256 half-open connections held by hold.py, one
# client measured); fleet (1,000 idle keep-alive connections held, 64 clients measured).
# Each row 3 runs of SECONDS s; the table gives the median and min-max. Server CPU per call is
# the server's utime+stime over the run (from /proc, 10 ms ticks) divided by the answers.
#   bench/http_candidates/compare.sh BUILD_DIR [SECONDS]
set -u
build=${1:?usage: compare.sh BUILD_DIR [SECONDS]}
seconds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
raw=$(mktemp)
ulimit -n 8192
port=31480
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -f "$raw"; }
trap cleanup EXIT

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run_wrk() {  # SERVER ROW PID CONNS
  local server=$1 row=$2 pid=$3 conns=$4 before after out line
  for rep in 1 2 3; do
    before=$(ticks "$pid")
    out=$(wrk -t1 -c"$conns" -d"${seconds}s" --timeout 5s -s "$here/post.lua" \
          "http://127.0.0.1:$port/mcp" 2>&1)
    after=$(ticks "$pid")
    line=$(grep '^CHECK' <<<"$out")
    if [[ -z "$line" ]]; then echo "wrk failed: $out" >&2; continue; fi
    echo "$server $row $line cpu_ticks=$((after - before)) seconds=$seconds" >>"$raw"
  done
}

measure() {  # NAME COMMAND... (@PORT@ in it: the port)
  local name=$1; shift
  port=$((port + 1))
  local args=("${@//@PORT@/$port}")
  "${args[@]}" >/dev/null 2>&1 &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && break
    sleep 0.1
  done
  export MCP_SESSION=""
  if [[ $name == reference ]]; then  # stateful: one session for the run, as a client would
    MCP_SESSION=$(curl -s -D - -o /dev/null -X POST -H 'Content-Type: application/json' \
      -H 'Accept: application/json, text/event-stream' \
      --data '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"compare","version":"1"}}}' \
      "http://127.0.0.1:$port/mcp" | tr -d '\r' | awk -F': ' 'tolower($1)=="mcp-session-id" {print $2}')
    curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
      -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $MCP_SESSION" \
      -H 'MCP-Protocol-Version: 2025-06-18' \
      --data '{"jsonrpc":"2.0","method":"notifications/initialized"}' "http://127.0.0.1:$port/mcp"
  fi
  local probe
  probe=$(curl -s -X POST -H "Mcp-Session-Id: $MCP_SESSION" -H 'Content-Type: application/json' \
          -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-06-18' \
          --data '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slurm_query","arguments":{"topic":"nodes"}}}' \
          "http://127.0.0.1:$port/mcp")
  if [[ "$probe" != *structuredContent* ]]; then
    echo "$name does not answer the call: ${probe:0:200}" >&2; return
  fi
  echo "measuring $name (pid $pid, port $port)" >&2
  for c in 1 8 64; do run_wrk "$name" "c$c" "$pid" "$c"; done
  python3 "$here/hold.py" half "$port" 256 >/dev/null &
  local hold=$!; sleep 2
  run_wrk "$name" slowloris "$pid" 1
  kill "$hold"; wait "$hold" 2>/dev/null
  timeout 60 python3 "$here/hold.py" idle "$port" 1000 >/dev/null &
  hold=$!; sleep 8
  run_wrk "$name" fleet "$pid" 64
  kill "$hold"; wait "$hold" 2>/dev/null
  echo "$name hwm $(awk '/VmHWM/ {print $2}' "/proc/$pid/status")" >>"$raw"
  kill "$pid"; wait "$pid" 2>/dev/null
}

measure httplib "$build/bin/slurm-mcp" serve --replay "$root/fixtures/demo" --no-sessions \
  --skills '' --http 127.0.0.1:@PORT@
measure mhd "$build/bin/mhd_candidate" --bundle "$root/fixtures/demo" --timeout 30 --port @PORT@
measure beast "$build/bin/beast_candidate" --bundle "$root/fixtures/demo" --timeout 30 \
  --port @PORT@
npm_cache=${SLURM_RCA_NPM_CACHE:-$HOME/.cache/slurm-rca/npm-peers}
if [[ -d $npm_cache/sdk/node_modules ]]; then
  measure reference node "$root/bench/mcp_reference/server.mjs" --http 127.0.0.1:@PORT@ \
    --bundle "$root/fixtures/demo" --sdk-prefix "$npm_cache/sdk"
else
  echo "no TypeScript SDK in $npm_cache/sdk (tests/mcp_peers/setup.sh): the reference row is left out" >&2
fi
python3 "$here/summarize.py" <"$raw"
