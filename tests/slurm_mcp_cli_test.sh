#!/usr/bin/env bash
# Bad input to slurm-mcp gives a one-line error and exit 2, never a crash; the one-shot verbs
# work on the demo bundle; stdio serving exits on EOF and writes only JSON-RPC to stdout.
set -u
bin=$1
root=$2
bundle=$root/fixtures/demo
fails=0
passes=0

check() {  # check CODE DESCRIPTION ONE_LINE(yes|no) -- ARGS...
  local code=$1 what=$2 one=$3; shift 4
  out=$("$bin" "$@" 2>/tmp/mcp_cli_err.$$ </dev/null); rc=$?
  err=$(cat /tmp/mcp_cli_err.$$)
  if [[ $rc -ne $code ]]; then
    echo "FAIL $what: exit $rc, want $code (stdout: ${out:0:200}; stderr: ${err:0:200})"
    fails=$((fails + 1)); return
  fi
  if [[ $one == yes && ( $(printf '%s' "$err" | grep -c '') -ne 1 || -n "$out" ) ]]; then
    echo "FAIL $what: want one stderr line and no stdout: $err / $out"; fails=$((fails + 1)); return
  fi
  passes=$((passes + 1))
}
contains() {
  if [[ "$2" != *"$3"* ]]; then echo "FAIL $1: lacks '$3': ${2:0:300}"; fails=$((fails + 1));
  else passes=$((passes + 1)); fi
}

check 2 "no subcommand" yes --
check 2 "unknown subcommand" yes -- frobnicate
check 2 "serve without a transport" yes -- serve --replay "$bundle"
check 2 "serve with both transports" yes -- serve --stdio --http 127.0.0.1:0
check 2 "serve --http without a port" yes -- serve --http localhost --replay "$bundle"
check 2 "serve --http with a bad port" yes -- serve --http 127.0.0.1:x --replay "$bundle"
check 2 "serve --metrics without a port" yes -- serve --stdio --metrics 9464 --replay "$bundle"
contains "a bad --metrics names the flag" "$err" "--metrics '9464' is not HOST:PORT or :PORT"
check 2 "serve --metrics with a bad port" yes -- serve --http 127.0.0.1:0 --metrics :65536 --replay "$bundle"
check 2 "serve --metrics with an unbracketed IPv6 address" yes -- serve --stdio --metrics ::1:9464 --replay "$bundle"
check 2 "a missing bundle" yes -- overview --replay /nonexistent/bundle
contains "missing bundle names the path" "$err" "/nonexistent/bundle"
check 2 "a relative trusted dir" yes -- overview --trusted-dirs bin
check 2 "a bad log file flag" yes -- overview --log-file slurmctld
check 2 "a bad filter flag" yes -- query queue --filter user --replay "$bundle"
check 2 "a token file that is missing" yes -- serve --http 127.0.0.1:0 --token-file /nonexistent --replay "$bundle"
short=$(mktemp); printf 'short\n' > "$short"
check 2 "a token that is too short" yes -- serve --http 127.0.0.1:0 --token-file "$short" --replay "$bundle"
rm -f "$short"
# gpu_idle's sampling: live only, coherent thresholds, safe names (the dcgm allowlist).
check 2 "gpu sampling on replay" yes -- serve --stdio --replay "$bundle" --gpu-sample-interval 60
check 2 "gpu sampling interval above the max gap" yes -- serve --stdio --gpu-sample-interval 300
check 2 "a dcgm host that is not a safe name" yes -- serve --stdio --gpu-sample-interval 60 --dcgm-host bad/name
check 2 "a gpu node name that is not safe" yes -- serve --stdio --gpu-sample-interval 60 --gpu-node-name 'x y'
check 1 "gpu_idle with sampling off is no evidence" no -- query gpu_idle
contains "gpu_idle says sampling is off" "$out" "GPU sampling is off"
check 2 "call with bad JSON arguments" yes -- call --http 127.0.0.1:1 slurm_query --args '[1]'
check 1 "call with nobody listening" no -- call --http 127.0.0.1:1 slurm_overview

check 0 "tools" no -- tools
contains "tools counts the bytes of tools/list" "$out" "tools/list result: 3 tools"
line=$(printf '%s\n' "$out" | grep '^tools/list result:')
if grep -qF "$line" "$root/README.md"; then passes=$((passes + 1)); else echo "FAIL README does not quote: $line"; fails=$((fails + 1)); fi
# Every topic the server offers (15) is named in the README.
check 0 "tools json" no -- tools --json
topics=$(printf '%s' "$out" | grep -o '"enum":\[[^]]*\]' | head -1 | grep -o '"[a-z_]*"' | tr -d '"' | grep -v '^enum$')
count=0
for t in $topics; do
  count=$((count + 1))
  grep -q "\`$t\`" "$root/README.md" || { echo "FAIL README does not name topic $t"; fails=$((fails + 1)); }
done
if [[ $count -eq 15 ]]; then passes=$((passes + 1)); else echo "FAIL want 15 topics, got $count: $topics"; fails=$((fails + 1)); fi
check 0 "describe" no -- describe accounting
contains "describe explains accounting" "$out" "slurmdbd"
check 1 "describe an unknown topic" no -- describe nope
check 0 "overview of the demo bundle" no -- overview --replay "$bundle"
contains "overview labels replay evidence" "$out" "[replay, "
check 0 "query with a recorded filter" no -- query nodes --filter partition=gpu --replay "$bundle"
check 1 "query a refused filter" no -- query queue --filter 'user=; rm -rf /' --replay "$bundle"
contains "refused filter says why" "$out" "refused"
check 1 "query a frozen database" no -- query accounting --replay "$bundle" --offset 10
contains "no evidence is labelled" "$out" "NO EVIDENCE (timed_out"

# stdio: an initialize then EOF; every stdout line is a JSON-RPC message; exit within 2 s.
start=$(date +%s%N)
lines=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' 'not json' '[1]' \
  | timeout 5 "$bin" serve --stdio --replay "$bundle" 2>/dev/null)
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [[ $rc -ne 0 || $ms -gt 2000 ]]; then echo "FAIL stdio exit on EOF: rc $rc after $ms ms"; fails=$((fails + 1)); else passes=$((passes + 1)); fi
n=$(printf '%s\n' "$lines" | grep -c '^{"')
total=$(printf '%s\n' "$lines" | grep -c '')
if [[ $n -ne 3 || $total -ne 3 ]]; then echo "FAIL stdio stdout: want 3 JSON lines, got $total lines: $lines"; fails=$((fails + 1)); else passes=$((passes + 1)); fi
contains "stdio answers a batch with -32600" "$lines" '-32600'
contains "stdio answers bad JSON with -32700" "$lines" '-32700'

# serve --http, live, on fake Slurm clients (sinfo fails, squeue answers): GET /ready reads
# nothing, says unknown before any call, then each program's last read; SIGTERM exits 0.
fake=$(mktemp -d)
printf '#!/bin/sh\necho "sinfo: error: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n' > "$fake/sinfo"
printf '#!/bin/sh\necho "$(basename "$0") $*" >> "%s/runs"\n' "$fake" > "$fake/squeue"
chmod 755 "$fake/sinfo" "$fake/squeue"
"$bin" serve --http 127.0.0.1:0 --trusted-dirs "$fake" 2> "$fake/err" &
server=$!
port=""
for _ in $(seq 1 100); do
  port=$(grep -o 'serving MCP on http://127.0.0.1:[0-9]*' "$fake/err" | grep -o '[0-9]*$')
  [[ -n $port ]] && break
  sleep 0.05
done
ready() {  # GET /ready over bash's /dev/tcp; prints the body
  exec 3<> "/dev/tcp/127.0.0.1/$port" || return 1
  printf 'GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
  sed -n '/^\r$/,$p' <&3 | tail -n +2
  exec 3<&-
}
if [[ -z $port ]]; then
  echo "FAIL serve --http did not start: $(cat "$fake/err")"; fails=$((fails + 1))
else
  contains "the banner names the readiness route" "$(cat "$fake/err")" "GET /ready"
  body=$(ready)
  contains "ready before any read" "$body" '"slurm":"unknown"'
  [[ ! -e $fake/runs ]] && passes=$((passes + 1)) || { echo "FAIL /ready ran a program"; fails=$((fails + 1)); }
  "$bin" call --http "127.0.0.1:$port" slurm_query --args '{"topic":"nodes"}' > /dev/null 2>&1
  "$bin" call --http "127.0.0.1:$port" slurm_query --args '{"topic":"queue"}' > /dev/null 2>&1
  body=$(ready)
  contains "ready after a failed read" "$body" '"slurm":"failing"'
  contains "sinfo's last read failed, with its cause" "$body" 'Unable to contact slurm controller'
  contains "squeue's last read succeeded" "$(grep -o '{[^{}]*"program":"squeue"[^{}]*}' <<< "$body")" '"state":"ok"'
  kill -TERM "$server"
  wait "$server"
  rc=$?
  [[ $rc -eq 0 ]] && passes=$((passes + 1)) || { echo "FAIL serve --http after SIGTERM: exit $rc"; fails=$((fails + 1)); }
fi
kill "$server" 2> /dev/null
rm -rf "$fake"

rm -f /tmp/mcp_cli_err.$$
echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
