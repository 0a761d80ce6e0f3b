#include "agents/llm/loop.h"

#include <chrono>
#include <ctime>
#include <algorithm>
#include <set>

#include "base/time.h"
#include "scenarios/vocabulary.h"

namespace slurm_rca::agents {

using base::Result;
using base::Status;

namespace sc = slurm_rca::scenarios;
using Json = nlohmann::json;

namespace {

constexpr size_t kTranscriptTextLimit = 4096;

Json ComponentIds(bool with_unknown) {
  Json ids = Json::array();
  for (const sc::Component& c : sc::Components()) {
    if (with_unknown || c.id != sc::kUnknown) ids.push_back(std::string(c.id));
  }
  return ids;
}

std::string TypeName(const Json& j) { return j.type_name(); }

// Reads an optional array of strings into *out.
Status StringArray(const Json& args, const char* key, std::vector<std::string>* out) {
  if (!args.contains(key) || args[key].is_null()) return Status();
  const Json& a = args[key];
  if (!a.is_array()) {
    return Status::InvalidArgument(std::string(key) + " must be an array of strings, got " +
                                   TypeName(a));
  }
  for (const Json& x : a) {
    if (!x.is_string()) {
      return Status::InvalidArgument(
          std::string(key) + " must be an array of strings, got an element of type " + TypeName(x));
    }
    out->push_back(x.get<std::string>());
  }
  return Status();
}

Status CheckKnownKeys(const Json& args, const std::set<std::string>& allowed) {
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (!allowed.count(it.key())) {
      return Status::InvalidArgument("unknown argument '" + it.key() + "'");
    }
  }
  return Status();
}

std::string IsoUtcNow() { return base::IsoUtcNow(); }

Json ToolCallsJson(const std::vector<ToolCall>& calls) {
  Json out = Json::array();
  for (const ToolCall& c : calls) {
    out.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
  }
  return out;
}

struct Report {
  std::string findings;
  std::vector<std::string> suspects;
};

Result<Report> ParseReport(const Json& args) {
  if (!args.is_object()) return Status::InvalidArgument("arguments must be an object");
  if (Status s = CheckKnownKeys(args, {"findings", "suspects"}); !s.ok()) return s;
  Report r;
  if (!args.contains("findings") || !args["findings"].is_string()) {
    return Status::InvalidArgument("findings must be a string");
  }
  r.findings = args["findings"];
  if (Status s = StringArray(args, "suspects", &r.suspects); !s.ok()) return s;
  for (const std::string& s : r.suspects) {
    if (!sc::IsComponent(s)) {
      return Status::InvalidArgument("suspect '" + s + "' is not a component of the vocabulary");
    }
  }
  return r;
}

// Wall time on the transcript's clock when there is one, so that the two agree.
class Clock {
 public:
  explicit Clock(Transcript* t) : transcript_(t), start_(std::chrono::steady_clock::now()) {}
  double Now() const {
    if (transcript_) return transcript_->Now();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  Transcript* transcript_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

ToolSpec SubmitDiagnosisSpec() {
  Json verbs = Json::array();
  for (std::string_view v : sc::ActionVerbs()) verbs.push_back(std::string(v));
  Json schema = {
      {"type", "object"},
      {"properties",
       {{"root_cause",
         {{"type", "string"},
          {"enum", ComponentIds(true)},
          {"description", "The component at the root of the incident; \"unknown\" to abstain."}}},
        {"confidence",
         {{"type", "number"},
          {"minimum", 0},
          {"maximum", 1},
          {"description", "Probability that root_cause is right."}}},
        {"ruled_out",
         {{"type", "array"},
          {"items", {{"type", "string"}, {"enum", ComponentIds(false)}}},
          {"description", "Components the evidence shows are not the cause."}}},
        {"actions_proposed",
         {{"type", "array"},
          {"items", {{"type", "string"}, {"pattern", "^[a-z_]+:[a-z_.]+$"}}},
          {"description", "Remediations as \"verb:component\"; verbs: " + verbs.dump() + "."}}},
        {"rationale", {{"type", "string"}, {"description", "The evidence, briefly."}}}}},
      {"required", {"root_cause", "confidence"}},
      {"additionalProperties", false}};
  return {kSubmitDiagnosisTool,
          "Submit the final diagnosis. This ends the investigation; call it exactly once, when "
          "the evidence supports an answer (or with root_cause \"unknown\" to abstain).",
          schema};
}

ToolSpec ReportFindingsSpec() {
  Json schema = {
      {"type", "object"},
      {"properties",
       {{"findings", {{"type", "string"}, {"description", "What you found, with the evidence."}}},
        {"suspects",
         {{"type", "array"},
          {"items", {{"type", "string"}, {"enum", ComponentIds(true)}}},
          {"description", "Components the evidence points at, most likely first."}}}}},
      {"required", {"findings"}},
      {"additionalProperties", false}};
  return {kReportFindingsTool,
          "Report your findings to the supervisor. This ends your part; call it once.", schema};
}

Result<Diagnosis> ParseDiagnosis(const Json& args) {
  if (!args.is_object()) return Status::InvalidArgument("arguments must be an object");
  if (Status s = CheckKnownKeys(
          args, {"root_cause", "confidence", "ruled_out", "actions_proposed", "rationale"});
      !s.ok()) {
    return s;
  }
  Diagnosis d;
  if (!args.contains("root_cause") || !args["root_cause"].is_string()) {
    return Status::InvalidArgument("root_cause must be a string, one of the component ids");
  }
  d.root_cause = args["root_cause"];
  if (!sc::IsComponent(d.root_cause)) {
    return Status::InvalidArgument("root_cause '" + d.root_cause +
                                   "' is not a component of the vocabulary; use one of " +
                                   ComponentIds(true).dump());
  }
  if (!args.contains("confidence") || !args["confidence"].is_number()) {
    return Status::InvalidArgument("confidence must be a number in [0, 1]");
  }
  d.confidence = args["confidence"];
  if (!(d.confidence >= 0 && d.confidence <= 1)) {
    return Status::InvalidArgument("confidence " + args["confidence"].dump() +
                                   " is outside [0, 1]");
  }
  if (Status s = StringArray(args, "ruled_out", &d.ruled_out); !s.ok()) return s;
  for (const std::string& r : d.ruled_out) {
    if (!sc::IsComponent(r) || r == sc::kUnknown) {
      return Status::InvalidArgument("ruled_out '" + r +
                                     "' is not a component that can be ruled out");
    }
  }
  if (Status s = StringArray(args, "actions_proposed", &d.actions_proposed); !s.ok()) return s;
  for (const std::string& a : d.actions_proposed) {
    if (auto act = sc::ParseAction(a); !act.ok()) {
      return Status::InvalidArgument("actions_proposed: " + act.status().message());
    }
  }
  if (args.contains("rationale") && !args["rationale"].is_null()) {
    if (!args["rationale"].is_string()) return Status::InvalidArgument("rationale must be a string");
    d.rationale = args["rationale"];
  }
  return d;
}

Json DiagnosisToJson(const Diagnosis& d) {
  return {{"root_cause", d.root_cause},
          {"confidence", d.confidence},
          {"ruled_out", d.ruled_out},
          {"actions_proposed", d.actions_proposed},
          {"rationale", d.rationale}};
}

namespace {

// One agent's run, turn by turn: the conversation so far, the budget it spends and the
// transcript it writes. RunAgent's steps, sharing that state.
class AgentRun {
 public:
  AgentRun(Backend& backend, ToolSet& tools, const AgentSpec& spec, Transcript* transcript)
      : backend_(backend),
        tools_(tools),
        spec_(spec),
        transcript_(transcript),
        clock_(transcript),
        t0_(clock_.Now()),
        submit_mode_(spec.finish == Finish::kSubmitDiagnosis),
        finish_name_(submit_mode_ ? kSubmitDiagnosisTool : kReportFindingsTool) {}

  RunResult Run(const std::string& ticket) {
    Start(ticket);
    while (r_.end_reason.empty()) {
      if (OverBudget()) break;
      Turn();
    }
    return End();
  }

 private:
  double Write(const char* event, Json fields) {
    return transcript_ ? transcript_->Write(spec_.name, event, std::move(fields)) : clock_.Now();
  }

  // Offers the tool set plus the finish tool, writes the start and the ticket, and opens the
  // conversation.
  void Start(const std::string& ticket) {
    offered_ = tools_.Specs();
    for (const ToolSpec& s : offered_) toolset_names_.insert(s.name);
    offered_.push_back(submit_mode_ ? SubmitDiagnosisSpec() : ReportFindingsSpec());

    Write("start", {{"ts", IsoUtcNow()},
                    {"backend", backend_.Describe()},
                    {"finish", finish_name_},
                    {"tools",
                     [&] {
                       Json names = Json::array();
                       for (const ToolSpec& s : offered_) names.push_back(s.name);
                       return names;
                     }()},
                    {"budget",
                     {{"max_turns", spec_.budget.max_turns},
                      {"max_tokens", spec_.budget.max_tokens},
                      {"max_wall_s", spec_.budget.max_wall_s}}}});
    t_ticket_ = Write("ticket", {{"text", ticket}});

    if (!spec_.system.empty()) conversation_.push_back({Message::Role::kSystem, spec_.system});
    conversation_.push_back({Message::Role::kUser, ticket});

    // Beyond ~30 years the budget is unlimited (and time_point arithmetic would overflow).
    wall_deadline_ =
        spec_.budget.max_wall_s < 1e9
            ? std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(std::max(0.0, spec_.budget.max_wall_s)))
            : std::chrono::steady_clock::time_point::max();
  }

  // Sets the end reason when a budget is spent, before a turn would spend more.
  bool OverBudget() {
    if (r_.turns >= spec_.budget.max_turns) {
      r_.end_reason = "budget:turns";
      return true;
    }
    if (r_.usage.total() >= spec_.budget.max_tokens) {
      r_.end_reason = "budget:tokens";
      return true;
    }
    if (clock_.Now() - t0_ >= spec_.budget.max_wall_s) {
      r_.end_reason = "budget:wall";
      return true;
    }
    return false;
  }

  // One model turn: the reply, then each tool call it makes in order, until one finishes the run.
  // A reply without a tool call is nudged back to the tools.
  void Turn() {
    const int turn = ++r_.turns;
    const double turn_start = clock_.Now();
    // Set every turn: a specialist sharing this back-end may have set its own.
    backend_.SetDeadline(wall_deadline_);
    Result<Reply> reply = backend_.Complete(conversation_, offered_);
    const double turn_s = clock_.Now() - turn_start;
    if (!reply.ok()) {
      Write("model_error",
            {{"turn", turn}, {"duration_s", turn_s}, {"error", reply.status().ToString()}});
      // A request cut short by the deadline is the wall budget running out, not a back-end fault.
      r_.end_reason = reply.status().code() == Status::Code::kDeadlineExceeded
                          ? "budget:wall"
                          : "backend: " + reply.status().ToString();
      return;
    }
    r_.usage += reply->usage;
    Write("model_turn", {{"turn", turn},
                         {"duration_s", turn_s},
                         {"input_tokens", reply->usage.input_tokens},
                         {"output_tokens", reply->usage.output_tokens},
                         {"cached_input_tokens", reply->usage.cached_input_tokens},
                         {"cache_creation_input_tokens", reply->usage.cache_creation_input_tokens},
                         {"model", reply->model},
                         {"attempts", reply->attempts},
                         {"stop_reason", reply->stop_reason},
                         {"text", reply->text},
                         {"tool_calls", ToolCallsJson(reply->tool_calls)}});

    Message assistant{Message::Role::kAssistant, reply->text};
    assistant.tool_calls = reply->tool_calls;
    conversation_.push_back(assistant);

    if (reply->tool_calls.empty()) {
      const std::string nudge =
          "No tool was called. Continue the investigation with the tools, and end it by calling " +
          finish_name_ +
          (submit_mode_ ? " with your diagnosis (root_cause \"unknown\" if the "
                          "evidence does not separate the candidates)."
                        : " with your findings.");
      Write("nudge", {{"turn", turn}, {"text", nudge}});
      conversation_.push_back({Message::Role::kUser, nudge});
      return;
    }

    for (const ToolCall& call : reply->tool_calls) {
      ++r_.tool_calls;
      Write("tool_call", {{"id", call.id}, {"name", call.name}, {"arguments", call.arguments}});
      Message result{Message::Role::kTool};
      result.tool_call_id = call.id;
      result.tool_name = call.name;

      if (call.name == finish_name_) {
        if (TakeAnswer(call, result)) break;
        continue;
      }
      CallTool(call, std::move(result));
    }
  }

  // The finish tool called: true when its answer is valid and ends the run; otherwise the model
  // is told what was wrong and may call it again.
  bool TakeAnswer(const ToolCall& call, Message& result) {
    if (submit_mode_) {
      Result<Diagnosis> d = ParseDiagnosis(call.arguments);
      if (d.ok()) {
        const double t =
            Write("submit", {{"id", call.id}, {"valid", true}, {"answer", DiagnosisToJson(*d)}});
        r_.diagnosis = *d;
        r_.finished = true;
        r_.time_to_hypothesis_s = t - t_ticket_;
        r_.end_reason = "submitted";
        return true;
      }
      Write("submit", {{"id", call.id}, {"valid", false}, {"error", d.status().message()}});
      result.text = "Invalid diagnosis: " + d.status().message() + ". Call " + finish_name_ +
                    " again with a valid answer.";
    } else {
      Result<Report> rep = ParseReport(call.arguments);
      if (rep.ok()) {
        Write("report", {{"id", call.id},
                         {"valid", true},
                         {"answer", {{"findings", rep->findings}, {"suspects", rep->suspects}}}});
        r_.report = rep->findings;
        r_.suspects = rep->suspects;
        r_.finished = true;
        r_.end_reason = "reported";
        return true;
      }
      Write("report", {{"id", call.id}, {"valid", false}, {"error", rep.status().message()}});
      result.text = "Invalid report: " + rep.status().message() + ". Call " + finish_name_ +
                    " again with a valid report.";
    }
    result.is_error = true;
    conversation_.push_back(result);
    return false;
  }

  // Any other tool: called when the tool set offers it, its result added to the conversation.
  void CallTool(const ToolCall& call, Message result) {
    const double call_start = clock_.Now();
    ToolResult out;
    if (!toolset_names_.count(call.name)) {
      out = {"no tool named '" + call.name + "'; the tools offered are listed in the request",
             true};
    } else {
      out = tools_.Call(call.name, call.arguments);
    }
    const double call_s = clock_.Now() - call_start;
    Write("tool_result", {{"id", call.id},
                          {"name", call.name},
                          {"bytes", out.text.size()},
                          {"is_error", out.is_error},
                          {"duration_s", call_s},
                          {"text", out.text.substr(0, kTranscriptTextLimit)}});
    result.text = std::move(out.text);
    result.is_error = out.is_error;
    conversation_.push_back(std::move(result));
  }

  // An unfinished run answers nothing (unknown, confidence 0); the end is written either way.
  RunResult End() {
    if (!r_.finished) {
      r_.diagnosis = Diagnosis{};
      r_.report.clear();
      r_.suspects.clear();
    }
    r_.wall_s = clock_.Now() - t0_;
    Write("end", {{"reason", r_.end_reason},
                  {"finished", r_.finished},
                  {"turns", r_.turns},
                  {"input_tokens", r_.usage.input_tokens},
                  {"output_tokens", r_.usage.output_tokens},
                  {"cached_input_tokens", r_.usage.cached_input_tokens},
                  {"cache_creation_input_tokens", r_.usage.cache_creation_input_tokens},
                  {"tool_calls", r_.tool_calls},
                  {"wall_s", r_.wall_s}});
    return r_;
  }

  Backend& backend_;
  ToolSet& tools_;
  const AgentSpec& spec_;
  Transcript* transcript_;
  Clock clock_;
  const double t0_;
  const bool submit_mode_;
  const std::string finish_name_;
  std::vector<ToolSpec> offered_;
  std::set<std::string> toolset_names_;
  double t_ticket_ = 0;
  std::vector<Message> conversation_;
  std::chrono::steady_clock::time_point wall_deadline_;
  RunResult r_;
};

}  // namespace

RunResult RunAgent(Backend& backend, ToolSet& tools, const AgentSpec& spec,
                   const std::string& ticket, Transcript* transcript) {
  return AgentRun(backend, tools, spec, transcript).Run(ticket);
}

}  // namespace slurm_rca::agents
