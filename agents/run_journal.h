// RunJournal: what an `rca-bench run` has finished, so that a run stopped by a kill, a crash or a
// spending cap continues where it stopped. The file is OUT/run.journal, JSON lines:
//
//   {"rca_bench_run_journal":1, "suite_fingerprint":..., "model":..., "configurations":[...], ...}
//   {"configuration":"B","configuration_hash":"sha256:..","repeat":1,"task_id":"T-1f3a",
//    "answer":{...the submission's answer line...},"spend":{...the task run's usage...},"mcp_calls":4}
//   ...
//
// The first line is the run's identity (what the caller says must be equal for a resume: the
// suite's fingerprint, the configurations and their hashes, the model, the tasks...); each later
// line is one finished task run, appended whole with one write() and fdatasync'd before Append
// returns, after the task run's transcript was closed. A task run killed half-way has no line and
// is run again. A last line cut by a kill (no newline) is dropped when the journal is opened.
//
//   auto j = RunJournal::Open("results/run.journal", identity, /*fresh=*/false);
//   if (!j.ok()) return Fail(j.status().message());     // another suite, model, configuration...
//   if (const RunJournal::Entry* e = (*j)->Find("B", 1, "T-1f3a")) ...;   // finished: keep it
//   (*j)->Append(entry);
//
// Only one process at a time may hold a directory's journal (flock on the directory, released when
// the process ends, a kill included): a second is refused.
//
// Refuses (InvalidArgument) a directory another process holds; a journal whose identity differs from the one given, naming the first
// field that differs and both values; a line that is not a finished task run; a file it cannot
// read or write (IoError).
//
// Threads: Find and Append may be called from any thread (Append is serialized; Find reads what
// Open loaded, never what Append adds).
#ifndef SLURM_RCA_AGENTS_RUN_JOURNAL_H_
#define SLURM_RCA_AGENTS_RUN_JOURNAL_H_

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "base/status.h"

namespace slurm_rca::agents {

class RunJournal {
 public:
  struct Entry {
    std::string configuration;       // the configuration's name
    std::string configuration_hash;
    int repeat = 1;
    std::string task_id;
    nlohmann::json answer;           // the submission's answer object, as written there
    nlohmann::json spend;            // the task run's spend (harness.h, SpendToJson)
    int mcp_calls = 0;
  };

  // The journal at `path`: made (its first line `identity`) when there is none or `fresh` is set
  // (an existing one is then discarded), else opened and its identity checked.
  static base::Result<std::unique_ptr<RunJournal>> Open(const std::string& path,
                                                        const nlohmann::json& identity, bool fresh);
  ~RunJournal();
  RunJournal(const RunJournal&) = delete;
  RunJournal& operator=(const RunJournal&) = delete;

  // The finished task run, or null. Only the lines there when the journal was opened.
  const Entry* Find(const std::string& configuration, int repeat, const std::string& task_id) const;
  // Appends one finished task run (one line, written whole and synced to disk).
  base::Status Append(const Entry& entry);
  // Finished task runs found when the journal was opened.
  size_t loaded() const { return entries_.size(); }
  const std::string& path() const { return path_; }

 private:
  RunJournal() = default;
  std::string path_;
  int fd_ = -1;
  int dir_fd_ = -1;  // the directory, locked (flock) while this journal is open
  std::mutex mu_;
  std::map<std::tuple<std::string, int, std::string>, Entry> entries_;
};

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_RUN_JOURNAL_H_
