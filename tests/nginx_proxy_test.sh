#!/usr/bin/env bash
# packaging/nginx/slurm-mcp.conf run by Debian's nginx in front of slurm-mcp (issue #38, item 4):
# nginx terminates TLS with the test CA's certificate (mcp/testdata/tls) for the reserved name
# mcp.cluster.test, which curl --resolve points at 127.0.0.1; slurm-mcp (replay, a bearer token)
# listens on loopback behind it with --allowed-host mcp.cluster.test. Checked through the proxy:
# readiness, the 401 and its WWW-Authenticate, initialize with the token and its Mcp-Session-Id, a
# tool call in the session, a streamed (SSE) tool call, and that slurm-mcp itself refuses that
# Host without --allowed-host. The file is used as shipped but for its name, port, certificate and
# upstream, which sed rewrites. Both processes are tracked by PID and stopped by PID on exit.
#
# Usage: tests/nginx_proxy_test.sh SLURM_MCP SOURCE_DIR
set -euo pipefail

bin=$1
src=$2
nginx_port=18392
mcp_port=18393
name=mcp.cluster.test
tls=$src/mcp/testdata/tls
nginx=/usr/sbin/nginx
if [[ ! -x $nginx ]]; then
  echo "FAIL $nginx is missing: install Debian's nginx package (scripts/deps.sh)" >&2
  exit 1
fi

tmp=$(mktemp -d)
chmod 755 "$tmp"  # nginx's workers run as nobody: they read the configuration and write temp files
mcp_pid=""
nginx_pid=""
cleanup() {
  local pid
  for pid in $nginx_pid $mcp_pid; do
    kill "$pid" 2> /dev/null || true
  done
  for pid in $nginx_pid $mcp_pid; do
    wait "$pid" 2> /dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "FAIL $*" >&2
  echo "--- slurm-mcp stderr:" >&2
  cat "$tmp/mcp.err" >&2 || true
  echo "--- nginx error log:" >&2
  cat "$tmp/error.log" >&2 || true
  exit 1
}
passed=0
ok() {
  passed=$((passed + 1))
  echo "ok   $*"
}

# --- slurm-mcp on loopback, a shared bearer token.
printf 'a-token-of-more-than-sixteen-bytes\n' > "$tmp/token"
"$bin" serve --http "127.0.0.1:$mcp_port" --replay "$src/fixtures/demo" --skills '' \
  --token-file "$tmp/token" --allowed-host "$name" 2> "$tmp/mcp.err" &
mcp_pid=$!
for _ in $(seq 100); do
  grep -q 'serving MCP on' "$tmp/mcp.err" 2> /dev/null && break
  kill -0 "$mcp_pid" 2> /dev/null || fail "slurm-mcp exited at start"
  sleep 0.1
done
grep -q 'serving MCP on' "$tmp/mcp.err" || fail "slurm-mcp did not start in 10 s"

# --- nginx with the shipped site, inside a minimal main configuration of its own.
install -m 644 "$tls/server.pem" "$tmp/server.pem"
install -m 644 "$tls/server.key" "$tmp/server.key"
sed -e "s|listen 443 ssl;|listen 127.0.0.1:$nginx_port ssl;|" \
    -e "s|server_name mcp.example.org;|server_name $name;|" \
    -e "s|/etc/ssl/certs/mcp.example.org.pem|$tmp/server.pem|" \
    -e "s|/etc/ssl/private/mcp.example.org.key|$tmp/server.key|" \
    -e "s|server 127.0.0.1:8787;|server 127.0.0.1:$mcp_port;|" \
    "$src/packaging/nginx/slurm-mcp.conf" > "$tmp/site.conf"
for want in "listen 127.0.0.1:$nginx_port ssl;" "server 127.0.0.1:$mcp_port;" "$tmp/server.pem"; do
  grep -qF "$want" "$tmp/site.conf" || fail "the shipped file no longer has what this test rewrites ($want)"
done
cat > "$tmp/nginx.conf" << CONF
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/error.log warn;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $tmp/body;
    proxy_temp_path $tmp/proxy;
    fastcgi_temp_path $tmp/fastcgi;
    uwsgi_temp_path $tmp/uwsgi;
    scgi_temp_path $tmp/scgi;
    include $tmp/site.conf;
}
CONF
"$nginx" -t -p "$tmp" -c "$tmp/nginx.conf" > "$tmp/nginx-t.log" 2>&1 ||
  { cat "$tmp/nginx-t.log" >&2; fail "nginx -t rejects the configuration"; }
ok "nginx -t accepts packaging/nginx/slurm-mcp.conf"
"$nginx" -p "$tmp" -c "$tmp/nginx.conf" -g 'daemon off;' 2>> "$tmp/error.log" &
nginx_pid=$!

base=https://$name:$nginx_port
curl_tls=(curl -sS --max-time 20 --cacert "$tls/ca.pem" --resolve "$name:$nginx_port:127.0.0.1")
for _ in $(seq 100); do
  "${curl_tls[@]}" -o /dev/null "$base/ready" 2> /dev/null && break
  kill -0 "$nginx_pid" 2> /dev/null || fail "nginx exited at start"
  sleep 0.1
done

# --- through the proxy.
ready=$("${curl_tls[@]}" -w '\n%{http_code}' -H "Authorization: Bearer $(cat "$tmp/token")" "$base/ready")
[[ ${ready##*$'\n'} == 200 && $ready == *'"backend":"replay"'* ]] || fail "/ready through nginx: $ready"
ok "/ready through nginx over TLS, Host $name"

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"nginx-test","version":"1"}}}'
headers=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
"${curl_tls[@]}" -D "$tmp/h401" -o "$tmp/b401" "${headers[@]}" -d "$init" "$base/mcp"
grep -q '^HTTP/1.1 401' "$tmp/h401" || fail "no token: $(head -1 "$tmp/h401")"
grep -qi '^www-authenticate: Bearer' "$tmp/h401" || fail "no WWW-Authenticate through nginx: $(cat "$tmp/h401")"
ok "no token: 401 and its WWW-Authenticate pass through"

auth=(-H "Authorization: Bearer $(cat "$tmp/token")")
"${curl_tls[@]}" -D "$tmp/hinit" -o "$tmp/binit" "${headers[@]}" "${auth[@]}" -d "$init" "$base/mcp"
grep -q '^HTTP/1.1 200' "$tmp/hinit" || fail "initialize: $(head -1 "$tmp/hinit") $(cat "$tmp/binit")"
sid=$(grep -i '^mcp-session-id:' "$tmp/hinit" | tr -d '\r' | cut -d' ' -f2)
[[ -n $sid ]] || fail "no Mcp-Session-Id through nginx"
ok "initialize with the token: 200, session $sid"

session=(-H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25')
"${curl_tls[@]}" -o /dev/null "${headers[@]}" "${auth[@]}" "${session[@]}" \
  -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$base/mcp"
call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slurm_query","arguments":{"topic":"nodes"}}}'
nodes=$("${curl_tls[@]}" "${headers[@]}" "${auth[@]}" "${session[@]}" -d "$call" "$base/mcp")
[[ $nodes == *'"result"'* && $nodes != *'"isError":true'* ]] || fail "nodes in the session: ${nodes:0:300}"
ok "a tool call in the session through nginx"

stream='{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slurm_query","arguments":{"topic":"queue"},"_meta":{"progressToken":"p1"}}}'
"${curl_tls[@]}" -D "$tmp/hsse" -o "$tmp/bsse" -N "${headers[@]}" "${auth[@]}" "${session[@]}" -d "$stream" "$base/mcp"
grep -qi '^content-type: text/event-stream' "$tmp/hsse" || fail "no SSE through nginx: $(cat "$tmp/hsse")"
grep -q '^data: .*"id":3' "$tmp/bsse" || fail "the streamed answer: $(head -c 300 "$tmp/bsse")"
ok "a streamed tool call (SSE) through nginx"

# --- the Host check is what --allowed-host opens: another name is refused by slurm-mcp itself.
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Host: other.cluster.test" "${headers[@]}" "${auth[@]}" \
  -d "$init" "http://127.0.0.1:$mcp_port/mcp")
[[ $code == 403 ]] || fail "Host other.cluster.test straight to slurm-mcp: HTTP $code"
ok "a Host not allowed: 403 from slurm-mcp"

echo "$passed passed, 0 failed"
