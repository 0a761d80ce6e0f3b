#!/usr/bin/env bash
# The large lab's figures (issue #35), on a lab that is already up:
#
#   sudo build/bin/rca-bench cluster up --profile large --dir /tmp/rca-large --port-base 18100
#        (1,024 nodes; about 45 minutes on 2 cores, most of it the 50,000-job history)
#   sudo bench/large_lab.sh /tmp/rca-large [OUT_DIR]
#   sudo build/bin/rca-bench cluster down --dir /tmp/rca-large
#
# Prints, with the command of each figure:
#   1. the lab as Slurm reports it (nodes, partitions, running, pending by reason, finished in sacct)
#      and its daemons' footprint (rca-bench cluster status);
#   2. slurm-mcp overview's wall time, peak RSS and bytes, on the lab as it is, then with two
#      anomalies made by rca-bench's own fault primitives: node700 drained (in sinfo -N's node
#      list it sorts far past the 200th row) and partition debug DOWN; both healed at the end;
#   3. slurm-mcp query queue --group-by state,reason and accounting --group-by state,user: wall
#      time and peak RSS of the process serving it;
#   4. scale_bench's live part (per topic: read time, parse CPU per row, answer bytes; squeue text
#      against --json; group_by exact against a raw count), its raw reads saved under OUT_DIR/raw;
#   5. slurm-mcp's own peak memory (VmHWM of its PID) while one stdio server answers the overview
#      and the large reads (queue, nodes, accounting, jobs), with each answer's bytes;
#   6. ctld_load_bench with 1 and 64 agents polling slurm_overview through one server.
# Nothing here writes to the cluster but the two faults and their heals.
set -euo pipefail
cd "$(dirname "$0")/.."
lab=${1:?usage: bench/large_lab.sh LAB_DIR [OUT_DIR]}
out=${2:-/tmp/large-lab-$(date +%Y%m%d-%H%M%S)}
bin=${BUILD:-build}/bin
conf=$lab/etc/slurm.conf
[[ $(id -u) -eq 0 ]] || { echo "large_lab.sh: needs root (the faults); run it with sudo" >&2; exit 2; }
[[ -f $lab/lab.conf ]] || { echo "large_lab.sh: no lab in $lab (no lab.conf)" >&2; exit 2; }
mkdir -p "$out/raw"
export SLURM_CONF=$conf
mcp=("$bin/slurm-mcp")
live=(--slurm-conf "$conf" --clusters rca --timeout 120)
say() { printf '\n== %s\n' "$*"; }
# timed NAME CMD...: runs CMD, its stdout to OUT/NAME.txt; prints wall time, peak RSS and bytes,
# or, when CMD failed, its exit status instead of figures (its output is then no answer). The
# peak RSS is GNU time's: the largest of slurm-mcp and the Slurm commands it ran (sacct of 52,000
# jobs is 107 MiB by itself); slurm-mcp's own is section 5's.
timed() {
  local name=$1 rc=0
  shift
  /usr/bin/time -f "%e %M" -o "$out/$name.time" "$@" > "$out/$name.txt" || rc=$?
  if [[ $rc -ne 0 ]]; then
    printf '%-40s FAILED (exit %d; %s)   (%s)\n' "$name" "$rc" "$(head -c 200 "$out/$name.txt")" \
      "${*/#$bin\//}"
    return
  fi
  read -r wall rss < <(tail -n 1 "$out/$name.time")
  printf '%-40s %6.2f s wall, %6.1f MiB peak RSS (largest process), %7d bytes   (%s)\n' "$name" "$wall" \
    "$(echo "$rss / 1024" | bc -l)" "$(wc -c < "$out/$name.txt")" "${*/#$bin\//}"
}
# count CMD...: the lines CMD prints, or NO EVIDENCE with its exit status: a failed or timed-out
# read is never a count of 0.
count() {
  local text rc=0
  text=$(timeout 300 "$@" 2> /dev/null) || rc=$?
  if [[ $rc -ne 0 ]]; then echo "NO EVIDENCE ($1 exit $rc)"; else grep -c . <<< "$text" || true; fi
}
# by_reason: pending tasks by reason, or NO EVIDENCE.
by_reason() {
  local text rc=0
  text=$(timeout 300 squeue -h -r -t PD -o %r 2> /dev/null) || rc=$?
  if [[ $rc -ne 0 ]]; then echo "NO EVIDENCE (squeue exit $rc)"; return; fi
  sort <<< "$text" | uniq -c | sort -rn | awk '{printf "%s=%s ", $2, $1}'
}

say "1. the lab ($(uptime))"
nodes=$(timeout 300 sinfo -h -N -o %N 2> /dev/null | sort -u | grep -c .) || nodes="NO EVIDENCE"
echo "nodes (distinct in sinfo -N): $nodes; partitions: $(sinfo -h -o %R 2> /dev/null | sort -u | tr '\n' ' ')"
echo "jobs running (tasks): $(count squeue -h -r -t R -o %i); pending (tasks): $(count squeue -h -r -t PD -o %i)"
echo "pending by reason: $(by_reason)"
echo "finished in sacct (CD,F, -X, last day): $(count sacct -a -X -n -S now-1days -E now -s CD,F -o JobID)"
{ "$bin/rca-bench" cluster status --dir "$lab" || true; } | tail -n 3  # exits 1 when a node is unhealthy

say "2. slurm_overview (the lab as it is)"
timed overview-before "${mcp[@]}" overview "${live[@]}"
"$bin/rca-bench" fault inject drain --dir "$lab" --node node700 \
  --reason "large_lab.sh: health check failed" > /dev/null
"$bin/rca-bench" fault inject partition-down --dir "$lab" --partition debug --state DOWN > /dev/null
heal() {
  "$bin/rca-bench" fault heal drain --dir "$lab" --node node700 > /dev/null || true
  "$bin/rca-bench" fault heal partition-down --dir "$lab" > /dev/null || true
}
trap heal EXIT
say "2. slurm_overview with node700 drained and partition debug DOWN"
timed overview-faults "${mcp[@]}" overview "${live[@]}"
timed overview-faults-json "${mcp[@]}" overview --json "${live[@]}"
cat "$out/overview-faults.txt"

say "3. slurm_query with group_by"
timed query-queue-state-reason "${mcp[@]}" query queue --group-by state,reason "${live[@]}"
timed query-queue-partition-user "${mcp[@]}" query queue --group-by partition,user "${live[@]}"
timed query-accounting-state-user "${mcp[@]}" query accounting --group-by state,user "${live[@]}"
timed query-queue-page "${mcp[@]}" query queue "${live[@]}"
head -c 1500 "$out/query-queue-state-reason.txt"; echo

say "4. scale_bench, live part (its generated part first)"
"$bin/scale_bench" --reps 3 --slurm-conf "$conf" --save-dir "$out/raw" | tee "$out/scale_bench.txt"

# serve_hwm: slurm-mcp's own peak memory (VmHWM of its PID, not of the Slurm commands it runs)
# while one stdio server answers the overview and the large reads, each call's answer bytes too.
serve_hwm() {
  local pid line n=1
  coproc MCP { exec "$bin/slurm-mcp" serve --stdio "${live[@]}" 2> "$out/serve-hwm.err"; }
  pid=$MCP_PID
  call() {  # call JSON-RPC-method params
    n=$((n + 1))
    printf '{"jsonrpc":"2.0","id":%d,"method":"%s","params":%s}\n' "$n" "$1" "$2" >&"${MCP[1]}"
    IFS= read -r -t 300 line <&"${MCP[0]}" || { echo "no answer to $1 $2"; return 1; }
    printf '  %-78s %8d bytes%s\n' "$2" "${#line}" \
      "$(grep -q '"isError":true' <<< "$line" && echo ' (isError: true)')"
  }
  printf '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"large_lab.sh","version":"1"}}}\n' >&"${MCP[1]}"
  IFS= read -r -t 60 line <&"${MCP[0]}"
  printf '{"jsonrpc":"2.0","method":"notifications/initialized"}\n' >&"${MCP[1]}"
  grep -E '^Vm(RSS|HWM)' "/proc/$pid/status" | tr '\n' ' ' | sed 's/^/  after initialize: /'; echo
  call tools/call '{"name":"slurm_overview","arguments":{}}'
  call tools/call '{"name":"slurm_query","arguments":{"topic":"queue","group_by":["state","reason"]}}'
  call tools/call '{"name":"slurm_query","arguments":{"topic":"queue"}}'
  call tools/call '{"name":"slurm_query","arguments":{"topic":"nodes","group_by":["state","reason"]}}'
  call tools/call '{"name":"slurm_query","arguments":{"topic":"accounting","group_by":["state","user"]}}'
  call tools/call '{"name":"slurm_query","arguments":{"topic":"accounting"}}'
  call tools/call '{"name":"slurm_query","arguments":{"topic":"jobs"}}'
  grep -E '^Vm(RSS|HWM)' "/proc/$pid/status" | tr '\n' ' ' | sed 's/^/  after the calls: /'; echo
  local to_server=${MCP[1]}
  exec {to_server}>&-  # end of input: the server exits
  wait "$pid" || true
}

heal
trap - EXIT
say "5. slurm-mcp's own peak memory: one stdio server, the overview and the large reads"
serve_hwm | tee "$out/serve-hwm.txt"

say "6. ctld_load_bench: 1 and 64 agents through one slurm-mcp, 30 s a run"
"$bin/ctld_load_bench" --lab-dir "$lab" --agents 1,64 --seconds 30 | tee "$out/ctld_load.txt"
echo
echo "large_lab.sh: outputs in $out"
