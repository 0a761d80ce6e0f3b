#!/usr/bin/env bash
# What tests/cli/slurm-mcp.cases cannot say, because it reads one run's output against another
# file or drives a running server: the README quotes `tools`' size line and names every topic of
# `tools --json`; serve --http, live on fake Slurm clients, answers GET /ready and exits 0 on
# SIGTERM; under a low open-file limit it lowers --max-connections, says so, and still serves.
# Each single run's contract is in the cases file.
set -u
bin=$1
root=$2
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# The README quotes the line `tools` prints, and names every topic the server offers (15).
line=$("$bin" tools | grep '^tools/list result:')
[[ -n $line ]] && grep -qF "$line" "$root/README.md" || fail "README does not quote: '$line'"
topics=$("$bin" tools --json | grep -o '"enum":\[[^]]*\]' | head -1 | grep -o '"[a-z_]*"' | tr -d '"' |
  grep -v '^enum$')
count=0
for t in $topics; do
  count=$((count + 1))
  grep -q "\`$t\`" "$root/README.md" || fail "README does not name topic $t"
done
[[ $count -eq 15 ]] || fail "want 15 topics, got $count: $topics"

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
  port=$(grep -so 'serving MCP on http://127.0.0.1:[0-9]*' "$fake/err" | grep -o '[0-9]*$')
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
  fail "serve --http did not start: $(cat "$fake/err")"
else
  [[ $(cat "$fake/err") == *"GET /ready"* ]] || fail "the banner does not name the readiness route"
  body=$(ready)
  [[ $body == *'"slurm":"unknown"'* ]] || fail "ready before any read: $body"
  [[ ! -e $fake/runs ]] || fail "/ready ran a program"
  "$bin" call --http "127.0.0.1:$port" slurm_query --args '{"topic":"nodes"}' > /dev/null 2>&1
  "$bin" call --http "127.0.0.1:$port" slurm_query --args '{"topic":"queue"}' > /dev/null 2>&1
  body=$(ready)
  [[ $body == *'"slurm":"failing"'* ]] || fail "ready after a failed read: $body"
  [[ $body == *'Unable to contact slurm controller'* ]] || fail "sinfo's last read lacks its cause: $body"
  [[ $(grep -o '{[^{}]*"program":"squeue"[^{}]*}' <<< "$body") == *'"state":"ok"'* ]] ||
    fail "squeue's last read did not succeed: $body"
  kill -TERM "$server"
  wait "$server"
  rc=$?
  [[ $rc -eq 0 ]] || fail "serve --http after SIGTERM: exit $rc"
fi
kill "$server" 2> /dev/null
rm -rf "$fake"

# A soft open-file limit of 200 that cannot be raised (hard 200): --max-connections 4096 is
# lowered to 136 (64 descriptors kept for the server's own use), said on stderr, and the server
# still answers.
err=$(mktemp)
(ulimit -n 200 && exec "$bin" serve --http 127.0.0.1:0 --replay "$root/fixtures/demo") 2> "$err" &
server=$!
port=""
for _ in $(seq 100); do
  port=$(grep -so 'serving MCP on http://127.0.0.1:[0-9]*' "$err" | grep -o '[0-9]*$')
  [[ -n $port ]] && break
  sleep 0.1
done
grep -q -- "--max-connections 4096 lowered to 136: the open-file limit is 200 (ulimit -n)" "$err" ||
  fail "no word of the lowered connection cap: $(cat "$err")"
if [[ -n $port ]]; then
  "$bin" call --http "127.0.0.1:$port" slurm_query --args '{"topic":"nodes"}' > /dev/null 2>&1 ||
    fail "the server under a low file limit did not answer"
fi
kill -TERM "$server" 2> /dev/null
wait "$server"
rm -f "$err"

echo "$fails failed"
[[ $fails -eq 0 ]]
