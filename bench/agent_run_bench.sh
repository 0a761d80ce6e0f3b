#!/usr/bin/env bash
# rca-bench run --config graphwalk --repeats N over the whole suite on the recorded bundles: wall
# time, MCP calls per second, and the share of the time that is slurm-mcp's start-up (one stdio
# child per task) against a ticketonly run that starts none. Figures, not a test.
# Usage: bench/agent_run_bench.sh [BUILD_BIN] [REPEATS]
set -euo pipefail
bin=${1:-build/bin}
repeats=${2:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {  # run CONFIG: prints "seconds calls tasks"
  local start end out
  start=$(date +%s.%N)
  out=$("$bin/rca-bench" run --config "$1" --repeats "$repeats" --no-score --out "$tmp/$1" 2>/dev/null)
  end=$(date +%s.%N)
  local calls tasks
  calls=$(echo "$out" | sed -n 's/.* \([0-9]*\) MCP calls.*/\1/p')
  tasks=$(echo "$out" | sed -n 's/^ran \([0-9]*\) task run.*/\1/p')
  echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }') $calls $tasks"
}
read -r gw_s gw_calls gw_tasks < <(run graphwalk)
read -r to_s _ to_tasks < <(run ticketonly)
awk -v s="$gw_s" -v c="$gw_calls" -v n="$gw_tasks" -v ts="$to_s" -v tn="$to_tasks" -v r="$repeats" 'BEGIN {
  printf "rca-bench run --config graphwalk --repeats %d over the suite (%d task runs, replay)\n", r, n
  printf "  wall time            %8.2f s   (%.1f ms per task run)\n", s, 1000 * s / n
  printf "  MCP calls            %8d     (%.1f per task run)\n", c, c / n
  printf "  MCP calls per second %8.1f\n", c / s
  printf "ticketonly, same tasks, no slurm-mcp child: %.2f s (%.1f ms per task run)\n", ts, 1000 * ts / tn
  printf "  graphwalk / ticketonly wall time: %.1fx (slurm-mcp start-up and the reads)\n", s / ts
}'
