// Text helpers shared by the topic readers (Slurm, nvidia-smi and squeue output, sysfs files):
// what they read is bytes from a node, not trusted text.
#ifndef SLURM_RCA_MCP_TELEMETRY_TEXT_H_
#define SLURM_RCA_MCP_TELEMETRY_TEXT_H_

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "base/strings.h"

namespace slurm_rca::mcp {

// `s` without spaces, tabs and carriage returns at either end: a line of a node's output.
inline std::string_view TrimBlanks(std::string_view s) { return base::Trim(s, " \t\r"); }

using base::SplitFields;

// The same JSON with every string made valid UTF-8 (U+FFFD for each byte that is not), so that a
// report built from a node's bytes serialises strictly.
inline nlohmann::json WithValidUtf8(const nlohmann::json& j) {
  return nlohmann::json::parse(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TELEMETRY_TEXT_H_
