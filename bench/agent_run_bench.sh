#!/usr/bin/env bash
# The benchmark harness itself: rca-bench run over the whole suite on the recorded bundles
# (replay), for each reference agent (folk, graphwalk, ticketonly), --repeats N. Prints each
# agent's wall time, task runs, MCP calls and calls per second, the whole (suite x 3 agents x N),
# and the share of graphwalk's time that is slurm-mcp (one stdio child per task run) against
# ticketonly, which starts none. Figures, not a test.
# Usage: bench/agent_run_bench.sh [BUILD_BIN] [REPEATS]
set -euo pipefail
bin=${1:-build/bin}
repeats=${2:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "agent_run_bench: load average $(cut -d' ' -f1-3 /proc/loadavg) at the start, $(nproc) CPUs"
run() {  # run CONFIG: prints "seconds calls tasks"
  local start end out
  start=$(date +%s.%N)
  out=$("$bin/rca-bench" run --config "$1" --repeats "$repeats" --no-score --out "$tmp/$1" 2>/dev/null)
  end=$(date +%s.%N)
  local calls tasks
  calls=$(echo "$out" | sed -n 's/.* \([0-9]*\) MCP calls.*/\1/p')
  tasks=$(echo "$out" | sed -n 's/^ran \([0-9]*\) task run.*/\1/p')
  echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }') ${calls:-0} ${tasks:-0}"
}
total_s=0 total_tasks=0 total_calls=0
for agent in folk graphwalk ticketonly; do
  read -r s calls tasks < <(run "$agent")
  declare "${agent}_s=$s" "${agent}_tasks=$tasks"
  awk -v a="$agent" -v s="$s" -v c="$calls" -v n="$tasks" -v r="$repeats" 'BEGIN {
    printf "rca-bench run --config %-10s --repeats %d: %4d task runs in %7.2f s (%5.1f ms each), %5d MCP calls (%.1f per run, %.0f/s)\n",
      a, r, n, s, 1000 * s / n, c, c / n, (s > 0 ? c / s : 0)
  }'
  total_s=$(awk -v a="$total_s" -v b="$s" 'BEGIN { printf "%.3f", a + b }')
  total_tasks=$((total_tasks + tasks))
  total_calls=$((total_calls + calls))
done
awk -v s="$total_s" -v n="$total_tasks" -v c="$total_calls" -v r="$repeats" \
    -v gs="$graphwalk_s" -v gn="$graphwalk_tasks" -v ts="$ticketonly_s" -v tn="$ticketonly_tasks" 'BEGIN {
  printf "the suite x 3 reference agents x %d repeats: %d task runs, %d MCP calls in %.2f s (%.1f task runs/s)\n",
    r, n, c, s, n / s
  printf "graphwalk / ticketonly wall time per task run: %.1fx (slurm-mcp start-up and the reads)\n",
    (gs / gn) / (ts / tn)
}'
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
