// Text helpers shared by the topic readers (Slurm, nvidia-smi and squeue output, sysfs files):
// what they read is bytes from a node, not trusted text.
#ifndef SLURM_RCA_MCP_TEXT_H_
#define SLURM_RCA_MCP_TEXT_H_

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace slurm_rca::mcp {

// `s` without spaces, tabs and carriage returns at either end.
inline std::string_view TrimBlanks(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Every field between separators, empty ones included: "a,,b" gives 3, "" gives 1.
inline std::vector<std::string_view> SplitFields(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
}

// The same JSON with every string made valid UTF-8 (U+FFFD for each byte that is not), so that a
// report built from a node's bytes serialises strictly.
inline nlohmann::json WithValidUtf8(const nlohmann::json& j) {
  return nlohmann::json::parse(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TEXT_H_
