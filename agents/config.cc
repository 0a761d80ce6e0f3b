#include "agents/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "scenarios/scenario.h"

namespace slurm_rca::agents {

namespace fs = std::filesystem;

std::string ConfigPath(const std::string& dir, const std::string& name) {
  std::error_code ec;
  if (name.find('/') != std::string::npos || fs::is_regular_file(name, ec)) return name;
  return dir + "/" + name + ".yaml";
}

std::vector<std::string> ConfigNames(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

base::Result<AgentConfig> LoadConfig(const std::string& path,
                                     const std::vector<std::string>& known_ids) {
  std::string errors;  // "path: message" lines
  auto error = [&](const std::string& m) {
    errors += (errors.empty() ? "" : "\n") + path + ": " + m;
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const std::string dir = fs::path(path).parent_path().string();
    return base::Status::IoError(path + ": cannot read the configuration (" +
                                 (dir.empty() ? std::string(".") : dir) + " holds " +
                                 std::to_string(ConfigNames(dir.empty() ? "." : dir).size()) +
                                 " of them; see rca-bench configs)");
  }
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node y;
  try {
    y = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    return base::Status::InvalidArgument(path + ": not YAML: " + e.what());
  }
  if (!y.IsMap()) return base::Status::InvalidArgument(path + ": must be a YAML mapping");
  AgentConfig c;
  c.file = path;
  c.hash = "sha256:" + scenarios::Sha256Hex(text.str(), 16);
  static const std::set<std::string> keys = {"name",        "kind",       "reference", "question",
                                             "tools",       "graph",      "specialists",
                                             "abstention",  "budget",     "instructions"};
  try {
    for (const auto& kv : y) {
      std::string k = kv.first.as<std::string>();
      if (!keys.count(k)) error("unknown key '" + k + "'");
    }
    c.name = y["name"] ? y["name"].as<std::string>() : "";
    if (c.name != fs::path(path).stem().string()) {
      error("name '" + c.name + "' must equal the file's name '" + fs::path(path).stem().string() +
            "'");
    }
    if (y["kind"]) c.kind = y["kind"].as<std::string>();
    if (c.kind != "agent" && c.kind != "reference") error("kind must be agent or reference");
    if (y["reference"]) c.reference = y["reference"].as<std::string>();
    if (c.kind == "reference" && c.reference != "folk" && c.reference != "graphwalk" &&
        c.reference != "ticketonly") {
      error("a reference agent is folk, graphwalk or ticketonly, not '" + c.reference + "'");
    }
    if (c.kind == "agent" && !c.reference.empty()) error("reference: only for kind reference");
    if (y["question"]) c.question = y["question"].as<std::string>();
    if (y["tools"]) c.tools = y["tools"].as<std::string>();
    if (c.tools != "raw" && c.tools != "mcp" && c.tools != "none") {
      error("tools must be raw, mcp or none, not '" + c.tools + "'");
    }
    if (y["graph"]) c.graph = y["graph"].as<bool>();
    if (y["specialists"]) {
      static const std::set<std::string> known = {"logs", "scheduler", "telemetry", "validator"};
      for (const auto& s : y["specialists"]) {
        std::string name = s.as<std::string>();
        if (!known.count(name)) error("unknown specialist '" + name + "'");
        c.specialists.push_back(name);
      }
      if (!c.specialists.empty() && c.tools != "mcp") error("specialists need tools: mcp");
    }
    if (y["abstention"]) {
      const YAML::Node& a = y["abstention"];
      Abstention ab;
      ab.threshold = a["threshold"] ? a["threshold"].as<double>() : -1;
      if (!(ab.threshold >= 0 && ab.threshold <= 1)) error("abstention.threshold must be in [0, 1]");
      // The split is the scenarios' own (split: dev); a list of ids here would be a second
      // declaration that could disagree with it.
      const YAML::Node& d = a["development_split"];
      if (!d) {
        error("abstention needs development_split: dev");
      } else if (!d.IsScalar() || d.Scalar() != "dev") {
        error("development_split must be dev (the scenarios that declare split: dev); a "
              "threshold is never fitted on test");
      } else {
        ab.development_split = d.Scalar();
      }
      ab.fitted = a["fitted"] ? a["fitted"].as<std::string>() : "";
      if (ab.fitted.empty()) error("abstention.fitted must say how the threshold was obtained");
      c.abstention = ab;
    }
    if (y["budget"]) {
      const YAML::Node& b = y["budget"];
      if (b["max_turns"]) c.budget.max_turns = b["max_turns"].as<int>();
      if (b["max_tokens"]) c.budget.max_tokens = b["max_tokens"].as<int64_t>();
      if (b["max_wall_s"]) c.budget.max_wall_s = b["max_wall_s"].as<double>();
      if (c.budget.max_turns <= 0 || c.budget.max_tokens <= 0 || c.budget.max_wall_s <= 0) {
        error("budget values must be positive");
      }
    }
    if (y["instructions"]) c.instructions = y["instructions"].as<std::string>();
    if (c.kind == "agent" && c.instructions.empty()) error("an agent needs instructions");
  } catch (const YAML::Exception& e) {
    error(std::string("wrong type: ") + e.what());
  }
  if (!errors.empty()) return base::Status::InvalidArgument(std::move(errors));
  return c;
}

}  // namespace slurm_rca::agents
