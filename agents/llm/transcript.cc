#include "agents/llm/transcript.h"

#include <ostream>
#include <sstream>

namespace slurm_rca::agents {

using Json = nlohmann::json;

Result<std::unique_ptr<Transcript>> Transcript::Open(const std::string& path) {
  auto file = std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc);
  if (!*file) return Status::IoError("cannot open transcript " + path + " for writing");
  std::ostream* out = file.get();
  auto t = std::make_unique<Transcript>(out);
  t->file_ = std::move(file);
  return t;
}

Transcript::Transcript(std::ostream* out) : out_(out), start_(std::chrono::steady_clock::now()) {}

double Transcript::Now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double Transcript::Write(const std::string& agent, const std::string& event, Json fields) {
  double t = Now();
  Json line = Json::object();
  line["t"] = t;
  line["event"] = event;
  line["agent"] = agent;
  if (fields.is_object()) {
    for (auto& [k, v] : fields.items()) {
      if (k != "t" && k != "event" && k != "agent") line[k] = std::move(v);
    }
  }
  // Invalid UTF-8 from a model or a tool is replaced rather than thrown.
  *out_ << line.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
  out_->flush();
  if (!*out_ && status_.ok()) status_ = Status::IoError("transcript write failed");
  return t;
}

Result<std::optional<double>> TimeToHypothesis(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  std::optional<double> ticket;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("event") || !j["event"].is_string() ||
        !j.contains("t") || !j["t"].is_number()) {
      return Status::MalformedReply("transcript line " + std::to_string(n) +
                                    " is not an event object with \"event\" and numeric \"t\"");
    }
    const std::string event = j["event"];
    const double t = j["t"];
    if (event == "ticket" && !ticket) ticket = t;
    if (event == "submit" && j.contains("valid") && j["valid"] == true) {
      if (!ticket) {
        return Status::MalformedReply("transcript line " + std::to_string(n) +
                                      ": a valid submit before any ticket");
      }
      return std::optional<double>(t - *ticket);
    }
  }
  if (!ticket) return Status::MalformedReply("transcript has no ticket event");
  return std::optional<double>();
}

}  // namespace slurm_rca::agents
