// Reference MCP server for bench/mcp_bench, written with the official TypeScript SDK
// (@modelcontextprotocol/sdk McpServer + zod), serving a recorded evidence bundle the way
// `slurm-mcp serve --replay` does, so that the two can be measured on the same workload.
//
//   node bench/mcp_reference/server.mjs --http 127.0.0.1:0 [--bundle DIR] [--sdk-prefix DIR]
//   node bench/mcp_reference/server.mjs --stdio [--bundle DIR] [--sdk-prefix DIR]
//
// --bundle defaults to fixtures/demo of this repository; --sdk-prefix to
// ${SLURM_RCA_NPM_CACHE:-$HOME/.cache/slurm-rca/npm-peers}/sdk (tests/mcp_peers/setup.sh fills it).
// HTTP binds loopback only (127.0.0.1, localhost or ::1; anything else is refused) and prints
//   mcp_reference: serving MCP on http://HOST:PORT/mcp (node vX, @modelcontextprotocol/sdk Y)
// on stderr, in the form slurm-mcp uses. Port 0 lets the kernel choose.
//
// What it serves: the bundle's last snapshot (slurm-mcp's default offset), loaded into memory at
// start like ReplayBackend::Open. Tools slurm_overview, slurm_query and slurm_describe, with the
// same input and output schemas. slurm_query builds the same argv from topic + filters (same
// filter names, flags and value grammars), looks the read up, splits the recorded stdout into
// lines and on '|' into rows named by the topic's columns (the last column keeps the rest of the
// line), caps them at max_rows (default 200) and 50,000 bytes of row JSON, and answers with the
// same structuredContent and the same text block (a header line plus the JSON). Only the
// pipe-delimited topics (queue, nodes) and the text of diagnostics are implemented; the other
// topics answer a tool error. HTTP is stateful Streamable HTTP (a session per initialize, as
// slurm-mcp issues Mcp-Session-Id) with JSON responses (enableJsonResponse), as slurm-mcp answers.
// Errors: a bad flag or bundle prints one line and exits 2.
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

function die(message) {
  process.stderr.write(`mcp_reference: ${message}\n`);
  process.exit(2);
}

// ------------------------------------------------------------------ flags
const opts = {
  http: null,
  stdio: false,
  bundle: path.resolve(here, '..', '..', 'fixtures', 'demo'),
  sdkPrefix: path.join(process.env.SLURM_RCA_NPM_CACHE ??
                       path.join(os.homedir(), '.cache', 'slurm-rca', 'npm-peers'), 'sdk'),
};
{
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const value = () => {
      if (i + 1 >= args.length) die(`${a} needs a value`);
      return args[++i];
    };
    if (a === '--http') opts.http = value();
    else if (a === '--stdio') opts.stdio = true;
    else if (a === '--bundle') opts.bundle = path.resolve(value());
    else if (a === '--sdk-prefix') opts.sdkPrefix = path.resolve(value());
    else if (a === '--help' || a === '-h') {
      process.stdout.write('usage: server.mjs (--http HOST:PORT | --stdio) [--bundle DIR] ' +
                           '[--sdk-prefix DIR]\n');
      process.exit(0);
    } else die(`unknown argument '${a}' (see --help)`);
  }
  if ((opts.http === null) === !opts.stdio) die('give exactly one of --http HOST:PORT and --stdio');
}

let host = '127.0.0.1';
let port = 0;
if (opts.http !== null) {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(opts.http);
  if (!m) die(`--http wants HOST:PORT, got '${opts.http}'`);
  host = m[1] ?? m[2];
  port = Number(m[3]);
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) {
    die(`--http: ${host} is not a loopback address (the reference serves loopback only)`);
  }
  if (port > 65535) die(`--http: port ${port} is out of range`);
}

// ------------------------------------------------------------------ SDK
let sdk;
try {
  const req = createRequire(path.join(opts.sdkPrefix, 'package.json'));
  sdk = {
    ...req('@modelcontextprotocol/sdk/server/mcp.js'),
    ...req('@modelcontextprotocol/sdk/server/stdio.js'),
    ...req('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    ...req('@modelcontextprotocol/sdk/server/express.js'),
    ...req('@modelcontextprotocol/sdk/types.js'),
    z: req('zod'),
    version: JSON.parse(fs.readFileSync(path.join(opts.sdkPrefix, 'node_modules', '@modelcontextprotocol',
                                                  'sdk', 'package.json'), 'utf8')).version,
  };
} catch (e) {
  die(`cannot load @modelcontextprotocol/sdk from ${opts.sdkPrefix} ` +
      `(run tests/mcp_peers/setup.sh): ${e.message.split('\n')[0]}`);
}
const { McpServer, StdioServerTransport, StreamableHTTPServerTransport, createMcpExpressApp,
        isInitializeRequest, z } = sdk;

// ------------------------------------------------------------------ bundle
// The last snapshot, argv (joined by NUL) -> {argv, outcome, exit_code, out, err, seconds, cause}.
// A bundle directory, or a pack (DIR.evidence.gz, mcp/backend/bundle_pack.h: gzip of a JSON index
// line, then each blob's bytes in the index's order), read into path -> text.
function bundleFiles(dir) {
  const pack = fs.existsSync(path.join(dir, 'manifest.json')) ? null
             : fs.existsSync(dir) && fs.statSync(dir).isFile() ? dir : `${dir}.evidence.gz`;
  if (pack === null) {
    return (name) => fs.readFileSync(path.join(dir, name), 'utf8');
  }
  let all;
  try {
    all = zlib.gunzipSync(fs.readFileSync(pack));
  } catch (e) {
    die(`${pack}: ${e.message}`);
  }
  const nl = all.indexOf(10);
  const index = JSON.parse(all.subarray(0, nl).toString('utf8'));
  if (index.format !== 'slurm-rca-evidence-pack/1') die(`${pack}: not an evidence pack`);
  const blobs = new Map();
  let at = nl + 1;
  for (const b of index.blobs) {
    blobs.set(b.sha256, all.subarray(at, at + b.bytes).toString('utf8'));
    at += b.bytes;
  }
  return (name) => {
    if (!(name in index.files)) throw new Error(`${name} is not in the pack ${pack}`);
    return blobs.get(index.files[name]);
  };
}

function loadBundle(dir) {
  const manifestPath = path.join(dir, 'manifest.json');
  const read = bundleFiles(dir);
  let m;
  try {
    m = JSON.parse(read('manifest.json'));
  } catch (e) {
    die(`${manifestPath}: ${e.message}`);
  }
  if (m.format !== 'slurm-rca-evidence/1') die(`${manifestPath}: format is not slurm-rca-evidence/1`);
  if (!Array.isArray(m.snapshots) || m.snapshots.length === 0) die(`${manifestPath}: no snapshots`);
  const snap = m.snapshots[m.snapshots.length - 1];
  const reads = new Map();
  const streams = new Map();  // files shared by several reads are read once
  const stream = (name) => {
    if (typeof name !== 'string' || path.isAbsolute(name) || name.split('/').includes('..')) {
      die(`${manifestPath}: bad stream path '${name}'`);
    }
    if (!streams.has(name)) {
      try {
        streams.set(name, read(name));
      } catch (e) {
        die(`${manifestPath}: ${e.message}`);
      }
    }
    return streams.get(name);
  };
  for (const r of snap.reads) {
    reads.set(r.argv.join('\0'), {
      argv: r.argv, outcome: r.outcome, exit_code: r.exit_code, cause: r.cause,
      seconds: r.duration_ms / 1000, out: stream(r.stdout_file), err: stream(r.stderr_file),
    });
  }
  return { takenAt: snap.taken_at, reads };
}
const bundle = loadBundle(opts.bundle);

// ------------------------------------------------------------------ topics (as mcp/topics/topics.cc)
const NAME = { re: /^[A-Za-z0-9][A-Za-z0-9_.,:@+-]{0,127}$/, grammar: 'a comma-separated list of names' };
const STATE = { re: /^[A-Za-z][A-Za-z_,]{0,127}$/, grammar: 'a comma-separated list of state names' };
const HOSTLIST = { re: /^[A-Za-z0-9][A-Za-z0-9_.,:+\[\]-]{0,127}$/, grammar: 'a Slurm hostlist' };
const TOPIC_NAMES = ['queue', 'nodes', 'accounting', 'priority', 'fairshare', 'diagnostics',
                     'config', 'jobs', 'partitions', 'reservations', 'gpu', 'logs'];
const TOPICS = {
  queue: {
    summary: 'Pending and running jobs with their state and reason codes (squeue).',
    argv: ['squeue', '--noheader', '-o', '%i|%P|%u|%T|%M|%D|%R'],
    filters: [['user', '-u', NAME], ['partition', '-p', NAME], ['state', '-t', STATE],
              ['account', '-A', NAME], ['node', '-w', HOSTLIST]],
    columns: ['jobid', 'partition', 'user', 'state', 'elapsed', 'nodes', 'reason'],
    delimited: true,
  },
  nodes: {
    summary: 'Node and partition state, including drains and their reasons (sinfo).',
    argv: ['sinfo', '--noheader', '-N', '-o', '%N|%P|%T|%C|%G|%E'],
    filters: [['partition', '-p', NAME], ['state', '-t', STATE], ['node', '-n', HOSTLIST]],
    columns: ['node', 'partition', 'state', 'cpus', 'gres', 'reason'],
    delimited: true,
  },
  diagnostics: {
    summary: 'Scheduler internals: main and backfill cycles, RPC and agent queues (sdiag).',
    argv: ['sdiag'], filters: [], columns: [], delimited: false,
  },
};
const MAX_ROWS = 200;
const MAX_BYTES = 50000;

function buildArgv(name, topic, filters) {
  for (const key of Object.keys(filters)) {
    if (!topic.filters.some(([f]) => f === key)) {
      return { error: topic.filters.length === 0
          ? `topic ${name} takes no filters (got '${key}')`
          : `topic ${name} has no filter '${key}'; it accepts: ${topic.filters.map(([f]) => f).join(', ')}` };
    }
  }
  const argv = [...topic.argv];
  for (const [f, flag, g] of topic.filters) {
    const value = filters[f];
    if (value === undefined) continue;
    if (!g.re.test(value)) return { error: `filter ${f} of topic ${name} refused '${value}': it must be ${g.grammar}` };
    argv.push(flag, value);
  }
  return { argv };
}

// Lines, then '|': the same rules as ParseDelimited + CapRows in mcp/topics/topics.cc.
function parseDelimited(topic, text, maxRows) {
  const n = topic.columns.length;
  const rows = [];
  const bad = [];
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].endsWith('\r') ? lines[i].slice(0, -1) : lines[i];
    if (line.trim() === '') continue;
    const fields = line.split('|');
    if (fields.length < n) {
      bad.push(`line ${i + 1} has ${fields.length} fields, expected ${n}`);
      continue;
    }
    const row = {};
    for (let c = 0; c < n; c++) {
      row[topic.columns[c]] = (c === n - 1 ? fields.slice(c).join('|') : fields[c]).trim();
    }
    rows.push(row);
  }
  const kept = [];
  let bytes = 2;
  for (const row of rows) {
    if (kept.length >= maxRows) break;
    const size = JSON.stringify(row).length + (kept.length === 0 ? 0 : 1);
    if (bytes + size > MAX_BYTES) break;
    bytes += size;
    kept.push(row);
  }
  return { rows: kept, total_rows: rows.length, truncated: kept.length < rows.length,
           parse_error: bad.length ? bad.join('; ') : '' };
}

function readTopic(name, filters, maxRows) {
  const topic = TOPICS[name];
  if (!topic) return { error: `topic ${name} is not implemented by the reference server` };
  const built = buildArgv(name, topic, filters);
  if (built.error) return { error: built.error };
  const e = bundle.reads.get(built.argv.join('\0'));
  if (!e) {
    return { error: `NO EVIDENCE (unavailable, replay, ${bundle.takenAt}): not recorded in this ` +
                    `bundle\nargv: ${built.argv.join(' ')}` };
  }
  const j = { topic: name, source: 'replay', outcome: e.outcome, evidence_time: bundle.takenAt,
              argv: e.argv, seconds: e.seconds, cached: false };
  if (e.outcome !== 'ok') {
    return { error: `NO EVIDENCE (${e.outcome}, replay, ${bundle.takenAt}): ${e.cause}\n` +
                    `argv: ${e.argv.join(' ')}`, structured: j };
  }
  if (topic.delimited) {
    const p = parseDelimited(topic, e.out, maxRows);
    Object.assign(j, { rows: p.rows, total_rows: p.total_rows, truncated: p.truncated });
    if (p.truncated) j.hint = `narrow with filters: ${topic.filters.map(([f]) => f).join(', ')}`;
    if (p.parse_error) j.parse_error = p.parse_error;
  } else {
    const truncated = e.out.length > MAX_BYTES;
    Object.assign(j, { rows: [], total_rows: 0, truncated, text: e.out.slice(0, MAX_BYTES) });
  }
  return { structured: j };
}

const textBlock = (text) => ({ type: 'text', text });
const toolError = (text) => ({ content: [textBlock(text)], isError: true });
const annotations = (title) => ({ title, readOnlyHint: true, destructiveHint: false,
                                  idempotentHint: true, openWorldHint: false });

const topicEnum = z.enum(TOPIC_NAMES).describe('The topic.');
const queryInput = z.object({
  topic: topicEnum,
  filters: z.record(z.string(), z.string()).optional()
      .describe('Filter name to value, e.g. {"user": "alice"}; see slurm_describe.'),
  max_rows: z.number().int().min(1).max(1000).optional()
      .describe('Rows to return at most (default 200).'),
}).strict();
const queryOutput = z.object({
  topic: z.string(), source: z.enum(['live', 'replay']), outcome: z.literal('ok'),
  evidence_time: z.string(), argv: z.array(z.string()), seconds: z.number().optional(),
  cached: z.boolean().optional(), cache_age_seconds: z.number().optional(),
  rows: z.array(z.record(z.string(), z.any())), total_rows: z.number().int(),
  truncated: z.boolean(), hint: z.string().optional(), text: z.string().optional(),
  parse_error: z.string().optional(),
}).strict();
const overviewOutput = z.object({
  source: z.string(),
  sections: z.array(z.object({ topic: z.string(), outcome: z.string(), evidence_time: z.string(),
                               rows: z.array(z.record(z.string(), z.any())).optional() })
                        .passthrough()),
});
const describeOutput = z.object({
  name: z.string(), summary: z.string(), detail: z.string(),
  filters: z.array(z.record(z.string(), z.any())), columns: z.array(z.any()),
});

// One McpServer per session (the SDK's McpServer serves one transport at a time).
function buildServer() {
  const server = new McpServer({ name: 'slurm-mcp-reference', title: 'Slurm (read-only, TS reference)',
                                 version: sdk.version });
  server.registerTool('slurm_overview', {
    title: 'Cluster overview',
    description: 'Start here. Reads node states, the job queue and scheduler diagnostics in one call.',
    inputSchema: z.object({}).strict(),
    outputSchema: overviewOutput,
    annotations: annotations('Cluster overview'),
  }, async () => {
    const sections = [];
    let text = '';
    for (const name of ['nodes', 'queue', 'diagnostics']) {
      const r = readTopic(name, {}, MAX_ROWS);
      const s = r.structured;
      sections.push(s ?? { topic: name, outcome: 'unavailable', evidence_time: bundle.takenAt });
      text += `### ${name} - ${TOPICS[name].summary}\n` +
              (r.error ? `${r.error}\n` : `${s.total_rows} rows${s.truncated ? ' (truncated)' : ''}\n`);
    }
    const structured = { source: 'replay', sections };
    return { content: [textBlock(text + JSON.stringify(structured))], structuredContent: structured };
  });
  server.registerTool('slurm_query', {
    title: 'Query one topic',
    description: 'Reads one topic of Slurm or node state (read-only), with optional filters.',
    inputSchema: queryInput,
    outputSchema: queryOutput,
    annotations: annotations('Query one topic'),
  }, async (args) => {
    const r = readTopic(args.topic, args.filters ?? {}, Math.min(MAX_ROWS, args.max_rows ?? MAX_ROWS));
    if (r.error) return toolError(r.error);
    const s = r.structured;
    const header = `[replay, ${s.evidence_time}] ${s.topic}: ${s.total_rows} rows` +
                   (s.truncated ? ` [truncated: ${s.rows.length} of ${s.total_rows} rows shown]` : '');
    return { content: [textBlock(`${header}\n${JSON.stringify(s)}`)], structuredContent: s };
  });
  server.registerTool('slurm_describe', {
    title: 'Describe a topic',
    description: "Returns a topic's columns, filters and notes. Reads nothing from the cluster.",
    inputSchema: z.object({ topic: topicEnum }).strict(),
    outputSchema: describeOutput,
    annotations: annotations('Describe a topic'),
  }, async ({ topic: name }) => {
    const t = TOPICS[name];
    if (!t) return toolError(`topic ${name} is not implemented by the reference server`);
    const d = { name, summary: t.summary, detail: t.summary,
                filters: t.filters.map(([f, flag, g]) => ({ name: f, flag, grammar: g.grammar })),
                columns: t.columns.map((c) => ({ name: c })) };
    return { content: [textBlock(JSON.stringify(d, null, 2))], structuredContent: d };
  });
  return server;
}

// ------------------------------------------------------------------ transports
const banner = `node ${process.version}, @modelcontextprotocol/sdk ${sdk.version}`;

if (opts.stdio) {
  const server = buildServer();
  const transport = new StdioServerTransport();
  process.stdin.on('end', () => process.exit(0));
  await server.connect(transport);
  process.stderr.write(`mcp_reference: serving MCP on stdio (${banner})\n`);
} else {
  const app = createMcpExpressApp({ host });
  const sessions = new Map();  // Mcp-Session-Id -> transport
  const jsonError = (res, status, code, message) =>
      res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });

  app.post('/mcp', async (req, res) => {
    try {
      const sid = req.headers['mcp-session-id'];
      let transport = sid ? sessions.get(sid) : undefined;
      if (!transport) {
        if (sid) return jsonError(res, 404, -32001, 'Session not found');
        if (!isInitializeRequest(req.body)) return jsonError(res, 400, -32000, 'No valid session');
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (id) => sessions.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await buildServer().connect(transport);
      }
      await transport.handleRequest(req, res, req.body);
    } catch (e) {
      if (!res.headersSent) jsonError(res, 500, -32603, `Internal error: ${e.message}`);
    }
  });
  const bySession = async (req, res) => {
    const transport = sessions.get(req.headers['mcp-session-id'] ?? '');
    if (!transport) return jsonError(res, req.headers['mcp-session-id'] ? 404 : 400, -32000,
                                     'No valid session');
    await transport.handleRequest(req, res);
  };
  app.get('/mcp', (req, res) => res.status(405).set('Allow', 'POST, DELETE').end());
  app.delete('/mcp', bySession);

  const listener = app.listen(port, host, () => {
    const a = listener.address();
    const shown = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    process.stderr.write(`mcp_reference: serving MCP on http://${shown}:${a.port}/mcp (${banner})\n`);
  });
  listener.on('error', (e) => die(`cannot listen on ${opts.http}: ${e.message}`));
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
}
