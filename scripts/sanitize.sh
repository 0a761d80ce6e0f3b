#!/usr/bin/env bash
# The sanitizer jobs of `make test-asan` and `make test-tsan` (both run by .ci/run), on the trees
# the Makefile configured and built (clang: asan-build, tsan-build):
#   scripts/sanitize.sh asan BUILD_DIR JOBS   every ctest entry under AddressSanitizer + UBSan
#                                             (but the fuzz entries, which make test runs on this
#                                             build's fuzzers, the whole-suite smoke and the live
#                                             entries whose code others run, see below)
#   scripts/sanitize.sh tsan BUILD_DIR JOBS   the concurrent parts (ctest label `concurrent`:
#                                             executor, cache and single-flight, HTTP and stdio
#                                             transports, server, client) under ThreadSanitizer
# Reports go to files (log_path) as well as aborting the process, so a report in a child that a
# shell test started, or one whose exit status a test expected to be non-zero anyway, is still
# seen: the job fails when any report file exists, and prints them.
set -euo pipefail
kind=${1:-}
build=${2:-}
jobs=${3:-$(nproc)}
case "$kind" in
  asan) sanitize="address,undefined" ;;
  tsan) sanitize="thread" ;;
  *) echo "usage: scripts/sanitize.sh asan|tsan BUILD_DIR [JOBS]" >&2; exit 2 ;;
esac
[[ -n "$build" ]] || { echo "usage: scripts/sanitize.sh asan|tsan BUILD_DIR [JOBS]" >&2; exit 2; }
cd "$(dirname "$0")/.."
root=$PWD
reports="$root/$build/sanitizer-reports"

configured=$(sed -n 's/^SLURM_RCA_SANITIZE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
if [[ "$configured" != "$sanitize" ]]; then
  echo "sanitize.sh: $build is not a $sanitize build (make ${kind}-build configures and builds it)" >&2
  exit 2
fi

rm -rf "$reports"
mkdir -p "$reports"
supp="$root/tests/sanitizers"
export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
# clang's symbolizer names the functions and lines of every frame.
symbolizer=/usr/lib/llvm-14/bin/llvm-symbolizer
[[ -x $symbolizer ]] && export ASAN_SYMBOLIZER_PATH=$symbolizer TSAN_SYMBOLIZER_PATH=$symbolizer
export TSAN_OPTIONS="log_path=$reports/tsan:halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"

start=$(date +%s)
rc=0
# ctest leaves this file behind after a run that passes; the summary below must not read a stale one.
rm -f "$build/Testing/Temporary/LastTestsFailed.log"
if [[ $kind == asan ]]; then
  # Every entry but the whole-suite live smoke (scenario_smoke: every task, three at once, 520 s
  # for 60 tasks in make test on 2026-12-02, 1,391 s one at a time): the same harness code (lab,
  # faults, smoke loop) runs under ASan in scenario_smoke_busy, and each task's evidence is
  # checked by make test's smoke.
  # Nor three live entries whose code other live entries run under ASan here: live (the lab and
  # the fault primitives: scenario_smoke_busy brings labs up, injects and heals through the same
  # code), profile_live (the busy profile: scenario_smoke_busy runs it) and mcp_live (the live
  # back-end and topics: mcp_faults_live reads every topic through the real server). About 360 s
  # of waiting on Slurm. Nor agents_sbatch_live (rca-bench run, collect and score, which
  # agents_run runs under ASan, and a lab's slurmd running them). Nor the entries on other Slurm releases (NAME@25.11, ...): the same code
  # as their 22.05 entries against another release's daemons.
  # Nor large_live (a 256-node lab, about 140 s of waiting on Slurm; its plan runs under ASan in
  # large_profile_test, and its lab code is the lab's of scenario_smoke_busy).
  # Nor the fuzz entries: make test runs this build's fuzzers (ASan + UBSan) from the main build.
  ctest --test-dir "$build" --output-on-failure -j "$jobs" -LE fuzz \
    -E '^(scenario_smoke|live|profile_live|large_live|mcp_live|agents_sbatch_live)$|@' || rc=$?
else
  ctest --test-dir "$build" --output-on-failure -j "$jobs" -L concurrent || rc=$?
fi
found=$(find "$reports" -type f | sort)
if [[ -n "$found" ]]; then
  # Each report without ASan's shadow-byte map (rows of bytes that name no code), so that the
  # last lines of a CI log, which may be all that a reader gets, hold the stacks and the summary.
  echo "== $kind: sanitizer reports ($(echo "$found" | wc -l) files):"
  for f in $found; do
    echo "--- $f"
    grep -Ev '^(=>| ) *0x[0-9a-f]+:|^Shadow byte legend|^  [A-Z][A-Za-z /-]+: ' "$f" | head -n 80
  done
  rc=1
fi
# The entries that failed and each report's one-line summary, last, where a truncated log ends.
if [[ -s "$build/Testing/Temporary/LastTestsFailed.log" && $rc -ne 0 ]]; then
  echo "== $kind: failed entries: $(cut -d: -f2 "$build/Testing/Temporary/LastTestsFailed.log" | tr '\n' ' ')"
fi
for f in $found; do echo "== $kind: $(basename "$f"): $(grep -m1 '^SUMMARY' "$f" || echo 'no SUMMARY line')"; done
echo "== $kind: ctest exit $rc, $(( $(date +%s) - start )) s, $(echo -n "$found" | grep -c . || true) report files"
exit $rc
