#!/usr/bin/env bash
# Bad input to slurm-guard gives a one-line error and a non-zero exit, never a crash; good input
# gives the documented output and exit codes.
set -u
bin=$1
root=$2
fails=0
passes=0

# expect CODE DESCRIPTION -- ARGS...: exit code must be CODE
expect() {
  local code=$1 what=$2; shift 3
  out=$("$bin" "$@" 2>/tmp/cli_test_err.$$); rc=$?
  err=$(cat /tmp/cli_test_err.$$)
  if [[ $rc -ne $code ]]; then
    echo "FAIL $what: exit $rc, want $code (stdout: ${out:0:200}; stderr: ${err:0:200})"
    fails=$((fails + 1)); return 1
  fi
  passes=$((passes + 1))
}
# usage_error DESCRIPTION -- ARGS...: exit 2 with exactly one line on stderr, nothing on stdout
usage_error() {
  local what=$1
  expect 2 "$@" || return
  lines=$(printf '%s' "$err" | grep -c '')
  if [[ $lines -ne 1 || -n "$out" ]]; then
    echo "FAIL $what: want one stderr line and no stdout, got $lines lines: $err / $out"
    fails=$((fails + 1))
  fi
}
contains() {
  local what=$1 hay=$2 needle=$3
  if [[ "$hay" != *"$needle"* ]]; then
    echo "FAIL $what: output lacks '$needle': ${hay:0:300}"; fails=$((fails + 1))
  else
    passes=$((passes + 1))
  fi
}

usage_error "no subcommand" --
usage_error "unknown subcommand" -- frobnicate
usage_error "unknown flag" -- --frobnicate
usage_error "check without argv" -- check
usage_error "check with an unknown flag" -- check --bogus -- sinfo
usage_error "run with a non-number timeout" -- run --timeout abc -- sinfo
usage_error "run with a negative timeout" -- run --timeout -1 -- sinfo
usage_error "run with a zero max-output" -- run --max-output 0 -- sinfo
usage_error "run with a relative trusted dir" -- run --trusted-dirs bin -- sinfo
usage_error "corpus without paths" -- corpus
usage_error "corpus on a missing path" -- corpus /nonexistent/corpus
bad=$(mktemp); printf 'perhaps sinfo\n' > "$bad"
usage_error "corpus with a malformed line" -- corpus "$bad"
contains "malformed corpus names file and line" "$err" "$bad:1:"
rm -f "$bad"

expect 0 "help" -- --help; contains "help lists check" "$out" "check"
expect 0 "check allowed" -- check -- sinfo -N; contains "allowed prints ALLOWED" "$out" "ALLOWED"
expect 1 "check denied" -- check -- sdiag --reset
contains "denied prints the rule" "$out" "DENIED mutating-option: "
expect 1 "check denies bare scontrol" -- check -- scontrol
expect 1 "check json" -- check --json -- scontrol u NodeName=c1
contains "json names the rule" "$out" '"rule":"abbreviated-word"'
expect 0 "check with clusters" -- check --clusters rca,other -- sinfo -M other
expect 1 "check without clusters" -- check -- sinfo -M other
expect 0 "policy" -- policy; contains "policy lists sacctmgr" "$out" "always added: --readonly"
expect 0 "policy json" -- policy --json; contains "policy json" "$out" '"programs"'
expect 1 "run refuses a denied argv and runs nothing" -- run -- scontrol shutdown
contains "run denial" "$out" "DENIED mutating-word"
expect 5 "run of a program not installed" -- run --trusted-dirs /nonexistent -- sinfo
contains "not installed says so" "$err" "not installed"
expect 0 "corpus passes" -- corpus --clusters rca "$root/guard/testdata"
contains "corpus verdict line" "$out" "0 mismatches"

# guard_bench: bad input is a one-line usage error too
bench=${3:-}
if [[ -n "$bench" ]]; then
  bin=$bench
  usage_error "bench with an unknown flag" -- --bogus
  usage_error "bench with a bad run count" -- --runs x
  usage_error "bench with too few runs" -- --runs 1
  expect 0 "bench help" -- --help
  expect 2 "bench with a missing corpus" -- --corpus /nonexistent --seconds 0.1 --runs 10
  contains "bench names the corpus" "$err" "no such corpus"
fi

echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
