#!/usr/bin/env bash
# slurm-mcp serve --metrics scraped by a real Prometheus (Debian's `prometheus` package, issue #22
# item 3). A replay server on loopback (MCP on 127.0.0.1:18380, metrics on 127.0.0.1:18381)
# answers tool calls that succeed, are refused by the guard, come back as no evidence (timed out,
# not recorded) or are bad requests; Prometheus (127.0.0.1:18390, a one-job configuration scraping
# every second, its storage in a temporary folder) scrapes it, and the test asks Prometheus'
# HTTP API for each counter with its labels and value. `promtool check metrics` must accept the
# exposition. Both processes are started here, tracked by PID and stopped by PID on exit.
#
# The bundle is synthetic (written below): the MCP topics' filter grammars are subsets of the
# guard's (mcp/topics/topics.cc), so no tool argument reaches a guard refusal on a live server; a
# refusal recorded as the guard words it ("DENIED <rule-id>: ...") is how a replay server answers
# one.
#
# Usage: tests/prometheus_test.sh SLURM_MCP
set -euo pipefail

bin=$1
mcp_port=18380
metrics_port=18381
prom_port=18390
prometheus=/usr/bin/prometheus
promtool=/usr/bin/promtool
started=$SECONDS

for tool in "$prometheus" "$promtool"; do
  if [[ ! -x $tool ]]; then
    echo "FAIL $tool is missing: install Debian's prometheus package (scripts/deps.sh)" >&2
    exit 1
  fi
done

tmp=$(mktemp -d)
mcp_pid=""
prom_pid=""
cleanup() {
  local pid
  for pid in $prom_pid $mcp_pid; do
    kill "$pid" 2> /dev/null || true
  done
  for pid in $prom_pid $mcp_pid; do
    wait "$pid" 2> /dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "FAIL $*" >&2
  echo "--- slurm-mcp stderr:" >&2
  cat "$tmp/mcp.err" >&2 || true
  echo "--- prometheus log (tail):" >&2
  tail -n 20 "$tmp/prom.log" >&2 || true
  exit 1
}

# --- the bundle: one snapshot; queue answers, a filtered queue read was refused by the guard,
# sdiag timed out; every other argv is not recorded (unavailable).
bundle=$tmp/bundle
mkdir -p "$bundle/reads"
printf '1001|gpu|alice|RUNNING|1:00|1|node3\n1002|cpu|bob|PENDING|0:00|1|(Priority)\n' \
  > "$bundle/reads/queue.out"
: > "$bundle/reads/empty"
cat > "$bundle/manifest.json" << 'EOF'
{
  "format": "slurm-rca-evidence/1",
  "slurm_version": "22.05.8",
  "recorded_at": "2026-12-03T00:00:00Z",
  "comment": "synthetic, for tests/prometheus_test.sh",
  "snapshots": [
    {
      "offset_seconds": 0,
      "taken_at": "2026-12-03T00:00:00Z",
      "reads": [
        {"argv": ["squeue", "--noheader", "-o", "%i|%P|%u|%T|%M|%D|%R"], "exit_code": 0,
         "outcome": "ok", "duration_ms": 40, "timed_out": false,
         "stdout_file": "reads/queue.out", "stderr_file": "reads/empty", "cause": ""},
        {"argv": ["squeue", "--noheader", "-o", "%i|%P|%u|%T|%M|%D|%R", "-u", "mallory"],
         "exit_code": -1, "outcome": "refused", "duration_ms": 0, "timed_out": false,
         "stdout_file": "reads/empty", "stderr_file": "reads/empty",
         "cause": "DENIED bad-value: -u takes a user name the guard accepts; nothing was run"},
        {"argv": ["sdiag"], "exit_code": -1, "outcome": "timed_out", "duration_ms": 20000,
         "timed_out": true, "stdout_file": "reads/empty", "stderr_file": "reads/empty",
         "cause": "sdiag timed out after 20 s; a hang is itself evidence (no output is not 'no rows')"}
      ]
    }
  ]
}
EOF

# --- the server.
"$bin" serve --http "127.0.0.1:$mcp_port" --metrics ":$metrics_port" --replay "$bundle" \
  --skills '' 2> "$tmp/mcp.err" &
mcp_pid=$!
for _ in $(seq 100); do
  grep -q 'serving MCP on' "$tmp/mcp.err" 2> /dev/null && break
  kill -0 "$mcp_pid" 2> /dev/null || fail "slurm-mcp exited at start"
  sleep 0.1
done
grep -q "slurm-mcp: metrics (Prometheus text): http://127.0.0.1:$metrics_port/metrics" "$tmp/mcp.err" ||
  fail "no metrics banner on stderr"
grep -q 'serving MCP on' "$tmp/mcp.err" || fail "slurm-mcp did not start in 10 s"

# --- Prometheus, one job scraping the metrics listener every second.
cat > "$tmp/prometheus.yml" << EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: slurm-mcp
    static_configs:
      - targets: ["127.0.0.1:$metrics_port"]
EOF
"$promtool" check config "$tmp/prometheus.yml" > /dev/null 2>&1 || fail "promtool rejects the configuration"
"$prometheus" --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" > "$tmp/prom.log" 2>&1 &
prom_pid=$!

# --- MCP calls over Streamable HTTP.
mcp=http://127.0.0.1:$mcp_port/mcp
curl_mcp() {  # curl_mcp BODY [HEADER...]: prints the response body
  local body=$1; shift
  curl -sS --max-time 10 -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' "$@" --data-binary "$body" "$mcp"
}
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"prometheus_test","version":"1"}}}'
session=$(curl -sS --max-time 10 -D - -o /dev/null -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' --data-binary "$init" "$mcp" |
  tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
[[ -n $session ]] || fail "initialize gave no Mcp-Session-Id"
headers=(-H "Mcp-Session-Id: $session" -H 'MCP-Protocol-Version: 2025-11-25')
curl_mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}' "${headers[@]}" > /dev/null

id=10
call() {  # call ARGUMENTS_JSON WANT(ok|error) WANT_TEXT
  id=$((id + 1))
  local out
  out=$(curl_mcp "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"tools/call\",\"params\":{\"name\":\"slurm_query\",\"arguments\":$1}}" "${headers[@]}")
  if [[ $2 == ok ]]; then
    [[ $out == *'"isError":true'* || $out != *'"result"'* ]] && fail "call $1 is not a success: ${out:0:300}"
  else
    [[ $out == *'"isError":true'* ]] || fail "call $1 is not a tool error: ${out:0:300}"
  fi
  [[ $out == *"$3"* ]] || fail "call $1 lacks '$3': ${out:0:300}"
}
call '{"topic":"queue"}' ok 'alice'
call '{"topic":"queue"}' ok 'alice'
call '{"topic":"queue","filters":{"user":"mallory"}}' error 'DENIED bad-value'
call '{"topic":"diagnostics"}' error 'NO EVIDENCE (timed_out'
call '{"topic":"partitions"}' error 'NO EVIDENCE (unavailable'
call '{"topic":"no-such-topic"}' error 'unknown topic'
# One request refused by the transport's Host check.
code=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -H 'Host: evil.example' \
  -H 'Content-Type: application/json' -H 'Accept: application/json' \
  --data-binary '{"jsonrpc":"2.0","id":99,"method":"ping"}' "$mcp")
[[ $code == 403 ]] || fail "a foreign Host header got HTTP $code, want 403"

# --- the exposition itself passes promtool's lint.
curl -sS --max-time 10 "http://127.0.0.1:$metrics_port/metrics" > "$tmp/metrics.txt" ||
  fail "GET /metrics failed"
if ! lint=$("$promtool" check metrics < "$tmp/metrics.txt" 2>&1) || [[ -n $lint ]]; then
  fail "promtool check metrics complains: $lint"
fi

# --- Prometheus has scraped every counter with its labels and value.
api=http://127.0.0.1:$prom_port/api/v1/query
deadline=$((SECONDS + 30))
expect() {  # expect SELECTOR VALUE: exactly one series, with this value
  local selector=$1 want=$2 out values
  while :; do
    out=$(curl -sS --max-time 5 -G "$api" --data-urlencode "query=$selector" 2> /dev/null || true)
    values=$(printf '%s' "$out" | grep -o '"value":\[[^]]*\]' | sed 's/.*,"\(.*\)"\]/\1/' || true)
    [[ $values == "$want" ]] && return 0
    if ((SECONDS >= deadline)); then
      fail "Prometheus: $selector is '${values//$'\n'/ }', want exactly one series of $want (answer: ${out:0:400})"
    fi
    sleep 0.5
  done
}
q='tool="slurm_query"'
expect "slurm_mcp_tool_calls_total{$q,topic=\"queue\",outcome=\"ok\",cause=\"\",rule=\"\"}" 2
expect "slurm_mcp_tool_calls_total{$q,topic=\"queue\",outcome=\"refused\",rule=\"bad-value\",cause=\"\"}" 1
expect "slurm_mcp_tool_calls_total{$q,topic=\"diagnostics\",outcome=\"no_evidence\",cause=\"timed_out\",rule=\"\"}" 1
expect "slurm_mcp_tool_calls_total{$q,topic=\"partitions\",outcome=\"no_evidence\",cause=\"unavailable\",rule=\"\"}" 1
expect "slurm_mcp_tool_calls_total{$q,topic=\"\",outcome=\"error\",cause=\"\",rule=\"\"}" 1
# Every call is counted once, in one of the series above: no read without evidence counted as ok.
expect "sum(slurm_mcp_tool_calls_total{job=\"slurm-mcp\"})" 6
expect "sum(slurm_mcp_tool_calls_total{outcome=\"ok\"})" 2
expect "slurm_mcp_tool_call_duration_seconds_count{$q}" 6
expect "slurm_mcp_tool_call_duration_seconds_bucket{$q,le=\"+Inf\"}" 6
expect "slurm_mcp_http_requests_rejected_total{code=\"403\"}" 1
expect "slurm_mcp_build_info{job=\"slurm-mcp\"}" 1
expect "count(process_start_time_seconds{job=\"slurm-mcp\"} > 1.6e9)" 1
# A replay server starts no Slurm process and has no cache: those counters stay at zero.
expect "slurm_mcp_cache_hits_total" 0
expect "slurm_mcp_slurm_reads_in_flight" 0
expect "up{job=\"slurm-mcp\"}" 1

echo "prometheus_test: ok ($((SECONDS - started)) s)"
