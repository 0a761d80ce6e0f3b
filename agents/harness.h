// `rca-bench run`: a configuration over scenarios, repeated, each answer given through the agent
// loop (or a reference agent), written as a submission with its transcripts:
//   OUT/<config>-<model>-r<k>.jsonl              the submission (grader/score.h)
//   OUT/<config>-<model>-r<k>.transcripts/<task id>.jsonl   one transcript per scenario
// Agents see only the opaque task id and the ticket; the scenario id, the fault and the ground
// truth never reach them.
//
//   RunOptions o;  o.config = ...; o.tasks = ...; o.sessions = factory;  // see rca-bench
//   RunSummary s = RunSuite(o);
//
// Where evidence comes from is the caller's: a Session is an initialized MCP client to slurm-mcp
// (a stdio child serving the scenario's bundle, or the live cluster) and an mcp::Backend of the
// same evidence for raw commands (configuration A). This library never starts a process.
//
// Concurrency (RunOptions::jobs): N worker threads take the task runs in the order a single
// worker would (repeat by repeat, task by task), each with its own session, transcript and model
// back-end (a Backend serves one thread at a time). The submission is written when the workers are
// done, its answers in task order and its header's spend summed in that order, so it is the same
// for any N apart from wall times.
//
// Resume (RunOptions::journal): a task run the journal has finished is kept (its answer and spend,
// its transcript left as it is) and not run again; every task run finished now is appended to it.
#ifndef SLURM_RCA_AGENTS_HARNESS_H_
#define SLURM_RCA_AGENTS_HARNESS_H_

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/config.h"
#include "agents/graph/graph.h"
#include "agents/llm/backend.h"
#include "agents/llm/loop.h"
#include "agents/prices.h"
#include "agents/run_journal.h"
#include "mcp/evidence/evidence.h"
#include "mcp/protocol/client.h"

namespace slurm_rca::agents {

struct Task {
  std::string id;       // scenario id: for the harness only, never shown to the agent
  std::string task_id;  // what the submission and the transcript are named by
  std::string ticket;
  std::string bundle_dir;  // replay
  double offset_s = 120;   // replay: the evidence as it was this long after the fault
};

class Session {
 public:
  virtual ~Session() = default;
  // Null when the session was opened without it (SessionNeeds), or has none (a remote server
  // has no back-end).
  virtual mcp::Client* client() = 0;
  virtual mcp::Backend* backend() = 0;
};

// What a configuration reads through its session: the MCP client (the configurations that call
// slurm-mcp's tools, the reference agents but ticketonly, specialists) and the back-end (the raw
// reads of configuration A). A factory opens only these: a stdio child or a bundle opened for
// nothing is most of a replayed task run's CPU (bench/README.md, "A leaderboard run itself").
struct SessionNeeds {
  bool client = true;
  bool backend = true;
};
SessionNeeds NeedsOf(const AgentConfig& config);

using SessionFactory =
    std::function<base::Result<std::unique_ptr<Session>>(const Task&, const SessionNeeds&)>;

// One configuration on one task. `model` may be null for reference agents. `mcp_calls` (may be
// null) receives the number of MCP tool calls and raw reads made. A run that reads through the
// session's MCP client first writes the transcript's `mcp` event: the era and revision it got.
RunResult RunConfigured(const AgentConfig& config, Backend* model, Session* session,
                        const graph::Graph* graph, const Task& task, Transcript* transcript,
                        int* mcp_calls);

// What task runs spent. A task run's spend is written to its transcript as a `task_usage` event
// (agents/llm/README.md); a submission's header carries the sum over its task runs ("usage",
// and "cost_usd" when priced).
struct Spend {
  Usage usage;              // every model reply of the task runs, specialists included
  int64_t model_turns = 0;  // model requests made (a failed one included)
  int64_t tool_calls = 0;   // tool calls the model's replies asked for, finish tools included
  int64_t task_runs = 0;
  double wall_s = 0;
  std::optional<double> cost_usd;       // only when a price was given
  std::set<std::string> models_served;  // the replies' "model" (what the server says it ran)
  Spend& operator+=(const Spend& o);
  // The header's / transcript's "usage" object.
  nlohmann::json UsageJson() const;
};

// Limits on the spend of a whole rca-bench run, checked between task runs (a task run is never
// cut): once one is reached no further task run starts.
struct SpendCap {
  int64_t max_tokens_total = 0;        // input + output tokens; 0: none
  std::optional<double> max_cost_usd;  // needs RunOptions::price
};

// The spend of one task run as a journal line keeps it, and back (every field, cost included).
nlohmann::json SpendToJson(const Spend& spend);
Spend SpendFromJson(const nlohmann::json& j);

// What RunOptions::progress is told, under the harness's lock (one call at a time).
struct RunProgress {
  int done = 0;       // task runs finished, those the journal kept included
  int total = 0;
  int in_flight = 0;  // task runs running now
  int64_t tokens = 0; // input + output tokens spent so far, spent_before included
  std::string what;   // the task run just started or finished
};

struct RunOptions {
  AgentConfig config;
  Backend* model = nullptr;       // null for reference agents; worker 0's back-end
  std::string model_name = "none";
  std::vector<Task> tasks;
  int repeats = 1;
  int first_repeat = 1;           // repeats are numbered first_repeat .. first_repeat+repeats-1
  // Task runs made at once, each on a thread of its own. Workers 1..jobs-1 of an agent
  // configuration use extra_models[0..jobs-2] (one back-end per thread); sessions must then be
  // safe to call from several threads at once.
  int jobs = 1;
  std::vector<Backend*> extra_models;
  // Finished task runs: kept and not run again; each finished now is appended. Null: none.
  RunJournal* journal = nullptr;
  std::string out_dir;
  std::string fingerprint;        // the suite's (grader::SuiteFingerprint)
  std::string date;               // YYYY-MM-DD
  const graph::Graph* graph = nullptr;
  SessionFactory sessions;
  // Called as each task run starts and finishes, and once at the end.
  std::function<void(const RunProgress&)> progress;
  // Money: the model's prices (from the file prices_file names); absent: cost unmeasured.
  std::optional<ModelPrice> price;
  std::string prices_file;
  SpendCap cap;
  Spend spent_before;  // spent by earlier RunSuite calls of the same rca-bench run (caps count it)
};

struct RunSummary {
  std::vector<std::string> submissions;  // paths written
  int runs = 0;                          // task runs made
  int kept = 0;                          // task runs the journal had finished: not made again
  int mcp_calls = 0;                     // of the task runs made
  double wall_s = 0;
  // A task whose session could not start (answered unknown), a journal line not written.
  std::vector<std::string> errors;
  Spend spend;                           // of this call's submissions: made and kept task runs
  // Why the run stopped before its last task run ("--max-cost 5 USD reached: 5.0213 USD spent"),
  // else "". The submission being written when it stopped carries it as its header's "stopped".
  std::string stopped;
};

RunSummary RunSuite(const RunOptions& options);

// "B-gpt-4o" with every character outside [A-Za-z0-9._-] replaced by '_'.
std::string RunStem(const std::string& config, const std::string& model, int repeat);

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_HARNESS_H_
