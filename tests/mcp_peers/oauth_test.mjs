// slurm-mcp serve --auth-issuer as an OAuth 2.1 resource server, end to end with real parts: a
// real OpenID Provider (oidc-provider, pinned in tests/mcp_peers/oidc/package.json) issues JWT
// access tokens by client credentials with a resource indicator (RFC 8707), and the official MCP
// TypeScript SDK clients (v1, 2025-11-25; v2, 2026-07-28) call slurm-mcp with them, over plain
// HTTP on loopback and over TLS (slurm-mcp --tls-cert with the test CA of mcp/testdata/tls, which
// this script makes Node trust by running itself again with NODE_EXTRA_CA_CERTS).
//
//   node tests/mcp_peers/oauth_test.mjs [SLURM_MCP_BINARY] [SOURCE_DIR]
//
// Everything listens on 127.0.0.1; every process this script starts is stopped by PID. Prints one
// line per check and `N passed, M failed`; exits 1 on any failure.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const srcDir = path.resolve(process.argv[3] ?? path.join(here, '..', '..'));
const bin = path.resolve(process.argv[2] ?? path.join(srcDir, 'build', 'bin', 'slurm-mcp'));
const demo = path.join(srcDir, 'fixtures', 'demo');
const tlsDir = path.join(srcDir, 'mcp', 'testdata', 'tls');
const testCa = path.join(tlsDir, 'ca.pem');
// Node reads NODE_EXTRA_CA_CERTS only at start: run again with it (this process only waits).
if (process.env.NODE_EXTRA_CA_CERTS !== testCa) {
  const again = spawnSync(process.execPath, process.argv.slice(1),
                          { stdio: 'inherit', env: { ...process.env, NODE_EXTRA_CA_CERTS: testCa } });
  process.exit(again.status ?? 1);
}
const cache = process.env.SLURM_RCA_NPM_CACHE ?? path.join(os.homedir(), '.cache', 'slurm-rca', 'npm-peers');

async function importFrom(prefix, specifier) {
  const resolved = createRequire(path.join(prefix, 'package.json')).resolve(specifier);
  return import(pathToFileURL(resolved).href);
}
let Provider, errors, sdk1, sdk2;
try {
  ({ default: Provider, errors } = await importFrom(path.join(cache, 'oidc'), 'oidc-provider'));
  const req1 = createRequire(path.join(cache, 'sdk', 'package.json'));
  sdk1 = { ...req1('@modelcontextprotocol/sdk/client/index.js'),
           ...req1('@modelcontextprotocol/sdk/client/streamableHttp.js') };
  sdk2 = await importFrom(path.join(cache, 'sdk2'), '@modelcontextprotocol/client');
} catch (e) {
  console.error(`oauth_test: cannot load oidc-provider or the MCP SDKs from ${cache} ` +
                `(run tests/mcp_peers/setup.sh first): ${e.message}`);
  process.exit(2);
}

let passed = 0, failed = 0;
async function check(name, fn) {
  try {
    const detail = await fn();
    passed++;
    console.log(`ok   ${name}${detail ? ` (${detail})` : ''}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${process.env.VERBOSE && e?.stack ? e.stack : (e?.message ?? String(e))}`);
  }
}
function assert(cond, msg) { if (!cond) throw new Error(msg); }
const watchdog = setTimeout(() => { console.log('FAIL watchdog: 240 s'); process.exit(1); }, 240000);

// ------------------------------------------------------------------ the authorization server
async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
    s.on('error', reject);
  });
}

const mcpPort = await freePort();
const audience = `http://127.0.0.1:${mcpPort}/mcp`;
const tlsPort = await freePort();
const tlsAudience = `https://127.0.0.1:${tlsPort}/mcp`;
const otherAudience = 'http://127.0.0.1:9/another-resource';
const SECRET = 'a-client-secret-of-at-least-32-characters';

function signingKeys() {
  const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  return { keys: [{ ...ec, kid: `ec-${crypto.randomUUID()}`, use: 'sig', alg: 'ES256' },
                  { ...rsa, kid: `rsa-${crypto.randomUUID()}`, use: 'sig', alg: 'RS256' }] };
}

// Starts oidc-provider on `port` (0: any) with `jwks`; returns {issuer, port, close}.
async function startProvider(port, jwks) {
  const server = http.createServer();
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  const bound = server.address().port;
  const issuer = `http://127.0.0.1:${bound}`;
  const client = (id) => ({ client_id: id, client_secret: SECRET, grant_types: ['client_credentials'],
                            redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_post',
                            scope: 'slurm:read slurm:read:own slurm:logs' });
  const provider = new Provider(issuer, {
    clients: [client('ops-agent'), client('other-agent'), client('alice')],
    scopes: ['openid', 'slurm:read', 'slurm:read:own', 'slurm:logs'],
    jwks,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource) => {
          if (![audience, otherAudience, tlsAudience].includes(resource)) throw new errors.InvalidTarget();
          return { scope: 'slurm:read slurm:read:own slurm:logs', audience: resource, accessTokenTTL: 300,
                   accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } };
        },
      },
    },
  });
  server.on('request', provider.callback());
  const sockets = new Set();
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  return { issuer, port: bound,
           close: () => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(r); }) };
}

async function token(issuer, clientId, resource = audience, scope = 'slurm:read') {
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId,
                                     client_secret: SECRET, resource, scope });
  const res = await fetch(`${issuer}/token`, { method: 'POST', body,
                                               headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  const json = await res.json();
  if (!res.ok) throw new Error(`token endpoint: HTTP ${res.status} ${JSON.stringify(json)}`);
  return json.access_token;
}
const claimsOf = (t) => JSON.parse(Buffer.from(t.split('.')[1], 'base64url').toString());

// ------------------------------------------------------------------ slurm-mcp
const children = new Set();
process.on('exit', () => { for (const c of children) { try { process.kill(c.pid, 'SIGKILL'); } catch { /* gone */ } } });

async function startMcp(issuer, port, extra = [], { tls = false } = {}) {
  const tlsArgs = tls ? ['--tls-cert', path.join(tlsDir, 'server.pem'), '--tls-key', path.join(tlsDir, 'server.key')] : [];
  const args = ['serve', '--http', `127.0.0.1:${port}`, '--replay', demo, '--auth-issuer', issuer,
                '--auth-audience', tls ? tlsAudience : audience, '--auth-principal-claim', 'client_id',
                ...tlsArgs, ...extra];
  const child = spawn(bin, args, { cwd: srcDir, stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((r) => child.on('exit', (code) => { children.delete(child); r(code); }));
  for (let i = 0; i < 200 && !/serving MCP on/.test(stderr); i++) {
    if (child.exitCode !== null) throw new Error(`slurm-mcp exited ${child.exitCode}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert(/serving MCP on/.test(stderr), `slurm-mcp did not start: ${stderr}`);
  return { url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`, stderr: () => stderr,
           stop: async () => { child.kill('SIGTERM'); return exited; } };
}

async function post(url, bearer, body, headers = {}) {
  const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers };
  if (bearer) h.authorization = `Bearer ${bearer}`;
  return fetch(url, { method: 'POST', headers: h, body: JSON.stringify(body) });
}
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize',
               params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'oauth-test', version: '1' } } };

// ------------------------------------------------------------------ the checks
const provider = await startProvider(0, signingKeys());
const mcp = await startMcp(provider.issuer, mcpPort);
const metadataUrl = `http://127.0.0.1:${mcpPort}/.well-known/oauth-protected-resource/mcp`;
let good;

await check('the provider issues a JWT access token for slurm-mcp', async () => {
  good = await token(provider.issuer, 'ops-agent');
  const c = claimsOf(good);
  assert(c.aud === audience, `aud ${JSON.stringify(c.aud)}`);
  assert(c.iss === provider.issuer && c.client_id === 'ops-agent', JSON.stringify(c));
  return `aud ${c.aud}, scope "${c.scope}", alg ${JSON.parse(Buffer.from(good.split('.')[0], 'base64url')).alg}`;
});

await check('no token: 401 naming the resource metadata', async () => {
  const res = await post(`${mcp.url}/mcp`, null, INIT);
  assert(res.status === 401, `HTTP ${res.status}`);
  const www = res.headers.get('www-authenticate') ?? '';
  assert(www.startsWith('Bearer ') && www.includes(`resource_metadata="${metadataUrl}"`), www);
  return www;
});

await check('the protected resource metadata (RFC 9728) is served without a token', async () => {
  for (const url of [metadataUrl, `http://127.0.0.1:${mcpPort}/.well-known/oauth-protected-resource`]) {
    const res = await fetch(url);
    assert(res.status === 200, `${url}: HTTP ${res.status}`);
    const m = await res.json();
    assert(m.resource === audience, `resource ${m.resource}`);
    assert(JSON.stringify(m.authorization_servers) === JSON.stringify([provider.issuer]), JSON.stringify(m));
  }
});

await check('the SDK v1 client (2025-11-25) reads with the token', async () => {
  const client = new sdk1.Client({ name: 'oauth-test-v1', version: '1.0.0' });
  const transport = new sdk1.StreamableHTTPClientTransport(new URL(`${mcp.url}/mcp`),
    { requestInit: { headers: { Authorization: `Bearer ${good}` } } });
  await client.connect(transport);
  const tools = await client.listTools();
  const r = await client.callTool({ name: 'slurm_overview', arguments: {} });
  await client.close();
  assert(tools.tools.length === 3 && !r.isError, JSON.stringify(r).slice(0, 200));
  return `${tools.tools.length} tools, overview ${r.content[0].text.length} chars`;
});

for (const [era, mode] of [['modern', { pin: '2026-07-28' }], ['legacy', undefined]]) {
  await check(`the SDK v2 client (${era} era) reads with the token`, async () => {
    const client = new sdk2.Client({ name: 'oauth-test-v2', version: '1.0.0' },
                                   mode ? { capabilities: {}, versionNegotiation: { mode } } : { capabilities: {} });
    const transport = new sdk2.StreamableHTTPClientTransport(new URL(`${mcp.url}/mcp`),
      { requestInit: { headers: { Authorization: `Bearer ${good}` } } });
    await client.connect(transport);
    const r = await client.callTool({ name: 'slurm_overview', arguments: {} });
    const version = client.getNegotiatedProtocolVersion?.() ?? '?';
    const gotEra = client.getProtocolEra?.() ?? '?';
    await client.close();
    assert(!r.isError, JSON.stringify(r).slice(0, 200));
    assert(gotEra === era, `era ${gotEra}`);
    return `protocol ${version}`;
  });
}

await check('the SDK v1 client without a token is refused', async () => {
  const client = new sdk1.Client({ name: 'oauth-test-v1', version: '1.0.0' });
  let refused = '';
  try {
    await client.connect(new sdk1.StreamableHTTPClientTransport(new URL(`${mcp.url}/mcp`)));
  } catch (e) { refused = e.message; }
  assert(refused !== '', 'connected without a token');
  return refused.slice(0, 80);
});

await check('a token for another resource is refused, never used', async () => {
  const other = await token(provider.issuer, 'ops-agent', otherAudience);
  assert(claimsOf(other).aud === otherAudience, 'the provider did not bind the other audience');
  const res = await post(`${mcp.url}/mcp`, other, INIT);
  const www = res.headers.get('www-authenticate') ?? '';
  assert(res.status === 401 && www.includes('error="invalid_token"'), `HTTP ${res.status} ${www}`);
  const body = await res.json();
  assert(/audience/.test(body.error.message), body.error.message);
  return body.error.message;
});

await check('a token whose payload was changed is refused', async () => {
  const [h, , s] = good.split('.');
  const forged = `${h}.${Buffer.from(JSON.stringify({ ...claimsOf(good), client_id: 'root' })).toString('base64url')}.${s}`;
  const res = await post(`${mcp.url}/mcp`, forged, INIT);
  assert(res.status === 401, `HTTP ${res.status}`);
  return (await res.json()).error.message;
});

await check('a session is its principal\'s: another client\'s token cannot use it', async () => {
  const res = await post(`${mcp.url}/mcp`, good, INIT);
  assert(res.status === 200, `initialize: HTTP ${res.status}`);
  const sid = res.headers.get('mcp-session-id');
  const theirs = await token(provider.issuer, 'other-agent');
  const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
  const hdr = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  const mine = await post(`${mcp.url}/mcp`, good, ping, hdr);
  const stolen = await post(`${mcp.url}/mcp`, theirs, ping, hdr);
  assert(mine.status === 200, `the owner's ping: HTTP ${mine.status}`);
  assert(stolen.status === 404, `another principal's ping: HTTP ${stolen.status}`);
  return 'owner 200, other principal 404';
});

await check('/ready needs no token and says the keys are there', async () => {
  const res = await fetch(`${mcp.url}/ready`);
  assert(res.status === 200, `HTTP ${res.status}`);
  const r = await res.json();
  assert(r.authorization?.keys === 2 && r.authorization.problem === null, JSON.stringify(r.authorization));
  return JSON.stringify(r.authorization);
});

// Scopes onto Slurm (issue #38, item 2): what each scope may call, refused with 403 and the scope
// challenge before anything runs; the own-jobs view narrows every job read to the caller's user.
const callTool = (id, name, args) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
async function session(bearer) {
  const res = await post(`${mcp.url}/mcp`, bearer, INIT);
  assert(res.status === 200, `initialize: HTTP ${res.status} ${await res.text()}`);
  return { 'mcp-session-id': res.headers.get('mcp-session-id'), 'mcp-protocol-version': '2025-11-25' };
}

await check('a token with no read scope: 403 insufficient_scope naming slurm:read:own', async () => {
  const logsOnly = await token(provider.issuer, 'ops-agent', audience, 'slurm:logs');
  const res = await post(`${mcp.url}/mcp`, logsOnly, INIT);
  const www = res.headers.get('www-authenticate') ?? '';
  assert(res.status === 403, `HTTP ${res.status}`);
  assert(www.includes('error="insufficient_scope"') && www.includes('scope="slurm:read:own"') &&
         www.includes('resource_metadata='), www);
  return www.slice(0, 90);
});

await check('the logs topic needs slurm:logs: 403 with the challenge, then read with it', async () => {
  const readOnly = await token(provider.issuer, 'ops-agent', audience, 'slurm:read');
  const hdr = await session(readOnly);
  const logs = callTool(2, 'slurm_query', { topic: 'logs', filters: { pattern: 'registering' } });
  const refused = await post(`${mcp.url}/mcp`, readOnly, logs, hdr);
  const www = refused.headers.get('www-authenticate') ?? '';
  assert(refused.status === 403 && www.includes('scope="slurm:logs"'), `HTTP ${refused.status} ${www}`);
  const nodes = await post(`${mcp.url}/mcp`, readOnly, callTool(3, 'slurm_query', { topic: 'nodes' }), hdr);
  assert(nodes.status === 200, `nodes with slurm:read: HTTP ${nodes.status}`);
  // Step-up: the same principal with a token that adds the scope, in the same session.
  const stepped = await token(provider.issuer, 'ops-agent', audience, 'slurm:read slurm:logs');
  const read = await post(`${mcp.url}/mcp`, stepped, logs, hdr);
  assert(read.status === 200, `logs with slurm:logs: HTTP ${read.status}`);
  const body = await read.json();
  assert(!body.result.isError, JSON.stringify(body).slice(0, 200));
  return `403 ${www.match(/scope="[^"]*"/)[0]}, then 200 after step-up`;
});

await check('an own-jobs token (SDK v2): job reads narrowed to its user, the rest refused', async () => {
  const own = await token(provider.issuer, 'alice', audience, 'slurm:read:own');
  const client = new sdk2.Client({ name: 'oauth-own', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new sdk2.StreamableHTTPClientTransport(new URL(`${mcp.url}/mcp`),
    { requestInit: { headers: { Authorization: `Bearer ${own}` } } }));
  const text = async (topic, filters) => {
    const r = await client.callTool({ name: 'slurm_query', arguments: filters ? { topic, filters } : { topic } });
    return r.content.map((c) => c.text).join('\n');
  };
  const queue = await text('queue');
  const jobs = await text('jobs');
  const bob = await text('queue', { user: 'bob' });
  const diag = await text('diagnostics');
  const nodes = await text('nodes');
  await client.close();
  // The demo bundle recorded the service account's reads, not alice's: her narrowed read is not
  // in it, and the answer says which argv was asked.
  assert(/--user=alice/.test(queue) && /VIEW: the own jobs of Slurm user alice/.test(queue), queue.slice(0, 300));
  assert(/DENIED own-jobs-unfilterable/.test(jobs), jobs.slice(0, 200));
  assert(/DENIED own-jobs-filter/.test(bob), bob.slice(0, 200));
  assert(/DENIED own-jobs-unfilterable/.test(diag), diag.slice(0, 200));
  assert(!/NO EVIDENCE|DENIED/.test(nodes.split('\nVIEW:')[0]), nodes.slice(0, 200));
  return 'queue --user=alice, jobs/diagnostics unfilterable, user=bob refused, nodes read';
});

await check('--auth-user-map: a principal maps to its Slurm user; bad maps and scopes are refused at start', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oauth-map-'));
  try {
    const map = path.join(dir, 'users.yaml');
    fs.writeFileSync(map, 'alice: asmith\nops-agent: svc_ops\n');
    const port = await freePort();
    const mapped = await startMcp(provider.issuer, port, ['--auth-user-map', map]);
    try {
      const own = await token(provider.issuer, 'alice', audience, 'slurm:read:own');
      const hdr = await (async () => {
        const res = await post(`${mapped.url}/mcp`, own, INIT);
        return { 'mcp-session-id': res.headers.get('mcp-session-id'), 'mcp-protocol-version': '2025-11-25' };
      })();
      const res = await post(`${mapped.url}/mcp`, own, callTool(2, 'slurm_query', { topic: 'queue' }), hdr);
      const body = JSON.stringify(await res.json());
      assert(/--user=asmith/.test(body), body.slice(0, 300));
      // A principal the map does not list has no Slurm user: an own-jobs token cannot name its jobs.
      const other = await token(provider.issuer, 'other-agent', audience, 'slurm:read:own');
      const refused = await post(`${mapped.url}/mcp`, other, INIT);
      assert(refused.status === 403, `unmapped principal: HTTP ${refused.status}`);
    } finally {
      await mapped.stop();
    }
    const bad = [
      [['--auth-user-map', path.join(dir, 'absent.yaml')], /cannot be read/],
      [['--auth-user-map', (fs.writeFileSync(path.join(dir, 'list.yaml'), '- alice\n'), path.join(dir, 'list.yaml'))], /must be a mapping/],
      [['--auth-user-map', (fs.writeFileSync(path.join(dir, 'name.yaml'), 'alice: "a b"\n'), path.join(dir, 'name.yaml'))], /line 1: 'a b' is not a valid Slurm user name/],
      [['--auth-scope-own', 'slurm:read'], /must differ/],
      [['--auth-scope-logs', 'has space'], /not a scope token/],
    ];
    for (const [extra, says] of bad) {
      const r = spawnSync(bin, ['serve', '--http', '127.0.0.1:0', '--replay', demo, '--auth-issuer', provider.issuer,
                                '--auth-audience', audience, ...extra], { cwd: srcDir, encoding: 'utf8', timeout: 20000 });
      assert(r.status === 2 && says.test(r.stderr), `${extra.join(' ')}: exit ${r.status}: ${r.stderr}`);
    }
    return `principal alice -> --user=asmith; unmapped 403; ${bad.length} bad starts refused (exit 2)`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

await check('/ready counts tool calls by principal, never by token', async () => {
  const r = await (await fetch(`${mcp.url}/ready`)).json();
  const alice = r.callers?.alice;
  assert(alice && alice.calls >= 5 && alice.errors >= 4, JSON.stringify(r.callers));
  assert(r.callers['ops-agent']?.calls >= 3, JSON.stringify(r.callers));
  const text = JSON.stringify(r);
  assert(!text.includes(good.split('.')[2].slice(0, 16)), 'a token is in /ready');
  return JSON.stringify(r.callers);
});

await check('slurm-mcp call gets its own tokens (client credentials) and says why when it cannot', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oauth-call-'));
  try {
    const secretFile = path.join(dir, 'secret');
    fs.writeFileSync(secretFile, SECRET + '\n');
    // Not spawnSync: the provider answers from this process's event loop.
    const call = (id, scope, args, secret = secretFile) => new Promise((resolve) => {
      const child = spawn(bin, [
        'call', '--http', `127.0.0.1:${mcpPort}`, '--oauth-issuer', provider.issuer, '--oauth-client-id', id,
        '--oauth-client-secret-file', secret, '--oauth-scope', scope, 'slurm_query', '--args', JSON.stringify(args)],
        { cwd: srcDir, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => { stdout += d; });
      child.stderr.on('data', (d) => { stderr += d; });
      child.on('exit', (status) => resolve({ status, stdout, stderr }));
    });
    const nodes = await call('ops-agent', 'slurm:read', { topic: 'nodes' });
    assert(nodes.status === 0 && /c1|node/i.test(nodes.stdout), `exit ${nodes.status}: ${nodes.stderr}`);
    const own = await call('alice', 'slurm:read:own', { topic: 'queue' });
    assert(/--user=alice/.test(own.stdout + own.stderr), own.stdout + own.stderr);
    const logs = await call('ops-agent', 'slurm:read', { topic: 'logs' });
    assert(logs.status === 1 && /HTTP 403/.test(logs.stderr), `logs without slurm:logs: exit ${logs.status}: ${logs.stderr}`);
    fs.writeFileSync(path.join(dir, 'wrong'), 'not-the-secret\n');
    const wrong = await call('ops-agent', 'slurm:read', { topic: 'nodes' }, path.join(dir, 'wrong'));
    assert(wrong.status === 1 && /no access token: .*token.*HTTP 401: invalid_client/.test(wrong.stderr), wrong.stderr);
    assert(!wrong.stderr.includes('not-the-secret'), 'the secret is in the error');
    return `nodes read, own queue narrowed, logs 403, wrong secret: ${wrong.stderr.trim().slice(0, 90)}`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

await check('no token reaches the server\'s log', async () => {
  const sig = good.split('.')[2];
  assert(!mcp.stderr().includes(sig.slice(0, 16)), 'the token is in stderr');
});

// Over TLS (issue #38, item 4): the same server with --tls-cert, its audience the https URL.
const secure = await startMcp(provider.issuer, tlsPort, [], { tls: true });
await check('over TLS: the SDK v1 client and the v2 client in both eras read with a token for the https resource', async () => {
  const tlsToken = await token(provider.issuer, 'ops-agent', tlsAudience);
  assert(claimsOf(tlsToken).aud === tlsAudience, `aud ${claimsOf(tlsToken).aud}`);
  const seen = [];
  const v1 = new sdk1.Client({ name: 'oauth-tls-v1', version: '1.0.0' });
  await v1.connect(new sdk1.StreamableHTTPClientTransport(new URL(`${secure.url}/mcp`),
    { requestInit: { headers: { Authorization: `Bearer ${tlsToken}` } } }));
  const r1 = await v1.callTool({ name: 'slurm_overview', arguments: {} });
  await v1.close();
  assert(!r1.isError, JSON.stringify(r1).slice(0, 200));
  seen.push('v1');
  for (const [era, mode] of [['modern', { pin: '2026-07-28' }], ['legacy', undefined]]) {
    const client = new sdk2.Client({ name: 'oauth-tls-v2', version: '1.0.0' },
                                   mode ? { capabilities: {}, versionNegotiation: { mode } } : { capabilities: {} });
    await client.connect(new sdk2.StreamableHTTPClientTransport(new URL(`${secure.url}/mcp`),
      { requestInit: { headers: { Authorization: `Bearer ${tlsToken}` } } }));
    const r = await client.callTool({ name: 'slurm_query', arguments: { topic: 'nodes' } });
    const gotEra = client.getProtocolEra?.() ?? '?';
    await client.close();
    assert(!r.isError && gotEra === era, `${era}: era ${gotEra} ${JSON.stringify(r).slice(0, 200)}`);
    seen.push(`v2 ${era}`);
  }
  return seen.join(', ');
});

await check('over TLS: the metadata names the https resource, an http-audience token is refused, nothing in clear', async () => {
  const m = await (await fetch(`${secure.url}/.well-known/oauth-protected-resource/mcp`)).json();
  assert(m.resource === tlsAudience, `resource ${m.resource}`);
  const wrongAud = await post(`${secure.url}/mcp`, good, INIT);  // good: for the http resource
  assert(wrongAud.status === 401, `a token for ${audience}: HTTP ${wrongAud.status}`);
  let clear = '';
  try {
    const res = await fetch(`http://127.0.0.1:${tlsPort}/ready`);
    clear = `HTTP ${res.status}`;
  } catch (e) { clear = ''; }
  assert(clear === '', `plain HTTP to the TLS port was answered: ${clear}`);
  return `resource ${m.resource}; http-audience token 401; plain HTTP unanswered`;
});

await check('over TLS: slurm-mcp call --tls-ca with client credentials; without the CA it refuses the server', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oauth-tls-'));
  try {
    const secretFile = path.join(dir, 'secret');
    fs.writeFileSync(secretFile, SECRET + '\n');
    const call = (tlsFlags, args) => new Promise((resolve) => {
      const child = spawn(bin, [
        'call', '--http', `127.0.0.1:${tlsPort}`, ...tlsFlags, '--oauth-issuer', provider.issuer,
        '--oauth-client-id', 'alice', '--oauth-client-secret-file', secretFile, '--oauth-scope', 'slurm:read:own',
        'slurm_query', '--args', JSON.stringify(args)], { cwd: srcDir, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => { out += d; });
      child.stderr.on('data', (d) => { out += d; });
      child.on('exit', (status) => resolve({ status, out }));
    });
    const own = await call(['--tls-ca', testCa], { topic: 'queue' });
    // The demo bundle holds no read narrowed to alice: the answer (a tool error, exit 1) names it.
    assert(own.status === 1 && /NO EVIDENCE.*--user=alice/.test(own.out), `exit ${own.status}: ${own.out.slice(0, 300)}`);
    const untrusting = await call(['--https'], { topic: 'queue' });
    assert(untrusting.status === 1 && /SSLServerVerification/.test(untrusting.out), `exit ${untrusting.status}: ${untrusting.out}`);
    return `own queue narrowed over TLS; --https without the CA: ${untrusting.out.trim().slice(0, 80)}`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
await check('over TLS: rca-bench diagnose --mcp-url reads through the server with a token from the issuer', async () => {
  const rcaBench = path.join(path.dirname(bin), 'rca-bench');
  assert(fs.existsSync(rcaBench), `no rca-bench beside slurm-mcp (${rcaBench})`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oauth-agent-'));
  try {
    const secretFile = path.join(dir, 'secret');
    fs.writeFileSync(secretFile, SECRET + '\n');
    const transcript = path.join(dir, 'transcript.jsonl');
    const run = (extra) => new Promise((resolve) => {
      const child = spawn(rcaBench, [
        'diagnose', '--config', 'graphwalk', '--symptom', 'jobs are stuck pending', '--json',
        '--mcp-url', `${secure.url}/mcp`, '--mcp-tls-ca', testCa, '--transcript', transcript, ...extra],
        { cwd: srcDir, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => { stdout += d; });
      child.stderr.on('data', (d) => { stderr += d; });
      child.on('exit', (status) => resolve({ status, stdout, stderr }));
    });
    const ok = await run(['--mcp-oauth-issuer', provider.issuer, '--mcp-oauth-client-id', 'ops-agent',
                          '--mcp-oauth-client-secret-file', secretFile, '--mcp-oauth-scope', 'slurm:read']);
    assert(ok.status === 0, `exit ${ok.status}: ${ok.stderr}`);
    const answer = JSON.parse(ok.stdout);
    assert(answer.answered && answer.mcp_calls > 0, ok.stdout.slice(0, 300));
    const none = await run([]);
    assert(none.status === 1 && /HTTP 401/.test(none.stderr), `without a token: exit ${none.status}: ${none.stderr}`);
    return `${answer.mcp_calls} MCP calls, root cause ${answer.answer.root_cause}; without a token: 401`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
await secure.stop();

// The issuer goes away: a new slurm-mcp fails closed (503), and /ready says why; then a rotation.
await provider.close();
const downPort = await freePort();
const down = await startMcp(provider.issuer, downPort);
await check('the issuer down: every request fails closed with 503 and /ready says why', async () => {
  const res = await post(`${down.url}/mcp`, good, INIT);
  assert(res.status === 503, `HTTP ${res.status}`);
  const ready = await (await fetch(`${down.url}/ready`)).json();
  assert(ready.authorization.keys === 0 && /metadata|refused|connect/i.test(ready.authorization.problem ?? ''),
         JSON.stringify(ready.authorization));
  return ready.authorization.problem;
});
await down.stop();

await check('keys rotated while slurm-mcp runs: new tokens are honoured after one refetch', async () => {
  const rotated = await startProvider(provider.port, signingKeys());
  try {
    const fresh = await token(rotated.issuer, 'ops-agent');
    const res = await post(`${mcp.url}/mcp`, fresh, INIT);
    assert(res.status === 200, `HTTP ${res.status} ${await res.text()}`);
    const old = await post(`${mcp.url}/mcp`, good, INIT);
    assert(old.status === 401, `a token of the retired key: HTTP ${old.status}`);
    return 'new key 200, retired key 401';
  } finally {
    await rotated.close();
  }
});

await mcp.stop();
clearTimeout(watchdog);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
