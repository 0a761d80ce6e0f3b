#!/usr/bin/env bash
# rca-bench run --jobs and resume (issue #37, items 1 and 2), on the recorded bundles with the
# scripted back-end: --jobs 4 writes the submissions --jobs 1 writes (timings aside); a run
# SIGKILLed at three points and run again on its --out ends with the submissions of an
# uninterrupted run; a directory of another run (configuration, model) is refused with exit 2; a
# cap stops (exit 3, "resumable") and a run with a larger cap finishes it; --jobs in live mode and
# endpoint limits without an HTTP model are refused. Every process started here is stopped by
# its PID. Usage: agents_resume_test.sh RCA_BENCH SOURCE_DIR
set -uo pipefail
rca=$(realpath "$1") src=$2
tmp=$(mktemp -d)
pid=
cleanup() {
  [[ -n "$pid" ]] && kill -9 "$pid" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
script="$src/agents/testdata/scripted_all.json"
scen=S01,S02,S03,S06,S16,S04-gpu-ecc-drain
# run OUT [flags...]: B and D (scripted) and graphwalk over $scen. exec: started with &,
# $! is rca-bench's own PID.
run() {
  local out=$1
  shift
  exec "$rca" run --config B --config D --config graphwalk --backend scripted --script "$script" \
    --scenarios "$scen" --no-score --out "$out" "$@"
}
# A submission without what differs between two runs of the same work: the date and wall times.
norm() { jq -cS 'del(.date) | del(.usage.wall_s)' "$1"; }
same() {  # same DIR_A DIR_B WHAT: every submission of A equals B's
  local a=$1 b=$2 what=$3 n=0
  for f in "$a"/*.jsonl; do
    n=$((n + 1))
    cmp -s <(norm "$f") <(norm "$b/$(basename "$f")") || fail "$what: $(basename "$f") differs"
  done
  [[ $n -eq 3 ]] || fail "$what: $n submissions in $a, not 3"
  [[ $(ls "$b"/*.jsonl | wc -l) -eq $n ]] || fail "$what: $b has other submissions than $a"
}
entries() { echo $(($(wc -l < "$1/run.journal") - 1)); }
total=18  # 3 configurations x 6 tasks

# --- (a) --jobs 4 = --jobs 1
(run "$tmp/j1") > "$tmp/out1" 2>&1 || fail "--jobs 1 exited $?: $(cat "$tmp/out1")"
(run "$tmp/j4" --jobs 4) > "$tmp/out4" 2>&1 || fail "--jobs 4 exited $?: $(cat "$tmp/out4")"
same "$tmp/j1" "$tmp/j4" "--jobs 4 against --jobs 1"
[[ $(entries "$tmp/j4") -eq $total ]] || fail "the journal of --jobs 4 holds $(entries "$tmp/j4") task runs"
grep -q "^ran $total task run(s)" "$tmp/out4" || fail "--jobs 4: $(cat "$tmp/out4")"
for d in "$tmp"/j4/*.transcripts; do
  [[ $(ls "$d" | wc -l) -eq 6 ]] || fail "$d does not hold 6 transcripts"
done

# --- (d) SIGKILL after some task runs finished, then the same command again
for at in 1 7 13; do
  out="$tmp/kill$at"
  run "$out" --jobs 2 > /dev/null 2>&1 &
  pid=$!
  for ((i = 0; i < 3000; i++)); do
    [[ -s "$out/run.journal" ]] && (($(entries "$out") >= at)) && break
    sleep 0.01
  done
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  pid=
  got=$(entries "$out")
  ((got >= at && got < total)) || fail "kill at $at: the journal holds $got of $total task runs"
  (run "$out" --jobs 2) > "$tmp/resumed" 2>&1 || fail "resume after the kill at $at exited $?"
  grep -q "; $got kept from $out/run.journal" "$tmp/resumed" ||
    fail "resume after the kill at $at did not keep $got: $(cat "$tmp/resumed")"
  grep -q "^ran $((total - got)) task run(s)" "$tmp/resumed" ||
    fail "resume after the kill at $at did not make the other $((total - got))"
  same "$tmp/j1" "$out" "resumed after a kill at $at"
  [[ $(entries "$out") -eq $total ]] || fail "kill at $at: the journal ends with $(entries "$out") task runs"
  for d in "$out"/*.transcripts; do
    [[ $(ls "$d" | wc -l) -eq 6 ]] || fail "kill at $at: $d does not hold 6 transcripts"
  done
done

# --- (e) a directory of another run is refused, and left as it was
before=$(md5sum < "$tmp/j1/run.journal")
"$rca" run --config B --backend scripted --script "$script" --scenarios "$scen" \
  --no-score --out "$tmp/j1" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "run.journal was written by a run with another configurations" "$tmp/err" ||
  fail "another configuration set: rc $rc $(cat "$tmp/err")"
jq '.replies[0].text = "another model"' "$script" > "$tmp/other.json"
"$rca" run --config B --config D --config graphwalk --backend scripted --script "$tmp/other.json" \
  --scenarios "$scen" --no-score --out "$tmp/j1" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "run.journal was written by a run with another model" "$tmp/err" &&
  grep -q -- "--fresh to discard it" "$tmp/err" || fail "another model: rc $rc $(cat "$tmp/err")"
[[ $(md5sum < "$tmp/j1/run.journal") == "$before" ]] || fail "a refused run changed the journal"
"$rca" run --config B --config D --config graphwalk --backend scripted --script "$tmp/other.json" \
  --scenarios "$scen" --no-score --out "$tmp/j1" --fresh > /dev/null 2>&1 ||
  fail "--fresh on another run's directory exited $?"

# --- one run at a time in a directory: a second, while the first runs, is refused
run "$tmp/busy" > /dev/null 2>&1 &
pid=$!
for ((i = 0; i < 3000; i++)); do
  [[ -s "$tmp/busy/run.journal" ]] && break
  sleep 0.01
done
(run "$tmp/busy") > /dev/null 2> "$tmp/err"; rc=$?
kill -9 "$pid" 2> /dev/null
wait "$pid" 2> /dev/null
pid=
[[ $rc -eq 2 ]] && grep -q "another rca-bench run is writing $tmp/busy" "$tmp/err" ||
  fail "a second run in a busy directory: rc $rc $(cat "$tmp/err")"

# --- (f) a cap stops the run; the same command with a larger cap finishes it
(run "$tmp/cap" --jobs 3 --max-tokens-total 60000) > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc -eq 3 ]] && grep -q "stopped at cap after [0-9]* of $total task runs: --max-tokens-total 60000 reached" "$tmp/err" &&
  grep -q "The run is resumable" "$tmp/err" || fail "the cap: rc $rc $(cat "$tmp/err")"
capped=$(entries "$tmp/cap")
((capped > 0 && capped < total)) || fail "the cap left $capped of $total task runs"
grep -l '"stopped":"--max-tokens-total 60000 reached' "$tmp/cap"/*.jsonl > /dev/null ||
  fail "no capped submission says it stopped"
(run "$tmp/cap" --jobs 3 --max-tokens-total 100000000) > "$tmp/resumed" 2>&1 ||
  fail "the larger cap exited $?: $(cat "$tmp/resumed")"
grep -q "; $capped kept from" "$tmp/resumed" || fail "the larger cap did not keep $capped: $(cat "$tmp/resumed")"
same "$tmp/j1" "$tmp/cap" "capped then resumed with a larger cap"
if grep -q '"stopped"' "$tmp/cap"/*.jsonl; then fail "a finished run still says stopped"; fi

# --- refusals of the new flags
"$rca" run --config graphwalk --scenarios S01 --mode live --jobs 2 --out "$tmp/x" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q -- "--jobs must be 1" "$tmp/err" || fail "--jobs 2 in live mode: rc $rc $(cat "$tmp/err")"
"$rca" run --config B --backend scripted --script "$script" --scenarios S01 --requests-per-minute 5 \
  --out "$tmp/x" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "limit an HTTP model endpoint" "$tmp/err" || fail "limits with scripted: rc $rc $(cat "$tmp/err")"
help=$("$rca" run --help)
grep -q -- "--jobs" <<< "$help" && grep -q -- "--fresh" <<< "$help" && grep -q "run.journal" <<< "$help" || fail "--help does not tell --jobs, --fresh and the journal"

if ((fails > 0)); then
  echo "$fails failure(s)" >&2
  exit 1
fi
echo "ok: --jobs 4 = --jobs 1, resume after kills at 1, 7 and 13 of $total, refusals, cap then resume"
