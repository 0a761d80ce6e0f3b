#include "grader/transcript_times.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace slurm_rca::grader {

namespace fs = std::filesystem;
using Json = nlohmann::json;

base::Result<std::optional<HarnessTime>> ReadTranscript(const std::string& text,
                                                        const std::string& file) {
  auto problem = [&file](int n, const std::string& what) {
    return base::Status::InvalidArgument(file + ":" + std::to_string(n) + ": " + what);
  };
  std::istringstream in(text);
  std::string line;
  int n = 0;
  bool have_ticket = false;
  double ticket_t = 0;
  std::optional<HarnessTime> out;  // set by the first valid submit
  std::uint64_t bytes_read = 0;     // tool results until then
  int tool_results = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("event") || !j["event"].is_string() ||
        !j.contains("t") || !j["t"].is_number()) {
      return problem(n, "not a transcript event (an object with \"event\" and a numeric \"t\")");
    }
    std::string event = j["event"];
    double t = j["t"].get<double>();
    if (event == "tool_result" && !out) {
      if (!j.contains("bytes") || !j["bytes"].is_number_unsigned()) {
        return problem(n, "a tool_result without a non-negative integer \"bytes\"");
      }
      bytes_read += j["bytes"].get<std::uint64_t>();
      ++tool_results;
    } else if (event == "ticket" && !have_ticket) {
      have_ticket = true;
      ticket_t = t;
    } else if (event == "submit" && j.contains("valid") && j["valid"] == true) {
      if (!have_ticket) {
        return problem(n, "a submit before any ticket event");
      }
      const Json& a = j.contains("answer") ? j["answer"] : Json();
      if (!a.is_object() || !a.contains("root_cause") || !a["root_cause"].is_string()) {
        return problem(n, "a valid submit without answer.root_cause");
      }
      // The time is the first commitment's; the answer is the last one (the harness may turn a
      // committed answer into an abstention after the model's submit).
      if (!out) {
        out = HarnessTime{.seconds = t - ticket_t, .file = file, .bytes_read = bytes_read,
                          .tool_results = tool_results};
      }
      out->root_cause = a["root_cause"];
    }
  }
  if (!have_ticket) {
    return base::Status::InvalidArgument(file + ": no ticket event, so no start to measure from");
  }
  return out;
}

HarnessTimes ReadTranscripts(const std::string& dir, const std::vector<scenarios::Scenario>& suite) {
  HarnessTimes out;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::string stem = f.stem().string();
    const scenarios::Scenario* s = nullptr;
    for (const auto& x : suite) {
      if (x.id == stem || x.TaskId() == stem) s = &x;
    }
    if (!s) {
      out.problems.push_back(f.filename().string() + ": names no scenario of this suite");
      continue;
    }
    std::ifstream in(f, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    base::Result<std::optional<HarnessTime>> t = ReadTranscript(text.str(), f.filename().string());
    if (!t.ok()) {
      out.problems.push_back(t.status().message());
    } else if (!*t) {
      out.unanswered.push_back(s->id);
    } else {
      out.by_scenario[s->id] = **t;
    }
  }
  return out;
}

}  // namespace slurm_rca::grader
