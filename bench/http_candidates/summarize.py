#!/usr/bin/env python3
"""compare.sh's raw lines to a Markdown table: per server and row, the median of three runs
(min-max) of req/s, p50 and p99, server CPU per call, and every bad answer or error counted."""
import collections, re, statistics, sys

runs = collections.defaultdict(list)
hwm = {}
for line in sys.stdin:
    f = line.split()
    if len(f) == 3 and f[1] == "hwm":
        hwm[f[0]] = int(f[2])
        continue
    kv = dict(x.split("=") for x in f[3:])
    runs[(f[0], f[1])].append({k: float(v) for k, v in kv.items()})

def cell(values, fmt):
    m = statistics.median(values)
    return (fmt % m) + " (" + (fmt % min(values)) + "-" + (fmt % max(values)) + ")"

servers = list(dict.fromkeys(s for s, _ in runs))
print("| server | row | req/s | p50 ms | p99 ms | server CPU us/call | bad/errors |")
print("|---|---|---|---|---|---|---|")
for s in servers:
    for row in ["c1", "c8", "c64", "slowloris", "fleet"]:
        r = runs.get((s, row))
        if not r:
            print(f"| {s} | {row} | no run | | | | |")
            continue
        if all(x["requests"] == 0 for x in r):
            print(f"| {s} | {row} | 0: no answer in any run (wrk waits 5 s a request) | | | | |")
            continue
        rps = [x["requests"] / x["seconds"] for x in r]
        cpu = [x["cpu_ticks"] * 10000 / max(x["requests"], 1) for x in r]
        bad = int(sum(x["bad"] + x["errors"] for x in r))
        print(f"| {s} | {row} | {cell(rps, '%.0f')} | {cell([x['p50_us'] / 1000 for x in r], '%.2f')} "
              f"| {cell([x['p99_us'] / 1000 for x in r], '%.2f')} | {cell(cpu, '%.0f')} | {bad} |")
print()
for s in servers:
    print(f"{s}: VmHWM {hwm.get(s, 0) / 1024:.1f} MiB at the end of its runs")
