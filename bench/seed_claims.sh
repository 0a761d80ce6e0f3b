#!/usr/bin/env bash
# The seed's claims about Slurm under two faults, measured on a lab of one release (issue #18):
#   1. the accounting database frozen for MINUTES (db-freeze: MariaDB stopped with SIGSTOP):
#      does scheduling continue, does sacct block or fail (and after how long, with what error),
#      does slurmctld's DBD agent queue grow and flush after the heal, do the jobs submitted
#      during the stall run and reach accounting?
#   2. StateSaveLocation unwritable (statesave-readonly, bind-ro): is a submission rejected at
#      once, and with what error?
# A measurement, not a test: it prints what it saw, one line per observation, and a summary.
#
# Usage: bench/seed_claims.sh RCA_BENCH [--slurm PREFIX] [--minutes 15] [--port-base 32800]
#   as root (the lab signals daemons and mounts); RCA_BENCH is build/bin/rca-bench.
set -uo pipefail
bin=${1:?usage: bench/seed_claims.sh RCA_BENCH [--slurm PREFIX] [--minutes 15] [--port-base 32800]}
shift
prefix=
minutes=15
port_base=32800
while [[ $# -gt 0 ]]; do
  case "$1" in
    --slurm) prefix=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --port-base) port_base=$2; shift 2 ;;
    *) echo "seed_claims: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "seed_claims: the lab needs root" >&2; exit 2; }
dir=$(mktemp -d /tmp/rca-claims-XXXXXX)
up_args=(--dir "$dir" --port-base "$port_base")
[[ -n "$prefix" ]] && up_args+=(--slurm "$prefix")
trap '"$bin" fault heal db-freeze --dir "$dir" >/dev/null 2>&1; "$bin" fault heal statesave-readonly --dir "$dir" >/dev/null 2>&1; "$bin" cluster down --dir "$dir" >/dev/null 2>&1' EXIT
"$bin" cluster up "${up_args[@]}" >"$dir.up.log" 2>&1 || { cat "$dir.up.log"; exit 1; }
export SLURM_CONF=$dir/etc/slurm.conf
[[ -n "$prefix" ]] && export PATH=$prefix/bin:$PATH
version=$(sinfo -V)
echo "== $version, lab $dir, database frozen for $minutes min"
start=$(date +%s)
now() { echo $(( $(date +%s) - start )); }
agent_queue() { sdiag 2>/dev/null | sed -n 's/.*DBD Agent queue size: *\([0-9]*\).*/\1/p' | head -1; }
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }

"$bin" fault inject db-freeze --dir "$dir" >/dev/null || { echo "inject db-freeze failed"; exit 1; }
echo "t+$(now)s db-freeze injected (agent queue $(agent_queue))"
jobs=()
completed=0
max_queue=0
sacct_lines=()
for ((m = 0; m < minutes; m++)); do
  id=$(sbatch --parsable -o /dev/null --wrap true 2>&1)
  jobs+=("$id")
  t0=$(date +%s.%N)
  out=$(timeout 120 sacct -n -X -j "${jobs[0]}" -o state 2>&1)
  rc=$?
  took=$(printf '%.0f' "$(echo "$(date +%s.%N) - $t0" | bc)")
  first=$(echo "$out" | head -1 | tr -s ' ')
  q=$(agent_queue)
  (( ${q:-0} > max_queue )) && max_queue=${q:-0}
  prev=none
  (( ${#jobs[@]} > 1 )) && prev=${jobs[${#jobs[@]}-2]}
  # Read here, a minute after its submission: slurmctld forgets a finished job after MinJobAge.
  [[ $(job_state "$prev") == COMPLETED ]] && completed=$((completed + 1))
  line="t+$(now)s submitted $id; previous job $prev $(job_state "$prev"); sacct rc $rc after $took s: ${first:-<empty>}; agent queue ${q:-?}"
  echo "$line"
  sacct_lines+=("rc=$rc took=$took")
  sleep $(( 60 - $took > 5 ? 60 - $took : 5 ))
done
"$bin" fault heal db-freeze --dir "$dir" >/dev/null
healed=$(now)
echo "t+${healed}s healed (agent queue $(agent_queue))"
flushed=
for ((i = 0; i < 300; i += 5)); do
  q=$(agent_queue)
  if [[ "${q:-1}" == 0 ]]; then flushed=$(( $(now) - healed )); break; fi
  sleep 5
done
sleep 5
[[ $(job_state "${jobs[${#jobs[@]}-1]}") == COMPLETED ]] && completed=$((completed + 1))
in_sacct=$(sacct -n -X -j "$(IFS=,; echo "${jobs[*]}")" -o jobid 2>/dev/null | grep -c .)
echo "== db-freeze summary ($version, $minutes min):"
echo "  scheduling continued: $completed of ${#jobs[@]} jobs submitted during the stall COMPLETED (each read a minute after it was submitted)"
echo "  sacct during the stall: ${sacct_lines[*]}"
echo "  DBD agent queue: at most $max_queue during the stall; empty ${flushed:-not within 300} s after the heal"
echo "  jobs of the stall in sacct after the flush: $in_sacct of ${#jobs[@]}"

"$bin" fault inject statesave-readonly --dir "$dir" >/dev/null || { echo "inject statesave-readonly failed"; exit 1; }
t0=$(date +%s.%N)
out=$(timeout 60 sbatch -o /dev/null --wrap true 2>&1)
rc=$?
took=$(echo "$(date +%s.%N) - $t0" | bc)
echo "== statesave-readonly ($version): sbatch rc $rc after $(printf '%.1f' "$took") s: $(echo "$out" | head -1)"
"$bin" fault heal statesave-readonly --dir "$dir" >/dev/null
