#include "bench/mcp_rows.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "bench/mcp_harness.h"
#include "bench/wrk_load.h"
#include "mcp/protocol/client.h"

namespace slurm_rca::bench {

namespace {

using mcp::Json;

// What a good answer to one topic carries, fixed by the probe's parsed answer.
struct Expected {
  std::string arguments;  // slurm_query's arguments, JSON text
  int rows = 0;
  std::string row_key = "\"partition\":";  // every nodes and queue row has it once
  std::string answer;       // the probe's answer, checked: a replayed answer does not change
  std::string answer_file;  // the same, for wrk (a temporary file)
};

std::string CallBody(const std::string& arguments) {
  return R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slurm_query","arguments":)" +
         arguments + "}}";
}
const std::string kInitializeBody =
    std::string(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":")") +
    kProtocolVersion + R"(","capabilities":{},"clientInfo":{"name":"mcp_bench","version":"1"}}})";
const std::string kInitializedBody = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";

size_t Count(const std::string& text, const std::string& key) {
  size_t n = 0;
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + key.size())) {
    ++n;
  }
  return n;
}

// The checks bench/mcp_session.lua makes when an answer is not byte-identical to the probe's.
bool Carries(const std::string& answer, const Expected& e) {
  const std::string total = "\"total_rows\":" + std::to_string(e.rows);
  const size_t at = answer.find(total);
  const char after = at == std::string::npos || at + total.size() >= answer.size()
                         ? '\0'
                         : answer[at + total.size()];
  return answer.find("\"structuredContent\"") != std::string::npos &&
         answer.find("\"isError\":true") == std::string::npos && (after == ',' || after == '}') &&
         Count(answer, e.row_key) == static_cast<size_t>(e.rows);
}

bool WriteAll(int fd, const std::string& s) {
  for (size_t done = 0; done < s.size();) {
    const ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The JSON-RPC message of an HTTP answer: the body, or the last data line of an SSE stream.
std::string Message(const HttpAnswer& a) {
  if (a.Header("Content-Type").find("text/event-stream") == std::string::npos) return a.body;
  const size_t at = a.body.rfind("data: ");
  return at == std::string::npos ? "" : a.body.substr(at + 6, a.body.find('\n', at) - at - 6);
}

// An HTTP server started once for every row, and what the probe learnt from it.
struct HttpServer {
  std::unique_ptr<ServerProcess> process;
  int port = 0;
  std::string holder_session;                // the session the held connections' one call each uses
  std::string bearer, bearer_file;           // the token every request carries, and its file
  bool tls = false;
  std::map<std::string, Expected> expected;  // by topic
};

base::Result<std::string> OpenSession(int port, const std::string& bearer, bool tls,
                                      std::string* info) {
  auto init = Exchange(port, McpPost(port, kInitializeBody, "", bearer), kCallTimeout, tls);
  if (!init.ok()) return base::Status::Error("initialize: " + init.status().message());
  const Json reply = Json::parse(Message(*init), nullptr, false);
  if (init->status != 200 || !reply.is_object() || !reply.contains("result")) {
    return base::Status::Error("initialize answered " + std::to_string(init->status) + ": " +
                               init->body.substr(0, 200));
  }
  if (info) {
    const Json server = reply["result"].value("serverInfo", Json::object());
    *info = server.value("name", "?") + " " + server.value("version", "?");
  }
  const std::string session = init->Header("Mcp-Session-Id");
  auto done = Exchange(port, McpPost(port, kInitializedBody, session, bearer), kCallTimeout, tls);
  if (!done.ok() || done->status / 100 != 2) {
    return base::Status::Error(
        "notifications/initialized: " +
        (done.ok() ? "status " + std::to_string(done->status) : done.status().message()));
  }
  return session;
}

// One call per topic, parsed: the rows it carries become what every later answer must carry.
base::Status Probe(const RunOptions& options, HttpServer& s, ServerFigures& f) {
  base::Result<std::string> session = OpenSession(s.port, s.bearer, s.tls, &f.info);
  if (!session.ok()) return session.status();
  base::Result<std::string> holder = OpenSession(s.port, s.bearer, s.tls, nullptr);
  if (!holder.ok()) return holder.status();
  s.holder_session = *holder;
  for (const char* topic : {"nodes", "queue"}) {
    Expected e{.arguments = Json{{"topic", topic}}.dump()};
    auto a = Exchange(s.port, McpPost(s.port, CallBody(e.arguments), *session, s.bearer),
                      kCallTimeout, s.tls);
    if (!a.ok()) return base::Status::Error(std::string(topic) + ": " + a.status().message());
    const std::string message = Message(*a);
    const Json reply = Json::parse(message, nullptr, false);
    const Json* structured = reply.is_object() && reply.contains("result") &&
                                     reply["result"].contains("structuredContent")
                                 ? &reply["result"]["structuredContent"]
                                 : nullptr;
    if (a->status != 200 || !structured || !structured->contains("rows") ||
        !(*structured)["rows"].is_array()) {
      return base::Status::Error(std::string(topic) + " answered " + std::to_string(a->status) +
                                 " without rows: " + message.substr(0, 200));
    }
    e.rows = static_cast<int>((*structured)["rows"].size());
    if (std::string(topic) == "queue" && e.rows != options.queue_jobs) {
      return base::Status::Error("queue answered " + std::to_string(e.rows) + " rows, not the " +
                                 std::to_string(options.queue_jobs) + " the bundle holds");
    }
    if (!Carries(message, e)) {
      return base::Status::Error(std::string(topic) +
                                 ": a good answer fails the byte checks (total_rows, one " +
                                 e.row_key + " per row): " + message.substr(0, 200));
    }
    e.answer = message;
    char path[] = "/tmp/mcp_bench_answer_XXXXXX";
    const int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0 || !WriteAll(fd, message)) {
      if (fd >= 0) close(fd);
      return base::Status::IoError(std::string("cannot write ") + path);
    }
    close(fd);
    e.answer_file = path;
    s.expected[topic] = e;
    f.answers[topic] = *structured;
  }
  return base::Status();
}

double SelfCpuSeconds() {
  rusage u = {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// CPU seconds the whole machine spent busy (every process, the kernel's interrupts), from
// /proc/stat: the rows subtract the server's and the load generator's to show what others took.
double MachineBusySeconds() {
  std::ifstream f("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(f >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal)) {
    return NAN;
  }
  return (user + nice + system + irq + softirq + steal) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

void NoteOthers(Rep& rep, double busy0) {
  rep.other_cpu_seconds = std::max(
      0.0, MachineBusySeconds() - busy0 - rep.server_cpu_seconds - rep.loadgen_cpu_seconds);
}

// Ends the sessions a run opened, as clients that leave would; how many DELETEs failed.
long EndSessions(int port, const std::vector<std::string>& ids, const std::string& bearer,
                 bool tls) {
  long failed = 0;
  for (const std::string& id : ids) {
    auto a = Exchange(port, McpDelete(port, id, bearer), kCallTimeout, tls);
    failed += !a.ok() || a->status / 100 != 2;
  }
  return failed;
}

// Writing "5" to clear_refs sets VmHWM to the current VmRSS (Linux 4.0 and later).
bool ResetPeak(pid_t pid) {
  std::ofstream f("/proc/" + std::to_string(pid) + "/clear_refs");
  f << "5";
  f.close();
  return static_cast<bool>(f);
}

// Lines from a pipe, for the stdio client that parses nothing.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // The next line without its '\n'; false on EOF, an error or `timeout`.
  bool Next(std::string* line, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (true) {
      const size_t eol = buf_.find('\n', scanned_);
      if (eol != std::string::npos) {
        line->assign(buf_, 0, eol);
        buf_.erase(0, eol + 1);
        scanned_ = 0;
        return true;
      }
      scanned_ = buf_.size();
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd p = {fd_, POLLIN, 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char chunk[65536];
      const ssize_t n = read(fd_, chunk, sizeof chunk);
      if (n <= 0) return false;
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  const int fd_;
  std::string buf_;
  size_t scanned_ = 0;
};

void Finish(Rep& rep, std::vector<double>& us) {
  std::sort(us.begin(), us.end());
  Latency l;
  l.us = std::move(us);
  rep.p50_us = l.Percentile(0.50);
  rep.p99_us = l.Percentile(0.99);
}

// The timed part of a stdio rep: both sides' CPU and the server's peak over it, the latency of
// each good answer, the first failure.
class StdioWindow {
 public:
  StdioWindow(ServerProcess& server, double seconds, Rep& rep)
      : server_(server), rep_(rep), seconds_(seconds) {
    server0_ = CpuSeconds(server.pid());
    self0_ = SelfCpuSeconds();
    busy0_ = MachineBusySeconds();
    start_ = Clock::now();
  }
  bool Open() const { return Clock::now() < Deadline(); }
  void Good(Clock::time_point t0) {
    ++rep_.ok;
    us_.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  void Bad(const std::string& what) {
    if (rep_.note.empty()) rep_.note = "first failure: " + what;
    ++rep_.failed;
  }
  void Close() {
    rep_.seconds = Seconds(start_);
    rep_.server_cpu_seconds = CpuSeconds(server_.pid()) - server0_;
    rep_.loadgen_cpu_seconds = SelfCpuSeconds() - self0_;
    NoteOthers(rep_, busy0_);
    rep_.hwm_mib = ReadMemory(server_.pid()).hwm_mib;
    rep_.hwm_since_reset = true;  // a process of its own: its peak is this rep's
    Finish(rep_, us_);
  }

 private:
  Clock::time_point Deadline() const {
    return start_ +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds_));
  }
  ServerProcess& server_;
  Rep& rep_;
  const double seconds_;
  double server0_ = 0, self0_ = 0, busy0_ = 0;
  Clock::time_point start_;
  std::vector<double> us_;
};

// The client that parses nothing: one pre-serialized line out, one answer line in (lines without
// an "id", notifications, are skipped), the answer compared with the probe's bytes or checked
// byte by byte.
void RawStdioCalls(ServerProcess& p, const Expected& e, double seconds, Rep& rep) {
  LineReader from(p.from_child());
  const std::string call = CallBody(e.arguments) + "\n";
  std::string line;
  auto answer = [&] {
    while (from.Next(&line, kCallTimeout)) {
      if (line.find("\"id\":") != std::string::npos) return true;
    }
    return false;
  };
  if (!WriteAll(p.to_child(), kInitializeBody + "\n") || !answer() ||
      line.find("\"protocolVersion\"") == std::string::npos ||
      !WriteAll(p.to_child(), kInitializedBody + "\n")) {
    rep.error = "initialize over stdio failed: " + p.StderrTail();
    return;
  }
  for (int i = 0; i < 100 && WriteAll(p.to_child(), call) && answer(); ++i) {
  }
  long differed = 0;
  StdioWindow window(p, seconds, rep);
  while (window.Open()) {
    const auto t0 = Clock::now();
    if (!WriteAll(p.to_child(), call) || !answer()) {
      window.Bad("no answer line: " + p.StderrTail());
      break;
    }
    if (line == e.answer || Carries(line, e)) {
      window.Good(t0);
      differed += line != e.answer;
    } else {
      window.Bad(line.substr(0, 160));
    }
  }
  window.Close();
  if (differed) {
    rep.note = std::to_string(differed) +
               " good answers differed from the HTTP probe's bytes (checked byte by byte)" +
               (rep.note.empty() ? "" : "; " + rep.note);
  }
}

// The same calls through mcp::Client: JSON serialized and parsed on this side too.
void SdkStdioCalls(ServerProcess& p, const Expected& e, double seconds, Rep& rep) {
  mcp::Client client(std::make_unique<mcp::StdioClientTransport>(p.from_child(), p.to_child()),
                     mcp::ClientOptions{.timeout = kCallTimeout});
  const Json arguments = Json::parse(e.arguments);
  auto check = [&](const base::Result<mcp::ToolCallResult>& r) -> base::Status {
    if (base::Status s = CheckAnswer(r); !s.ok()) return s;
    const size_t rows = (*r->structured)["rows"].size();
    if (rows != static_cast<size_t>(e.rows)) {
      return base::Status::Error(std::to_string(rows) + " rows");
    }
    return base::Status();
  };
  auto init = client.Initialize("mcp_bench", "1");
  if (!init.ok()) {
    rep.error = "initialize: " + init.status().ToString() + "; " + p.StderrTail();
  } else {
    for (int i = 0; i < 100; ++i) client.CallTool(kTool, arguments, nullptr, kCallTimeout);
    StdioWindow window(p, seconds, rep);
    while (window.Open()) {
      const auto t0 = Clock::now();
      base::Status s = check(client.CallTool(kTool, arguments, nullptr, kCallTimeout));
      if (s.ok()) {
        window.Good(t0);
      } else {
        window.Bad(s.message());
      }
    }
    window.Close();
  }
  client.transport().Close();
}

// A stdio rep: a server process of its own, started and stopped here.
Rep MeasureStdio(const RowSpec& row, const ServerUnderTest& server, const Expected& e,
                 double seconds) {
  Rep rep;
  auto started = ServerProcess::Start(server.name, server.stdio_argv, /*stdio=*/true);
  if (!started.ok()) {
    rep.error = started.status().message();
    return rep;
  }
  if (row.kind == RowSpec::Kind::kStdio) {
    RawStdioCalls(**started, e, seconds, rep);
  } else {
    SdkStdioCalls(**started, e, seconds, rep);
  }
  (*started)->Stop();
  return rep;
}

// An HTTP rep: connections held first when the row asks for them, then wrk.
Rep MeasureHttp(const RowSpec& row, HttpServer& s, const RunOptions& options) {
  Rep rep;
  const pid_t pid = s.process->pid();
  const Expected& e = s.expected.at(row.topic);
  rep.hwm_since_reset = ResetPeak(pid);
  std::unique_ptr<HeldConnections> held;
  if (row.held > 0) {
    const std::string request =
        McpPost(s.port, CallBody(s.expected.at("nodes").arguments), s.holder_session, s.bearer);
    held = std::make_unique<HeldConnections>(s.port, row.held_mode, request, row.held);
    const HeldConnections::Counts c = held->Open(std::chrono::seconds(20));
    char text[160];
    std::snprintf(
        text, sizeof text, "held %d of %d open before the run, %d %s", c.open, c.wanted, c.ready,
        row.held_mode == HeldConnections::Mode::kIdle ? "answered (200) and idle" : "half-open");
    rep.note = text;
    if (c.answered_bad) rep.note += ", " + std::to_string(c.answered_bad) + " answered not 200";
    held->KeepOpen();
  }
  const double cpu0 = CpuSeconds(pid);
  const double busy0 = MachineBusySeconds();
  base::Result<WrkRun> run = RunWrk({.wrk = options.wrk,
                                     .script = options.script,
                                     .port = s.port,
                                     .connections = row.connections,
                                     .seconds = options.seconds,
                                     .arguments = e.arguments,
                                     .rows = e.rows,
                                     .row_key = e.row_key,
                                     .expected_file = e.answer_file,
                                     .bearer_file = s.bearer_file,
                                     .tls = s.tls});
  rep.server_cpu_seconds = CpuSeconds(pid) - cpu0;
  if (held) {
    const HeldConnections::Counts c = held->Stop();
    rep.note += "; during the run the server closed " + std::to_string(c.closed_by_server) +
                " (reopened " + std::to_string(c.reopened) + "), " + std::to_string(c.open) +
                " open at the end";
    if (run.ok()) run->cpu_seconds += c.cpu_seconds;
  }
  rep.hwm_mib = ReadMemory(pid).hwm_mib;
  if (!run.ok()) {
    rep.error = run.status().message();
    return rep;
  }
  rep.loadgen_cpu_seconds = run->cpu_seconds;
  NoteOthers(rep, busy0);
  if (const long failed = EndSessions(s.port, run->session_ids, s.bearer, s.tls); failed > 0) {
    rep.note += (rep.note.empty() ? "" : "; ") + std::to_string(failed) + " of " +
                std::to_string(run->session_ids.size()) + " session DELETEs failed after the run";
  }
  rep.ok = run->ok;
  // A connection that never finished its handshake is a client that got nothing.
  rep.failed =
      run->bad + run->init_bad + run->socket_errors + std::max(0L, row.connections - run->sessions);
  rep.seconds = run->seconds;
  if (run->ok > 0) {
    rep.p50_us = run->p50_us;
    rep.p99_us = run->p99_us;
  }
  if (run->sessions < row.connections) {
    rep.note += (rep.note.empty() ? "" : "; ") + std::to_string(run->sessions) + " of " +
                std::to_string(row.connections) + " connections got a session";
  }
  if (run->timeouts) {
    rep.note += (rep.note.empty() ? "" : "; ") + std::to_string(run->timeouts) +
                " requests unanswered within 5 s";
  }
  if (run->identical < run->ok) {
    rep.note += (rep.note.empty() ? "" : "; ") + std::to_string(run->ok - run->identical) +
                " good answers differed from the probe's bytes (checked byte by byte instead)";
  }
  if (!run->first_bad.empty()) {
    rep.note += (rep.note.empty() ? "" : "; ") + ("first failed answer: " + run->first_bad);
  }
  return rep;
}

void PrintRep(const RowSpec& row, int rep_index, int reps, const std::string& server,
              const Rep& r) {
  if (!r.error.empty()) {
    std::printf("  %-9s %d/%d %-10s not measured: %s\n", row.name.c_str(), rep_index, reps,
                server.c_str(), r.error.c_str());
  } else {
    std::printf(
        "  %-9s %d/%d %-10s %8.0f calls/s  p50 %7.2f ms  p99 %7.2f ms  server %6.1f us/call  "
        "load generator %6.1f us/call  VmHWM %6.1f MiB%s\n",
        row.name.c_str(), rep_index, reps, server.c_str(), r.Rate(), r.p50_us / 1000,
        r.p99_us / 1000, r.ServerUsPerCall(), r.LoadgenUsPerCall(), r.hwm_mib,
        r.failed ? (", " + std::to_string(r.failed) + " FAILED").c_str() : "");
  }
  if (!r.note.empty()) std::printf("      %s\n", r.note.c_str());
  std::fflush(stdout);
}

}  // namespace

std::vector<RowSpec> Rows(int queue_jobs, int slowloris, int fleet) {
  using Kind = RowSpec::Kind;
  using Mode = HeldConnections::Mode;
  return {
      {.kind = Kind::kStdio,
       .name = "stdio",
       .what = "stdio, a client that parses no JSON (pre-serialized line out, bytes checked)"},
      {.kind = Kind::kStdioSdk, .name = "stdio-sdk", .what = "stdio through the C++ mcp::Client"},
      {.name = "c1", .connections = 1, .what = "HTTP, wrk, 1 keep-alive connection"},
      {.name = "c8", .connections = 8, .what = "HTTP, wrk, 8 keep-alive connections"},
      {.name = "c64", .connections = 64, .what = "HTTP, wrk, 64 keep-alive connections"},
      {.name = "queue",
       .topic = "queue",
       .connections = 8,
       .what = "HTTP, wrk, 8 connections, slurm_query queue: a " + std::to_string(queue_jobs) +
               "-row answer"},
      {.name = "slowloris",
       .connections = 1,
       .held = slowloris,
       .held_mode = Mode::kHalf,
       .what = "HTTP, wrk, 1 connection beside " + std::to_string(slowloris) +
               " half-open connections"},
      {.name = "fleet",
       .connections = 64,
       .held = fleet,
       .held_mode = Mode::kIdle,
       .what = "HTTP, wrk, 64 connections beside " + std::to_string(fleet) +
               " idle keep-alive connections"},
  };
}

std::vector<ServerFigures> RunSideBySide(const RunOptions& options,
                                         const std::vector<ServerUnderTest>& servers,
                                         const std::vector<RowSpec>& rows) {
  std::vector<ServerFigures> figures(servers.size());
  std::vector<HttpServer> http(servers.size());
  std::printf("HTTP servers (127.0.0.1, ports the kernel picks), each probed once:\n");
  for (size_t i = 0; i < servers.size(); ++i) {
    ServerFigures& f = figures[i];
    f.name = servers[i].name;
    auto started = ServerProcess::Start(f.name, servers[i].http_argv, /*stdio=*/false);
    if (!started.ok()) {
      f.error = started.status().message();
      continue;
    }
    http[i].process = std::move(started).value();
    http[i].tls = servers[i].tls;
    if (!servers[i].bearer_file.empty()) {
      http[i].bearer_file = servers[i].bearer_file;
      std::ifstream in(servers[i].bearer_file);
      std::getline(in, http[i].bearer);
    }
    base::Result<int> port = http[i].process->WaitForPort(&f.banner);
    base::Status probed =
        port.ok() ? (http[i].port = *port, Probe(options, http[i], f)) : port.status();
    if (!probed.ok()) {
      f.error = probed.message() + "; server stderr: " + http[i].process->StderrTail();
      f.stopped = http[i].process->Stop();
      http[i].process.reset();
      std::printf("  %-10s not measured: %s\n", f.name.c_str(), f.error.c_str());
      continue;
    }
    std::printf("  %-10s PID %d, port %d, %s (%s); nodes: %d rows, queue: %d rows\n",
                f.name.c_str(), static_cast<int>(http[i].process->pid()), http[i].port,
                f.info.c_str(), f.banner.c_str(), http[i].expected["nodes"].rows,
                http[i].expected["queue"].rows);
    if (options.warmup_seconds > 0) {
      base::Result<WrkRun> warm = RunWrk({.wrk = options.wrk,
                                          .script = options.script,
                                          .port = http[i].port,
                                          .connections = 8,
                                          .seconds = options.warmup_seconds,
                                          .arguments = http[i].expected["nodes"].arguments,
                                          .rows = http[i].expected["nodes"].rows,
                                          .row_key = http[i].expected["nodes"].row_key,
                                          .expected_file = http[i].expected["nodes"].answer_file,
                                          .bearer_file = http[i].bearer_file,
                                          .tls = http[i].tls});
      if (warm.ok()) EndSessions(http[i].port, warm->session_ids, http[i].bearer, http[i].tls);
    }
  }
  std::printf("\nrepetitions (servers take turns within each):\n");
  std::fflush(stdout);
  for (const RowSpec& row : rows) {
    for (int rep = 1; rep <= options.reps; ++rep) {
      for (size_t i = 0; i < servers.size(); ++i) {
        if (!http[i].process) continue;  // no probe, so no expected answer
        const bool stdio = row.kind != RowSpec::Kind::kHttp;
        if (stdio && servers[i].stdio_argv.empty()) continue;
        if (!stdio && row.held > 0 && servers[i].tls) continue;  // held connections are plain
        Rep r = stdio
                    ? MeasureStdio(row, servers[i], http[i].expected.at(row.topic), options.seconds)
                    : MeasureHttp(row, http[i], options);
        PrintRep(row, rep, options.reps, figures[i].name, r);
        figures[i].reps[row.name].push_back(std::move(r));
      }
    }
  }
  for (size_t i = 0; i < servers.size(); ++i) {
    if (http[i].process) figures[i].stopped = http[i].process->Stop();
    for (const auto& [topic, e] : http[i].expected) unlink(e.answer_file.c_str());
  }
  return figures;
}

}  // namespace slurm_rca::bench
