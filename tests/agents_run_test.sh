#!/usr/bin/env bash
# rca-bench run end to end on the recorded bundles: configurations A-E with the scripted back-end
# (slurm-mcp a stdio child, the C++ MCP client, the guard, the graph, specialists, abstention),
# the three reference agents over the whole suite, the Slurm job-array path with collect, and
# diagnose. Usage: agents_run_test.sh RCA_BENCH SOURCE_DIR
set -uo pipefail
rca=$(realpath "$1") src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
script="$src/agents/testdata/scripted_all.json"

# --- A-E, scripted, on two scenarios
out=$("$rca" run --config A --config B --config C --config D --config E --backend scripted \
  --script "$script" --scenarios S01,S06 --out "$tmp/ae" 2>&1) || fail "run A-E exited $?: $out"
for c in A B C D E; do
  sub="$tmp/ae/$c-scripted-r1.jsonl"
  [[ -s "$sub" ]] || { fail "$c wrote no submission"; continue; }
  "$rca" score "$sub" > "$tmp/score-$c" || fail "$c's submission does not score"
  grep -q 'time to hyp.   [0-9.]* s median, measured by the harness from the transcripts of 2' \
    "$tmp/score-$c" || fail "$c: time to hypothesis not measured from both transcripts: $(cat "$tmp/score-$c")"
  for t in "$tmp/ae/$c-scripted-r1.transcripts"/*.jsonl; do
    grep -q '"event":"submit".*"valid":false' "$t" || fail "$c: the out-of-vocabulary answer is not a tool error in $t"
    grep -q '"event":"submit".*"valid":true' "$t" || fail "$c: no valid submit in $t"
  done
done
grep -q 'REFUSED by the read-only allowlist: DENIED' "$tmp/ae/A-scripted-r1.transcripts/"*.jsonl ||
  fail "A: the guard did not refuse scontrol update"
grep -q '"name":"read_log"' "$tmp/ae/A-scripted-r1.transcripts/"*.jsonl || fail "A read no log"
grep -q '"name":"slurm_overview"' "$tmp/ae/B-scripted-r1.transcripts/"*.jsonl || fail "B: no MCP overview"
if grep -q '"name":"graph_causes"' "$tmp/ae/B-scripted-r1.transcripts/"*.jsonl; then fail "B was given the graph"; fi
cat "$tmp/ae/C-scripted-r1.transcripts/"*.jsonl | grep '"event":"tool_result"' | grep '"name":"graph_causes"' |
  grep -q '"is_error":false' || fail "C: no graph_causes result"
for c in D E; do
  for who in logs validator; do
    grep -q "\"agent\":\"specialist:$who\"" "$tmp/ae/$c-scripted-r1.transcripts/"*.jsonl ||
      fail "$c: the $who specialist did not run in its own context"
  done
  if grep -q '"agent":"'$c'","arguments":{"topic"' "$tmp/ae/$c-scripted-r1.transcripts/"*.jsonl; then
    fail "$c's supervisor read the cluster itself"
  fi
done
grep -q '"root_cause":"db.mysql"' "$tmp/ae/D-scripted-r1.jsonl" || fail "D did not answer db.mysql"
if grep -q '"root_cause":"db.mysql"' "$tmp/ae/E-scripted-r1.jsonl"; then
  fail "E kept an answer below its abstention threshold"
fi
grep -q '"by":"harness"' "$tmp/ae/E-scripted-r1.transcripts/"*.jsonl || fail "E's abstention is not in the transcript"
# Which MCP era each run used (#21): the transcript opens with an `mcp` event naming the era that
# slurm-mcp itself answers to a server/discover probe (modern when it lists 2026-07-28, else
# legacy, with the probe's outcome as `fallback`). A reads raw commands only: no such event.
probe='{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
if echo "$probe" | timeout 20 "$(dirname "$rca")/slurm-mcp" serve --stdio --replay "$src/fixtures/demo" 2>/dev/null |
    grep -q '"supportedVersions":\[[^]]*"2026-07-28"'; then
  era=modern version=2026-07-28
else
  era=legacy version=2025-11-25
fi
for c in B C D E; do
  for t in "$tmp/ae/$c-scripted-r1.transcripts"/*.jsonl; do
    first=$(head -1 "$t")
    echo "$first" | grep -q "^{\"agent\":\"$c\",\"era\":\"$era\",\"event\":\"mcp\"," &&
      echo "$first" | grep -q "\"protocol_version\":\"$version\"" ||
      fail "$c: the transcript does not open with the $era MCP era: $first"
    if [[ $era == legacy ]] && ! echo "$first" | grep -q '"fallback":"server/discover: '; then
      fail "$c: a legacy era without the probe's outcome: $first"
    fi
  done
done
if grep -q '"event":"mcp"' "$tmp/ae/A-scripted-r1.transcripts/"*.jsonl; then fail "A read no MCP but says an era"; fi
for c in A B C D E; do
  hash=$("$rca" configs | awk -F' \\| ' -v c="| $c" '$1 == c {print $7}')
  grep -q "\"configuration_hash\":\"$hash\"" "$tmp/ae/$c-scripted-r1.jsonl" || fail "$c: header hash is not $hash"
done

# --- fit-abstention: E's threshold from a D run on two scenarios of E's development split.
# The scripted D answers db.mysql at 0.4: right on S02, wrong on S04 (the bases; --scenarios
# names bases, not variants); abstaining is worse. The fit reads every task of the development split (split: dev), answered or not, so
# its depth is the one right answer's credit over the dev tasks that rca-bench list counts.
"$rca" run --config D --backend scripted --script "$script" --scenarios S02,S04-gpu-ecc-drain \
  --no-score --out "$tmp/fit" > /dev/null 2>&1 || fail "D on the development split exited $?"
"$rca" fit-abstention "$tmp/fit/D-scripted-r1.jsonl" > "$tmp/fitted" || fail "fit-abstention exited $?"
ndev=$("$rca" list 2>/dev/null | grep -c '^| S[^|]* | [^|]* | [^|]* | dev |')
dev_depth=$(awk -v n="$ndev" 'BEGIN { if (n > 0) printf "%.3f", 1 / n }')
grep -q "^threshold  depth on the development split ($ndev scenarios)\$" "$tmp/fitted" &&
  grep -q "^0.400      $dev_depth\$" "$tmp/fitted" && grep -q '^1.000      ' "$tmp/fitted" &&
  grep -q "^fitted threshold 0.000 (depth $dev_depth" "$tmp/fitted" ||
  fail "fit-abstention (dev tasks $ndev, want depth $dev_depth): $(cat "$tmp/fitted")"
"$rca" fit-abstention "$tmp/fit/D-scripted-r1.jsonl" --config D > /dev/null 2>&1; rc=$?
[[ $rc -eq 2 ]] || fail "fit-abstention against a configuration without abstention: rc $rc"

# --- the reference agents over the whole suite
out=$("$rca" run --config folk --config graphwalk --config ticketonly --out "$tmp/ref" 2>&1) ||
  fail "reference run exited $?"
echo "$out" | grep 'depth'
ticket=$(echo "$out" | sed -n 's/.*ticketonly-none-r1.jsonl: depth \([0-9.]*\).*/\1/p')
[[ -n "$ticket" ]] || fail "no ticketonly score"
# If ticketonly scored well, the tickets would leak their answers: keep it near the floor (the
# best answer that reads nothing, printed on the same line). The README gives today's figures and
# names the tickets it gets right.
floor=$(echo "$out" | sed -n 's/.*ticketonly-none-r1.jsonl: depth [0-9.]* over [0-9]* scenarios (floor \([0-9.]*\).*/\1/p')
[[ -n "$floor" ]] || fail "no floor beside ticketonly's score"
awk -v d="$ticket" -v f="$floor" 'BEGIN { exit !(d < f + 0.15) }' ||
  fail "ticketonly scores $ticket, more than 0.15 above the floor $floor: the tickets leak"
# The README quotes these scores (the block "make demo: reference agents"): keep them equal.
for a in graphwalk ticketonly folk; do
  d=$(echo "$out" | sed -n "s/.*\/$a-none-r1.jsonl: depth \([0-9.]*\).*/\1/p")
  grep -q "^| $a (reference audit) | $d |" "$src/README.md" ||
    fail "README does not quote $a's depth $d (run make demo and update the block)"
done
grep -q '"kind":"reference"' "$tmp/ref/graphwalk-none-r1.jsonl" || fail "graphwalk is not marked reference"
grep -q "\"era\":\"$era\",\"event\":\"mcp\"" "$tmp/ref/graphwalk-none-r1.transcripts/"*.jsonl ||
  fail "graphwalk's transcripts do not name the MCP era"
if grep -q '"event":"mcp"' "$tmp/ref/ticketonly-none-r1.transcripts/"*.jsonl; then
  fail "ticketonly read no MCP but says an era"
fi
"$rca" leaderboard "$tmp/ref" > "$tmp/lb" 2>/dev/null || fail "leaderboard of the reference runs"
grep -q '^| graphwalk (reference audit) |' "$tmp/lb" || fail "leaderboard lacks graphwalk"

# --- spend (#37): tokens in the header, cost from a price file, caps that stop between task runs
printf 'scripted: {input: 2, output: 8, cached_input: 0.5}\n' > "$tmp/prices.yaml"
out=$("$rca" run --config B --backend scripted --script "$script" --scenarios S01,S06 \
  --prices "$tmp/prices.yaml" --no-score --out "$tmp/spend" 2>&1) || fail "run --prices exited $?: $out"
head -1 "$tmp/spend/B-scripted-r1.jsonl" | grep -q '"cost_usd":[0-9.e-]*,.*"usage":{"cache_creation_input_tokens":0,' ||
  fail "no cost or usage in the header: $(head -1 "$tmp/spend/B-scripted-r1.jsonl")"
grep -q '"event":"task_usage"' "$tmp/spend/B-scripted-r1.transcripts/"*.jsonl || fail "no task_usage event"
grep -q 'cost [0-9.]* USD' <<< "$out" || fail "run does not print its cost: $out"
"$rca" leaderboard "$tmp/spend" --no-html > "$tmp/lb-spend" 2>&1
grep -q '| n/a (needs ≥3 repeats) | n/a (needs ≥3 repeats) | [0-9]* in ([0-9]* cached) / [0-9]* out | \$[0-9.]* |' \
  "$tmp/lb-spend" || fail "leaderboard lacks tokens and cost: $(cat "$tmp/lb-spend")"
printf 'gpt-4o: {input: 2, output: 8, cached_input: 0.5}\n' > "$tmp/other.yaml"
"$rca" run --config B --backend scripted --script "$script" --scenarios S01 --prices "$tmp/other.yaml" \
  --out "$tmp/x" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "model 'scripted' has no prices in the price file $tmp/other.yaml" "$tmp/err" ||
  fail "a model absent from the price file: rc $rc $(cat "$tmp/err")"
printf 'scripted: {input: -1, output: 8, cached_input: 0.5}\n' > "$tmp/neg.yaml"
"$rca" run --config B --backend scripted --script "$script" --scenarios S01 --prices "$tmp/neg.yaml" \
  --out "$tmp/x" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "model 'scripted': input must be a non-negative number" "$tmp/err" ||
  fail "a negative price: rc $rc $(cat "$tmp/err")"
"$rca" run --config B --backend scripted --script "$script" --scenarios S01 --max-cost 1 \
  --out "$tmp/x" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q -- '--max-cost needs --prices' "$tmp/err" || fail "--max-cost without --prices: rc $rc"
"$rca" run --config B --backend scripted --script "$script" --scenarios S01,S06 --max-tokens-total 1 \
  --out "$tmp/cap" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc -eq 3 ]] && grep -q 'stopped at cap after 1 of 2 task runs: --max-tokens-total 1 reached' "$tmp/err" ||
  fail "--max-tokens-total: rc $rc $(cat "$tmp/err")"
head -1 "$tmp/cap/B-scripted-r1.jsonl" | grep -q '"stopped":"--max-tokens-total 1 reached' ||
  fail "the capped submission does not say it stopped"

ANTHROPIC_API_KEY=x "$rca" run --config B --backend anthropic --model m --model-seed 1 --scenarios S01 \
  --out "$tmp/x" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "the Messages API takes no seed" "$tmp/err" ||
  fail "--model-seed with anthropic: rc $rc $(cat "$tmp/err")"

# --- --slurm: a job-array script, three of its tasks run by hand, collect
"$rca" run --config graphwalk --scenarios S01,S06 --repeats 2 --slurm "$tmp/array.sh" --out "$tmp/arr" \
  > /dev/null || fail "--slurm exited $?"
grep -q '^#SBATCH --array=0-3$' "$tmp/array.sh" || fail "the array does not have 4 tasks"
# slurmd opens --output before a task starts: the folders must exist as generated (issue #22).
[[ -d "$tmp/arr/parts" ]] || fail "--slurm did not make OUT/parts"
(cd "$tmp" && "$rca" run --config graphwalk --scenarios S01 --slurm "$tmp/rel.sh" --out rel \
  > /dev/null 2> "$tmp/err"); rc=$?
[[ $rc -eq 2 ]] && grep -q 'needs an absolute --out' "$tmp/err" && [[ ! -e "$tmp/rel.sh" ]] ||
  fail "--slurm with a relative --out: rc $rc $(cat "$tmp/err")"
bash -n "$tmp/array.sh" || fail "the array script is not valid bash"
for i in 0 2 3; do
  SLURM_ARRAY_TASK_ID=$i bash "$tmp/array.sh" > /dev/null 2>&1 || fail "array task $i failed"
done
"$rca" collect "$tmp/arr/parts" --out "$tmp/arr" > "$tmp/collect" || fail "collect exited $?"
[[ $(grep -c scenario_id "$tmp/arr/graphwalk-none-r1.jsonl") -eq 2 ]] || fail "r1 should hold tasks 0 and 2's answers"
# The parts' spend is summed into the merged header, not a reason to leave a part out.
head -1 "$tmp/arr/graphwalk-none-r1.jsonl" | grep -q '"task_runs":2' ||
  fail "collect did not sum the parts' usage: $(head -1 "$tmp/arr/graphwalk-none-r1.jsonl")"
[[ $(grep -c scenario_id "$tmp/arr/graphwalk-none-r2.jsonl") -eq 1 ]] || fail "r2 should hold task 3's answer"
ls "$tmp/arr/graphwalk-none-r2.transcripts/"*.jsonl > /dev/null || fail "collect lost the transcripts"

# --- usage errors and diagnose
"$rca" run --config B --scenarios S01 --out "$tmp/x" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q 'needs a model' "$tmp/err" || fail "B without a model: rc $rc $(cat "$tmp/err")"
"$rca" run --config nosuch --out "$tmp/x" > /dev/null 2>&1; rc=$?
[[ $rc -eq 2 ]] || fail "an unknown configuration: rc $rc"
"$rca" run --config graphwalk --scenarios S99 --out "$tmp/x" > /dev/null 2>&1; rc=$?
[[ $rc -eq 2 ]] || fail "an unknown scenario: rc $rc"
"$rca" diagnose --config graphwalk --replay "$src/fixtures/S06-state-save-unwritable" --offset 60 \
  --symptom "sbatch fails for everyone since a few minutes; running jobs are fine" > "$tmp/diag" ||
  fail "diagnose exited $?"
grep -q '^root cause ' "$tmp/diag" && grep -q 'proposed only: nothing was changed' "$tmp/diag" ||
  fail "diagnose output: $(cat "$tmp/diag")"

if ((fails > 0)); then
  echo "$fails failure(s)" >&2
  exit 1
fi
echo "ok: A-E scripted end to end, reference agents, job array and collect, diagnose"
