// The agent loop: a model back-end, a tool set, a budget and a transcript; the model ends the run
// by calling its finish tool with an answer in the benchmark's closed vocabulary.
//
//   MyTools tools;                                  // a ToolSet
//   AgentSpec spec;
//   spec.name = "B";
//   spec.system = "You diagnose Slurm incidents…";
//   RunResult r = RunAgent(*backend, tools, spec, ticket_text, transcript.get());
//   if (r.finished) Submit(r.diagnosis); else Submit(Diagnosis{});   // unknown, confidence 0
//
// Each turn: the model is offered ToolSet::Specs() plus the finish tool; every tool call it makes
// is run through ToolSet::Call (a name the set does not offer is a tool error, not a call) and
// the result goes back as a tool message. The finish tool is
//   Finish::kSubmitDiagnosis  submit_diagnosis {root_cause, confidence, ruled_out,
//                             actions_proposed, rationale}; root_cause an id of
//                             scenarios::Components() (incl. "unknown"), confidence in [0, 1],
//                             ruled_out component ids (not "unknown"), actions "verb:component"
//                             (scenarios::ParseAction).
//   Finish::kReport           report_findings {findings, suspects: [component ids]}, for the
//                             specialists a supervisor runs as sub-agents.
// An answer outside the vocabulary or of the wrong type is sent back as a tool error (the model
// may correct it) and recorded in the transcript; it does not end the run. A valid answer ends the
// run at once (later calls of the same turn are not run). A turn with no tool call is answered
// with one nudge message asking for the finish tool; it counts as a turn.
//
// The run ends without an answer (finished=false, diagnosis unknown with confidence 0) when the
// budget runs out, checked before each model turn: end_reason "budget:turns" (max_turns model
// turns made), "budget:tokens" (input+output tokens summed over the turns reached max_tokens),
// "budget:wall" (max_wall_s elapsed); or when the back-end fails after its retries:
// "backend: <status>". The back-end gets the wall budget's end as its deadline
// (Backend::SetDeadline): an HTTP request or retry wait that would pass it is cut, and the run
// ends with "budget:wall".
//
// Threads: RunAgent runs on the calling thread and calls the ToolSet and the Backend from it.
// The transcript may be null (nothing is written).
#ifndef SLURM_RCA_AGENTS_LLM_LOOP_H_
#define SLURM_RCA_AGENTS_LLM_LOOP_H_

#include <optional>
#include <string>
#include <vector>

#include "agents/llm/backend.h"
#include "agents/llm/transcript.h"

namespace slurm_rca::agents {

struct ToolResult {
  std::string text;
  bool is_error = false;
};

class ToolSet {
 public:
  virtual ~ToolSet() = default;
  virtual std::vector<ToolSpec> Specs() const = 0;
  // Runs one call of a tool Specs() offers. Failures are results with is_error, not exceptions.
  virtual ToolResult Call(const std::string& name, const nlohmann::json& arguments) = 0;
};

// A ToolSet with no tools (ticket-only agents, tests).
class NoTools : public ToolSet {
 public:
  std::vector<ToolSpec> Specs() const override { return {}; }
  ToolResult Call(const std::string& name, const nlohmann::json&) override {
    return {"no tool named " + name, true};
  }
};

struct Budget {
  int max_turns = 30;
  int64_t max_tokens = 400000;
  double max_wall_s = 900;
};

struct Diagnosis {
  std::string root_cause = "unknown";
  double confidence = 0;
  std::vector<std::string> ruled_out;
  std::vector<std::string> actions_proposed;
  std::string rationale;
};

enum class Finish { kSubmitDiagnosis, kReport };

struct AgentSpec {
  std::string name = "agent";  // the "agent" of its transcript lines
  std::string system;          // the system prompt
  Finish finish = Finish::kSubmitDiagnosis;
  Budget budget;
};

struct RunResult {
  bool finished = false;  // a valid finish-tool call ended the run
  Diagnosis diagnosis;    // kSubmitDiagnosis; unknown/0 when not finished
  std::string report;     // kReport: the findings text
  std::vector<std::string> suspects;  // kReport
  // "submitted" | "reported" | "budget:turns" | "budget:tokens" | "budget:wall" | "backend: <error>"
  std::string end_reason;
  int turns = 0;       // model turns made
  int tool_calls = 0;  // calls of ToolSet tools plus finish-tool calls (valid or not)
  Usage usage;         // summed over the turns
  double wall_s = 0;
  // t(first valid submit) - t(ticket), on the transcript's clock (the run's own clock if none).
  std::optional<double> time_to_hypothesis_s;
};

RunResult RunAgent(Backend& backend, ToolSet& tools, const AgentSpec& spec,
                   const std::string& ticket, Transcript* transcript);

// The finish tools' specs and validators, for tool sets and tests that need them directly.
inline constexpr char kSubmitDiagnosisTool[] = "submit_diagnosis";
inline constexpr char kReportFindingsTool[] = "report_findings";
ToolSpec SubmitDiagnosisSpec();
ToolSpec ReportFindingsSpec();
// Parses a submit_diagnosis argument object; the error says what is outside the vocabulary.
base::Result<Diagnosis> ParseDiagnosis(const nlohmann::json& arguments);
// The answer as the transcript's submit event records it (and as submissions carry it).
nlohmann::json DiagnosisToJson(const Diagnosis& d);

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_LLM_LOOP_H_
