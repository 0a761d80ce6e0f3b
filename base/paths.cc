#include "base/paths.h"

#include <filesystem>
#include <system_error>

namespace slurm_rca::base {

std::optional<std::string> InstalledDataDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return std::nullopt;
  fs::path dir = exe.parent_path().parent_path() / "share" / "slurm-rca";
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  return dir.string();
}

std::string DataRoot(const std::string& built_from) {
  return InstalledDataDir().value_or(built_from);
}

DataPaths DataPaths::Under(const std::string& source) {
  return DataPaths{.source = source,
                   .scenarios = source + "/scenarios",
                   .fixtures = source + "/fixtures",
                   .graph = source + "/agents/graph/graph.yaml",
                   .configs = source + "/agents/configs",
                   .lab_templates = source + "/scenarios/live/templates"};
}

}  // namespace slurm_rca::base
