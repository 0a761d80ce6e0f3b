#include "bench/queue_bundle.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "mcp/backend/bundle_pack.h"
#include "mcp/protocol/jsonrpc.h"

namespace slurm_rca::bench {

namespace fs = std::filesystem;
using mcp::Json;

namespace {

// squeue -o '%i|%P|%u|%T|%M|%D|%R' lines for `jobs` jobs: every third running on its nodes, the
// rest pending for priority or resources.
std::string GeneratedQueue(int jobs) {
  std::string out;
  for (int i = 0; i < jobs; ++i) {
    const bool running = i % 3 == 0;
    const bool gpu = i % 4 == 1;
    const int nodes = 1 + i % 4;
    const std::string reason = !running     ? (i % 2 ? "(Priority)" : "(Resources)")
                               : nodes == 1 ? "node1"
                                            : "node[1-" + std::to_string(nodes) + "]";
    char line[160];
    std::snprintf(line, sizeof line, "%d|%s|user%02d|%s|%s|%d|%s\n", 5001 + i, gpu ? "gpu" : "cpu",
                  1 + i % 12, running ? "RUNNING" : "PENDING", running ? "1:02:03" : "0:00", nodes,
                  reason.c_str());
    out += line;
  }
  return out;
}

base::Status WriteFile(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) return base::Status::IoError(path.string() + ": cannot write");
  return base::Status();
}

}  // namespace

base::Status WriteQueueBundle(const std::string& from, const std::string& dir, int jobs) {
  // A directory or a pack (mcp/backend/bundle_pack.h); the bench's bundle is a directory.
  base::Result<mcp::BundleFiles> files = mcp::ReadBundle(from);
  if (!files.ok()) return files.status();
  const fs::path manifest_path = fs::path(from) / "manifest.json";
  Json manifest = Json::parse(files->at("manifest.json"), nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded() || !manifest.is_object()) {
    return base::Status::IoError(manifest_path.string() + ": not readable JSON");
  }
  if (!manifest.contains("snapshots") || !manifest["snapshots"].is_array() ||
      manifest["snapshots"].empty()) {
    return base::Status::InvalidArgument(manifest_path.string() + ": no snapshot");
  }
  Json snapshot = manifest["snapshots"].back();
  const Json queue_argv = {"squeue", "--noheader", "-o", "%i|%P|%u|%T|%M|%D|%R"};
  const std::string queue_file = "reads/mcp_bench/squeue-" + std::to_string(jobs) + "-jobs.out";
  bool replaced = false;
  for (Json& read : snapshot["reads"]) {
    for (const char* stream : {"stdout_file", "stderr_file"}) {
      const std::string name = read.value(stream, "");
      auto it = files->find(name);
      if (it == files->end()) return base::Status::IoError(from + ": no stream " + name);
      std::error_code ec;
      fs::create_directories((fs::path(dir) / name).parent_path(), ec);
      if (base::Status s = WriteFile(fs::path(dir) / name, it->second); !s.ok()) return s;
    }
    if (read.value("argv", Json::array()) == queue_argv && read.value("outcome", "") == "ok") {
      read["stdout_file"] = queue_file;
      replaced = true;
    }
  }
  if (!replaced) {
    return base::Status::InvalidArgument(manifest_path.string() +
                                         ": the last snapshot has no unfiltered squeue read");
  }
  if (base::Status s = WriteFile(fs::path(dir) / queue_file, GeneratedQueue(jobs)); !s.ok()) {
    return s;
  }
  manifest["comment"] = "mcp_bench: the last snapshot of " + from +
                        ", its squeue read replaced by " + std::to_string(jobs) + " generated jobs";
  manifest["snapshots"] = Json::array({snapshot});
  return WriteFile(fs::path(dir) / "manifest.json", manifest.dump(2) + "\n");
}

}  // namespace slurm_rca::bench
