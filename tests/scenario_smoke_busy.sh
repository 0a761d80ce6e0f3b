#!/usr/bin/env bash
# The bounded live smoke on the busy background profile (issue #17): four representative scenarios
# (a partition down, a GPU drain by the health check, the accounting database frozen, a QOS limit),
# each in a fresh busy lab (seed 1): its first hop must not show before the fault, must show after
# it through the live back-end (at most 45 s), and the lab must return to the profile's resting
# state when healed. Needs root; skipped otherwise (exit 77). Two labs at once, port bases 25300
# and 26300.
# Usage: scenario_smoke_busy.sh RCA_BENCH
set -u
bin=$1
if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: the live lab needs root"
  exit 77
fi
exec "$bin" smoke --profile busy --seed 1 --dir "/tmp/rca-smoke-busy-$$" --port-base 25300 \
  --window 45 --jobs 2 S16-partition-down S04-gpu-ecc-drain S01-accounting-backend-stall \
  S18-qos-per-user-limit
