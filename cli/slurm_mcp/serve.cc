// slurm-mcp serve: the back-end, the optional metrics listener and GPU sampler, the surface the
// server library assembles (server/surface.h), and the transport, over stdio or Streamable HTTP.
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <thread>

#include "base/build_info.h"
#include "cli/slurm_mcp/commands.h"
#include "mcp/protocol/stdio_transport.h"
#include "mcp/telemetry/gpu_sampler.h"
#include "server/surface.h"

namespace slurm_rca::cli::slurm_mcp {
namespace {

using base::Status;
using namespace slurm_rca::mcp;

sigset_t StopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  return stop_signals;
}

// gpu_idle's sampler and the samples it keeps, when --gpu-sample-interval asks for them.
struct GpuSampling {
  std::unique_ptr<GpuSampleStore> store;
  std::unique_ptr<GpuSampler> sampler;  // null: sampling is off
};

// Checks the gpu_idle flags, builds the sampler on `backend` and points `surface` at its
// samples; InvalidArgument says which flag is wrong.
base::Result<GpuSampling> MakeGpuSampling(const ServeOptions& o, bool replay, Backend* backend,
                                          SurfaceOptions& surface) {
  GpuSampling out;
  if (o.gpu_interval <= 0) return out;
  if (replay) return Status::InvalidArgument("--gpu-sample-interval needs the live back-end, not --replay");
  GpuIdleOptions idle = o.idle;
  idle.interval = o.gpu_interval;
  if (Status s = ValidateGpuIdleOptions(idle); !s.ok()) {
    return Status::InvalidArgument("gpu_idle: " + s.message() + " (interval " +
                                   std::to_string(idle.interval) + ", max gap " +
                                   std::to_string(idle.max_sample_gap) + ", window " +
                                   std::to_string(idle.window) + ")");
  }
  GpuSamplerOptions so;
  so.interval = o.gpu_interval;
  so.dcgm_timeout = std::min<std::int64_t>(5, o.gpu_interval);
  for (const std::string& spec : o.dcgm_hosts) {
    base::Result<DcgmHost> h = ParseDcgmHost(spec);
    if (!h.ok()) return Status::InvalidArgument(h.status().message());
    so.dcgm.push_back(*h);
  }
  so.local_node = o.gpu_node;
  if (so.local_node.empty() && so.dcgm.empty()) {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) so.local_node = host;
    so.local_node = so.local_node.substr(0, so.local_node.find('.'));
  }
  if (!so.local_node.empty() && !ParseDcgmHost(so.local_node).ok()) {
    return Status::InvalidArgument("--gpu-node-name '" + so.local_node + "' is not a safe node name");
  }
  out.store = std::make_unique<GpuSampleStore>(512);
  out.sampler = std::make_unique<GpuSampler>(backend, out.store.get(), so);
  surface.gpu_samples = out.store.get();
  surface.gpu_idle = idle;
  surface.gpu_sampling = [s = out.sampler.get()] { return s->Describe(); };
  return out;
}

int ServeStdio(Server& server) {
  std::signal(SIGPIPE, SIG_IGN);
  int still_running = 0;
  const int rc = RunStdio(server, 0, 1, {}, &still_running);
  if (still_running > 0) {
    // A call that ignored its cancellation still runs and uses the server: end the process
    // without destroying it (the audit log writes each record whole, so nothing is pending).
    std::cerr << "slurm-mcp: exiting with " << still_running
              << " call(s) still running after cancellation\n";
    std::cerr.flush();
    std::_Exit(rc);
  }
  return rc;
}

// `start_reading` runs once the HTTP flags are checked, before the listener opens; it only
// starts the first reads (Serve), it does not wait for them.
int ServeHttp(Server& server, ServeOptions& o, bool replay, Backend& backend, Metrics* metrics,
              const CallerCounts& callers, const std::function<void()>& start_reading) {
  HttpOptions h;
  base::Result<ListenAddress> listen = ParseListenAddress(o.http);
  if (!listen.ok()) return Usage("--http " + listen.status().message());
  h.host = listen->host;
  h.port = listen->port;
  h.sessions = !o.no_sessions;
  // GET /ready: per program, whether its last read succeeded; reads nothing (evidence.h).
  h.ready = [b = &backend] { return ReadinessJson(*b); };
  std::unique_ptr<OAuth> oauth;
  if (o.oauth.enabled()) {
    base::Result<std::unique_ptr<OAuth>> made = OAuth::Make(o.oauth);
    if (!made.ok()) return Usage(made.status().message());
    oauth = std::move(*made);
    h.authorize = [a = oauth.get()](std::optional<std::string_view> header,
                                    const mcp::Message* message) {
      return a->Authorize(header, message);
    };
    h.resource_metadata = oauth->MetadataJson();
    h.ready = [b = &backend, a = oauth.get(), c = &callers] {
      nlohmann::json ready = nlohmann::json::parse(ReadinessJson(*b), nullptr, false);
      if (ready.is_object()) ready["authorization"] = a->Readiness();
      // Tool calls by principal (never a token): who is reading, and who is being refused.
      if (ready.is_object()) ready["callers"] = c->ToJson();
      return ready.dump();
    };
  }
  h.max_body_bytes = o.max_body;
  h.metrics = metrics;
  h.tls_cert_file = o.tls_cert;
  h.tls_key_file = o.tls_key;
  h.tls_terminated_by_proxy = o.behind_tls_proxy;
  h.allowed_hosts = o.allowed_hosts;
  if (const std::string lowered = o.limits.FitToFileLimit(); !lowered.empty()) {
    std::cerr << "slurm-mcp: " << lowered << "\n";
  }
  o.limits.ApplyTo(h, replay);
  if (!o.token_file.empty()) {
    base::Result<std::string> token = ReadToken(o.token_file);
    if (!token.ok()) return Usage(token.status().message());
    if (token->size() < 16) return Usage("the token in " + o.token_file + " is shorter than 16 bytes");
    h.token = *token;
  }
  start_reading();
  std::signal(SIGPIPE, SIG_IGN);
  HttpTransport transport(server, h);
  // The stopper is joined before the transport goes: Stop() makes Serve() return on this thread
  // while the stopper is still inside Stop() (a detached stopper used the destroyed transport,
  // which ASan caught in CI). When Serve() returns for another reason, the stopper is woken with
  // a signal of its own and does nothing.
  std::atomic<bool> served{false};
  std::thread stopper([&] {
    const sigset_t stop_signals = StopSignals();
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (!served) transport.Stop();
  });
  base::Result<int> r = transport.Serve([&](int port) {
    std::cerr << "slurm-mcp: serving MCP on " << (h.tls_cert_file.empty() ? "http" : "https")
              << "://" << UrlHost(h.host) << ":" << port << "/mcp ("
              << backend.Label() << ")\n"
              << "slurm-mcp: readiness (outside MCP, reads nothing): GET " << h.ready_path << "\n";
  });
  served = true;
  pthread_kill(stopper.native_handle(), SIGTERM);  // pending, and dropped, if it no longer waits
  stopper.join();
  if (!r.ok()) {
    // A setting it refuses (a TLS key that is not the certificate's) is a usage error.
    if (r.status().code() == base::Status::Code::kInvalidArgument) return Usage(r.status().message());
    std::cerr << "slurm-mcp: " << r.status().message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

CLI::App* AddServe(CLI::App& app, ServeOptions& o, BackendFlags& flags) {
  CLI::App* serve = app.add_subcommand("serve", "Serve MCP over stdio or Streamable HTTP");
  auto* stdio_flag = serve->add_flag("--stdio", o.stdio, "Newline-delimited JSON-RPC on stdin/stdout");
  auto* http_opt = serve->add_option("--http", o.http, "HOST:PORT to listen on (loopback by default)");
  stdio_flag->excludes(http_opt);
  auto* token_opt = serve->add_option("--token-file", o.token_file,
                                      "HTTP: require 'Authorization: Bearer <file contents>'");
  o.oauth.Add(serve);
  token_opt->excludes(serve->get_option("--auth-issuer"));
  auto* cert_opt = serve->add_option("--tls-cert", o.tls_cert,
                                     "HTTP: serve https with this PEM certificate chain (leaf "
                                     "first); TLS 1.2 or later; read once at start")
                       ->check(CLI::ExistingFile);
  auto* key_opt = serve->add_option("--tls-key", o.tls_key, "HTTP: the PEM private key of --tls-cert")
                      ->check(CLI::ExistingFile);
  cert_opt->needs(key_opt);
  key_opt->needs(cert_opt);
  serve
      ->add_flag("--behind-tls-proxy,--auth-behind-tls-proxy", o.behind_tls_proxy,
                 "HTTP without --tls-cert on a non-loopback address with a token (--token-file "
                 "or --auth-issuer): a reverse proxy in front terminates TLS (without it, or "
                 "--tls-cert, such a server refuses to start)")
      ->excludes(cert_opt);
  serve->add_option("--allowed-host", o.allowed_hosts,
                    "HTTP: a name besides loopback's and --http's that the Host and Origin headers "
                    "may carry, such as a reverse proxy's public name (repeatable); any other is "
                    "refused with 403 (DNS rebinding)")
      ->type_name("NAME");
  serve->add_flag("--no-sessions", o.no_sessions, "HTTP: issue no Mcp-Session-Id");
  serve->add_option("--max-body", o.max_body, "HTTP: request body limit in bytes")
      ->check(CLI::Range(size_t{1024}, size_t{64} << 20))
      ->capture_default_str();
  o.limits.Add(serve);
  serve->add_option(
      "--skills", o.skills_dir,
      "Runbooks served read-only as skill://<name>/SKILL.md resources, as prompts (both eras) "
      "and as the 2026-07-28 Skills extension ('' serves none; default: "
      "BIN/../share/slurm-rca/skills, /usr/share/slurm-rca/skills when installed, else the "
      "source tree's skills/)");
  serve
      ->add_option("--metrics", o.metrics_addr,
                   "Serve Prometheus metrics (text format 0.0.4) at GET http://ADDR/metrics on a "
                   "listener of its own; ADDR is HOST:PORT, or :PORT for 127.0.0.1 (off unless "
                   "given)")
      ->type_name("ADDR");
  serve->add_flag("--conformance-fixtures", o.conformance_fixtures,
                  "Also register the conformance suite's test tools (never in production)");
  flags.Add(serve);
  serve->add_option("--gpu-sample-interval", o.gpu_interval,
                    "gpu_idle: seconds between GPU samples (0: off; the seed's default is 120)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{3600}))
      ->capture_default_str();
  serve->add_option("--gpu-node-name", o.gpu_node,
                    "gpu_idle: the Slurm node name of this host's nvidia-smi samples (default: "
                    "the host name, when no --dcgm-host is given)");
  serve->add_option("--dcgm-host", o.dcgm_hosts,
                    "gpu_idle: [NODE=]HOST[:PORT] of a dcgm-exporter to scrape "
                    "(http://HOST:PORT/metrics, port 9400 by default); repeatable, the allowlist");
  serve->add_option("--gpu-idle-window", o.idle.window, "gpu_idle: seconds judged")
      ->capture_default_str();
  serve->add_option("--gpu-idle-warmup", o.idle.warmup, "gpu_idle: seconds after a job's start not judged")
      ->capture_default_str();
  serve->add_option("--gpu-idle-max-gap", o.idle.max_sample_gap,
                    "gpu_idle: a longer hole between samples is an outage that resets history")
      ->capture_default_str();
  serve->add_option("--gpu-idle-min-samples", o.idle.min_samples, "gpu_idle: observations needed per node")
      ->capture_default_str();
  return serve;
}

void BlockStopSignals() {
  const sigset_t stop_signals = StopSignals();
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
}

int Serve(ServeOptions o, BackendFlags flags) {
  SurfaceOptions surface;
  surface.conformance_fixtures = o.conformance_fixtures;
  surface.caps.max_rows = flags.max_rows;
  // --metrics: the counters exist before the back-end, which counts its reads into them.
  std::unique_ptr<Metrics> metrics;
  ListenAddress metrics_address;
  if (!o.metrics_addr.empty()) {
    base::Result<ListenAddress> parsed = ParseListenAddress(o.metrics_addr);
    if (!parsed.ok()) return Usage("--metrics " + parsed.status().message());
    metrics_address = *parsed;
    metrics = std::make_unique<Metrics>(base::Version(), base::Revision());
    flags.metrics = metrics.get();
    surface.metrics = metrics.get();
  }
  base::Result<ToolBackend> opened = OpenToolBackend(flags, surface);
  if (!opened.ok()) return Usage(opened.status().message());
  Backend& backend = *opened->backend;
  const bool replay = !flags.replay.empty();
  base::Result<GpuSampling> gpu = MakeGpuSampling(o, replay, &backend, surface);
  if (!gpu.ok()) return Usage(gpu.status().message());
  if (!o.stdio && o.http.empty()) return Usage("serve needs --stdio or --http HOST:PORT");
  if (o.stdio && o.oauth.enabled()) {
    return Usage("--auth-* is for --http; over stdio the client is the process that started this one");
  }
  // With OAuth each call reads through its token's view (own jobs, logs: mcp/topics/scoped_backend.h),
  // and is counted by its principal for /ready.
  CallerCounts callers;
  if (o.oauth.enabled()) {
    surface.scopes = o.oauth.scopes;
    surface.caller_counts = &callers;
  }

  server::ServerSurface assembly;
  assembly.tools = surface;
  assembly.skills_dir = o.skills_dir;
  assembly.version = base::Version();
  assembly.instructions =
      "Read-only view of a Slurm cluster (" + backend.Label() +
      "). Start with slurm_overview; use slurm_describe to learn a topic before slurm_query. "
      "A result marked NO EVIDENCE means the read failed or timed out: that is a symptom, not an "
      "empty cluster.";
  server::AssembledServer assembled = server::AssembleServer(assembly);
  // An explicit --skills must work; the built-in default may be absent (an installed binary).
  if (!assembled.skills_error.empty() && o.skills_explicit) return Usage(assembled.skills_error);
  if (!assembled.skills_error.empty()) {
    std::cerr << "slurm-mcp: serving no skills: " << assembled.skills_error << "\n";
  }
  for (const std::string& w : assembled.skills_not_served) {
    std::cerr << "slurm-mcp: skill not served: " << w << "\n";
  }
  Server server(std::move(assembled.options));
  std::unique_ptr<MetricsServer> metrics_server;
  if (metrics) {
    metrics_server = std::make_unique<MetricsServer>(*metrics);
    Status s = metrics_server->Start(metrics_address.host, metrics_address.port);
    if (!s.ok()) {
      std::cerr << "slurm-mcp: " << s.message() << "\n";
      return 1;
    }
    std::cerr << "slurm-mcp: metrics (Prometheus text): http://" << UrlHost(metrics_address.host)
              << ":" << metrics_server->port() << "/metrics\n";
  }
  // The back-end's first reads, once no flag can still be refused: the GPU sampler's, and
  // MessageTimeout's, which may change the read timeout. That one runs beside the server, so that
  // neither the handshake nor the listener (and GET /ready) waits up to a read timeout for it;
  // a read made before it ends keeps the timeout it started with. It is joined when serving
  // ends, which can wait for it in the first read timeout of the server's life.
  std::thread message_timeout;
  auto start_reading = [&] {
    if (gpu->sampler) gpu->sampler->Start();
    message_timeout = std::thread([&] { FitReadTimeout(flags, backend); });
  };
  int rc = 0;
  if (o.stdio) {
    start_reading();
    rc = ServeStdio(server);
  } else {
    rc = ServeHttp(server, o, replay, backend, metrics.get(), callers, start_reading);
  }
  if (message_timeout.joinable()) message_timeout.join();
  return rc;
}

}  // namespace slurm_rca::cli::slurm_mcp
