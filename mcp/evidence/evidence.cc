#include "mcp/evidence/evidence.h"

#include <nlohmann/json.hpp>

namespace slurm_rca::mcp {

const char* OutcomeName(Evidence::Outcome o) {
  switch (o) {
    case Evidence::Outcome::kOk:
      return "ok";
    case Evidence::Outcome::kFailed:
      return "failed";
    case Evidence::Outcome::kTimedOut:
      return "timed_out";
    case Evidence::Outcome::kRefused:
      return "refused";
    case Evidence::Outcome::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

std::string ReadinessJson(const Backend& backend) {
  nlohmann::json programs = nlohmann::json::array();
  int ok = 0, failing = 0;
  for (const ProgramReads& r : backend.LastReads()) {
    const char* state = r.last_read.empty() ? "never_read" : r.outcome == "ok" ? "ok" : "failing";
    if (!r.last_read.empty()) ++(r.outcome == "ok" ? ok : failing);
    nlohmann::json p = {{"program", r.program}, {"state", state}};
    if (!r.unusable.empty()) p["unusable"] = r.unusable;
    if (!r.last_read.empty()) {
      p["last_read"] = r.last_read;
      p["outcome"] = r.outcome;
      p["seconds"] = r.seconds;
      if (!r.cause.empty()) p["cause"] = r.cause;
    }
    p["last_ok"] = r.last_ok.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.last_ok);
    programs.push_back(std::move(p));
  }
  const char* slurm = failing > 0 ? "failing" : ok > 0 ? "ok" : "unknown";
  nlohmann::json j = {
      {"ready", true},
      {"backend", backend.Label()},
      {"slurm", slurm},
      {"programs", std::move(programs)},
      {"note", "each program's last read made for a tool call; answering this ran nothing"}};
  return j.dump();
}

}  // namespace slurm_rca::mcp
