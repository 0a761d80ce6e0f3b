#!/usr/bin/env bash
# The bounded live smoke of every runnable scenario (issue #5): one private lab; for each
# scenario inject it, watch its first hop's signals through slurm-mcp's live back-end (at most
# 45 s), heal it, and check the lab is clean again before the next. Needs root (the lab mounts,
# signals daemons and edits nftables); skipped otherwise (exit 77).
# Usage: scenario_smoke.sh RCA_BENCH
set -u
bin=$1
if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: the live lab needs root"
  exit 77
fi
exec "$bin" smoke --dir "/tmp/rca-smoke-$$" --port-base 27800 --window 45
