#!/usr/bin/env bash
# The MCP part of `make demo`: serve the recorded demo bundle over Streamable HTTP on loopback and
# fetch an overview, then a query while the accounting database was frozen, through the C++ MCP
# client. Stops the server by its PID.
set -u
bin=${1:-build/bin}
bundle=${2:-fixtures/demo}
err=$(mktemp)
"$bin/slurm-mcp" serve --http 127.0.0.1:0 --replay "$bundle" --offset 10 2>"$err" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$err"' EXIT
for _ in $(seq 50); do grep -q 'serving MCP' "$err" && break; sleep 0.1; done
port=$(grep -o '127.0.0.1:[0-9]*' "$err" | head -1 | cut -d: -f2)
[[ -n "$port" ]] || { cat "$err"; exit 1; }
echo "\$ slurm-mcp serve --http 127.0.0.1:$port --replay $bundle --offset 10   (the database frozen 10 s before)"
echo "\$ slurm-mcp call --http 127.0.0.1:$port slurm_overview"
"$bin/slurm-mcp" call --http "127.0.0.1:$port" slurm_overview | grep -v '^{'
echo "\$ slurm-mcp call --http 127.0.0.1:$port slurm_query --args '{\"topic\":\"accounting\"}'"
"$bin/slurm-mcp" call --http "127.0.0.1:$port" slurm_query --args '{"topic":"accounting"}'
echo "(exit $?: a tool error, because a hang is not an empty table)"
