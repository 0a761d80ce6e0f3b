#!/usr/bin/env bash
# The live part of `make demo`: a real Slurm control plane, a frozen accounting database, and
# what the guard's executor reports about it. Needs root; stops everything it started.
set -u
bin=${1:-build/bin}
dir=/tmp/slurm-rca-demo
if [[ $(id -u) -ne 0 ]]; then
  echo "(skipping the live demo: it needs root)"
  exit 0
fi
trap '"$bin/rca-bench" cluster down --dir "$dir" >/dev/null' EXIT
"$bin/rca-bench" cluster up --dir "$dir" --port-base 30800 || exit 1
conf=$dir/etc/slurm.conf
run() {
  echo "\$ slurm-guard run --timeout 5 -- $*"
  "$bin/slurm-guard" run --slurm-conf "$conf" --timeout 5 -- "$@" 2>&1 | sed 's/^/  /'
}
echo
run sinfo -N -o "%N %P %T %G"
echo "\$ sbatch --wrap true   (not through the guard: sbatch is not a read)"
SLURM_CONF=$conf sbatch --chdir="$dir" -o /dev/null --wrap true | sed 's/^/  /'
sleep 3
echo
"$bin/rca-bench" fault inject db-freeze --dir "$dir"
run sinfo -h -o "%D nodes %T"
run sacct -a -X -n
"$bin/rca-bench" fault heal db-freeze --dir "$dir"
sleep 1
run sacct -a -X -n -o JobID,State
echo
run scontrol update NodeName=node1 State=DRAIN Reason=demo
echo
"$bin/rca-bench" cluster down --dir "$dir"
trap - EXIT
