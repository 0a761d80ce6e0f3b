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

RunResult RunAgent(Backend& backend, ToolSet& tools, const AgentSpec& spec,
                   const std::string& ticket, Transcript* transcript) {
  Clock clock(transcript);
  const double t0 = clock.Now();
  auto write = [&](const char* event, Json fields) -> double {
    return transcript ? transcript->Write(spec.name, event, std::move(fields)) : clock.Now();
  };

  const bool submit_mode = spec.finish == Finish::kSubmitDiagnosis;
  const std::string finish_name = submit_mode ? kSubmitDiagnosisTool : kReportFindingsTool;
  std::vector<ToolSpec> offered = tools.Specs();
  std::set<std::string> toolset_names;
  for (const ToolSpec& s : offered) toolset_names.insert(s.name);
  offered.push_back(submit_mode ? SubmitDiagnosisSpec() : ReportFindingsSpec());

  write("start", {{"ts", IsoUtcNow()},
                  {"backend", backend.Describe()},
                  {"finish", finish_name},
                  {"tools", [&] {
                     Json names = Json::array();
                     for (const ToolSpec& s : offered) names.push_back(s.name);
                     return names;
                   }()},
                  {"budget",
                   {{"max_turns", spec.budget.max_turns},
                    {"max_tokens", spec.budget.max_tokens},
                    {"max_wall_s", spec.budget.max_wall_s}}}});
  const double t_ticket = write("ticket", {{"text", ticket}});

  std::vector<Message> conversation;
  if (!spec.system.empty()) conversation.push_back({Message::Role::kSystem, spec.system});
  conversation.push_back({Message::Role::kUser, ticket});

  // Beyond ~30 years the budget is unlimited (and time_point arithmetic would overflow).
  const auto wall_deadline =
      spec.budget.max_wall_s < 1e9
          ? std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(std::max(0.0, spec.budget.max_wall_s)))
          : std::chrono::steady_clock::time_point::max();

  RunResult r;
  while (r.end_reason.empty()) {
    if (r.turns >= spec.budget.max_turns) {
      r.end_reason = "budget:turns";
      break;
    }
    if (r.usage.total() >= spec.budget.max_tokens) {
      r.end_reason = "budget:tokens";
      break;
    }
    if (clock.Now() - t0 >= spec.budget.max_wall_s) {
      r.end_reason = "budget:wall";
      break;
    }

    const int turn = ++r.turns;
    const double turn_start = clock.Now();
    // Set every turn: a specialist sharing this back-end may have set its own.
    backend.SetDeadline(wall_deadline);
    Result<Reply> reply = backend.Complete(conversation, offered);
    const double turn_s = clock.Now() - turn_start;
    if (!reply.ok()) {
      write("model_error", {{"turn", turn}, {"duration_s", turn_s},
                            {"error", reply.status().ToString()}});
      // A request cut short by the deadline is the wall budget running out, not a back-end fault.
      r.end_reason = reply.status().code() == Status::Code::kDeadlineExceeded
                         ? "budget:wall"
                         : "backend: " + reply.status().ToString();
      break;
    }
    r.usage.input_tokens += reply->usage.input_tokens;
    r.usage.output_tokens += reply->usage.output_tokens;
    write("model_turn", {{"turn", turn},
                         {"duration_s", turn_s},
                         {"input_tokens", reply->usage.input_tokens},
                         {"output_tokens", reply->usage.output_tokens},
                         {"attempts", reply->attempts},
                         {"stop_reason", reply->stop_reason},
                         {"text", reply->text},
                         {"tool_calls", ToolCallsJson(reply->tool_calls)}});

    Message assistant{Message::Role::kAssistant, reply->text};
    assistant.tool_calls = reply->tool_calls;
    conversation.push_back(assistant);

    if (reply->tool_calls.empty()) {
      const std::string nudge =
          "No tool was called. Continue the investigation with the tools, and end it by calling " +
          finish_name + (submit_mode ? " with your diagnosis (root_cause \"unknown\" if the "
                                       "evidence does not separate the candidates)."
                                     : " with your findings.");
      write("nudge", {{"turn", turn}, {"text", nudge}});
      conversation.push_back({Message::Role::kUser, nudge});
      continue;
    }

    for (const ToolCall& call : reply->tool_calls) {
      ++r.tool_calls;
      write("tool_call", {{"id", call.id}, {"name", call.name}, {"arguments", call.arguments}});
      Message result{Message::Role::kTool};
      result.tool_call_id = call.id;
      result.tool_name = call.name;

      if (call.name == finish_name) {
        if (submit_mode) {
          Result<Diagnosis> d = ParseDiagnosis(call.arguments);
          if (d.ok()) {
            const double t = write("submit", {{"id", call.id}, {"valid", true},
                                              {"answer", DiagnosisToJson(*d)}});
            r.diagnosis = *d;
            r.finished = true;
            r.time_to_hypothesis_s = t - t_ticket;
            r.end_reason = "submitted";
            break;
          }
          write("submit", {{"id", call.id}, {"valid", false}, {"error", d.status().message()}});
          result.text = "Invalid diagnosis: " + d.status().message() + ". Call " + finish_name +
                        " again with a valid answer.";
        } else {
          Result<Report> rep = ParseReport(call.arguments);
          if (rep.ok()) {
            write("report", {{"id", call.id}, {"valid", true},
                             {"answer", {{"findings", rep->findings},
                                         {"suspects", rep->suspects}}}});
            r.report = rep->findings;
            r.suspects = rep->suspects;
            r.finished = true;
            r.end_reason = "reported";
            break;
          }
          write("report", {{"id", call.id}, {"valid", false}, {"error", rep.status().message()}});
          result.text = "Invalid report: " + rep.status().message() + ". Call " + finish_name +
                        " again with a valid report.";
        }
        result.is_error = true;
        conversation.push_back(result);
        continue;
      }

      const double call_start = clock.Now();
      ToolResult out;
      if (!toolset_names.count(call.name)) {
        out = {"no tool named '" + call.name + "'; the tools offered are listed in the request",
               true};
      } else {
        out = tools.Call(call.name, call.arguments);
      }
      const double call_s = clock.Now() - call_start;
      write("tool_result", {{"id", call.id},
                            {"name", call.name},
                            {"bytes", out.text.size()},
                            {"is_error", out.is_error},
                            {"duration_s", call_s},
                            {"text", out.text.substr(0, kTranscriptTextLimit)}});
      result.text = std::move(out.text);
      result.is_error = out.is_error;
      conversation.push_back(std::move(result));
    }
  }

  if (!r.finished) {
    r.diagnosis = Diagnosis{};
    r.report.clear();
    r.suspects.clear();
  }
  r.wall_s = clock.Now() - t0;
  write("end", {{"reason", r.end_reason},
                {"finished", r.finished},
                {"turns", r.turns},
                {"input_tokens", r.usage.input_tokens},
                {"output_tokens", r.usage.output_tokens},
                {"tool_calls", r.tool_calls},
                {"wall_s", r.wall_s}});
  return r;
}

}  // namespace slurm_rca::agents
