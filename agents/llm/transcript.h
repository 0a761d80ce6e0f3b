// The transcript of agent runs: JSON Lines, one event object per line, flushed per line, so that
// a run killed half-way still leaves every event before the kill. The format is documented in
// agents/llm/README.md ("Transcript"); the grader reads it (grader/transcript_times.h).
//
//   Result<std::unique_ptr<Transcript>> t = Transcript::Open("out/S01.jsonl");
//   if (!t.ok()) return Fail(t.status().ToString());
//   RunAgent(backend, tools, spec, ticket, t->get());
//
// Every line carries "t" (seconds since the transcript was opened, steady clock, a float),
// "event" and "agent". A supervisor and its specialists write into one transcript, each under its
// own agent name, one after another (a specialist runs inside a supervisor's tool call).
//
// Threads: not thread-safe. One run is one thread; do not share a Transcript across threads.
#ifndef SLURM_RCA_AGENTS_LLM_TRANSCRIPT_H_
#define SLURM_RCA_AGENTS_LLM_TRANSCRIPT_H_

#include <chrono>
#include <fstream>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"

namespace slurm_rca::agents {

class Transcript {
 public:
  // Creates (or truncates) `path`. Error: the file cannot be opened for writing.
  static base::Result<std::unique_ptr<Transcript>> Open(const std::string& path);
  // Writes to `out`, which must outlive the Transcript (tests, benches).
  explicit Transcript(std::ostream* out);

  // Seconds since the transcript was opened (steady clock).
  double Now() const;
  // Writes one line {"t", "event", "agent", ...fields} and flushes it. `fields` must be an object
  // (or null); its keys t, event and agent are overwritten. Returns the line's t. A failed write
  // is remembered in status() and does not stop the run.
  double Write(const std::string& agent, const std::string& event,
               nlohmann::json fields = nlohmann::json::object());
  // OK, or the first write error.
  const base::Status& status() const { return status_; }

 private:
  std::unique_ptr<std::ofstream> file_;
  std::ostream* out_;
  std::chrono::steady_clock::time_point start_;
  base::Status status_;
};

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_LLM_TRANSCRIPT_H_
