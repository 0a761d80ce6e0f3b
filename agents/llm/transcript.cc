#include "agents/llm/transcript.h"

#include <ostream>
#include <sstream>

namespace slurm_rca::agents {

using base::Result;
using base::Status;

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

}  // namespace slurm_rca::agents
