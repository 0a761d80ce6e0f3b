// mcp_load: many concurrent HTTP clients against slurm-mcp on the replay back-end for a fixed
// time; every request must succeed and the server's memory must stay bounded.
//
//   build/bin/mcp_load [--clients 64] [--seconds 60] [--warmup 5] [--bundle DIR]
//                      [--slurm-mcp PATH] [--growth-mib 16] [--growth-ratio 0.25]
//
// Starts `slurm-mcp serve --http 127.0.0.1:0 --replay BUNDLE` as a child (port chosen by the
// kernel, stopped by its PID), runs the workload of mcp_bench (tools/call slurm_query
// {"topic":"nodes"}, each answer checked) from --clients threads, each with its own session, for
// --warmup seconds, reads VmRSS and VmHWM from /proc/PID/status, runs the same for --seconds
// (VmRSS sampled once a second), and reads them again. `make test` runs it for 60 s (the ctest
// test mcp_load), `make soak` for 600 s.
//
// Exit 0 when every initialize and every call succeeded, the server was still running at the end
// and its VmRSS at the end is at most  VmRSS after warm-up x (1 + growth-ratio) + growth-mib.
// Exit 1 otherwise, saying which; 2 for bad flags. Speed is printed, never judged.
#include <sys/utsname.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/mcp_harness.h"
#include "mcp/backend/bundle_pack.h"

namespace {

namespace fs = std::filesystem;
namespace mcp = slurm_rca::mcp;
using slurm_rca::bench::Clock;
using slurm_rca::bench::Memory;
using slurm_rca::bench::ReadMemory;
using slurm_rca::bench::ServerProcess;
using slurm_rca::bench::Throughput;

void PrintPhase(const char* name, const Throughput& t) {
  std::printf(
      "%-8s %d clients (%d with a session), %.1f s: %ld calls ok, %ld failed, %ld failed "
      "initialize attempts; %.0f req/s, latency p50 %.0f us, p99 %.0f us, max %.0f us\n",
      name, t.clients, t.running, t.seconds, t.ok, t.errors, t.init_failures, t.Rate(),
      t.latency.Percentile(0.5), t.latency.Percentile(0.99),
      t.latency.us.empty() ? NAN : t.latency.us.back());
  if (!t.first_init_error.empty()) {
    std::printf("         first failed initialize: %s\n", t.first_init_error.c_str());
  }
  if (!t.first_call_error.empty()) {
    std::printf("         first failed call: %s\n", t.first_call_error.c_str());
  }
  std::fflush(stdout);
}

// The problems with one phase, "" when none.
std::string Failures(const char* name, const Throughput& t) {
  std::string out;
  if (t.running < t.clients) {
    out += std::string(name) + ": only " + std::to_string(t.running) + " of " +
           std::to_string(t.clients) + " clients got a session; ";
  }
  if (t.init_failures) {
    out += std::string(name) + ": " + std::to_string(t.init_failures) +
           " failed initialize attempts; ";
  }
  if (t.errors) out += std::string(name) + ": " + std::to_string(t.errors) + " failed calls; ";
  if (t.ok == 0) out += std::string(name) + ": no call answered; ";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "mcp_load: concurrent HTTP clients against slurm-mcp on the replay back-end; zero failed "
      "requests and bounded memory, or exit 1"};
  int clients = 64;
  double seconds = 60;
  double warmup = 5;
  double growth_mib = 16;
  double growth_ratio = 0.25;
  std::string bundle = std::string(SLURM_RCA_SOURCE_DIR) + "/fixtures/demo";
  std::string slurm_mcp;
  app.add_option("--clients", clients, "Concurrent HTTP clients, a thread and a session each")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--seconds", seconds, "Seconds of load after the warm-up")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  app.add_option("--warmup", warmup, "Seconds of the same load before memory is first read")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  app.add_option("--growth-mib", growth_mib, "VmRSS the server may gain beyond the ratio, MiB")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--growth-ratio", growth_ratio, "Share of its warm VmRSS the server may gain")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  app.add_option("--bundle", bundle, "Evidence bundle the server replays")->capture_default_str();
  app.add_option("--slurm-mcp", slurm_mcp, "The slurm-mcp binary (default: beside mcp_load)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "mcp_load: %s (see mcp_load --help)\n", e.what());
    return 2;
  }
  const mcp::BundleLocation where = mcp::LocateBundle(bundle);
  if (where.kind == mcp::BundleLocation::Kind::kNone) {
    std::fprintf(stderr, "mcp_load: --bundle %s: no evidence bundle there (directory or pack)\n",
                 bundle.c_str());
    return 2;
  }
  bundle = fs::absolute(where.path).lexically_normal().string();
  if (slurm_mcp.empty()) {
    std::error_code ec;
    slurm_mcp = (fs::read_symlink("/proc/self/exe", ec).parent_path() / "slurm-mcp").string();
  }
  if (access(slurm_mcp.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "mcp_load: slurm-mcp not found at %s; build it or pass --slurm-mcp\n",
                 slurm_mcp.c_str());
    return 2;
  }
  slurm_rca::bench::InstallChildCleanup();

  struct utsname u = {};
  uname(&u);
  std::printf("mcp_load: %d HTTP clients against slurm-mcp, %.0f s warm-up then %.0f s\n", clients,
              warmup, seconds);
  std::printf(
      "machine:  %d CPUs (nproc), %s, %s %s, load average %s; server and clients share it\n",
      slurm_rca::bench::Nproc(), slurm_rca::bench::CpuModel().c_str(), u.sysname, u.release,
      slurm_rca::bench::LoadAverage().c_str());
  std::printf("workload: tools/call %s %s on the replay of %s, every answer checked\n",
              slurm_rca::bench::kTool, slurm_rca::bench::WorkloadArguments().dump().c_str(),
              bundle.c_str());

  auto started = ServerProcess::Start(
      "slurm-mcp", {slurm_mcp, "serve", "--http", "127.0.0.1:0", "--replay", bundle}, false);
  if (!started.ok()) {
    std::printf("FAIL: cannot start slurm-mcp: %s\n", started.status().message().c_str());
    return 1;
  }
  std::unique_ptr<ServerProcess> server = std::move(started).value();
  std::string banner;
  const slurm_rca::base::Result<int> listening = server->WaitForPort(&banner);
  if (!listening.ok()) {
    std::printf("FAIL: %s\n", listening.status().message().c_str());
    return 1;
  }
  const int port = *listening;
  const pid_t pid = server->pid();
  std::printf("server:   %s, PID %d, 127.0.0.1:%d%s%s\n", slurm_mcp.c_str(), pid, port,
              banner.empty() ? "" : ", ", banner.c_str());
  std::printf("start:    VmRSS %.1f MiB\n\n", ReadMemory(pid).rss_mib);
  std::fflush(stdout);

  const Throughput warm = slurm_rca::bench::MeasureThroughput(port, clients, warmup);
  PrintPhase("warm-up", warm);
  const Memory after_warmup = ReadMemory(pid);
  std::printf("         after warm-up: VmRSS %.1f MiB, VmHWM %.1f MiB\n", after_warmup.rss_mib,
              after_warmup.hwm_mib);
  std::fflush(stdout);

  // Sampled once a second; a line every 10 s (every 60 s when the run is longer than 5 minutes).
  const int every = seconds > 300 ? 60 : 10;
  int tick = 0;
  double peak_rss = after_warmup.rss_mib;
  const auto start = Clock::now();
  auto sample = [&] {
    const Memory m = ReadMemory(pid);
    if (m.ok()) peak_rss = std::max(peak_rss, m.rss_mib);
    if (++tick % every == 0) {
      std::printf("  %4.0f s  VmRSS %.1f MiB, VmHWM %.1f MiB\n", slurm_rca::bench::Seconds(start),
                  m.rss_mib, m.hwm_mib);
      std::fflush(stdout);
    }
  };
  const Throughput load = slurm_rca::bench::MeasureThroughput(port, clients, seconds, sample);
  PrintPhase("load", load);
  const Memory end = ReadMemory(pid);
  const double bound = after_warmup.rss_mib * (1 + growth_ratio) + growth_mib;
  std::printf(
      "memory:  VmRSS after warm-up %.1f MiB, at the end %.1f MiB (bound %.1f MiB = %.1f x %.2f "
      "+ %.0f), highest sampled %.1f MiB, VmHWM %.1f MiB\n",
      after_warmup.rss_mib, end.rss_mib, bound, after_warmup.rss_mib, 1 + growth_ratio, growth_mib,
      peak_rss, end.hwm_mib);
  std::printf("load average at the end: %s\n", slurm_rca::bench::LoadAverage().c_str());

  std::string failures = Failures("warm-up", warm) + Failures("load", load);
  if (!after_warmup.ok() || !end.ok()) {
    failures += "the server's /proc/" + std::to_string(pid) + "/status could not be read; ";
  } else if (end.rss_mib > bound) {
    failures += "VmRSS grew past the bound; ";
  }
  const std::string stopped = server->Stop();
  std::printf("server stopped: %s\n", stopped.c_str());
  if (stopped.find("on SIGTERM") == std::string::npos) {
    failures += "the server was not running at the end (" + stopped + "); ";
  }
  if (!failures.empty()) {
    failures.resize(failures.size() - 2);
    std::printf("FAIL: %s\n", failures.c_str());
    return 1;
  }
  std::printf("PASS: %ld calls, none failed; VmRSS within the bound\n", warm.ok + load.ok);
  return 0;
}
