#include "scenarios/live/ctld_load.h"

#include <atomic>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "mcp/protocol/client.h"

namespace slurm_rca::live {

using base::Status;

RpcCounts ParseRpcCounts(const std::string& sdiag_output) {
  RpcCounts counts;
  std::istringstream in(sdiag_output);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("Remote Procedure Call statistics by message type") != std::string::npos) {
      inside = true;
      continue;
    }
    if (line.find("Remote Procedure Call statistics by user") != std::string::npos) break;
    if (!inside) continue;
    // "	REQUEST_NODE_INFO                       ( 2007) count:12     ave_time:231 ..."
    std::istringstream fields(line);
    std::string type;
    fields >> type;
    std::size_t count = line.find("count:");
    if (type.empty() || count == std::string::npos) continue;
    counts[type] = std::stol(line.substr(count + 6));
  }
  return counts;
}

RpcCounts ReadRpcCounts(const Lab& lab) {
  ToolResult r = lab.Client({"sdiag"}, std::chrono::seconds(20));
  return r.ok() ? ParseRpcCounts(r.out) : RpcCounts{};
}

RpcCounts Delta(const RpcCounts& before, const RpcCounts& after) {
  RpcCounts d;
  for (const auto& [type, n] : after) {
    auto b = before.find(type);
    long diff = n - (b == before.end() ? 0 : b->second);
    if (diff != 0) d[type] = diff;
  }
  return d;
}

long Total(const RpcCounts& counts) {
  long sum = 0;
  for (const auto& [type, n] : counts) sum += n;
  return sum;
}

namespace {

std::unique_ptr<mcp::Client> Connect(int port, const std::string& bearer = "") {
  auto client = std::make_unique<mcp::Client>(std::make_unique<mcp::HttpClientTransport>(
      "127.0.0.1", port, "/mcp",
      bearer.empty() ? std::nullopt : std::optional<std::string>(bearer)));
  if (!client->Initialize("ctld-load", "0.1.0").ok()) return nullptr;
  return client;
}

}  // namespace

base::Result<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& binary, const Lab& lab, int port,
    const std::vector<std::string>& extra_args, const std::string& bearer) {
  std::vector<std::string> argv = {binary,
                                   "serve",
                                   "--http",
                                   "127.0.0.1:" + std::to_string(port),
                                   "--skills",
                                   "",
                                   "--slurm-conf",
                                   lab.SlurmConf(),
                                   "--clusters",
                                   lab.options().cluster,
                                   "--trusted-dirs",
                                   "/usr/bin:/usr/sbin"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  SpawnResult spawned = SpawnDaemon(argv, {"PATH=/usr/bin:/bin", "LANG=C"},
                                    lab.Path("log/slurm-mcp-" + std::to_string(port) + ".log"));
  if (!spawned.id) return Status::Error(spawned.error);
  std::unique_ptr<HttpServer> server(new HttpServer());
  server->pid_ = *spawned.id;
  server->port_ = port;
  for (int i = 0; i < 100; ++i) {
    if (!IsAlive(server->pid_)) break;
    if (Connect(port, bearer)) return server;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::Error(  // the destructor stops it
      "slurm-mcp did not answer initialize on 127.0.0.1:" + std::to_string(port) + "; see " +
      lab.Path("log/slurm-mcp-" + std::to_string(port) + ".log"));
}

HttpServer::~HttpServer() {
  if (pid_.pid > 0) StopProcess(pid_, std::chrono::seconds(5));
  ReapChildren();
}

AgentLoad RunOverviewAgents(int port, int agents, std::chrono::milliseconds duration) {
  AgentLoad load;
  load.agents = agents;
  std::vector<std::unique_ptr<mcp::Client>> clients;
  std::atomic<long> calls{0}, errors{0}, no_evidence{0}, sections_read{0};
  std::mutex error_mu;
  auto fail = [&](const std::string& what) {
    ++errors;
    std::lock_guard<std::mutex> lock(error_mu);
    if (load.first_error.empty()) load.first_error = what;
  };
  for (int i = 0; i < agents; ++i) {
    clients.push_back(Connect(port));
    if (!clients.back()) fail("an agent could not initialize");
  }
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + duration;
  std::vector<std::thread> threads;
  for (auto& c : clients) {
    if (!c) continue;
    threads.emplace_back([&, client = c.get()] {
      while (std::chrono::steady_clock::now() < deadline) {
        auto r = client->CallTool("slurm_overview", mcp::Json::object());
        if (!r.ok() || r->is_error || !r->structured) {
          fail(!r.ok() ? r.status().ToString() : r->Text().substr(0, 300));
          continue;
        }
        ++calls;
        for (const mcp::Json& s : (*r->structured)["sections"]) {
          if (s.value("outcome", "") != "ok") ++no_evidence;
          if (!s.value("cached", false)) ++sections_read;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  load.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  load.calls = calls;
  load.errors = errors;
  load.no_evidence = no_evidence;
  load.sections_read = sections_read;
  return load;
}

}  // namespace slurm_rca::live
