#!/usr/bin/env bash
# An interrupted `rca-bench record` leaves nothing running: two trials in two labs at once, the
# recorder is sent SIGTERM once both labs' controllers are up; it must stop its children, take
# both labs down by PID and exit 128+15, and no process may still name the work directory.
# Needs root; skipped otherwise (exit 77). Port bases 27300 and 28300.
# Usage: record_interrupt_live_test.sh RCA_BENCH
set -u
bin=$1
if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: the live lab needs root"
  exit 77
fi
work=$(mktemp -d /tmp/rca-rint-XXXXXX)
fx=$(mktemp -d /tmp/rca-rint-fx-XXXXXX)
"$bin" record --trials 2 --jobs 2 --work-dir "$work" --fixtures "$fx" --port-base 27300 \
  S16-partition-down >"$work.log" 2>&1 &
pid=$!
# Wait (at most 120 s) until both trials' slurmctld have written their pid files.
for _ in $(seq 1 240); do
  n=$(find "$work" -path '*/lab/run/slurmctld.pid' 2>/dev/null | wc -l)
  [[ $n -ge 2 ]] && break
  sleep 0.5
done
up=$(ps -eo args | grep -c "[${work:0:1}]${work:1}/")
kill -TERM "$pid"
wait "$pid"
rc=$?
sleep 1
left=$(ps -eo pid,args | grep "[${work:0:1}]${work:1}/")
fails=0
[[ $up -ge 6 ]] || { echo "FAIL only $up processes of the two labs were seen before the signal"; fails=1; }
[[ $rc -eq 143 ]] || { echo "FAIL exit $rc, want 143"; fails=1; }
[[ -z "$left" ]] || { echo "FAIL left running:"; echo "$left"; fails=1; }
grep -q "interrupted (signal 15): 2 trial(s) stopped, their labs down" "$work.log" ||
  { echo "FAIL the recorder did not say it stopped both trials:"; tail -5 "$work.log"; fails=1; }
if [[ -n "$left" ]]; then kill $(echo "$left" | awk '{print $1}') 2>/dev/null; fi
rm -rf "$work" "$fx" "$work.log"
[[ $fails -eq 0 ]] && echo "ok: $up lab processes before SIGTERM, none after, exit 143"
exit $fails
