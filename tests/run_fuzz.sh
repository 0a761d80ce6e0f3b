#!/usr/bin/env bash
# Runs the guard's libFuzzer target for a bounded time with its dictionary. Any crash or oracle
# violation aborts the fuzzer, and this script fails.
set -u
fuzzer=$(realpath "$1")
seconds=$2
dir=$(realpath "$3")
[[ -x "$fuzzer" ]] || { echo "fuzzer not built: $fuzzer (run make fuzz)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$dir"/seeds/* "$work"/ 2>/dev/null || true
cd "$work"
"$fuzzer" -max_total_time="$seconds" -dict="$dir/argv.dict" -max_len=512 \
  -print_final_stats=1 -artifact_prefix="$work/" "$work" 2>&1 | tail -n 25
rc=${PIPESTATUS[0]}
if [[ $rc -ne 0 ]]; then
  echo "guard fuzzer failed (exit $rc); artifacts:"
  ls "$work" | grep -E '^(crash|leak|timeout|oom)-' || true
fi
exit $rc
