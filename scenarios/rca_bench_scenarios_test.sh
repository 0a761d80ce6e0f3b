#!/usr/bin/env bash
# rca-bench validate / list / show: the examples pass, a broken file is reported as
# file:line: rule-id: message with exit 1, bad input is one stderr line with exit 2.
# Usage: rca_bench_scenarios_test.sh RCA_BENCH SOURCE_DIR
set -u
bin=$1
src=$2
fails=0
passes=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
ok() { passes=$((passes + 1)); }
run() { out=$("$bin" "$@" 2>/tmp/rca_sc_err.$$); rc=$?; err=$(cat /tmp/rca_sc_err.$$); }
one_line() {  # one_line WHAT: exit 2, exactly one stderr line, no stdout
  if [[ $rc -ne 2 || $(printf '%s' "$err" | grep -c '') -ne 1 || -n "$out" ]]; then
    fail "$1: rc $rc, stdout '${out:0:200}', stderr '${err:0:200}'"
  else ok; fi
}

run validate
[[ $rc -eq 0 && -z "$out" && "$err" == *"runnable"*"hops measured in their busy bundles"*"busy-25.11 (Slurm 25.11): "*" recorded"*", 0 problem(s)"* ]] &&
  ok || fail "validate the suite with its bundles: rc $rc: ${out:0:600} ${err:0:300}"
# Both bundle sets measure every hop and herring: busy (the default) and clean, for comparison.
for set in busy clean; do
  run --bundles "$set" validate
  [[ $rc -eq 0 && -z "$out" && "$err" == *"hops measured in their $set bundles"*", 0 problem(s)"* ]] && ok ||
    fail "validate the suite with its $set bundles: rc $rc: ${out:0:600} ${err:0:300}"
done
run --bundles nosuch validate
[[ $rc -eq 2 ]] && ok || fail "an unknown bundle set: rc $rc"
run validate --no-bundles
[[ $rc -eq 0 && -z "$out" && "$err" != *"hops measured"* ]] && ok || fail "validate --no-bundles: rc $rc"
# The held scenarios (scenarios/held/) stay valid while they wait to join the suite.
run validate --no-bundles "$src/scenarios/held"
[[ $rc -eq 0 && -z "$out" && "$err" == *"3 scenario(s)"* ]] && ok ||
  fail "validate the held scenarios: rc $rc: ${out:0:600} ${err:0:300}"
# S38 is a task of the large lab: validated alone, its bundles are in fixtures/large/ whichever
# 22.05 set is named, and they measure every hop.
for set in busy clean; do
  run --bundles $set validate "$src/scenarios/S38-large-partition-down"
  want="3 of 3 hops measured in their $set bundles (3 large-profile tasks' in the large set)"
  [[ $rc -eq 0 && -z "$out" && "$err" == *"$want"*", 0 problem(s)"* ]] && ok ||
    fail "validate S38 with the $set set: rc $rc: ${out:0:600} ${err:0:300}"
done
broken=$src/scenarios/testdata/broken/chain-start.yaml
run validate "$broken"
[[ $rc -eq 1 && "$out" =~ ^$broken:[0-9]+:\ chain-start:\  ]] && ok || fail "broken file: rc $rc: $out"
run validate "$src/scenarios/testdata/broken"
[[ $rc -eq 2 ]] && ok || fail "a directory without */scenario.yaml: rc $rc"
run validate /nonexistent/scenario.yaml
one_line "validate a missing file"
run list
list_out=$out
[[ $rc -eq 0 && "$out" == *"| S01-accounting-backend-stall | accounting_db | multi_layer |"*"| db.mysql | 3/3 (3 trials) |"* ]] && ok ||
  fail "list: rc $rc: ${out:0:300}"
# The README's scenario table is what rca-bench list prints, byte for byte.
readme_table=$(sed -n '/^<!-- rca-bench list -->$/,/^<!-- end rca-bench list -->$/p' "$src/README.md" |
  sed '1d;$d')
[[ -n "$readme_table" && "$readme_table" == "$out" ]] && ok ||
  fail "README's table differs from rca-bench list: $(diff <(printf '%s\n' "$readme_table") <(printf '%s\n' "$out") | head -5)"
run baselines
baselines_out=$out
readme_bl=$(sed -n '/^<!-- rca-bench baselines -->$/,/^<!-- end rca-bench baselines -->$/p' "$src/README.md" |
  sed '1,2d' | sed '$d' | sed '$d')
[[ $rc -eq 0 && "$out" == *"<- floor"* && "$out" == *"oracle"* && "$out" != *DEGENERATE* ]] && ok ||
  fail "baselines: rc $rc: ${out:0:300}"
[[ -n "$readme_bl" && "$readme_bl" == "$out" ]] && ok ||
  fail "README's baseline block differs from rca-bench baselines: $(diff <(printf '%s\n' "$readme_bl") <(printf '%s\n' "$out") | head -5)"
# score: a submission made with this suite's fingerprint scores; a broken one scores nothing.
run fingerprint
fp=$out
[[ $rc -eq 0 && "$fp" =~ ^sha256:[0-9a-f]{16}$ ]] && ok || fail "fingerprint: rc $rc: $fp"
sub=/tmp/rca_sc_sub.$$.jsonl
printf '{"configuration": "t", "configuration_hash": "h", "model": "m", "suite_fingerprint": "%s", "date": "2026-11-30"}\n{"scenario_id": "T-8018cbddf2", "root_cause": "db.mysql", "confidence": 0.9}\n' "$fp" > "$sub"
# One right answer (S01, a test-split task) out of every runnable task: depth 1/N over the suite,
# 1/T on the test split, 0 on dev and post-freeze; the floor is the baselines' top row.
n=$(printf '%s\n' "$list_out" | sed -n 's/^[0-9]* scenarios, \([0-9]*\) runnable.*/\1/p')
t=$(printf '%s\n' "$list_out" | grep -c '^| S[^|]* | [^|]* | [^|]* | test |')
all=$(awk -v n="$n" 'BEGIN { printf "%.3f", 1 / n }')
test_depth=$(awk -v n="$t" 'BEGIN { printf "%.3f", 1 / n }')
floor=$(printf '%s\n' "$baselines_out" | sed -n 's/^\([0-9.]*\) .*<- floor$/\1/p')
floor_name=$(printf '%s\n' "$baselines_out" | sed -n 's/^[0-9.]*  *[0-9.-]*  *\([^ ]*\)  <- floor$/\1/p')
[[ "$n" -ge 36 && "$t" -ge 1 && -n "$floor" && -n "$floor_name" ]] && ok ||
  fail "counts from list and baselines: n '$n' t '$t' floor '$floor' '$floor_name'"
run score "$sub"
[[ $rc -eq 0 && "$out" == *"RCA depth      $all"*"floor          $floor  $floor_name"* ]] && ok ||
  fail "score: rc $rc (want depth $all, floor $floor): ${out:0:300}"
run score --json "$sub"
[[ $rc -eq 0 && "$out" == *"\"missing\": $((n - 1))"* && "$out" == *"\"strategy\": \"$floor_name\""* ]] && ok ||
  fail "score --json: rc $rc: ${out:0:300}"
run score "$src/grader/testdata/broken/duplicate.jsonl"
[[ $rc -eq 1 && "$out" == *"duplicate.jsonl:3: a second answer to"* && "$err" == *"nothing was scored"* ]] && ok ||
  fail "score a broken submission: rc $rc: ${out:0:300}"
run score /nonexistent.jsonl
one_line "score a missing file"
board=/tmp/rca_sc_board.$$
mkdir -p "$board" && cp "$sub" "$board/run1.jsonl" && cp "$src/grader/testdata/broken/duplicate.jsonl" "$board/"
run leaderboard "$board"
# With large-lab tasks in the suite the row has a large column after post-freeze (S01 is 4-node: 0).
large_col=""
[[ "$out" == *"on the large lab: "* ]] && large_col=" 0.000 |"
# And one for the lab of hosts' tasks, after it.
[[ "$out" == *"on the lab of hosts: "* ]] && large_col="$large_col 0.000 |"
[[ $rc -eq 0 && "$out" == *"| t | m | 1 | $test_depth | 0.000 | 0.000 |$large_col $all ± - |"* && "$out" == *"ranked on the test split"* && "$out" == *"refused: duplicate.jsonl"* ]] && ok ||
  fail "leaderboard: rc $rc: ${out:0:400}"
run leaderboard /nonexistent
[[ $rc -eq 2 ]] && ok || fail "leaderboard of a missing directory: rc $rc"
rm -rf "$sub" "$board"
run export --view agent
[[ $rc -eq 0 && "$out" == *'"task_id": "T-'* && "$out" != *S01-* && "$out" != *root_cause* ]] && ok ||
  fail "export --view agent: rc $rc: ${out:0:200}"
run export --view scorer
[[ $rc -eq 0 && "$out" == *'"root_cause": "db.mysql"'* && "$out" == *'"measured": true'* ]] && ok ||
  fail "export --view scorer: rc $rc"
run export --view judge
one_line "export with an unknown view"
run show T-8018cbddf2
[[ $rc -eq 0 && "$out" == S01-accounting-backend-stall:* && "$out" == *MEASURED* ]] && ok ||
  fail "show by task id: rc $rc: ${out:0:200}"
run inject S99-nothing --dir /nonexistent
[[ $rc -eq 2 ]] && ok || fail "inject an unknown scenario: rc $rc"
run heal
one_line "heal without an id or --all"
run record
one_line "record without an id or --all"
run show S06-state-save-unwritable
[[ $rc -eq 0 && "$out" == *"root cause: storage.state_save"* ]] && ok || fail "show: rc $rc"
run show S99-nothing
one_line "show an unknown id"
# A task left out of a release's set says why (the --slurm-release cut points here).
run show S28-auth-outage-nodes-down@outage-50
[[ $rc -eq 0 && "$out" == *"not shown:  on 25.11: every read fails while munged is down"* ]] && ok ||
  fail "show of a task not shown on 25.11: rc $rc: $(grep -i 'not shown' <<< "$out")"
run --slurm-release 25.11 fingerprint
[[ $rc -eq 0 && "$err" == *"2 left out because their evidence does not show on 25.11 (S28-auth-outage-nodes-down@outage-50, S30-slurmd-hung-node3@node1"* ]] && ok ||
  fail "the 25.11 cut names the tasks it leaves out: rc $rc: ${err:0:300}"
run show
one_line "show without an id"
SLURM_RCA_SCENARIOS=/nonexistent run list
one_line "list with a missing scenario directory"
rm -f /tmp/rca_sc_err.$$

echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
