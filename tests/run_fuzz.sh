#!/usr/bin/env bash
# Runs one libFuzzer target of the clang build (`make fuzz`), in one of two modes:
#   run_fuzz.sh run FUZZER SECONDS SEEDS_DIR MAX_LEN [DICT]
#       fuzzes for SECONDS ("-": $FUZZ_SECONDS, else 300) from a copy of the seeds (the corpus
#       grows in a temporary directory), with the dictionary when given;
#   run_fuzz.sh replay FUZZER DIR...
#       runs every file of the DIRs once (kept regression inputs, seeds); a DIR that does not
#       exist holds nothing.
# A crash, a leak, a timeout (10 s for one input) or an invariant the target aborts on makes the
# fuzzer exit non-zero, and this script with it; `run` then names the artifacts it left.
set -u
mode=$1
fuzzer=$(realpath -m "$2")
shift 2
[[ -x "$fuzzer" ]] || { echo "fuzzer not built: $fuzzer (run make fuzz-build)"; exit 1; }
name=$(basename "$fuzzer")

case "$mode" in
  run)
    seconds=$1
    [[ "$seconds" == "-" ]] && seconds=${FUZZ_SECONDS:-300}
    seeds=$(realpath "$2")
    max_len=$3
    dict=${4:-}
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    mkdir "$work/corpus"
    cp "$seeds"/* "$work/corpus"/ 2>/dev/null || true
    cd "$work"
    args=(-max_total_time="$seconds" -max_len="$max_len" -timeout=10 -print_final_stats=1
          -artifact_prefix="$work/")
    [[ -n "$dict" ]] && args+=(-dict="$dict")
    "$fuzzer" "${args[@]}" "$work/corpus" > "$work/log" 2>&1
    rc=$?
    # What the target or a sanitizer said (the invariant, the error), then libFuzzer's summary.
    grep -E -m 5 'INVARIANT|ERROR: |runtime error|what\(\)' "$work/log"
    tail -n 25 "$work/log"
    if [[ $rc -ne 0 ]]; then
      echo "$name failed (exit $rc); artifacts, as base64 (base64 -d > <module>/fuzz/regressions/$name/NAME):"
      for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
        [[ -e "$f" ]] || continue
        echo "== $(basename "$f"):"
        base64 -w 0 "$f"
        echo
      done
    fi
    exit "$rc"
    ;;
  replay)
    inputs=()
    for dir in "$@"; do
      [[ -d "$dir" ]] || continue
      for f in "$dir"/*; do [[ -f "$f" ]] && inputs+=("$f"); done
    done
    if [[ ${#inputs[@]} -eq 0 ]]; then
      echo "$name: no inputs to replay in $*"
      exit 1
    fi
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    cd "$work"
    "$fuzzer" -timeout=10 "${inputs[@]}" > "$work/log" 2>&1
    rc=$?
    if [[ $rc -ne 0 ]]; then
      tail -n 40 "$work/log"
      echo "$name failed on a kept input (exit $rc)"
    else
      echo "$name: ${#inputs[@]} inputs replayed, none failed"
    fi
    exit "$rc"
    ;;
  *)
    echo "usage: run_fuzz.sh run FUZZER SECONDS SEEDS_DIR MAX_LEN [DICT] | replay FUZZER DIR..."
    exit 2
    ;;
esac
