// Drives slurm-mcp with the official MCP TypeScript SDK client (@modelcontextprotocol/sdk, pinned in
// tests/mcp_peers/sdk/package.json and installed by setup.sh), over stdio and Streamable HTTP.
//
//   node tests/mcp_peers/sdk_client_test.mjs [SLURM_MCP_BINARY] [SOURCE_DIR]
//
// Defaults: SOURCE_DIR is the repository this file is in, the binary SOURCE_DIR/build/bin/slurm-mcp,
// the replayed bundle SOURCE_DIR/fixtures/demo (SLURM_MCP_REPLAY=DIR names another).
// The SDK is loaded from ${SLURM_RCA_NPM_CACHE:-$HOME/.cache/slurm-rca/npm-peers}/sdk.
// HTTP servers are started on 127.0.0.1:0 (the kernel picks a free port; the server names it on
// stderr), so runs never collide on ports. Every server this script starts is stopped by PID.
// Prints one line per check and ends with `N passed, M failed`; exits 1 on any failure.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const srcDir = path.resolve(process.argv[3] ?? path.join(here, '..', '..'));
const bin = path.resolve(process.argv[2] ?? path.join(srcDir, 'build', 'bin', 'slurm-mcp'));
const demo = path.resolve(process.env.SLURM_MCP_REPLAY ?? path.join(srcDir, 'fixtures', 'demo'));
const cache = process.env.SLURM_RCA_NPM_CACHE ?? path.join(os.homedir(), '.cache', 'slurm-rca', 'npm-peers');
const sdkPrefix = path.join(cache, 'sdk');

const EXPECTED_TOOLS = ['slurm_describe', 'slurm_overview', 'slurm_query'];
const skillsDir = path.join(srcDir, 'skills');
// The runbooks on disk: folders of skills/ that hold SKILL.md.
function skillNames() {
  return fs.readdirSync(skillsDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(skillsDir, d.name, 'SKILL.md')))
    .map((d) => d.name).sort();
}
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const PROTOCOL = '2025-11-25';
const REQUEST_TIMEOUT_MS = 15000;
const WATCHDOG_MS = 180000;

let sdk;
try {
  const req = createRequire(path.join(sdkPrefix, 'package.json'));
  sdk = {
    ...req('@modelcontextprotocol/sdk/client/index.js'),
    ...req('@modelcontextprotocol/sdk/client/stdio.js'),
    ...req('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ...req('@modelcontextprotocol/sdk/types.js'),
    sdkVersion: JSON.parse(fs.readFileSync(
      path.join(sdkPrefix, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8')).version,
  };
} catch (e) {
  console.error(`sdk_client_test: cannot load @modelcontextprotocol/sdk from ${sdkPrefix} ` +
                `(run tests/mcp_peers/setup.sh first): ${e.message}`);
  process.exit(2);
}
const { Client, StdioClientTransport, StreamableHTTPClientTransport, getDefaultEnvironment, McpError,
        LoggingMessageNotificationSchema } = sdk;
const tokenDirRe = /\S*slurm-mcp-sdk-test-\S*/g;

// ---------------------------------------------------------------- bookkeeping
let passed = 0, failed = 0;
function ok(name, detail = '') { passed++; console.log(`ok   ${name}${detail ? ` (${detail})` : ''}`); }
function fail(name, why) { failed++; console.log(`FAIL ${name}: ${why}`); }
async function check(name, fn) {
  try {
    const detail = await fn();
    ok(name, detail ?? '');
  } catch (e) {
    fail(name, e?.stack && process.env.VERBOSE ? e.stack : (e?.message ?? String(e)));
  }
}
function assert(cond, msg) { if (!cond) throw new Error(msg); }

// Every child process we start (servers, and stdio servers started by the SDK) is tracked by PID.
const children = new Map();  // pid -> {name, exited: Promise, alive: () => bool, stderr: () => string}
function killAllNow() {
  for (const [pid, c] of children) {
    if (c.alive()) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  }
}
process.on('exit', killAllNow);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => { console.log(`sdk_client_test: ${sig}, stopping servers`); killAllNow(); process.exit(1); });
}
const watchdog = setTimeout(() => {
  console.log(`FAIL watchdog: the test did not finish within ${WATCHDOG_MS / 1000} s`);
  failed++;
  console.log(`${passed} passed, ${failed} failed`);
  killAllNow();
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();

async function stopByPid(pid) {
  const c = children.get(pid);
  if (!c || !c.alive()) return 'already exited';
  try { process.kill(pid, 'SIGTERM'); } catch { return 'already exited'; }
  const done = await Promise.race([c.exited.then(() => true), sleep(3000).then(() => false)]);
  if (done) return 'SIGTERM';
  try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  await Promise.race([c.exited, sleep(2000)]);
  return 'SIGKILL';
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- HTTP servers
// Starts `slurm-mcp serve --http 127.0.0.1:0 ...` and resolves with its URL once it says where it listens.
function startHttpServer(name, extraArgs) {
  return new Promise((resolve, reject) => {
    const args = ['serve', '--http', '127.0.0.1:0', '--replay', demo, ...extraArgs];
    const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '', exited = false, settled = false;
    const exitedP = new Promise((r) => child.on('exit', (code, sig) => { exited = true; r({ code, sig }); }));
    children.set(child.pid, { name, exited: exitedP, alive: () => !exited, stderr: () => stderr });
    const timer = setTimeout(() => {
      if (!settled) { settled = true; reject(new Error(`${name}: no "serving MCP on" line within 10 s; stderr: ${stderr.trim()}`)); }
    }, 10000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /serving MCP on (http:\/\/[^\s]+\/mcp)/.exec(stderr);
      if (m && !settled) { settled = true; clearTimeout(timer); resolve({ pid: child.pid, url: new URL(m[1]), name }); }
    });
    child.on('error', (e) => { if (!settled) { settled = true; clearTimeout(timer); reject(e); } });
    exitedP.then(({ code, sig }) => {
      if (!settled) { settled = true; clearTimeout(timer); reject(new Error(`${name}: exited (${code ?? sig}) before listening; stderr: ${stderr.trim()}`)); }
    });
  });
}

// ---------------------------------------------------------------- variants
// Each variant knows how to connect a fresh SDK Client to a server replaying `offset` (undefined:
// the bundle's first snapshot) and reports the protocol version the client negotiated.
function newClient() {
  return new Client({ name: 'slurm-mcp-sdk-client-test', version: '1.0.0' }, { capabilities: {} });
}
function recordVersion(transport, box) {
  const orig = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => { box.version = v; orig?.(v); };
}

const stdioVariant = {
  name: 'stdio',
  async connect({ offset, fixtures, live } = {}) {
    // live: the server's arguments for a live back-end instead of the replayed bundle.
    const args = live ? ['serve', '--stdio', ...live] : ['serve', '--stdio', '--replay', demo];
    if (offset !== undefined) args.push('--offset', String(offset));
    if (fixtures) args.push('--conformance-fixtures');
    const transport = new StdioClientTransport({
      command: bin, args, cwd: srcDir, env: getDefaultEnvironment(), stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.setEncoding('utf8');
    transport.stderr?.on('data', (d) => { stderr += d; });
    const box = {};
    recordVersion(transport, box);
    const client = newClient();
    try {
      await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
    } catch (e) {
      await client.close().catch(() => {});
      throw new Error(`${e.message}; server stderr: ${stderr.trim() || '(empty)'}`);
    }
    const pid = transport.pid;
    if (pid) {
      // The SDK owns this child; track it so an early exit of the test still kills it.
      let exited = false;
      const exitedP = new Promise((r) => {
        const poll = setInterval(() => {
          try { process.kill(pid, 0); } catch { exited = true; clearInterval(poll); r(); }
        }, 50);
        poll.unref();
      });
      children.set(pid, { name: 'stdio server', exited: exitedP, alive: () => !exited, stderr: () => stderr });
    }
    return {
      client, transport, version: () => box.version, stderr: () => stderr,
      async close() {
        const t0 = Date.now();
        await client.close();
        const ms = Date.now() - t0;
        if (pid) await stopByPid(pid);
        return ms;
      },
    };
  },
};

function httpVariant(name, serverArgs, requestInit) {
  const servers = new Map();  // server args -> server
  return {
    name,
    servers,
    requestInit,
    async server(offset, fixtures) {
      const extra = [...serverArgs];
      if (offset !== undefined) extra.push('--offset', String(offset));
      if (fixtures) extra.push('--conformance-fixtures');
      const key = extra.join(' ');
      if (!servers.has(key)) {
        servers.set(key, await startHttpServer(`${name} server${key ? ` ${key.replace(tokenDirRe, '…')}` : ''}`, extra));
      }
      return servers.get(key);
    },
    async connect({ offset, fixtures, init = requestInit } = {}) {
      const srv = await this.server(offset, fixtures);
      const transport = new StreamableHTTPClientTransport(srv.url, init ? { requestInit: init } : undefined);
      const box = {};
      recordVersion(transport, box);
      const client = newClient();
      try {
        await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
      } catch (e) {
        await client.close().catch(() => {});
        throw e;
      }
      return {
        client, transport, version: () => box.version ?? transport.protocolVersion, url: srv.url,
        stderr: () => children.get(srv.pid)?.stderr() ?? '',
        async close() {
          const t0 = Date.now();
          await transport.terminateSession().catch(() => {});
          await client.close();
          return Date.now() - t0;
        },
      };
    },
    async stopAll() {
      for (const srv of servers.values()) {
        const how = await stopByPid(srv.pid);
        if (how === 'SIGKILL') fail(`${name}: ${srv.name} stops on SIGTERM`, 'had to be killed with SIGKILL');
      }
      servers.clear();
    },
  };
}

// ---------------------------------------------------------------- the checks
const callOpts = { timeout: REQUEST_TIMEOUT_MS };

function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function runSuite(variant) {
  const v = variant.name;
  let conn;
  await check(`${v}: connect and initialize`, async () => {
    conn = await variant.connect();
    const info = conn.client.getServerVersion();
    assert(info?.name === 'slurm-mcp', `serverInfo.name is ${JSON.stringify(info?.name)}, want "slurm-mcp"`);
    assert(conn.version() === PROTOCOL, `negotiated protocol ${conn.version()}, want ${PROTOCOL}`);
    const caps = conn.client.getServerCapabilities();
    assert(caps?.tools, `capabilities lack tools: ${JSON.stringify(caps)}`);
    const sid = conn.transport.sessionId;
    return `serverInfo ${info.name} ${info.version}, protocol ${conn.version()}` +
           (v.startsWith('http') ? `, session ${sid ? 'issued' : 'none'}` : '');
  });
  if (!conn) { fail(`${v}: remaining checks`, 'skipped: no connection'); return; }

  try {
    await check(`${v}: ping`, async () => {
      const r = await conn.client.ping(callOpts);
      assert(r && typeof r === 'object', `ping result ${JSON.stringify(r)}`);
    });

    await check(`${v}: logging/setLevel info`, async () => {
      await conn.client.setLoggingLevel('info', callOpts);
    });

    let tools;
    await check(`${v}: tools/list has exactly the three read-only tools`, async () => {
      const r = await conn.client.listTools(undefined, callOpts);
      tools = r.tools;
      const names = tools.map((t) => t.name).sort();
      assert(JSON.stringify(names) === JSON.stringify(EXPECTED_TOOLS), `tools ${JSON.stringify(names)}`);
      assert(!r.nextCursor, `unexpected nextCursor ${r.nextCursor}`);
      for (const t of tools) {
        assert(TOOL_NAME.test(t.name), `${t.name} does not match ${TOOL_NAME}`);
        assert(t.annotations?.readOnlyHint === true, `${t.name}: readOnlyHint is ${t.annotations?.readOnlyHint}`);
        assert(t.annotations?.destructiveHint !== true, `${t.name}: destructiveHint true`);
        assert(typeof t.description === 'string' && t.description.length > 0, `${t.name}: no description`);
        assert(t.inputSchema?.type === 'object', `${t.name}: inputSchema type ${t.inputSchema?.type}`);
        assert(t.outputSchema?.type === 'object', `${t.name}: outputSchema type ${t.outputSchema?.type}`);
      }
      return names.join(', ');
    });

    await check(`${v}: slurm_overview returns structuredContent the SDK validated against outputSchema`, async () => {
      // listTools above cached the output schemas; callTool throws unless structuredContent matches.
      assert(typeof conn.client.getToolOutputValidator?.('slurm_overview') === 'function',
             'the SDK client holds no output validator for slurm_overview (listTools not cached?)');
      const r = await conn.client.callTool({ name: 'slurm_overview', arguments: {} }, undefined, callOpts);
      assert(r.isError !== true, `isError: ${textOf(r).slice(0, 300)}`);
      assert(r.structuredContent && typeof r.structuredContent === 'object', 'no structuredContent');
      const sections = r.structuredContent.sections;
      assert(Array.isArray(sections) && sections.length > 0, 'no sections');
      assert(textOf(r).length > 0, 'no text content');
      return `source ${r.structuredContent.source}, sections ${sections.map((s) => `${s.topic}:${s.outcome}`).join(' ')}`;
    });

    // The runbooks: every skills/<name>/SKILL.md of the source tree (the server's default --skills)
    // is listed as skill://<name>/SKILL.md and reads back byte for byte.
    await check(`${v}: resources/list names every runbook of skills/`, async () => {
      const caps = conn.client.getServerCapabilities();
      assert(caps?.resources, `capabilities lack resources: ${JSON.stringify(caps)}`);
      const r = await conn.client.listResources(undefined, callOpts);
      assert(!r.nextCursor, `unexpected nextCursor ${r.nextCursor}`);
      const listed = r.resources.map((x) => x.uri).filter((u) => u.endsWith('/SKILL.md')).sort();
      const onDisk = skillNames().map((n) => `skill://${n}/SKILL.md`).sort();
      assert(onDisk.length >= 11, `only ${onDisk.length} skills under ${skillsDir}`);
      assert(JSON.stringify(listed) === JSON.stringify(onDisk),
             `listed ${JSON.stringify(listed)}, on disk ${JSON.stringify(onDisk)}`);
      for (const x of r.resources) {
        assert(typeof x.name === 'string' && x.name.length > 0, `${x.uri}: no name`);
        assert(x.mimeType === 'text/markdown', `${x.uri}: mimeType ${x.mimeType}`);
      }
      return `${listed.length} runbooks, ${r.resources.length} resources`;
    });

    await check(`${v}: resources/read returns each SKILL.md as on disk`, async () => {
      for (const n of skillNames()) {
        const uri = `skill://${n}/SKILL.md`;
        const r = await conn.client.readResource({ uri }, callOpts);
        assert(r.contents?.length === 1, `${uri}: ${r.contents?.length} contents`);
        const want = fs.readFileSync(path.join(skillsDir, n, 'SKILL.md'), 'utf8');
        assert(r.contents[0].uri === uri, `${uri}: content uri ${r.contents[0].uri}`);
        assert(r.contents[0].text === want, `${uri}: text differs from the file`);
      }
      const handoff = await conn.client.readResource(
        { uri: 'skill://gpu-node-drained/references/operator-handoff.md' }, callOpts);
      assert(handoff.contents[0].text.startsWith('# Operator hand-off'), 'hand-off reference not served');
      return `${skillNames().length} read`;
    });

    await check(`${v}: resources/read of an unknown URI is JSON-RPC error -32002`, async () => {
      try {
        await conn.client.readResource({ uri: 'skill://no-such-skill/SKILL.md' }, callOpts);
      } catch (e) {
        assert(e instanceof McpError, `not an McpError: ${e}`);
        assert(e.code === -32002, `code ${e.code}: ${e.message}`);
        return e.message;
      }
      throw new Error('no error for an unknown URI');
    });

    await check(`${v}: slurm_describe queue`, async () => {
      const r = await conn.client.callTool({ name: 'slurm_describe', arguments: { topic: 'queue' } }, undefined, callOpts);
      assert(r.isError !== true, `isError: ${textOf(r).slice(0, 300)}`);
      const cols = r.structuredContent?.columns;
      assert(Array.isArray(cols) && cols.some((c) => c.name === 'user'), `columns ${JSON.stringify(cols)?.slice(0, 200)}`);
      return `${cols.length} columns`;
    });

    // The demo bundle records each topic's filters with the example values slurm_describe gives
    // (e.g. nodes -p gpu, queue -w node[1-4]); filtered reads it lacks are NO EVIDENCE (checked below).
    await check(`${v}: slurm_query nodes {partition:"gpu"} returns only gpu rows`, async () => {
      const r = await conn.client.callTool(
        { name: 'slurm_query', arguments: { topic: 'nodes', filters: { partition: 'gpu' } } }, undefined, callOpts);
      assert(r.isError !== true, `isError: ${textOf(r).slice(0, 300)}`);
      const rows = r.structuredContent?.rows;
      assert(Array.isArray(rows) && rows.length > 0, `rows ${JSON.stringify(rows)}`);
      assert(rows.every((row) => row.partition.replace(/\*$/, '') === 'gpu'),
             `rows of other partitions: ${JSON.stringify(rows.filter((x) => x.partition.replace(/\*$/, '') !== 'gpu'))}`);
      const argv = r.structuredContent.argv ?? [];
      assert(argv.join(' ').endsWith('-p gpu'), `argv ${JSON.stringify(argv)}`);
      return `${rows.length} rows, argv ${argv.join(' ')}`;
    });

    await check(`${v}: slurm_query queue {node:"node[1-4]"} returns rows`, async () => {
      const r = await conn.client.callTool(
        { name: 'slurm_query', arguments: { topic: 'queue', filters: { node: 'node[1-4]' }, max_rows: 50 } },
        undefined, callOpts);
      assert(r.isError !== true, `isError: ${textOf(r).slice(0, 300)}`);
      const rows = r.structuredContent?.rows;
      assert(Array.isArray(rows) && rows.length > 0, `rows ${JSON.stringify(rows)}`);
      assert(rows.every((row) => typeof row.jobid === 'string' && typeof row.user === 'string'),
             `rows lack jobid/user: ${JSON.stringify(rows).slice(0, 200)}`);
      const argv = r.structuredContent.argv ?? [];
      assert(argv.join(' ').endsWith('-w node[1-4]'), `argv ${JSON.stringify(argv)}`);
      return `${rows.length} rows (${rows.map((x) => `${x.jobid}:${x.user}:${x.state}`).join(' ')})`;
    });

    // A state is no column equality: replay cannot derive it from the whole queue (a user can be).
    await check(`${v}: a valid filter the bundle did not record is NO EVIDENCE, not an empty table`, async () => {
      const r = await conn.client.callTool(
        { name: 'slurm_query', arguments: { topic: 'queue', filters: { state: 'RUNNING' } } }, undefined, callOpts);
      assert(r.isError === true, `isError is ${r.isError}; rows ${JSON.stringify(r.structuredContent?.rows)?.slice(0, 200)}`);
      assert(textOf(r).startsWith('NO EVIDENCE'), `text ${textOf(r).slice(0, 200)}`);
      assert(r.structuredContent === undefined, 'an error result carries structuredContent');
      return JSON.stringify(textOf(r).slice(0, 60));
    });

    await check(`${v}: a refused filter value is a tool error (isError, no structuredContent)`, async () => {
      const r = await conn.client.callTool(
        { name: 'slurm_query', arguments: { topic: 'queue', filters: { user: '; rm -rf /' } } }, undefined, callOpts);
      assert(r.isError === true, `isError is ${r.isError}; text ${textOf(r).slice(0, 200)}`);
      assert(r.structuredContent === undefined, 'an error result carries structuredContent');
      assert(textOf(r).length > 0, 'no text explaining the refusal');
      return JSON.stringify(textOf(r).split('\n')[0].slice(0, 120));
    });

    await check(`${v}: an unknown filter name is a tool error`, async () => {
      const r = await conn.client.callTool(
        { name: 'slurm_query', arguments: { topic: 'nodes', filters: { owner: 'x' } } }, undefined, callOpts);
      assert(r.isError === true, `isError is ${r.isError}; text ${textOf(r).slice(0, 200)}`);
      return JSON.stringify(textOf(r).split('\n')[0].slice(0, 120));
    });

    await check(`${v}: arguments outside inputSchema are a tool error (SEP-1303)`, async () => {
      const r = await conn.client.callTool(
        { name: 'slurm_query', arguments: { topic: 'bogus' } }, undefined, callOpts);
      assert(r.isError === true, `isError is ${r.isError}; text ${textOf(r).slice(0, 200)}`);
      assert(r.structuredContent === undefined, 'an error result carries structuredContent');
      return JSON.stringify(textOf(r).slice(0, 60));
    });

    await check(`${v}: an unknown tool is a JSON-RPC error -32602`, async () => {
      let r;
      try {
        r = await conn.client.callTool({ name: 'slurm_scancel', arguments: {} }, undefined, callOpts);
      } catch (e) {
        assert(e instanceof McpError, `threw ${e?.constructor?.name}: ${e?.message}`);
        assert(e.code === -32602, `code ${e.code}: ${e.message}`);
        return `McpError ${e.code}: ${e.message}`;
      }
      throw new Error(`no error; result ${JSON.stringify(r).slice(0, 200)}`);
    });

    await check(`${v}: slurm_query at offset 10: accounting is NO EVIDENCE (isError)`, async () => {
      const c10 = await variant.connect({ offset: 10 });
      try {
        const r = await c10.client.callTool({ name: 'slurm_query', arguments: { topic: 'accounting' } }, undefined, callOpts);
        assert(r.isError === true, `isError is ${r.isError}; text ${textOf(r).slice(0, 200)}`);
        assert(textOf(r).includes('NO EVIDENCE'), `text lacks NO EVIDENCE: ${textOf(r).slice(0, 200)}`);
        assert(r.structuredContent === undefined, 'an error result carries structuredContent');
        return JSON.stringify(textOf(r).split('\n')[0].slice(0, 100));
      } finally {
        await c10.close();
      }
    });
  } finally {
    const sid = conn.transport.sessionId;
    await check(`${v}: close`, async () => {
      const ms = await conn.close();
      // The stdio SDK transport ends stdin, waits 2 s, then SIGTERMs: a server that exits on EOF is quick.
      if (v === 'stdio') assert(ms < 1900, `close took ${ms} ms: the server did not exit on stdin EOF`);
      return `${ms} ms`;
    });
    if (sid) {
      await check(`${v}: a session ended with DELETE answers 404 afterwards`, async () => {
        const res = await fetch(conn.url, {
          method: 'POST',
          headers: {
            ...(variant.requestInit?.headers ?? {}),
            'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
            'Mcp-Session-Id': sid, 'MCP-Protocol-Version': PROTOCOL,
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }),
        });
        const body = await res.text();
        assert(res.status === 404, `HTTP ${res.status}: ${body.slice(0, 200)}`);
        return `HTTP 404 ${body.slice(0, 80)}`;
      });
    }
  }
}

// Progress and logging notifications, with the conformance fixture tools (test_tool_with_progress,
// test_tool_with_logging). The conformance suite checks these over HTTP only; this covers stdio too.
async function runNotificationChecks(variant) {
  const v = variant.name;
  let conn;
  await check(`${v}: connect with --conformance-fixtures`, async () => {
    conn = await variant.connect({ fixtures: true });
    const { tools } = await conn.client.listTools(undefined, callOpts);
    const names = tools.map((t) => t.name);
    for (const n of ['test_tool_with_progress', 'test_tool_with_logging']) assert(names.includes(n), `no ${n} in ${names}`);
    return `${tools.length} tools`;
  });
  if (!conn) return;
  try {
    await check(`${v}: progress notifications reach onprogress, increasing, before the result`, async () => {
      const seen = [];
      const r = await conn.client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined,
                                           { ...callOpts, onprogress: (p) => seen.push(p) });
      assert(r.isError !== true, `isError: ${textOf(r)}`);
      assert(seen.length === 3, `${seen.length} progress notifications: ${JSON.stringify(seen)}`);
      for (let i = 1; i < seen.length; i++) {
        assert(seen[i].progress > seen[i - 1].progress, `progress not increasing: ${JSON.stringify(seen)}`);
      }
      return seen.map((p) => `${p.progress}/${p.total}`).join(' ');
    });

    const logs = [];
    conn.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
    await check(`${v}: logging notifications at level info`, async () => {
      await conn.client.setLoggingLevel('info', callOpts);
      logs.length = 0;
      const r = await conn.client.callTool({ name: 'test_tool_with_logging', arguments: {} }, undefined, callOpts);
      assert(r.isError !== true, `isError: ${textOf(r)}`);
      await sleep(50);  // stdio: notifications precede the result on the same pipe; HTTP: same SSE stream
      assert(logs.length === 3, `${logs.length} log messages: ${JSON.stringify(logs)}`);
      assert(logs.every((l) => l.level === 'info'), `levels ${logs.map((l) => l.level)}`);
      return logs.map((l) => JSON.stringify(l.data)).join(', ');
    });
    await check(`${v}: logging/setLevel error silences info messages`, async () => {
      await conn.client.setLoggingLevel('error', callOpts);
      logs.length = 0;
      await conn.client.callTool({ name: 'test_tool_with_logging', arguments: {} }, undefined, callOpts);
      await sleep(50);
      assert(logs.length === 0, `${logs.length} info messages after setLevel error: ${JSON.stringify(logs)}`);
    });
  } finally {
    await conn.close().catch((e) => fail(`${v}: close (fixtures)`, e.message));
  }
}

async function runTokenChecks(variant, token) {
  const v = variant.name;
  await check(`${v}: no Authorization header is refused (401)`, async () => {
    let c;
    try {
      c = await variant.connect({ init: null });
    } catch (e) {
      assert(/401/.test(String(e?.code)) || /401|Unauthori[sz]ed/i.test(e?.message ?? ''), `${e?.constructor?.name}: ${e?.message}`);
      return `${e.constructor.name}: ${e.message.slice(0, 80)}`;
    }
    await c.close();
    throw new Error('connected without a token');
  });
  await check(`${v}: a wrong bearer token is refused (401)`, async () => {
    let c;
    try {
      c = await variant.connect({ init: { headers: { Authorization: `Bearer ${token}x` } } });
    } catch (e) {
      assert(/401/.test(String(e?.code)) || /401|Unauthori[sz]ed/i.test(e?.message ?? ''), `${e?.constructor?.name}: ${e?.message}`);
      return `${e.constructor.name}: ${e.message.slice(0, 80)}`;
    }
    await c.close();
    throw new Error('connected with a wrong token');
  });
}

// ---------------------------------------------------------------- node telemetry (#10)
// gpu_health on the synthetic nvidia-smi TEST DOUBLE (mcp/testdata/nvidia-smi-double, never a real
// GPU): a live server whose only trusted directory holds the double answers with structuredContent
// the SDK validates against slurm_query's outputSchema (callTool throws when it does not match).
async function runTelemetryChecks(tmp) {
  const binDir = path.join(tmp, 'double-bin');
  fs.mkdirSync(binDir, { mode: 0o755 });
  fs.chmodSync(binDir, 0o755);
  fs.copyFileSync(path.join(srcDir, 'mcp', 'testdata', 'nvidia-smi-double', 'nvidia-smi'),
                  path.join(binDir, 'nvidia-smi'));
  fs.chmodSync(path.join(binDir, 'nvidia-smi'), 0o755);
  const select = (scenario) => fs.writeFileSync(
    path.join(binDir, 'scenario'), path.join(srcDir, 'mcp', 'testdata', 'gpu_health', scenario) + '\n');
  const v = 'stdio live (nvidia-smi test double)';
  // The report's own schema (slurm_describe's report_schema), checked with the Ajv the SDK uses.
  const Ajv = createRequire(path.join(sdkPrefix, 'package.json'))('ajv');
  const ajv = new (Ajv.default ?? Ajv)({ strict: false, allErrors: true });
  let validateReport;
  let conn;
  await check(`${v}: connect`, async () => {
    conn = await stdioVariant.connect({ live: ['--trusted-dirs', binDir, '--cache-ttl', '0'] });
    const r = await conn.client.listTools(undefined, callOpts);
    const q = r.tools.find((t) => t.name === 'slurm_query');
    assert(q?.inputSchema?.properties?.topic?.enum?.includes('gpu_health'), 'gpu_health not in the topic enum');
    const d = await conn.client.callTool(
      { name: 'slurm_describe', arguments: { topic: 'gpu_health' } }, undefined, callOpts);
    assert(d.structuredContent?.report_schema?.type === 'object', 'no report_schema');
    assert(/CANNOT SEE/.test(d.structuredContent.detail), 'detail does not say what it cannot see');
    validateReport = ajv.compile(d.structuredContent.report_schema);
    return `protocol ${conn.version()}, report_schema compiled`;
  });
  if (!conn || !validateReport) return;
  const cases = [
    ['healthy', 'ok', 'none', false],
    ['ecc', 'ok', 'fatal', true],
    ['unknown_values', 'ok', 'unknown', false],
    ['mig', 'ok', 'unknown', false],
    ['off_bus', 'hardware_fault_exit', 'fatal', true],
  ];
  for (const [scenario, outcome, worst, drain] of cases) {
    await check(`${v}: gpu_health ${scenario} answers structuredContent valid against outputSchema`, async () => {
      select(scenario);
      const r = await conn.client.callTool(
        { name: 'slurm_query', arguments: { topic: 'gpu_health' } }, undefined, callOpts);
      assert(r.isError !== true, `isError: ${textOf(r).slice(0, 300)}`);
      const report = r.structuredContent?.report;
      assert(report, 'no report in structuredContent');
      assert(validateReport(report), `report invalid against report_schema: ${ajv.errorsText(validateReport.errors)}`);
      assert(report.query.outcome === outcome, `query outcome ${report.query.outcome}`);
      assert(report.summary.worst_severity === worst, `worst ${report.summary.worst_severity}`);
      assert(report.summary.would_drain === drain, `would_drain ${report.summary.would_drain}`);
      assert(report.summary.classification_only === true, 'not labelled classification only');
      for (const gpu of report.gpus) {
        for (const [name, f] of Object.entries(gpu.fields)) {
          assert(f.known || f.value === null, `${gpu.label} ${name}: unknown but value ${f.value}`);
        }
      }
      return `${report.gpus.length} GPUs, worst ${worst}, would_drain ${drain}`;
    });
  }
  await check(`${v}: a failed gpu_health query (exit 9) is no evidence, never healthy`, async () => {
    select('no_driver');
    const r = await conn.client.callTool(
      { name: 'slurm_query', arguments: { topic: 'gpu_health' } }, undefined, callOpts);
    assert(r.isError === true, 'not an error');
    assert(/NO EVIDENCE/.test(textOf(r)) && /query failed/.test(textOf(r)), textOf(r).slice(0, 300));
    return textOf(r).split('\n')[0].slice(0, 100);
  });
  await closeAndReap(conn).catch((e) => fail(`${v}: close`, e.message));

  await runFabricChecks(tmp, ajv);
  await runGpuIdleChecks(tmp, ajv);

  await check('stdio replay: gpu_health is not in the recorded bundle: labelled no evidence', async () => {
    const c = await stdioVariant.connect({});
    try {
      const r = await c.client.callTool(
        { name: 'slurm_query', arguments: { topic: 'gpu_health' } }, undefined, callOpts);
      assert(r.isError === true, 'not an error');
      assert(/NO EVIDENCE \(unavailable, replay/.test(textOf(r)), textOf(r).slice(0, 300));
      return textOf(r).split('\n')[0].slice(0, 100);
    } finally {
      await closeAndReap(c);
    }
  });
}

// fabric on a SYNTHETIC sysfs/proc/cgroup tree (cgroup-v2, the seed's node): job 918001 sole user
// of mlx5_0, 918002 and 918003 sharing mlx5_1, 918004 sole user of mlx5_2 over RoCE.
function syntheticFabricTree(root) {
  const w = (rel, text) => { fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true }); fs.writeFileSync(path.join(root, rel), text); };
  const port = (hca, n, state, rate, layer) => {
    const d = `sys/class/infiniband/${hca}/ports/${n}/`;
    w(d + 'state', state + '\n'); w(d + 'rate', rate + '\n'); w(d + 'link_layer', layer + '\n');
  };
  port('mlx5_0', 1, '4: ACTIVE', '200 Gb/sec (4X HDR)', 'InfiniBand');
  port('mlx5_1', 1, '4: ACTIVE', '200 Gb/sec (4X HDR)', 'InfiniBand');
  port('mlx5_2', 1, '4: ACTIVE', '100 Gb/sec (4X EDR)', 'Ethernet');
  w('sys/class/infiniband/mlx5_0/ports/1/counters/link_downed', '255\n');
  w('sys/class/infiniband/mlx5_1/ports/1/hw_counters/packet_seq_err', '48221\n');
  ['mlx5_0', 'mlx5_1', 'mlx5_2'].forEach((h, i) => w(`sys/class/infiniband_verbs/uverbs${i}/ibdev`, h + '\n'));
  const proc = (pid, targets) => {
    const fd = path.join(root, 'proc', String(pid), 'fd');
    fs.mkdirSync(fd, { recursive: true });
    targets.forEach((t, i) => fs.symlinkSync(t, path.join(fd, String(i))));
  };
  const jobs = { 918001: [[41001, 41002], 0], 918002: [[42001], 1], 918003: [[43001], 1], 918004: [[44001, 44002], 2] };
  for (const [job, [pids, uverbs]] of Object.entries(jobs)) {
    const dir = `sys/fs/cgroup/system.slice/slurmstepd.scope/job_${job}`;
    w(`${dir}/step_0/user/task_0/cgroup.procs`, pids.join('\n') + '\n');
    for (const pid of pids) proc(pid, ['/dev/null', `/dev/infiniband/uverbs${uverbs}`]);
  }
}

async function runFabricChecks(tmp, ajv) {
  const root = path.join(tmp, 'fabric-node');
  syntheticFabricTree(root);
  const v = 'stdio live (synthetic fabric tree)';
  let conn, validateReport;
  await check(`${v}: connect and compile the fabric report_schema`, async () => {
    conn = await stdioVariant.connect({ live: ['--fabric-root', root] });
    const d = await conn.client.callTool(
      { name: 'slurm_describe', arguments: { topic: 'fabric' } }, undefined, callOpts);
    assert(/CANNOT SEE/.test(d.structuredContent?.detail ?? ''), 'detail does not say what it cannot see');
    validateReport = ajv.compile(d.structuredContent.report_schema);
    return 'report_schema compiled';
  });
  if (!conn || !validateReport) return;
  await check(`${v}: fabric answers structuredContent valid against outputSchema and report_schema`, async () => {
    const r = await conn.client.callTool(
      { name: 'slurm_query', arguments: { topic: 'fabric' } }, undefined, callOpts);
    assert(r.isError !== true, `isError: ${textOf(r).slice(0, 300)}`);
    const report = r.structuredContent?.report;
    assert(report && validateReport(report), `report invalid: ${ajv.errorsText(validateReport?.errors)}`);
    const by = Object.fromEntries(report.ports.map((p) => [`${p.device}/${p.port}`, p]));
    assert(by['mlx5_0/1'].attributed_job === '918001', `mlx5_0/1 ${JSON.stringify(by['mlx5_0/1'].attributed_job)}`);
    assert(by['mlx5_1/1'].suppression === 'shared', `mlx5_1/1 ${by['mlx5_1/1'].suppression}`);
    assert(by['mlx5_2/1'].attributed_job === '918004', `mlx5_2/1 ${by['mlx5_2/1'].attributed_job}`);
    assert(by['mlx5_0/1'].counters.link_downed.saturated === true, 'link_downed 255 not saturated');
    assert(by['mlx5_0/1'].absent_counters.includes('port_xmit_data'), 'a missing counter is not absent');
    return `layout ${report.node.layout}, ${report.ports.length} ports`;
  });
  await closeAndReap(conn).catch((e) => fail(`${v}: close`, e.message));
}

// gpu_idle on the nvidia-smi and squeue TEST DOUBLES of mcp/testdata/gpu_idle (synthetic programs,
// invented data, never a real GPU or Slurm): a live server sampling every second with a 6 s window
// judges the double's one job idle, then calls the GPUs unseen (never idle) once nvidia-smi fails.
async function runGpuIdleChecks(tmp, ajv) {
  const binDir = path.join(tmp, 'idle-bin');
  fs.mkdirSync(binDir, { mode: 0o755 });
  fs.chmodSync(binDir, 0o755);
  for (const p of ['nvidia-smi', 'squeue']) {
    fs.copyFileSync(path.join(srcDir, 'mcp', 'testdata', 'gpu_idle', p), path.join(binDir, p));
    fs.chmodSync(path.join(binDir, p), 0o755);
  }
  const start = new Date(Date.now() - 3600 * 1000).toISOString().slice(0, 19);
  fs.writeFileSync(path.join(binDir, 'jobs.txt'), `4242|${start}|gpu-double|cpu=8,mem=64G,node=1,gres/gpu=2|train\n`);
  fs.writeFileSync(path.join(binDir, 'device.csv'),
    '0, GPU-0, 0, 0, 81559, 24.0, Disabled\n1, GPU-1, 0, 0, 81559, 25.0, Disabled\n');
  const v = 'stdio live (gpu_idle test doubles, 1 s samples)';
  let conn, validateReport;
  await check(`${v}: connect and compile the gpu_idle report_schema`, async () => {
    conn = await stdioVariant.connect({ live: ['--trusted-dirs', binDir, '--cache-ttl', '0',
      '--gpu-sample-interval', '1', '--gpu-node-name', 'gpu-double', '--gpu-idle-window', '6',
      '--gpu-idle-warmup', '0', '--gpu-idle-max-gap', '3', '--gpu-idle-min-samples', '3'] });
    const d = await conn.client.callTool(
      { name: 'slurm_describe', arguments: { topic: 'gpu_idle' } }, undefined, callOpts);
    assert(/CANNOT SEE/.test(d.structuredContent?.detail ?? ''), 'detail does not say what it cannot see');
    validateReport = ajv.compile(d.structuredContent.report_schema);
    return 'report_schema compiled';
  });
  if (!conn || !validateReport) return;
  const query = async () => {
    const r = await conn.client.callTool(
      { name: 'slurm_query', arguments: { topic: 'gpu_idle' } }, undefined, callOpts);
    assert(r.isError !== true, `isError: ${textOf(r).slice(0, 300)}`);
    const report = r.structuredContent?.report;
    assert(report && validateReport(report), `report invalid: ${ajv.errorsText(validateReport?.errors)}`);
    assert(r.structuredContent.rows.length === 1, `${r.structuredContent.rows.length} rows`);
    return r.structuredContent.rows[0];
  };
  await check(`${v}: gpu_idle answers structuredContent valid against outputSchema and report_schema; idle once the window is covered`, async () => {
    let row;
    for (let i = 0; i < 30; i++) {
      row = await query();
      if (row.status === 'judged') break;
      assert(row.signature === undefined, `a verdict before the window is covered: ${JSON.stringify(row)}`);
      await sleep(500);
    }
    assert(row.status === 'judged' && row.signature === 'idle', JSON.stringify(row).slice(0, 400));
    assert(row.classification_only === true, 'not labelled classification only');
    const n = row.evidence.nodes[0];
    return `idle over ${n.observations} observations ${n.first}..${n.last}`;
  });
  await check(`${v}: nvidia-smi failing (exit 9) is an outage, never an idle or healthy GPU`, async () => {
    fs.writeFileSync(path.join(binDir, 'device.exit'), '9\n');
    let row;
    for (let i = 0; i < 30; i++) {
      await sleep(500);
      row = await query();
      if (row.status !== 'judged') break;
    }
    assert(row.status === 'stale_newest' && row.signature === undefined, JSON.stringify(row).slice(0, 400));
    assert(row.evidence.nodes[0].failed_reads > 0, 'failed reads not shown');
    return `${row.status}: ${row.detail.slice(0, 80)}`;
  });
  await closeAndReap(conn).catch((e) => fail(`${v}: close`, e.message));
  await check('stdio replay: gpu_idle is not in the recorded bundle: labelled no evidence', async () => {
    const c = await stdioVariant.connect({});
    try {
      const r = await c.client.callTool(
        { name: 'slurm_query', arguments: { topic: 'gpu_idle' } }, undefined, callOpts);
      assert(r.isError === true, 'not an error');
      assert(/NO EVIDENCE \(unavailable, replay/.test(textOf(r)), textOf(r).slice(0, 300));
      return textOf(r).split('\n')[0].slice(0, 100);
    } finally {
      await closeAndReap(c);
    }
  });
}

// Closes a stdio connection and waits until its tracked child is seen gone (the liveness poll
// runs every 50 ms), so "no server left running" right after does not race it.
async function closeAndReap(c) {
  const pid = c.transport.pid;
  await c.close();
  const child = pid ? children.get(pid) : undefined;
  if (child) await Promise.race([child.exited, sleep(3000)]);
}

// ---------------------------------------------------------------- main
async function main() {
  const t0 = Date.now();
  console.log(`sdk_client_test: @modelcontextprotocol/sdk ${sdk.sdkVersion} on node ${process.version}; ` +
              `server ${bin}; replay ${demo}`);
  assert(fs.existsSync(bin), `no server binary at ${bin}`);
  assert(fs.existsSync(path.join(demo, 'manifest.json')) || fs.existsSync(`${demo}.evidence.gz`) ||
         fs.existsSync(demo), `no replay bundle at ${demo} (a directory or ${demo}.evidence.gz)`);

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'slurm-mcp-sdk-test-'));
  const token = 'sdk-test-' + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
  const tokenFile = path.join(tmp, 'token');
  fs.writeFileSync(tokenFile, token + '\n', { mode: 0o600 });

  const http = httpVariant('http', []);
  const httpToken = httpVariant('http+token', ['--token-file', tokenFile],
                                { headers: { Authorization: `Bearer ${token}` } });
  try {
    await runSuite(stdioVariant);
    await runNotificationChecks(stdioVariant);
    await runSuite(http);
    await runNotificationChecks(http);
    await runSuite(httpToken);
    await runTokenChecks(httpToken, token);
    await runTelemetryChecks(tmp);
  } finally {
    await http.stopAll();
    await httpToken.stopAll();
    for (const [pid, c] of children) {
      if (c.alive()) { fail('servers stopped', `${c.name} (pid ${pid}) still running; killing`); await stopByPid(pid); }
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  await check('no server left running', async () => {
    const alive = [...children].filter(([, c]) => c.alive()).map(([pid, c]) => `${c.name} ${pid}`);
    assert(alive.length === 0, alive.join(', '));
    return `${children.size} servers started and stopped`;
  });
  console.log(`sdk_client_test: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

main()
  .catch((e) => fail('sdk_client_test', e?.stack ?? String(e)))
  .finally(() => {
    console.log(`${passed} passed, ${failed} failed`);
    killAllNow();
    process.exit(failed === 0 && passed > 0 ? 0 : 1);
  });
