#!/usr/bin/env python3
"""Holds N connections to 127.0.0.1:PORT open until killed: 'half' sends half a request header
and stops (slowloris), 'idle' sends one whole request, reads its answer and stays open (an idle
keep-alive client). Prints how many it holds and, on stdin EOF or SIGTERM, how many the server
closed. Its own CPU does not matter: it only sits on sockets."""
import os, signal, socket, sys, time

mode, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
body = (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slurm_query",'
        b'"arguments":{"topic":"nodes"}}}')
req = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
       b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n"
       b"Content-Length: %d\r\n" % (port, len(body)))
if os.environ.get("MCP_SESSION"):
    req += b"Mcp-Session-Id: " + os.environ["MCP_SESSION"].encode() + b"\r\n"
req += b"\r\n" + body
socks = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    if mode == "half":
        s.sendall(req[:40])
    else:
        s.sendall(req)
        s.settimeout(30)
        got = b""
        try:
            while b"structuredContent" not in got:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except socket.timeout:
            pass
    socks.append(s)
print("holding %d %s connections" % (len(socks), mode), flush=True)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
while True:
    time.sleep(1)
