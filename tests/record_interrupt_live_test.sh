#!/usr/bin/env bash
# An interrupted `rca-bench record` leaves nothing running: two trials in two labs at once, the
# recorder is sent SIGTERM once both labs' controllers are up; it must stop its children, take
# both labs down by PID and exit 128+15, and no process may still name the work directory.
# Then the retry: a trial whose first attempt failed is run once more after the others end, and
# a SIGTERM while that retry's lab is up must take it down too (it ran in the recorder itself
# once, where the signal killed the recorder mid bring-up and left munged and MariaDB running).
# Needs root; skipped otherwise (exit 77). Port bases 27300 and 28300, then 30800 and 31800.
# Usage: record_interrupt_live_test.sh RCA_BENCH
set -u
bin=$1
if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: the live lab needs root"
  exit 77
fi
# The processes of a work directory: those naming it in their arguments or environment (slurmdbd
# runs as `slurmdbd -D`, its configuration named only by SLURM_CONF).
left_in() {
  local p
  for p in /proc/[0-9]*; do
    if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q "$1/" ||
       tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -q "^SLURM_CONF=$1/"; then
      echo "${p#/proc/} $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)"
    fi
  done
}
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
up=$(left_in "$work" | wc -l)
kill -TERM "$pid"
wait "$pid"
rc=$?
sleep 1
left=$(left_in "$work")
fails=0
[[ $up -ge 6 ]] || { echo "FAIL only $up processes of the two labs were seen before the signal"; fails=1; }
[[ $rc -eq 143 ]] || { echo "FAIL exit $rc, want 143"; fails=1; }
[[ -z "$left" ]] || { echo "FAIL left running:"; echo "$left"; fails=1; }
grep -q "interrupted (signal 15): 2 trial(s) stopped, their labs down" "$work.log" ||
  { echo "FAIL the recorder did not say it stopped both trials:"; tail -5 "$work.log"; fails=1; }
if [[ -n "$left" ]]; then kill $(echo "$left" | awk '{print $1}') 2>/dev/null; fi
rm -rf "$work" "$work.log"
[[ $fails -eq 0 ]] && echo "ok: $up lab processes before SIGTERM, none after, exit 143"

# The retry. Trial 2's MariaDB port (31800 + 6) is held by a listener (perl, from perl-base), so
# its first attempt fails at once; the listener goes; trial 1 records (about a minute), then
# trial 2 runs once more, and the recorder is sent SIGTERM once that lab's slurmctld is up.
work=$(mktemp -d /tmp/rca-rint-XXXXXX)
perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(LocalAddr => "127.0.0.1",
  LocalPort => 31806, Listen => 1) or die "cannot hold port 31806: $!\n";
  open(my $f, ">", $ARGV[0]) or die; close($f); sleep 600' "$work.held" &
holder=$!
# The recorder starts only once the port is held (else its trial 2 may bind first).
for _ in $(seq 1 100); do [[ -e "$work.held" ]] && break; sleep 0.1; done
[[ -e "$work.held" ]] || { echo "FAIL the listener did not hold port 31806"; fails=1; }
"$bin" record --trials 2 --jobs 2 --work-dir "$work" --fixtures "$fx" --port-base 30800 \
  S16-partition-down >"$work.log" 2>&1 &
pid=$!
first_failed=0
for _ in $(seq 1 240); do
  if grep -qs '^FAILED: port 31806' "$work"/*/trial-2/trial.log; then first_failed=1; break; fi
  sleep 0.5
done
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
retry_up=0
for _ in $(seq 1 480); do
  if grep -q "trial 2 of S16-partition-down failed; running it once more" "$work.log" &&
     [[ -n $(find "$work" -path '*/trial-2/lab/run/slurmctld.pid' 2>/dev/null) ]]; then
    retry_up=1; break
  fi
  sleep 0.5
done
kill -TERM "$pid"
wait "$pid"
rc=$?
sleep 1
left=$(left_in "$work")
[[ $first_failed -eq 1 ]] || { echo "FAIL trial 2's first attempt did not fail on the held port"; fails=1; }
[[ $retry_up -eq 1 ]] || { echo "FAIL trial 2 was not run once more:"; tail -5 "$work.log"; fails=1; }
[[ $rc -eq 143 ]] || { echo "FAIL retry: exit $rc, want 143"; fails=1; }
[[ -z "$left" ]] || { echo "FAIL retry: left running:"; echo "$left"; fails=1; }
grep -q "interrupted (signal 15) while trial 2 ran once more: stopped, its lab down" "$work.log" ||
  { echo "FAIL the recorder did not say it stopped the retry:"; tail -5 "$work.log"; fails=1; }
if [[ -n "$left" ]]; then kill $(echo "$left" | awk '{print $1}') 2>/dev/null; fi
rm -rf "$work" "$fx" "$work.log" "$work.held"
[[ $fails -eq 0 ]] && echo "ok: a retry's lab is taken down by SIGTERM too, exit 143"
exit $fails
