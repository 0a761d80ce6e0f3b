#!/usr/bin/env bash
# Bad input to rca-bench gives a one-line error and a non-zero exit, never a crash; commands
# that need no running lab behave as documented. (The live lab itself: scenarios/live/live_test.)
set -u
bin=$1
fails=0
passes=0
nolab=$(mktemp -d)/none

check() {  # check CODE DESCRIPTION ONE_LINE(yes|no) -- ARGS...
  local code=$1 what=$2 one=$3; shift 4
  out=$("$bin" "$@" 2>/tmp/rca_cli_err.$$); rc=$?
  err=$(cat /tmp/rca_cli_err.$$)
  if [[ $rc -ne $code ]]; then
    echo "FAIL $what: exit $rc, want $code (stdout: ${out:0:200}; stderr: ${err:0:200})"
    fails=$((fails + 1)); return
  fi
  if [[ $one == yes && ( $(printf '%s' "$err" | grep -c '') -ne 1 || -n "$out" ) ]]; then
    echo "FAIL $what: want exactly one stderr line and no stdout: $err / $out"
    fails=$((fails + 1)); return
  fi
  passes=$((passes + 1))
}
contains() {
  if [[ "$2" != *"$3"* ]]; then echo "FAIL $1: lacks '$3': ${2:0:300}"; fails=$((fails + 1));
  else passes=$((passes + 1)); fi
}

check 2 "no subcommand" yes --
check 2 "unknown subcommand" yes -- frobnicate
check 2 "cluster without a subcommand" yes -- cluster
check 2 "up with zero nodes" yes -- cluster up --nodes 0 --dir "$nolab"
check 2 "up with a non-number" yes -- cluster up --nodes x --dir "$nolab"
check 2 "up with a privileged port base" yes -- cluster up --port-base 80 --dir "$nolab"
check 2 "up with an unknown profile" yes -- cluster up --profile bogus --dir "$nolab"
contains "an unknown profile names the choices" "$err" "{clean,busy}"
check 2 "up with a non-number seed" yes -- cluster up --profile busy --seed x --dir "$nolab"
check 2 "smoke with an unknown profile" yes -- smoke --profile quiet S16-partition-down
check 2 "record with an unknown profile" yes -- record --profile quiet S16-partition-down
out=$("$bin" cluster up --help 2>&1)
contains "up --help describes the profile" "$out" "busy (other users' running and pending jobs"
contains "up --help describes the seed" "$out" "--seed"
check 2 "fault without a subcommand" yes -- fault
check 2 "inject without a name" yes -- fault inject
check 2 "inject an unknown fault" yes -- fault inject frobnicate --dir "$nolab"
contains "unknown fault names the list" "$err" "rca-bench fault list"
check 2 "inject with a bad mode" yes -- fault inject gpu-fake --mode melt --dir "$nolab"
check 2 "inject with a bad daemon" yes -- fault inject net-drop --daemon sshd --dir "$nolab"
check 2 "flood with zero workers" yes -- fault inject rpc-flood --workers 0 --dir "$nolab"
check 1 "inject without a lab" yes -- fault inject drain --dir "$nolab"
contains "no lab says so" "$err" "cluster up"
check 1 "up with a relative dir" yes -- cluster up --dir relative/lab
check 1 "status without a lab" no -- cluster status --dir "$nolab"
contains "status says there is no lab" "$out" "no slurm-rca lab"
check 1 "env without a lab" yes -- cluster env --dir "$nolab"
check 0 "down on nothing" no -- cluster down --dir "$nolab"
contains "down on nothing says so" "$out" "nothing to stop"
[[ ! -e "$nolab" ]] || { echo "FAIL down on nothing created $nolab"; fails=$((fails + 1)); }
check 0 "fault list" no -- fault list
for f in db-freeze dbd-stop munge-stop slurmd-kill slurmd-pause statesave-readonly rpc-flood \
         net-drop drain gpu-fake ctld-stop dbd-kill; do
  contains "fault list names $f" "$out" "$f"
done
check 0 "help" no -- --help
# The Slurm release picks a bundle set; the fingerprint tells them apart and names it.
check 2 "an unknown slurm release" yes -- --slurm-release 21.08 fingerprint
check 2 "a slurm release and --bundles" yes -- --slurm-release 25.11 --bundles clean fingerprint
check 0 "fingerprint on 22.05" no -- fingerprint
fp2205=$out
contains "the 22.05 fingerprint names its release" "$err" "bundles busy (Slurm 22.05)"
check 0 "fingerprint on 25.11, the option after the subcommand" no -- fingerprint --slurm-release 25.11
contains "the 25.11 fingerprint names its release" "$err" "(Slurm 25.11)"
if [[ "$out" == sha256:* && "$out" != "$fp2205" ]]; then passes=$((passes + 1));
else echo "FAIL 25.11 and 22.05 fingerprints: '$out' vs '$fp2205'"; fails=$((fails + 1)); fi
check 0 "list shows both releases" no -- list
contains "list has a 25.11 column" "$out" "busy-25.11 (25.11): hops measured"
contains "list has a 22.05 column" "$out" "busy (22.05): hops measured"
rm -rf "$(dirname "$nolab")" /tmp/rca_cli_err.$$

echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
