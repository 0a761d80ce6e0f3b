#include "session/session.h"

#include <chrono>
#include <sstream>
#include <thread>
#include <utility>

#include "mcp/backend/live_backend.h"
#include "mcp/backend/replay_backend.h"
#include "mcp/protocol/client.h"
#include "scenarios/live/mcp_child.h"
#include "scenarios/live/runner.h"

namespace slurm_rca::session {
namespace {

// Seconds before one of a lab session's reads is killed, in the child and in the back-end.
constexpr double kLabReadTimeoutS = 20;

// Every source's session: the child and the back-end; for kLab also the lab, which the session
// heals and takes down when it ends.
class ChildSession : public agents::Session {
 public:
  ~ChildSession() override {
    child_.reset();  // it reads the lab: stopped before the lab goes down
    if (lab_up_) {
      std::ostringstream progress;
      live::HealScenario(*lab_, scenario_, progress);
      lab_->Down(progress);
    }
  }
  mcp::Client* client() override { return child_ ? &child_->client() : nullptr; }
  mcp::Backend* backend() override { return backend_.get(); }

  // kLab: the lab comes first, so that it is destroyed after the back-end and the child.
  scenarios::Scenario scenario_;
  std::unique_ptr<live::Lab> lab_;
  bool lab_up_ = false;
  std::unique_ptr<mcp::Backend> backend_;
  std::unique_ptr<live::McpChild> child_;
};

// Brings the lab up and injects the scenario; the back-end and the child's arguments then read
// it as the scenario's host node does.
base::Result<std::vector<std::string>> OpenLab(const SessionOptions& o, ChildSession& session) {
  session.scenario_ = o.scenario;
  session.lab_ = std::make_unique<live::Lab>(o.lab);
  std::ostringstream progress;
  if (base::Status st = session.lab_->Up(progress); !st.ok()) {
    return base::Status::Unavailable("lab up: " + st.message());
  }
  session.lab_up_ = true;
  if (base::Status st = live::InjectScenario(*session.lab_, o.scenario, progress); !st.ok()) {
    return base::Status::Unavailable("inject " + o.scenario.id + ": " + st.message());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<long>(o.offset_s * 1000)));
  const std::string host = live::HostNode(o.scenario);
  if (o.needs.backend) {
    session.backend_ = std::make_unique<mcp::LiveBackend>(
        live::LiveOptionsFor(*session.lab_, host, kLabReadTimeoutS));
  }
  return live::LiveServeArgs(*session.lab_, host, kLabReadTimeoutS);
}

// kRemote: the MCP client of a server that runs elsewhere; no back-end (raw reads need one).
class RemoteSession : public agents::Session {
 public:
  mcp::Client* client() override { return client_.get(); }
  mcp::Backend* backend() override { return nullptr; }
  std::unique_ptr<mcp::Client> client_;
};

base::Result<std::unique_ptr<agents::Session>> OpenRemote(const SessionOptions::Remote& r) {
  auto transport = r.token ? std::make_unique<mcp::HttpClientTransport>(r.host, r.port, r.path, r.token)
                           : std::make_unique<mcp::HttpClientTransport>(r.host, r.port, r.path);
  if (r.tls) transport->UseTls(r.ca_file);
  mcp::ClientOptions options;
  options.timeout = std::chrono::milliseconds(60000);
  auto session = std::make_unique<RemoteSession>();
  session->client_ = std::make_unique<mcp::Client>(std::move(transport), options);
  auto connected = session->client_->Connect("rca-bench", "0.1.0", mcp::EraMode::kAuto);
  if (!connected.ok()) {
    return base::Status::Unavailable("slurm-mcp at " + r.url + ": " + connected.status().ToString());
  }
  return std::unique_ptr<agents::Session>(std::move(session));
}

}  // namespace

base::Result<SessionOptions::Remote> RemoteFromUrl(const std::string& url) {
  SessionOptions::Remote r;
  r.url = url;
  const auto bad = [&](const std::string& why) {
    return base::Status::InvalidArgument("--mcp-url " + url + ": " + why);
  };
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    r.tls = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return bad("not an http:// or https:// URL");
  }
  const std::size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) r.path = rest.substr(slash);
  if (r.path.find_first_of("?#") != std::string::npos) return bad("no query or fragment here");
  std::string port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string::npos) return bad("an IPv6 address without its ]");
    r.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return bad("junk after the IPv6 address");
      port = authority.substr(close + 2);
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    r.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (r.host.empty() || r.host.find_first_of("@ ") != std::string::npos) return bad("no host");
  if (port.empty()) {
    r.port = r.tls ? 443 : 80;
  } else if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
             std::stoi(port) < 1 || std::stoi(port) > 65535) {
    return bad("the port must be 1 to 65535");
  } else {
    r.port = std::stoi(port);
  }
  return r;
}

std::vector<std::string> ReplayServeArgs(const std::string& bundle_dir, double offset_s) {
  return {"--replay", bundle_dir, "--offset", std::to_string(offset_s)};
}

base::Result<std::unique_ptr<agents::Session>> OpenSession(const SessionOptions& o) {
  if (o.source == SessionOptions::Source::kRemote) return OpenRemote(o.remote);
  auto session = std::make_unique<ChildSession>();
  std::vector<std::string> serve_args;
  switch (o.source) {
    case SessionOptions::Source::kReplay: {
      serve_args = ReplayServeArgs(o.bundle_dir, o.offset_s);
      if (!o.needs.backend) break;
      auto replay = mcp::ReplayBackend::Open(o.bundle_dir);
      if (!replay.ok()) {
        return base::Status::InvalidArgument("bundle " + o.bundle_dir + ": " +
                                             replay.status().message());
      }
      (*replay)->SetOffset(o.offset_s);
      session->backend_ = std::move(replay).value();
      break;
    }
    case SessionOptions::Source::kLab: {
      base::Result<std::vector<std::string>> args = OpenLab(o, *session);
      if (!args.ok()) return args.status();
      serve_args = std::move(args).value();
      break;
    }
    case SessionOptions::Source::kCluster: {
      base::Result<mcp::LiveOptions> mapped = mcp::LiveOptionsFromFlags(o.cluster);
      if (!mapped.ok()) return mapped.status();
      if (o.needs.backend) {
        session->backend_ = std::make_unique<mcp::LiveBackend>(std::move(mapped).value());
      }
      serve_args = mcp::ServeArgs(o.cluster);
      break;
    }
    case SessionOptions::Source::kRemote:
      break;  // opened above
  }
  if (!o.needs.client) return std::unique_ptr<agents::Session>(std::move(session));
  auto child = live::McpChild::Start(o.slurm_mcp, serve_args);
  if (!child.ok()) return base::Status::Unavailable("slurm-mcp: " + child.status().message());
  session->child_ = std::move(child).value();
  return std::unique_ptr<agents::Session>(std::move(session));
}

}  // namespace slurm_rca::session
