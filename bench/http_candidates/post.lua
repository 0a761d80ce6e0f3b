-- wrk script: one slurm_query nodes tools/call per request on a keep-alive connection, every
-- answer checked (status 200 and a result with structuredContent), the bad ones counted.
wrk.method = "POST"
wrk.path = "/mcp"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slurm_query",' ..
           '"arguments":{"topic":"nodes"}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-06-18"
-- A stateful server (the TypeScript SDK reference): the session compare.sh opened for this run.
local session = os.getenv("MCP_SESSION")
if session and session ~= "" then wrk.headers["Mcp-Session-Id"] = session end

local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) bad = 0 end
function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"structuredContent"', 1, true) then bad = bad + 1 end
end
function done(summary, latency, requests)
  local b = 0
  for _, t in ipairs(threads) do b = b + t:get("bad") end
  io.write(string.format("CHECK requests=%d bad=%d errors=%d p50_us=%d p99_us=%d\n",
                         summary.requests, b,
                         summary.errors.connect + summary.errors.read + summary.errors.write +
                         summary.errors.status + summary.errors.timeout,
                         latency:percentile(50), latency:percentile(99)))
end
