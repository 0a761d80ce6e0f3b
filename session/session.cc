#include "session/session.h"

#include <chrono>
#include <sstream>
#include <thread>
#include <utility>

#include "mcp/backend/live_backend.h"
#include "mcp/backend/replay_backend.h"
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
  mcp::Client* client() override { return &child_->client(); }
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
  session.backend_ = std::make_unique<mcp::LiveBackend>(
      live::LiveOptionsFor(*session.lab_, host, kLabReadTimeoutS));
  return live::LiveServeArgs(*session.lab_, host, kLabReadTimeoutS);
}

}  // namespace

std::vector<std::string> ReplayServeArgs(const std::string& bundle_dir, double offset_s) {
  return {"--replay", bundle_dir, "--offset", std::to_string(offset_s)};
}

base::Result<std::unique_ptr<agents::Session>> OpenSession(const SessionOptions& o) {
  auto session = std::make_unique<ChildSession>();
  std::vector<std::string> serve_args;
  switch (o.source) {
    case SessionOptions::Source::kReplay: {
      auto replay = mcp::ReplayBackend::Open(o.bundle_dir);
      if (!replay.ok()) {
        return base::Status::InvalidArgument("bundle " + o.bundle_dir + ": " +
                                             replay.status().message());
      }
      (*replay)->SetOffset(o.offset_s);
      session->backend_ = std::move(replay).value();
      serve_args = ReplayServeArgs(o.bundle_dir, o.offset_s);
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
      session->backend_ = std::make_unique<mcp::LiveBackend>(std::move(mapped).value());
      serve_args = mcp::ServeArgs(o.cluster);
      break;
    }
  }
  auto child = live::McpChild::Start(o.slurm_mcp, serve_args);
  if (!child.ok()) return base::Status::Unavailable("slurm-mcp: " + child.status().message());
  session->child_ = std::move(child).value();
  return std::unique_ptr<agents::Session>(std::move(session));
}

}  // namespace slurm_rca::session
