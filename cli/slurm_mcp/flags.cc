// The flags of slurm-mcp's back-end and of serve --http's limits, and what they open.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>

#include "cli/slurm_mcp/commands.h"
#include "mcp/backend/live_backend.h"
#include "mcp/backend/live_flags.h"
#include "mcp/backend/replay_backend.h"
#include "mcp/topics/topics.h"

namespace slurm_rca::cli::slurm_mcp {
namespace {

using base::Status;
using namespace slurm_rca::mcp;

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}

}  // namespace

int Usage(const std::string& message) {
  std::cerr << "slurm-mcp: " << message << " (see slurm-mcp --help)\n";
  return kUsage;
}

void BackendFlags::Add(CLI::App* app) {
  app->add_option("--replay", replay, "Serve a recorded evidence bundle instead of the cluster: a directory, a pack "
                 "(DIR.evidence.gz), or a pack's name without .evidence.gz (fixtures/demo)");
  app->add_option("--offset", offset, "Replay: the snapshot at or before this many seconds");
  app->add_option("--slurm-conf", live.slurm_conf, "Live: SLURM_CONF given to Slurm commands");
  app->add_option("--clusters", live.clusters,
                  "Live: cluster names -M may name, comma-separated");
  app->add_option("--trusted-dirs", live.trusted_dirs,
                  "Live: where Slurm binaries are (colon-separated)")
      ->capture_default_str();
  app->add_option("--timeout", live.timeout,
                  "Live: seconds before a read is killed. Unless given, raised to the "
                  "controller's MessageTimeout + 10 s when MessageTimeout (read once at start, "
                  "scontrol show config) is at or above it, so that a controller that is down "
                  "fails (connect failure) before a read is killed instead of looking hung")
      ->check(CLI::Range(0.1, 600.0))
      ->each([this](const std::string&) { live.timeout_given = true; })
      ->capture_default_str();
  app->add_option("--cache-ttl", live.cache_ttl, "Live: seconds a read is reused (0: no cache)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app->add_option("--max-concurrent", live.max_concurrent, "Live: Slurm commands at once")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app->add_option("--max-per-minute", live.max_per_minute,
                  "Live: commands started per minute (0: no budget)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app->add_option("--max-output-mib", live.max_output_mib,
                  "Live: MiB of a read's output kept; past it an answer is a lower bound ('at "
                  "least N rows'), never a total. Memory: up to this per read held at once "
                  "(max-concurrent running, plus max-per-minute * cache-ttl / 60 cached)")
      ->check(CLI::Range(0.0625, 256.0))
      ->capture_default_str();
  app->add_option("--log-file", live.log_files,
                  "Live: DAEMON=PATH of a Slurm log for the logs topic");
  app->add_option("--fabric-root", live.fabric_root,
                  "Live: read the fabric topic's sys, proc and sys/fs/cgroup under this directory "
                  "instead of / (a synthetic tree in tests)");
  app->add_option("--audit-log", audit_log, "Append one JSON line per tool call to this file ('-': stderr)");
  app->add_option("--max-rows", max_rows, "Rows per answer at most")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
}

base::Result<std::unique_ptr<Backend>> BackendFlags::Make() const {
  if (!replay.empty()) {
    auto opened = ReplayBackend::Open(replay);
    if (!opened.ok()) return opened.status();
    std::unique_ptr<ReplayBackend> b = std::move(opened).value();
    if (offset >= 0) b->SetOffset(offset);
    return std::unique_ptr<Backend>(std::move(b));
  }
  base::Result<LiveOptions> mapped = LiveOptionsFromFlags(live);
  if (!mapped.ok()) return mapped.status();
  LiveOptions o = std::move(mapped).value();
  o.metrics = metrics;
  return std::unique_ptr<Backend>(std::make_unique<LiveBackend>(std::move(o)));
}

void FitReadTimeout(const BackendFlags& flags, Backend& backend) {
  auto* live = dynamic_cast<LiveBackend*>(&backend);
  if (live == nullptr) return;
  // A back-end of its own, built from the same options (the same guard and executor settings),
  // so that this read, made for no tool call, is neither a program's last read in GET /ready
  // nor a start spent from the callers' rate budget.
  LiveBackend start_up(live->options());
  const Evidence config = start_up.Read(FindTopic("config")->argv);
  const ReadTimeoutChoice choice =
      ChooseReadTimeout(flags.live.timeout, flags.live.timeout_given, MessageTimeoutOf(config));
  live->SetReadTimeout(Millis(choice.timeout), choice.timed_out_note);
  if (!choice.message.empty()) std::cerr << "slurm-mcp: " << choice.message << "\n";
}

base::Result<ToolBackend> OpenToolBackend(const BackendFlags& flags, SurfaceOptions& surface) {
  base::Result<std::unique_ptr<Backend>> made = flags.Make();
  if (!made.ok()) return made.status();
  ToolBackend out;
  out.backend = std::move(made).value();
  surface.backend = out.backend.get();
  if (!flags.audit_log.empty()) {
    if (flags.audit_log == "-") {
      out.audit = AuditLog::Stderr();
    } else {
      auto opened = AuditLog::Open(flags.audit_log);
      if (!opened.ok()) return Status::InvalidArgument(opened.status().message());
      out.audit = std::move(opened).value();
    }
    surface.audit = [log = out.audit.get()](const Json& entry) { log->Record(entry); };
  }
  return out;
}

void HttpLimits::Add(CLI::App* serve) {
  serve->add_option("--http-workers", workers,
                    "HTTP: tool calls run at once (a bounded pool; more wait in order; the "
                    "event loop that reads and writes every connection is one more thread); 0: "
                    "on the event loop itself. Default: 8, and 0 with --replay, whose reads "
                    "never wait")
      ->check(CLI::Range(0, 256));
  serve->add_option("--http-threads", event_threads,
                    "HTTP: threads running the event loop that reads, screens and writes every "
                    "connection (each connection is served by one at a time), beside the "
                    "--http-workers pool. Raise it only when the event thread uses a whole core "
                    "and more cores are free")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  serve->add_option("--http-header-timeout", header_timeout,
                    "HTTP: seconds a request's header may take from its first byte, and then "
                    "its body again; a slower connection is closed (slowloris)")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  serve->add_option("--http-idle-timeout", idle_timeout,
                    "HTTP: seconds a kept-alive connection may wait for its next request, and "
                    "a response may wait to be read, before the connection is closed")
      ->check(CLI::Range(0.01, 86400.0))
      ->capture_default_str();
  serve->add_option("--max-connections", max_connections,
                    "HTTP: connections served at once; past it a new one gets 503 with "
                    "Retry-After at once (lowered to fit the open-file limit)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->capture_default_str();
  serve->add_option("--max-connections-per-address", max_per_address,
                    "HTTP: connections served at once from one client address (every local "
                    "agent shares 127.0.0.1); past it 503 as above")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->capture_default_str();
}

std::string HttpLimits::FitToFileLimit() {
  constexpr rlim_t kReserve = 64;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return "";
  const rlim_t need = static_cast<rlim_t>(max_connections) + kReserve;
  if (limit.rlim_cur >= need) return "";
  const rlim_t raised = limit.rlim_max == RLIM_INFINITY ? need : std::min(need, limit.rlim_max);
  if (raised > limit.rlim_cur) {
    rlimit wanted = limit;
    wanted.rlim_cur = raised;
    if (setrlimit(RLIMIT_NOFILE, &wanted) == 0) limit.rlim_cur = raised;
  }
  if (limit.rlim_cur >= need) return "";
  const std::size_t fits =
      limit.rlim_cur > kReserve ? static_cast<std::size_t>(limit.rlim_cur - kReserve) : 1;
  const std::string was = std::to_string(max_connections);
  max_connections = fits;
  max_per_address = std::min(max_per_address, fits);
  return "--max-connections " + was + " lowered to " + std::to_string(fits) +
         ": the open-file limit is " + std::to_string(limit.rlim_cur) + " (ulimit -n)";
}

void HttpLimits::ApplyTo(HttpOptions& h, bool replay) const {
  h.workers = workers >= 0 ? workers : replay ? 0 : 8;
  h.event_threads = event_threads;
  h.header_timeout = Millis(header_timeout);
  h.idle_timeout = Millis(idle_timeout);
  h.max_connections = max_connections;
  h.max_connections_per_address = max_per_address;
}

base::Result<std::string> ReadToken(const std::string& path) {
  return mcp::auth::ReadSecretFile(path, "--token-file");
}

}  // namespace slurm_rca::cli::slurm_mcp
