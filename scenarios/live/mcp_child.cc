#include "scenarios/live/mcp_child.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>

namespace slurm_rca::live {

base::Result<std::unique_ptr<McpChild>> McpChild::Start(const std::string& binary,
                                                        const std::vector<std::string>& serve_args,
                                                        const std::string& log_path,
                                                        mcp::EraMode era) {
  std::vector<std::string> argv = {binary, "serve", "--stdio"};
  argv.insert(argv.end(), serve_args.begin(), serve_args.end());
  std::vector<std::string> env;
  for (const char* keep : {"PATH", "HOME", "LANG", "SLURM_CONF", "TZ"}) {
    if (const char* v = std::getenv(keep)) env.push_back(std::string(keep) + "=" + v);
  }
  PipedChild c = SpawnPiped(argv, env, log_path.empty() ? "/dev/null" : log_path);
  if (!c.id) return base::Status::Error(c.error);
  std::unique_ptr<McpChild> child(new McpChild());
  child->pid_ = *c.id;
  child->to_child_ = c.to_child;
  child->from_child_ = c.from_child;
  mcp::ClientOptions options;
  options.timeout = std::chrono::milliseconds(60000);
  child->client_ = std::make_unique<mcp::Client>(
      std::make_unique<mcp::StdioClientTransport>(c.from_child, c.to_child), options);
  auto connected = child->client_->Connect("rca-bench", "0.1.0", era);
  if (!connected.ok()) {  // the destructor stops it
    return base::Status::Error("slurm-mcp did not connect: " + connected.status().ToString());
  }
  return child;
}

McpChild::~McpChild() {
  if (client_) client_->transport().Close();
  if (to_child_ >= 0) ::close(to_child_);  // end of input: slurm-mcp exits
  if (pid_.pid > 0) StopProcess(pid_, std::chrono::milliseconds(2000));
  client_.reset();
  if (from_child_ >= 0) ::close(from_child_);
}

std::string SiblingProgram(const std::string& name) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  auto p = self.parent_path() / name;
  return std::filesystem::exists(p, ec) ? p.string() : "";
}

}  // namespace slurm_rca::live
