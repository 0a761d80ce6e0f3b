#!/usr/bin/env bash
# The benchmark of a leaderboard run itself (issue #37, item 6): rca-bench run of configurations
# A-E x every task x REPEATS on the recorded bundles (replay), against fake_model_api (a TEST
# DOUBLE of an OpenAI-compatible API on 127.0.0.1, no real model) behaving as an API under load:
# a seeded lognormal time per answer, 0..TOOL_TURNS tool-call turns per conversation, a sliding
# minute of RPM requests past which it answers 429 with Retry-After, and a share ERROR_RATE of
# 500/503. rca-bench is given the same --requests-per-minute (its endpoint limiter), as a user
# gives it the account's limit. For each --jobs N: wall time, task runs, model requests, requests
# per second against the limit's ceiling (RPM / 60), the speed-up over --jobs 1 against the
# target (0.8 x N until the limit binds, then within 10% of the ceiling), the 429s and 5xx the
# fake answered, the CPU and peak memory of rca-bench and its slurm-mcp children (GNU time), and
# whether the submissions equal --jobs 1's (date and wall times aside). Time is compressed: the
# default LATENCY_MS=40 stands for a model's 3-6 s per turn, so rca-bench's own cost weighs about
# 100 times more here than against a real API. Figures, not a test. Every process it starts is
# stopped by its PID.
# Usage: bench/agent_jobs_bench.sh [BUILD_BIN] [JOBS...]   (default: build/bin 1 8 32)
# Environment: REPEATS=3 SCENARIOS= (all) CONFIGS="A B C D E" LATENCY_MS=40 LATENCY_SIGMA=0.35
#              TOOL_TURNS=6 RPM=9000 ERROR_RATE=0.002 SEED=1 KILL_AFTER=45 (0: no killed run)
set -euo pipefail
bin=$(realpath "${1:-build/bin}")
shift || true
jobs_list=("$@")
((${#jobs_list[@]})) || jobs_list=(1 8 32)
repeats=${REPEATS:-3}
configs=${CONFIGS:-A B C D E}
latency=${LATENCY_MS:-40}
sigma=${LATENCY_SIGMA:-0.35}
turns=${TOOL_TURNS:-6}
rpm=${RPM:-9000}
errors=${ERROR_RATE:-0.002}
seed=${SEED:-1}
for tool in jq /usr/bin/time; do
  command -v "$tool" > /dev/null || { echo "agent_jobs_bench: needs $tool" >&2; exit 2; }
done
[[ -x "$bin/fake_model_api" && -x "$bin/rca-bench" ]] || {
  echo "agent_jobs_bench: $bin has no rca-bench or fake_model_api (build first)" >&2
  exit 2
}
tmp=$(mktemp -d)
api=
cleanup() {
  [[ -n "$api" ]] && kill "$api" 2> /dev/null && wait "$api" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
config_flags=()
for c in $configs; do config_flags+=(--config "$c"); done
scenario_flags=()
[[ -n "${SCENARIOS:-}" ]] && scenario_flags=(--scenarios "$SCENARIOS")
norm() { jq -cS 'del(.date) | del(.usage.wall_s)' "$1"; }
# start_fake JOBS LOG [FLAGS...]: fake_model_api as configured above, with a worker thread per
# rca-bench worker and 8 more; sets api (its PID) and port.
start_fake() {
  local n=$1 log=$2
  shift 2
  rm -f "$tmp/port"
  "$bin/fake_model_api" "$tmp/port" --tool-turns-max "$turns" --latency-ms "$latency" \
    --latency-sigma "$sigma" --requests-per-minute "$rpm" --error-rate "$errors" --seed "$seed" \
    --threads $((n + 8)) "$@" 2> "$log" &
  api=$!
  for ((i = 0; i < 500; i++)); do
    [[ -s "$tmp/port" ]] && break
    sleep 0.01
  done
  port=$(cat "$tmp/port")
}

echo "agent_jobs_bench: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo "fake_model_api (TEST DOUBLE): latency lognormal median ${latency} ms sigma $sigma," \
  "0..$turns tool turns, 429 past $rpm requests a minute, 5xx share $errors, seed $seed;" \
  "configurations $configs x ${SCENARIOS:-every task} x $repeats repeats; rca-bench --requests-per-minute $rpm"
ceiling=$(awk -v r="$rpm" 'BEGIN { printf "%.1f", r / 60 }')
base_wall=
base_rate=
printf '%5s %9s %6s %8s %8s %9s %8s %14s %5s %5s %9s %8s %10s %6s %5s\n' jobs wall_s runs requests "req/s" "of_ceil" speedup target 429s 5xx cpu_s rss_MiB fake_cpu_s busy% same
for n in "${jobs_list[@]}"; do
  start_fake "$n" "$tmp/api$n.log" --stats "$tmp/stats$n.json"
  rc=0
  read -r -a cpu0 < <(head -1 /proc/stat)
  OPENAI_API_KEY= /usr/bin/time -f '%e %U %S %M' -o "$tmp/time$n" "$bin/rca-bench" run \
    "${config_flags[@]}" "${scenario_flags[@]}" --repeats "$repeats" --backend openai \
    --base-url "http://127.0.0.1:$port/v1" --model fake-model --jobs "$n" \
    --requests-per-minute "$rpm" --no-score --out "$tmp/j$n" > "$tmp/out$n" 2> "$tmp/err$n" || rc=$?
  # The fake's own CPU (utime + stime, clock ticks), and how busy the machine's CPUs were over
  # the run: whether the cores, rather than the limit, bound the row.
  fake_ticks=$(awk '{ print $14 + $15 }' "/proc/$api/stat")
  read -r -a cpu1 < <(head -1 /proc/stat)
  kill "$api" && wait "$api" || true
  api=
  busy=$(awk -v a="${cpu0[*]}" -v b="${cpu1[*]}" 'BEGIN { split(a, x); split(b, y)
    for (i = 2; i <= 9; i++) { t += y[i] - x[i] }; idle = (y[5] - x[5]) + (y[6] - x[6])
    printf "%.0f", 100 * (t - idle) / t }')
  fake_cpu=$(awk -v t="$fake_ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }')
  if ((rc != 0)); then
    echo "agent_jobs_bench: --jobs $n exited $rc:" >&2
    tail -5 "$tmp/err$n" >&2
    exit 1
  fi
  read -r wall user sys rss_kib < "$tmp/time$n"
  runs=$(sed -n 's/^ran \([0-9]*\) task run.*/\1/p' "$tmp/out$n")
  answered=$(jq .answered "$tmp/stats$n.json")
  limited=$(jq .rate_limited "$tmp/stats$n.json")
  failed=$(jq .server_errors "$tmp/stats$n.json")
  rate=$(awk -v a="$answered" -v w="$wall" 'BEGIN { printf "%.1f", a / w }')
  same=-
  if [[ -n "$base_wall" ]]; then
    same=yes
    for f in "$tmp/j${jobs_list[0]}"/*.jsonl; do
      cmp -s <(norm "$f") <(norm "$tmp/j$n/$(basename "$f")") || same=NO
    done
  fi
  [[ -n "$base_wall" ]] || { base_wall=$wall; base_rate=$rate; }
  # The target: N x the first row's rate, bounded by the ceiling; met at 0.8 x N below it and
  # 0.9 x the ceiling where the ceiling is what bounds it.
  read -r speedup target < <(awk -v b="$base_wall" -v w="$wall" -v n="$n" -v n0="${jobs_list[0]}" \
    -v br="$base_rate" -v c="$ceiling" -v r="$rate" 'BEGIN {
      ideal = br * n / n0
      if (ideal < c) { want = 0.8 * n / n0; ok = (b / w >= want) ? "met" : "MISSED"
                       t = sprintf("%.1fx:%s", want, ok) }
      else { ok = (r >= 0.9 * c) ? "met" : "MISSED"; t = sprintf("0.9ceil:%s", ok) }
      printf "%.2fx %s\n", b / w, t }')
  printf '%5d %9.1f %6d %8d %8.1f %8.0f%% %8s %14s %5d %5d %9.1f %8.0f %10s %5s%% %5s\n' "$n" "$wall" "$runs" \
    "$answered" "$rate" "$(awk -v r="$rate" -v c="$ceiling" 'BEGIN { print 100 * r / c }')" \
    "$speedup" "$target" "$limited" "$failed" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" \
    "$(awk -v k="$rss_kib" 'BEGIN { print k / 1024 }')" "$fake_cpu" "$busy" "$same"
done
echo "ceiling: $ceiling requests/s (RPM $rpm / 60). runs: task runs; requests: answered 200 by the fake;" \
  "cpu_s: user + system of rca-bench and its slurm-mcp children; rss_MiB: the largest of them (GNU time);" \
  "fake_cpu_s: the fake model server's own CPU; busy%: the machine's CPUs busy over the row (/proc/stat)"
# Killed and resumed (issue #37's "survives being killed and resumed"): the last --jobs value
# again, SIGKILLed KILL_AFTER seconds in, then the same command on the same directory; its
# submissions must equal the first row's. KILL_AFTER=0 skips it.
kill_after=${KILL_AFTER:-45}
if ((kill_after > 0)); then
  n=${jobs_list[-1]}
  start_fake "$n" "$tmp/api-kill.log"
  again=("$bin/rca-bench" run "${config_flags[@]}" "${scenario_flags[@]}" --repeats "$repeats"
    --backend openai --base-url "http://127.0.0.1:$port/v1" --model fake-model --jobs "$n"
    --requests-per-minute "$rpm" --no-score --out "$tmp/killed")
  t0=$(date +%s.%N)
  OPENAI_API_KEY= "${again[@]}" > /dev/null 2> "$tmp/err-killed" &
  victim=$!
  sleep "$kill_after"
  kids=$(pgrep -P "$victim" || true)
  # A run shorter than KILL_AFTER has finished: said below, not a failure of the script.
  killed=yes
  kill -KILL "$victim" 2> /dev/null || killed="no (it had finished)"
  wait "$victim" 2> /dev/null || true
  before=0
  [[ -f "$tmp/killed/run.journal" ]] && before=$(($(wc -l < "$tmp/killed/run.journal") - 1))
  # The killed run's slurm-mcp children lose their parent's pipes and end: how long until the
  # last has, within 5 s; any left then is counted and stopped by its PID.
  left=0
  for ((i = 0; i <= 50; i++)); do
    left=0
    for k in $kids; do kill -0 "$k" 2> /dev/null && left=$((left + 1)); done
    ((left == 0)) && break
    sleep 0.1
  done
  gone_s=$(awk -v i="$i" 'BEGIN { printf "%.1f", i / 10 }')
  for k in $kids; do kill "$k" 2> /dev/null || true; done
  OPENAI_API_KEY= "${again[@]}" > "$tmp/out-resumed" 2> "$tmp/err-resumed" || {
    echo "agent_jobs_bench: the resumed run exited $?:" >&2
    tail -5 "$tmp/err-resumed" >&2
    exit 1
  }
  took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  kill "$api" && wait "$api" || true
  api=
  same=yes
  for f in "$tmp/j${jobs_list[0]}"/*.jsonl; do
    cmp -s <(norm "$f") <(norm "$tmp/killed/$(basename "$f")") || same=NO
  done
  echo "killed: $killed; --jobs $n, SIGKILL sent after $kill_after s, $before of the task runs journaled" \
    "(its $(wc -w <<< "$kids") slurm-mcp children gone within $gone_s s, $left left after 5 s); resumed by the same command: $took s in all;" \
    "submissions the same as --jobs ${jobs_list[0]}'s: $same"
fi
# Tokens the run spent, from the submissions' headers (the fake counts a request's bytes / 4 as
# its prompt): what the same reads would cost in input tokens against a real API.
for f in "$tmp/j${jobs_list[0]}"/*.jsonl; do
  head -1 "$f" | jq -r --arg f "$(basename "$f")" \
    '"\($f): \(.usage.input_tokens // 0) input, \(.usage.output_tokens // 0) output tokens, \(.usage.model_turns // 0) model turns, \(.usage.tool_calls // 0) tool calls"'
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
