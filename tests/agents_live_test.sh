#!/usr/bin/env bash
# rca-bench run --mode live: a fresh lab, S16 injected through the scenario injectors, graphwalk
# reading the live lab through a slurm-mcp child after the scenario's observation time, then heal
# and tear-down. Root only (exit 77 otherwise). Usage: agents_live_test.sh RCA_BENCH
set -uo pipefail
rca=$1
if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: the live lab needs root"
  exit 77
fi
tmp=$(mktemp -d)
lab="$tmp/lab"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
"$rca" run --config graphwalk --mode live --scenarios S16 --port-base 25800 --lab-dir "$lab" \
  --out "$tmp/out" > "$tmp/log" 2>&1 || fail "live run exited $?: $(tail -5 "$tmp/log")"
cat "$tmp/log"
grep -q '"scenario_id":"T-6fb88746ce"' "$tmp/out/graphwalk-none-r1.jsonl" || fail "no answer to S16"
grep -q '"event":"tool_result".*"outcome' "$tmp/out/graphwalk-none-r1.transcripts/T-6fb88746ce.jsonl" ||
  grep -q '"event":"tool_result"' "$tmp/out/graphwalk-none-r1.transcripts/T-6fb88746ce.jsonl" ||
  fail "graphwalk read nothing from the live lab"
grep -q '\[live, ' "$tmp/out/graphwalk-none-r1.transcripts/T-6fb88746ce.jsonl" ||
  fail "the evidence is not from the live back-end"
# Nothing of the lab is left running (processes whose command line names its directory).
if pgrep -f -- "$lab" > /dev/null; then
  fail "processes of the lab are still running: $(pgrep -af -- "$lab")"
fi
if ((fails > 0)); then
  echo "$fails failure(s)" >&2
  exit 1
fi
echo "ok: a live run injected S16, answered from the live lab, healed and tore the lab down"
