// Drives slurm-mcp with the official MCP TypeScript SDK v2 client (@modelcontextprotocol/client, pinned
// in tests/mcp_peers/sdk2/package.json and installed by setup.sh) in the 2026-07-28 era, over stdio and
// Streamable HTTP, in `auto` mode (probe with server/discover, fall back on a legacy answer) and pinned
// to 2026-07-28 (no fallback); and once in the SDK's default `legacy` mode, which must still work.
//
//   node tests/mcp_peers/sdk2_client_test.mjs [SLURM_MCP_BINARY] [SOURCE_DIR]
//
// Defaults as sdk_client_test.mjs: SOURCE_DIR is this repository, the binary SOURCE_DIR/build/bin/slurm-mcp,
// the bundle SOURCE_DIR/fixtures/demo. The v2 SDK comes from ${SLURM_RCA_NPM_CACHE:-~/.cache/slurm-rca/npm-peers}/sdk2
// (SLURM_RCA_SDK2_PREFIX names another prefix), Ajv from .../sdk (the v1 prefix) to validate every
// structuredContent against its tool's outputSchema independently of the client.
// Every server started here is stopped by PID. Prints one line per check, then `N passed, M failed`;
// exits 1 on any failure, 2 when the peers are not installed.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const srcDir = path.resolve(process.argv[3] ?? path.join(here, '..', '..'));
const bin = path.resolve(process.argv[2] ?? path.join(srcDir, 'build', 'bin', 'slurm-mcp'));
const demo = path.resolve(process.env.SLURM_MCP_REPLAY ?? path.join(srcDir, 'fixtures', 'demo'));
const cache = process.env.SLURM_RCA_NPM_CACHE ?? path.join(os.homedir(), '.cache', 'slurm-rca', 'npm-peers');
const sdk2Prefix = process.env.SLURM_RCA_SDK2_PREFIX ?? path.join(cache, 'sdk2');
const REQUEST_TIMEOUT_MS = 15000;
const WATCHDOG_MS = 180000;
const MODERN = '2026-07-28';

// ESM packages resolved from the prefix (import() of a bare name resolves from this file's folder).
async function importFrom(prefix, specifier) {
  const resolved = createRequire(path.join(prefix, 'package.json')).resolve(specifier);
  return import(pathToFileURL(resolved).href);
}
let Client, StdioClientTransport, StreamableHTTPClientTransport, SkillsClient, Ajv, clientVersion;
try {
  ({ Client, StreamableHTTPClientTransport } = await importFrom(sdk2Prefix, '@modelcontextprotocol/client'));
  ({ StdioClientTransport } = await importFrom(sdk2Prefix, '@modelcontextprotocol/client/stdio'));
  ({ SkillsClient } = await importFrom(sdk2Prefix, '@modelcontextprotocol/client/ext/skills'));
  clientVersion = JSON.parse(fs.readFileSync(
    path.join(sdk2Prefix, 'node_modules', '@modelcontextprotocol', 'client', 'package.json'), 'utf8')).version;
  Ajv = createRequire(path.join(cache, 'sdk', 'package.json'))('ajv');
} catch (e) {
  console.error(`sdk2_client_test: cannot load @modelcontextprotocol/client from ${sdk2Prefix} or Ajv from ` +
                `${path.join(cache, 'sdk')} (run tests/mcp_peers/setup.sh first): ${e.message}`);
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
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Servers this script starts, by PID (the SDK's stdio children are the SDK's: client.close() ends them).
const servers = new Map();  // pid -> {exited: Promise, alive(): bool}
function killAllNow() {
  for (const [pid, s] of servers) if (s.alive()) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
}
process.on('exit', killAllNow);
const watchdog = setTimeout(() => {
  console.log(`FAIL watchdog: not finished within ${WATCHDOG_MS / 1000} s\n${passed} passed, ${failed + 1} failed`);
  killAllNow();
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();

// `slurm-mcp serve --http 127.0.0.1:0 --replay DEMO`; resolves with its URL once it names it on stderr.
function startHttpServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['serve', '--http', '127.0.0.1:0', '--replay', demo], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '', exited = false;
    const exitedP = new Promise((r) => child.on('exit', () => { exited = true; r(); }));
    servers.set(child.pid, { exited: exitedP, alive: () => !exited });
    const timer = setTimeout(() => reject(new Error(`no "serving MCP on" line within 10 s: ${stderr}`)), 10000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /serving MCP on (http:\/\/\S+\/mcp)/.exec(stderr);
      if (m) { clearTimeout(timer); resolve({ pid: child.pid, url: new URL(m[1]) }); }
    });
    exitedP.then(() => { clearTimeout(timer); reject(new Error(`exited before listening: ${stderr}`)); });
  });
}
async function stopByPid(pid) {
  const s = servers.get(pid);
  if (!s?.alive()) return;
  process.kill(pid, 'SIGTERM');
  if (!await Promise.race([s.exited.then(() => true), sleep(3000).then(() => false)])) {
    process.kill(pid, 'SIGKILL');
    await s.exited;
  }
}

function newClient(mode) {
  const options = { capabilities: {} };
  if (mode) options.versionNegotiation = { mode };
  return new Client({ name: 'slurm-mcp-sdk2-test', version: '1.0.0' }, options);
}
const transports = {
  stdio: () => new StdioClientTransport({ command: bin, args: ['serve', '--stdio', '--replay', demo], cwd: srcDir, stderr: 'ignore' }),
  http: (server) => new StreamableHTTPClientTransport(server.url),
};

const skillNames = fs.readdirSync(path.join(srcDir, 'skills'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && fs.existsSync(path.join(srcDir, 'skills', d.name, 'SKILL.md')))
  .map((d) => d.name).sort();
const ajv = new Ajv({ strict: false, allErrors: true });

async function modernChecks(label, client) {
  await check(`${label}: the era is modern and discover describes slurm-mcp`, async () => {
    assert(client.getProtocolEra() === 'modern', `era ${client.getProtocolEra()}`);
    const d = client.getDiscoverResult?.();
    assert(d?.supportedVersions?.includes(MODERN), `supportedVersions ${JSON.stringify(d?.supportedVersions)}`);
    const caps = client.getServerCapabilities();
    assert(caps?.tools && caps?.resources && caps?.prompts, `capabilities ${JSON.stringify(caps)}`);
    assert(caps?.extensions?.['io.modelcontextprotocol/skills'], 'the Skills extension is not declared');
    return `${client.getServerVersion()?.name} ${client.getServerVersion()?.version}`;
  });
  let tools = [];
  await check(`${label}: tools/list`, async () => {
    ({ tools } = await client.listTools());
    const names = tools.map((t) => t.name).sort().join(',');
    assert(names === 'slurm_describe,slurm_overview,slurm_query', names);
  });
  const calls = [
    ['slurm_overview', {}],
    ['slurm_describe', { topic: 'nodes' }],
    ['slurm_query', { topic: 'nodes' }],
    ['slurm_query', { topic: 'queue' }],
  ];
  for (const [name, args] of calls) {
    await check(`${label}: tools/call ${name} ${JSON.stringify(args)}: structuredContent validates`, async () => {
      const r = await client.callTool({ name, arguments: args });
      assert(!r.isError, `isError: ${JSON.stringify(r.content).slice(0, 200)}`);
      assert(r.structuredContent !== undefined, 'no structuredContent');
      const schema = tools.find((t) => t.name === name)?.outputSchema;
      assert(schema, `${name} has no outputSchema`);
      const validate = ajv.compile(schema);
      assert(validate(r.structuredContent), ajv.errorsText(validate.errors));
    });
  }
  await check(`${label}: prompts/list offers every runbook with a required symptom`, async () => {
    const { prompts } = await client.listPrompts();
    const names = prompts.map((p) => p.name).sort();
    assert(JSON.stringify(names) === JSON.stringify(skillNames), `${names} vs ${skillNames}`);
    assert(prompts.every((p) => p.arguments?.length === 1 && p.arguments[0].name === 'symptom' && p.arguments[0].required),
           'a prompt without its required symptom argument');
    return `${prompts.length} prompts`;
  });
  await check(`${label}: prompts/get renders the runbook with the symptom`, async () => {
    const r = await client.getPrompt({ name: 'queue-not-draining', arguments: { symptom: 'jobs pend for hours' } });
    const text = r.messages?.[0]?.content?.text ?? '';
    assert(r.messages[0].role === 'user' && text.includes('Symptom: jobs pend for hours'), text.slice(0, 200));
  });
  await check(`${label}: prompts/get without the symptom is -32602`, async () => {
    try {
      await client.getPrompt({ name: 'queue-not-draining', arguments: {} });
    } catch (e) {
      assert(e.code === -32602, `code ${e.code}: ${e.message}`);
      return e.message;
    }
    throw new Error('no error');
  });
  await check(`${label}: skills/list and every skill file read back and verified (digest, size, frontmatter)`, async () => {
    const skills = new SkillsClient(client);
    assert(skills.supported, 'SkillsClient says the extension is not supported');
    const listing = await skills.list();
    const names = listing.skills.map((s) => s.frontmatter.name).sort();
    assert(JSON.stringify(names) === JSON.stringify(skillNames), `${names}`);
    assert(listing.invalid.length === 0, `invalid entries ${JSON.stringify(listing.invalid)}`);
    let files = 0;
    for (const skill of listing.skills) {
      for (const file of skill.resources) {
        const got = await skills.read(skill, file.uri);  // throws SkillVerificationError on any mismatch
        assert(got.verified, `${file.uri} not verified`);
        files++;
      }
    }
    const one = await skills.get(listing.skills[0].uri);
    assert(one.skill.uri === listing.skills[0].uri, 'skills/get returned another skill');
    return `${listing.skills.length} skills, ${files} files, ttlMs ${listing.ttlMs}, ${listing.cacheScope}`;
  });
  await check(`${label}: resources/read of a missing resource is -32602`, async () => {
    try {
      await client.readResource({ uri: 'skill://no-such-skill/SKILL.md' });
    } catch (e) {
      assert(e.code === -32602, `code ${e.code}: ${e.message}`);
      return e.message;
    }
    throw new Error('no error');
  });
}

async function run() {
  console.log(`sdk2_client_test: @modelcontextprotocol/client ${clientVersion}, node ${process.version}, ${bin}`);
  const http = await startHttpServer();
  try {
    for (const [kind, make] of Object.entries(transports)) {
      for (const [modeName, mode] of [['auto', 'auto'], [`pin ${MODERN}`, { pin: MODERN }]]) {
        const label = `${kind} ${modeName}`;
        const client = newClient(mode);
        try {
          await client.connect(make(http), { timeout: REQUEST_TIMEOUT_MS });
        } catch (e) {
          failed++;
          console.log(`FAIL ${label}: connect: ${e.message}`);
          continue;
        }
        await modernChecks(label, client);
        await client.close();
      }
      await check(`${kind} legacy (the SDK's default mode): a 2025 session still works`, async () => {
        const client = newClient(undefined);
        await client.connect(make(http), { timeout: REQUEST_TIMEOUT_MS });
        try {
          assert(client.getProtocolEra() === 'legacy', `era ${client.getProtocolEra()}`);
          const { tools } = await client.listTools();
          assert(tools.length === 3, `${tools.length} tools`);
          const { prompts } = await client.listPrompts();
          assert(prompts.length === skillNames.length, `${prompts.length} prompts`);
          return `protocol ${client.getNegotiatedProtocolVersion?.() ?? '?'}`;
        } finally {
          await client.close();
        }
      });
    }
  } finally {
    await stopByPid(http.pid);
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

run().catch((e) => {
  console.log(`FAIL unexpected: ${e?.stack ?? e}`);
  killAllNow();
  process.exit(1);
});
