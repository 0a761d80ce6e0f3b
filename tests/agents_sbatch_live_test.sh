#!/usr/bin/env bash
# rca-bench run --slurm as a new user runs it (issue #22 item 5): the generated job-array script,
# unedited, submitted with sbatch to a fresh live lab (port base 29300), waited for, collected and
# scored; the merged run must find the local run's numbers. Root only (exit 77 otherwise).
# Usage: agents_sbatch_live_test.sh RCA_BENCH
set -uo pipefail
rca=$(realpath "$1")
if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: the live lab needs root"
  exit 77
fi
tmp=$(mktemp -d)
lab="$tmp/lab"
down() { "$rca" cluster down --dir "$lab" > /dev/null 2>&1; rm -rf "$tmp"; }
trap down EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
scenarios=S01,S06,S16,S21

"$rca" cluster up --dir "$lab" --port-base 29300 > "$tmp/up" 2>&1 || {
  cat "$tmp/up"
  echo "FAIL: the lab did not come up" >&2
  exit 1
}
export SLURM_CONF=$lab/etc/slurm.conf

# The script exactly as generated, into an OUT that does not exist yet.
"$rca" run --config graphwalk --scenarios "$scenarios" --slurm "$tmp/array.sh" --out "$tmp/arr" \
  > "$tmp/gen" 2>&1 || fail "--slurm exited $?: $(cat "$tmp/gen")"
jid=$(cd "$tmp" && sbatch --parsable "$tmp/array.sh" 2> "$tmp/sbatch") ||
  fail "sbatch refused the generated script: $(cat "$tmp/sbatch")"
jid=${jid%%;*}
echo "submitted job array $jid"

# Wait for every task to leave the queue (120 s at most; 4 tasks take a few seconds).
for _ in $(seq 1 120); do
  [[ -n $jid && -z $(squeue -h -j "$jid" 2> /dev/null) ]] && break
  sleep 1
done
[[ -z $(squeue -h -j "$jid" 2> /dev/null) ]] || fail "the array is still queued or running after 120 s"
# Each task's own record: its output file, and a part; a task that failed says why in its output.
outs=$(ls "$tmp/arr"/slurm-"$jid"_*.out 2> /dev/null | wc -l)
[[ $outs -eq 4 ]] || fail "expected 4 task outputs, found $outs: $(ls "$tmp/arr")"
for f in "$tmp/arr"/slurm-"$jid"_*.out; do
  [[ -e $f ]] || continue
  grep -q 'ran 1 task run' "$f" || fail "task output $f does not show a finished run: $(tail -3 "$f")"
done
parts=$(ls -d "$tmp/arr/parts"/*/ 2> /dev/null | wc -l)
[[ $parts -eq 4 ]] || fail "expected 4 parts, found $parts"
# Accounting, where the lab records each task's end (polled: slurmdbd is told asynchronously).
states=""
for _ in $(seq 1 20); do
  states=$(sacct -n -X -P -j "$jid" -o State,ExitCode 2> /dev/null | sort | uniq -c | tr -s ' ')
  [[ $states == " 4 COMPLETED|0:0" ]] && break
  sleep 1
done
[[ $states == " 4 COMPLETED|0:0" ]] || fail "sacct does not show 4 tasks COMPLETED 0:0: '$states'"

"$rca" collect "$tmp/arr/parts" --out "$tmp/arr" > "$tmp/collect" 2>&1 ||
  fail "collect exited $?: $(cat "$tmp/collect")"
"$rca" run --config graphwalk --scenarios "$scenarios" --no-score --out "$tmp/local" > /dev/null 2>&1 ||
  fail "the local run exited $?"
for d in arr local; do
  "$rca" score "$tmp/$d/graphwalk-none-r1.jsonl" --json > "$tmp/score-$d" 2>&1 ||
    fail "score of the $d run exited $?: $(head -3 "$tmp/score-$d")"
  grep -E '^  "(answered|correct|depth)":' "$tmp/score-$d" > "$tmp/figures-$d"
done
[[ $(grep -c '"answered": 4,' "$tmp/figures-arr") -eq 1 ]] ||
  fail "the array's run does not answer the 4 tasks: $(cat "$tmp/figures-arr")"
cmp -s "$tmp/figures-arr" "$tmp/figures-local" ||
  fail "the array's scores differ from the local run's: $(paste "$tmp/figures-arr" "$tmp/figures-local")"
echo "array: $(tr -d '\n' < "$tmp/figures-arr")"
echo "local: $(tr -d '\n' < "$tmp/figures-local")"

# Nothing of the lab is left running once it is down (processes whose command line names it).
"$rca" cluster down --dir "$lab" > /dev/null 2>&1 || fail "cluster down exited $?"
if pgrep -f -- "$lab" > /dev/null; then
  fail "processes of the lab are still running: $(pgrep -af -- "$lab")"
fi
if ((fails > 0)); then
  echo "$fails failure(s)" >&2
  exit 1
fi
echo "ok: the generated array ran under sbatch on the live lab, collected, and scored as the local run"
