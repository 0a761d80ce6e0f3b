// A small MCP server on the official TypeScript SDK v2 (@modelcontextprotocol/server, pinned in
// tests/mcp_peers/sdk2/package.json and installed by setup.sh): the real 2026-07-28 peer of the C++
// client's test (tests/mcp_client_sdk2_test.cc). Both eras, as the SDK serves them by default.
//
//   node tests/mcp_peers/v2_server.mjs --stdio   serveStdio on stdin/stdout (exits on stdin EOF)
//   node tests/mcp_peers/v2_server.mjs --http    createMcpHandler on 127.0.0.1:0; prints
//                                                "serving MCP on http://127.0.0.1:PORT/mcp" on stdout
//
// Over HTTP each request is logged on stderr as one line, `http VERB mcp-method=... mcp-name=...
// mcp-protocol-version=... mcp-session-id=...` ('-' for a header not sent), so that the test can
// check what the client put on the wire. Tools: echo {text} (structuredContent {echo}), add {a, b}.
// Prompt: `grüße` {name} (a non-ASCII name: Mcp-Name goes base64 and the SDK decodes it).
// The SDK is loaded from ${SLURM_RCA_NPM_CACHE:-$HOME/.cache/slurm-rca/npm-peers}/sdk2.
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const cache = process.env.SLURM_RCA_NPM_CACHE ?? path.join(os.homedir(), '.cache', 'slurm-rca', 'npm-peers');
const prefix = path.join(cache, 'sdk2');
let sdk, stdio, z;
try {
  const req = createRequire(path.join(prefix, 'package.json'));
  sdk = req('@modelcontextprotocol/server');
  stdio = req('@modelcontextprotocol/server/stdio');
  z = req('zod');
} catch (e) {
  console.error(`v2_server: cannot load @modelcontextprotocol/server from ${prefix} ` +
                `(run tests/mcp_peers/setup.sh first): ${e.message}`);
  process.exit(2);
}
const { McpServer, createMcpHandler } = sdk;

// One factory for both eras (the SDK builds an instance per modern request, and per connection or
// legacy request).
function makeServer() {
  const server = new McpServer({ name: 'sdk2-peer', version: '2.4.0' },
                               { instructions: 'A test peer: echo and add.' });
  server.registerTool('echo', {
    description: 'Returns its text',
    inputSchema: z.object({ text: z.string() }),
    outputSchema: z.object({ echo: z.string() }),
  }, async ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { echo: text } }));
  server.registerTool('add', {
    description: 'Adds two numbers',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
  }, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
  server.registerPrompt('grüße', {
    description: 'A greeting',
    argsSchema: z.object({ name: z.string() }),
  }, ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Grüße, ${name}` } }] }));
  return server;
}

const mode = process.argv[2];
if (mode === '--stdio') {
  stdio.serveStdio(makeServer);
} else if (mode === '--http') {
  const handler = createMcpHandler(makeServer);
  const server = http.createServer(async (req, res) => {
    const h = (name) => req.headers[name] ?? '-';
    console.error(`http ${req.method} mcp-method=${h('mcp-method')} mcp-name=${h('mcp-name')} ` +
                  `mcp-protocol-version=${h('mcp-protocol-version')} mcp-session-id=${h('mcp-session-id')}`);
    try {
      // node:http request -> web Request -> the SDK's fetch handler -> node:http response.
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
      }
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, {
        method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    } catch (e) {
      console.error(`v2_server: ${e?.stack ?? e}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(0, '127.0.0.1', () => {
    console.log(`serving MCP on http://127.0.0.1:${server.address().port}/mcp`);
  });
  const stop = () => { server.close(); handler.close().finally(() => process.exit(0)); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  console.error('usage: v2_server.mjs --stdio | --http');
  process.exit(2);
}
