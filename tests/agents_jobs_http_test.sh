#!/usr/bin/env bash
# rca-bench run --jobs over an HTTP back-end (issue #37, item 1): configuration B with
# --backend openai against fake_model_api (a test double on 127.0.0.1; no real model), whose first
# request is answered 429 with Retry-After 1. --jobs 3 with endpoint limits retries it once, after
# the pause, and writes what --jobs 1 writes (date and wall times aside); progress counts the
# retry. Every process started here is stopped by its PID.
# Usage: agents_jobs_http_test.sh RCA_BENCH FAKE_MODEL_API
set -uo pipefail
rca=$(realpath "$1") api=$(realpath "$2")
tmp=$(mktemp -d)
pid=
cleanup() {
  [[ -n "$pid" ]] && kill "$pid" 2> /dev/null && wait "$pid" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
"$api" "$tmp/port" 1 1 2> "$tmp/api.log" &
pid=$!
for ((i = 0; i < 500; i++)); do
  [[ -s "$tmp/port" ]] && break
  sleep 0.01
done
port=$(cat "$tmp/port") || { echo "FAIL: fake_model_api wrote no port" >&2; exit 1; }
run() {  # run OUT [flags...]
  local out=$1
  shift
  OPENAI_API_KEY= "$rca" run --config B --backend openai --base-url "http://127.0.0.1:$port/v1" \
    --model fake-model --scenarios S01,S02,S03,S06,S16,S04-gpu-ecc-drain --no-score --out "$out" "$@"
}
norm() { jq -cS 'del(.date) | del(.usage.wall_s)' "$1"; }
start=$(date +%s.%N)
run "$tmp/j3" --jobs 3 --requests-per-minute 600 --tokens-per-minute 10000000 > "$tmp/out3" 2> "$tmp/err3" ||
  fail "--jobs 3 exited $?: $(cat "$tmp/err3")"
took=$(echo "$(date +%s.%N) - $start" | bc)
grep -q "(0 running, 1 retries, 660 tokens" "$tmp/err3" || fail "progress does not count the retry: $(cat "$tmp/err3")"
(($(echo "$took >= 1" | bc))) || fail "--jobs 3 took $took s: the 429's Retry-After 1 was not waited"
run "$tmp/j1" > "$tmp/out1" 2> "$tmp/err1" || fail "--jobs 1 exited $?: $(cat "$tmp/err1")"
sub=B-fake-model-r1.jsonl
[[ -s "$tmp/j3/$sub" ]] || fail "--jobs 3 wrote no $sub"
cmp -s <(norm "$tmp/j3/$sub") <(norm "$tmp/j1/$sub") || fail "--jobs 3 and --jobs 1 differ:
$(diff <(norm "$tmp/j3/$sub") <(norm "$tmp/j1/$sub"))"
[[ $(sed 1d "$tmp/j1/$sub" | jq -r .confidence | sort -u | wc -l) -gt 1 ]] ||
  fail "every task got the same answer: the comparison would not see a mix-up"
head -1 "$tmp/j3/$sub" | grep -q '"models_served":\["fake"\]' || fail "header: $(head -1 "$tmp/j3/$sub")"
kill "$pid" && wait "$pid"
pid=
grep -q "fake_model_api: 13 requests" "$tmp/api.log" || fail "fake_model_api: $(cat "$tmp/api.log"), not 13 requests"

# Conversations of several turns, as bench/agent_jobs_bench.sh makes them: 0..4 tool calls before
# the answer, specialists' conversations inside D's, a seeded latency per answer and a share of
# 5xx. --jobs 4 writes what --jobs 1 writes, and the fake saw more turns than task runs.
rm -f "$tmp/port"
"$api" "$tmp/port" --tool-turns-max 4 --latency-ms 5 --error-rate 0.03 --seed 7 \
  --stats "$tmp/stats.json" 2> "$tmp/api.log" &
pid=$!
for ((i = 0; i < 500; i++)); do
  [[ -s "$tmp/port" ]] && break
  sleep 0.01
done
port=$(cat "$tmp/port")
many() {  # many OUT [flags...]
  local out=$1
  shift
  OPENAI_API_KEY= "$rca" run --config B --config D --backend openai --base-url "http://127.0.0.1:$port/v1" \
    --model fake-model --scenarios S01,S02,S03,S06,S16,S04-gpu-ecc-drain --no-score --out "$out" "$@"
}
many "$tmp/m4" --jobs 4 > /dev/null 2> "$tmp/err" || fail "several turns, --jobs 4 exited $?: $(tail -3 "$tmp/err")"
many "$tmp/m1" > /dev/null 2> "$tmp/err" || fail "several turns, --jobs 1 exited $?: $(tail -3 "$tmp/err")"
for sub in B-fake-model-r1.jsonl D-fake-model-r1.jsonl; do
  cmp -s <(norm "$tmp/m4/$sub") <(norm "$tmp/m1/$sub") || fail "several turns: --jobs 4 and --jobs 1 differ in $sub:
$(diff <(norm "$tmp/m4/$sub") <(norm "$tmp/m1/$sub") | head -5)"
  turns=$(head -1 "$tmp/m1/$sub" | jq .usage.model_turns)
  tools=$(head -1 "$tmp/m1/$sub" | jq .usage.tool_calls)
  ((turns > 6 && tools > 0)) || fail "$sub: $turns model turns and $tools tool calls for 6 task runs"
done
# --model-seed: sent, recorded in the header as sent, and part of what a resume must match.
many "$tmp/seeded" --jobs 2 --model-seed 11 > /dev/null 2> "$tmp/err" ||
  fail "--model-seed 11 exited $?: $(tail -3 "$tmp/err")"
head -1 "$tmp/seeded/B-fake-model-r1.jsonl" | jq -e '.seed == 11' > /dev/null ||
  fail "the header does not record seed 11: $(head -1 "$tmp/seeded/B-fake-model-r1.jsonl" | jq -c '{seed, temperature}')"
head -1 "$tmp/m1/B-fake-model-r1.jsonl" | jq -e '.seed == "not sent"' > /dev/null ||
  fail "without --model-seed the header does not say not sent"
many "$tmp/seeded" --model-seed 12 > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "was written by a run with another model" "$tmp/err" ||
  fail "a resume with another seed: rc $rc $(cat "$tmp/err")"
kill "$pid" && wait "$pid"
pid=
[[ $(jq .server_errors "$tmp/stats.json") -gt 0 ]] || fail "the fake answered no 5xx: $(cat "$tmp/stats.json")"
if ((fails > 0)); then
  echo "$fails failure(s)" >&2
  exit 1
fi
echo "ok: --jobs 3 over HTTP waits out a 429 and writes what --jobs 1 writes (in $took s); with several turns, specialists and 5xx, --jobs 4 writes what --jobs 1 writes; --model-seed is recorded and binds a resume"
