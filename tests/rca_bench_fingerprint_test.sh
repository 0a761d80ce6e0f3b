#!/usr/bin/env bash
# What tests/cli/rca-bench.cases cannot say, since it compares two runs: the suite fingerprint on
# Slurm 25.11's bundle set differs from the one on 22.05's (the default). Each run's own contract
# (exit 0, a sha256: line, the release named on stderr) is in the cases file.
set -u
bin=$1
a=$("$bin" fingerprint 2>/dev/null) || { echo "FAIL fingerprint: exit $?"; exit 1; }
b=$("$bin" fingerprint --slurm-release 25.11 2>/dev/null) ||
  { echo "FAIL fingerprint --slurm-release 25.11: exit $?"; exit 1; }
if [[ $a != sha256:* || $b != sha256:* || $a == "$b" ]]; then
  echo "FAIL 25.11 and 22.05 fingerprints: '$b' vs '$a'"
  exit 1
fi
echo "the fingerprints differ: 22.05 $a, 25.11 $b"
