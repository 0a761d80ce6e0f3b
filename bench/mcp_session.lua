-- wrk script for mcp_bench: a session per connection, every answer checked.
--
--   wrk -t8 -c8 -d5s -s bench/mcp_session.lua http://127.0.0.1:PORT/mcp -- \
--       '{"topic":"nodes"}' 6 '"partition":' /tmp/expected-answer [BEARER_FILE]
--
-- Run it with one connection per thread (-tN -cN): wrk keeps Lua state per thread, so a thread
-- is a connection and its client. Its first request is initialize; the Mcp-Session-Id of the
-- answer, when the server issues one, goes on every later request. Then
-- notifications/initialized, then tools/call slurm_query ARGUMENTS until the run ends. When the
-- server closes the connection wrk reconnects and the session goes on.
--
-- Every answer is checked, no JSON is parsed. initialize: status 200 and "protocolVersion" in the
-- body. notifications/initialized: a 2xx status. The call: status 200 and a body byte-identical
-- to EXPECTED_FILE (an answer mcp_bench parsed and checked before the run: a replayed answer does
-- not change), or else one that passes every byte check: "structuredContent", no
-- "isError":true, "total_rows":ROWS, and KEY exactly ROWS times (KEY is a key each row object has
-- once, e.g. "partition":, which the text block's escaped copy of the JSON never matches).
-- The byte checks cost wrk a few hundred us on a 200-row answer (LuaJIT's find stops at every
-- '"'), more than the server's call; the comparison costs almost nothing.
-- done() prints one CHECK line (counts, wrk's socket errors, latency from wrk's histogram), a
-- FIRST_BAD line when an answer was bad, and a SESSIONS line with every session id, which
-- mcp_bench ends (DELETE) after the run as a client that leaves would.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

local kProtocol = "2025-06-18"
local kInitialize = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"' ..
                    kProtocol .. '","capabilities":{},"clientInfo":{"name":"mcp_bench_wrk",' ..
                    '"version":"1"}}}'
local kInitialized = '{"jsonrpc":"2.0","method":"notifications/initialized"}'

local function post(body, session)
  local h = {["Content-Type"] = "application/json",
             ["Accept"] = "application/json, text/event-stream"}
  if body ~= kInitialize then h["MCP-Protocol-Version"] = kProtocol end
  if session then h["Mcp-Session-Id"] = session end
  if bearer ~= "" then h["Authorization"] = "Bearer " .. bearer end
  return wrk.format("POST", wrk.path, h, body)
end

local function count(body, key)
  local n, at = 0, 1
  while true do
    local _, e = string.find(body, key, at, true)
    if not e then return n end
    n, at = n + 1, e + 1
  end
end

function init(args)
  call_body = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slurm_query",' ..
              '"arguments":' .. args[1] .. '}}'
  rows = tonumber(args[2])
  row_key = args[3]
  local f = args[4] and args[4] ~= "-" and io.open(args[4], "rb")
  expected = f and f:read("*a") or ""
  if f then f:close() end
  -- BEARER_FILE ("-": none): the access token every request carries (slurm-mcp --auth-issuer).
  local b = args[5] and args[5] ~= "-" and io.open(args[5], "rb")
  bearer = b and b:read("*l") or ""
  if b then b:close() end
  -- Plain finds only: a Lua pattern scan of a 50 KB answer costs wrk more still.
  total_comma, total_brace = '"total_rows":' .. rows .. ',', '"total_rows":' .. rows .. '}'
  ok, bad, init_bad, sessions, identical = 0, 0, 0, 0, 0
  first_bad = ""
  session_id = ""
  phase = 0
  wire = post(kInitialize, nil)
end

function request()
  return wire
end

local function note(what, status, body)
  if first_bad == "" then
    first_bad = what .. " status " .. status .. ": " ..
                string.gsub(string.sub(body, 1, 160), "[%c]", " ")
  end
end

function response(status, headers, body)
  if phase == 2 then
    local find = string.find
    if status == 200 and body == expected then
      ok, identical = ok + 1, identical + 1
    elseif status == 200 and find(body, '"structuredContent"', 1, true) and
           not find(body, '"isError":true', 1, true) and
           (find(body, total_comma, 1, true) or find(body, total_brace, 1, true)) and
           count(body, row_key) == rows then
      ok = ok + 1
    else
      bad = bad + 1
      note("tools/call", status, body)
    end
  elseif phase == 0 then
    if status == 200 and string.find(body, '"protocolVersion"', 1, true) then
      local session = nil
      for name, value in pairs(headers) do
        if string.lower(name) == "mcp-session-id" then session = value end
      end
      session_id = session or ""
      initialized = post(kInitialized, session)
      call = post(call_body, session)
      phase, wire = 1, initialized
    else
      init_bad = init_bad + 1
      note("initialize", status, body)
    end
  else
    if status >= 200 and status < 300 then
      sessions = sessions + 1
      phase, wire = 2, call
    else
      init_bad = init_bad + 1
      note("notifications/initialized", status, body)
    end
  end
end

function done(summary, latency, requests)
  local sum = {ok = 0, bad = 0, init_bad = 0, sessions = 0, identical = 0}
  local first = ""
  local ids = {}
  for _, t in ipairs(threads) do
    for k in pairs(sum) do sum[k] = sum[k] + t:get(k) end
    if first == "" then first = t:get("first_bad") end
    if t:get("session_id") ~= "" then table.insert(ids, t:get("session_id")) end
  end
  local e = summary.errors
  io.write(string.format(
      "CHECK ok=%d identical=%d bad=%d init_bad=%d sessions=%d requests=%d duration_us=%d connect=%d " ..
      "read=%d write=%d status=%d timeout=%d p50_us=%d p99_us=%d max_us=%d\n",
      sum.ok, sum.identical, sum.bad, sum.init_bad, sum.sessions, summary.requests, summary.duration,
      e.connect, e.read, e.write, e.status, e.timeout, latency:percentile(50),
      latency:percentile(99), latency.max))
  if first ~= "" then io.write("FIRST_BAD " .. first .. "\n") end
  if #ids > 0 then io.write("SESSIONS " .. table.concat(ids, " ") .. "\n") end
end
