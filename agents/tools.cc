#include "agents/tools.h"

#include <sstream>

namespace slurm_rca::agents {

using base::Status;

using Json = nlohmann::json;

McpTools::McpTools(mcp::Client* client, std::set<std::string> topics)
    : client_(client), topics_(std::move(topics)) {}

Status McpTools::Load() {
  auto tools = client_->ListTools();
  if (!tools.ok()) return Status::Unavailable("tools/list: " + tools.status().ToString());
  specs_.clear();
  for (const Json& t : tools.value()) {
    ToolSpec s;
    s.name = t.value("name", "");
    s.description = t.value("description", "");
    s.input_schema = t.contains("inputSchema") ? t["inputSchema"] : Json::object();
    if (!topics_.empty()) {
      if (s.name == "slurm_overview") continue;
      std::string list;
      for (const std::string& x : topics_) list += (list.empty() ? "" : ", ") + x;
      s.description += " (In this role you may read only these topics: " + list + ".)";
    }
    specs_.push_back(std::move(s));
  }
  return Status();
}

std::vector<ToolSpec> McpTools::Specs() const { return specs_; }

ToolResult McpTools::Call(const std::string& name, const Json& arguments) {
  bool offered = false;
  for (const ToolSpec& s : specs_) offered = offered || s.name == name;
  if (!offered) return {"no tool named " + name + " here", true};
  if (!topics_.empty()) {
    std::string topic = arguments.is_object() ? arguments.value("topic", "") : "";
    if (!topics_.count(topic)) {
      return {"this role may not read topic '" + topic + "'; ask within its topics", true};
    }
  }
  ++calls_;
  auto r = client_->CallTool(name, arguments.is_null() ? Json::object() : arguments);
  if (!r.ok()) return {"NO EVIDENCE: the MCP call failed: " + r.status().ToString(), true};
  return {r.value().Text(), r.value().is_error};
}

RawCommandTools::RawCommandTools(mcp::Backend* backend, guard::GuardOptions guard_options)
    : backend_(backend), guard_(std::move(guard_options)) {}

std::vector<ToolSpec> RawCommandTools::Specs() const {
  ToolSpec run;
  run.name = "run_command";
  run.description =
      "Run one read-only Slurm or nvidia-smi command, given as an argv (no shell). Every argv is "
      "checked by a read-only allowlist first (sinfo, squeue, sacct, sdiag, sprio, sshare, "
      "scontrol show ..., sacctmgr show ..., nvidia-smi queries); a refused argv comes back with "
      "the rule that refused it. Long options take their value with '=' (--format=...). Output "
      "is returned as the command printed it; a command that failed or timed out is NO EVIDENCE, "
      "not an empty answer.";
  run.input_schema = {{"type", "object"},
                      {"properties",
                       {{"argv",
                         {{"type", "array"},
                          {"items", {{"type", "string"}}},
                          {"minItems", 1},
                          {"description", "e.g. [\"sinfo\", \"-N\", \"-l\"]"}}}}},
                      {"required", {"argv"}},
                      {"additionalProperties", false}};
  ToolSpec log;
  log.name = "read_log";
  log.description =
      "The last lines of a Slurm daemon's log on this host: slurmctld, slurmdbd or slurmd.";
  log.input_schema = {
      {"type", "object"},
      {"properties",
       {{"daemon", {{"type", "string"}, {"enum", {"slurmctld", "slurmdbd", "slurmd"}}}},
        {"lines", {{"type", "integer"}, {"minimum", 1}, {"maximum", 2000}}}}},
      {"required", {"daemon"}},
      {"additionalProperties", false}};
  return {run, log};
}

std::string RenderEvidence(const mcp::Evidence& e) {
  std::ostringstream o;
  o << "[" << e.source << ", " << e.evidence_time << "] ";
  for (size_t i = 0; i < e.argv.size(); ++i) o << (i ? " " : "") << e.argv[i];
  if (!e.ok()) {
    o << "\nNO EVIDENCE (" << mcp::OutcomeName(e.outcome) << "): " << e.cause;
    if (!e.err.empty()) o << "\nstderr:\n" << e.err;
    return o.str();
  }
  o << "\nexit 0\n" << e.out;
  if (e.out_truncated) o << "\n(output truncated)";
  if (!e.err.empty()) o << "\nstderr:\n" << e.err;
  return o.str();
}

ToolResult RawCommandTools::Call(const std::string& name, const Json& arguments) {
  if (name == "run_command") {
    if (!arguments.is_object() || !arguments.contains("argv") || !arguments["argv"].is_array() ||
        arguments["argv"].empty()) {
      return {"run_command needs {\"argv\": [\"program\", \"arg\", ...]}", true};
    }
    std::vector<std::string> argv;
    for (const Json& a : arguments["argv"]) {
      if (!a.is_string()) return {"every argv element must be a string", true};
      argv.push_back(a.get<std::string>());
    }
    guard::Verdict v = guard_.Check(argv);
    if (!v.ok()) return {"REFUSED by the read-only allowlist: " + v.denial().ToString(), true};
    ++calls_;
    mcp::Evidence e = backend_->Read(argv);
    return {RenderEvidence(e), !e.ok()};
  }
  if (name == "read_log") {
    std::string daemon = arguments.is_object() ? arguments.value("daemon", "") : "";
    if (daemon != "slurmctld" && daemon != "slurmdbd" && daemon != "slurmd") {
      return {"read_log: daemon must be slurmctld, slurmdbd or slurmd", true};
    }
    int lines = arguments.value("lines", 200);
    if (lines < 1 || lines > 2000) return {"read_log: lines must be in [1, 2000]", true};
    ++calls_;
    mcp::Evidence e = backend_->ReadLog(daemon, lines);
    return {RenderEvidence(e), !e.ok()};
  }
  return {"no tool named " + name, true};
}

std::vector<ToolSpec> GraphTools::Specs() const {
  ToolSpec s;
  s.name = "graph_causes";
  s.description =
      "The dependency graph of this Slurm control plane: which components can cause a symptom "
      "in `symptom` at a severity (halts or degrades), on what evidence (measured in this "
      "project's recordings, documented, or inferred), and which components it rules out.";
  Json components = Json::array();
  for (const std::string& n : graph_->nodes) components.push_back(n);
  s.input_schema = {{"type", "object"},
                    {"properties",
                     {{"symptom", {{"type", "string"}, {"enum", components}}},
                      {"severity", {{"type", "string"}, {"enum", {"halts", "degrades"}}}}}},
                    {"required", {"symptom"}},
                    {"additionalProperties", false}};
  return {s};
}

ToolResult GraphTools::Call(const std::string& name, const Json& arguments) {
  if (name != "graph_causes") return {"no tool named " + name, true};
  std::string symptom = arguments.is_object() ? arguments.value("symptom", "") : "";
  if (!graph_->HasNode(symptom)) return {"graph_causes: '" + symptom + "' is not a component", true};
  auto sev = graph::ParseSeverity(arguments.value("severity", "degrades"));
  if (!sev) return {"graph_causes: severity is halts or degrades", true};
  return {graph::RenderCausesReport(*graph_, symptom, *sev), false};
}

const std::vector<Specialist>& Specialists() {
  static const std::vector<Specialist> kAll = {
      {"logs",
       {"logs"},
       "You read the Slurm daemons' logs (slurmctld, slurmdbd, slurmd) and nothing else. Report "
       "what the logs show about the question: the lines that matter with their times, what "
       "changed and when, and which components the lines implicate. Say plainly when the logs "
       "show nothing relevant; a read that failed is no evidence, not silence."},
      {"scheduler",
       {"queue", "jobs", "partitions", "reservations", "priority", "fairshare", "diagnostics",
        "config", "accounting"},
       "You read the scheduler's state: queue, jobs, partitions, reservations, priority, "
       "fairshare, diagnostics, configuration and accounting. Report pending reasons, limits, "
       "reservations, partition states, controller diagnostics and whether accounting answers; "
       "name the components they implicate."},
      {"telemetry",
       {"nodes", "gpu"},
       "You read node state and GPU telemetry. Report node states and drain reasons, and GPU "
       "health (ECC, XID, temperatures, driver answers); name the components they implicate."},
      {"validator",
       {},
       "You are an adversarial validator. You are given a hypothesis about an incident. Try to "
       "refute it with evidence: look for what the hypothesis predicts but is absent, and for "
       "evidence that a different component explains the symptom better. Report whether the "
       "hypothesis survives, and the strongest alternative as a suspect."},
  };
  return kAll;
}

const Specialist* FindSpecialist(const std::string& name) {
  for (const Specialist& s : Specialists()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

SpecialistTools::SpecialistTools(Backend* model, mcp::Client* client,
                                 std::vector<std::string> names, Budget budget,
                                 Transcript* transcript)
    : model_(model),
      client_(client),
      names_(std::move(names)),
      budget_(budget),
      transcript_(transcript) {}

std::vector<ToolSpec> SpecialistTools::Specs() const {
  ToolSpec s;
  s.name = "ask_specialist";
  std::string list;
  for (const std::string& n : names_) list += (list.empty() ? "" : ", ") + n;
  s.description =
      "Ask one specialist a question. Each specialist works in its own context with its own "
      "read-only view of the cluster and returns a written report and its suspects. "
      "Specialists: " + list + ". The validator is adversarial: give it your hypothesis.";
  Json names = Json::array();
  for (const std::string& n : names_) names.push_back(n);
  s.input_schema = {{"type", "object"},
                    {"properties",
                     {{"specialist", {{"type", "string"}, {"enum", names}}},
                      {"question", {{"type", "string"}, {"minLength", 1}}}}},
                    {"required", {"specialist", "question"}},
                    {"additionalProperties", false}};
  return {s};
}

ToolResult SpecialistTools::Call(const std::string& name, const Json& arguments) {
  if (name != "ask_specialist") return {"no tool named " + name, true};
  std::string who = arguments.is_object() ? arguments.value("specialist", "") : "";
  std::string question = arguments.is_object() ? arguments.value("question", "") : "";
  if (std::find(names_.begin(), names_.end(), who) == names_.end()) {
    return {"ask_specialist: no specialist named '" + who + "'", true};
  }
  if (question.empty()) return {"ask_specialist: the question is empty", true};
  const Specialist* sp = FindSpecialist(who);
  McpTools tools(client_, sp->topics);
  if (Status st = tools.Load(); !st.ok()) return {"NO EVIDENCE: " + st.ToString(), true};
  AgentSpec spec;
  spec.name = "specialist:" + who;
  spec.system = sp->instructions;
  spec.finish = Finish::kReport;
  spec.budget = budget_;
  RunResult r = RunAgent(*model_, tools, spec, question, transcript_);
  mcp_calls_ += tools.calls();
  if (!r.finished) {
    return {"the " + who + " specialist gave no report (" + r.end_reason + "): no evidence", true};
  }
  std::string suspects;
  for (const std::string& s : r.suspects) suspects += (suspects.empty() ? "" : ", ") + s;
  return {"report of the " + who + " specialist:\n" + r.report +
              "\nsuspects: " + (suspects.empty() ? "(none)" : suspects),
          false};
}

std::vector<ToolSpec> CombinedTools::Specs() const {
  std::vector<ToolSpec> all;
  for (ToolSet* p : parts_) {
    for (ToolSpec& s : p->Specs()) all.push_back(std::move(s));
  }
  return all;
}

ToolResult CombinedTools::Call(const std::string& name, const Json& arguments) {
  for (ToolSet* p : parts_) {
    for (const ToolSpec& s : p->Specs()) {
      if (s.name == name) return p->Call(name, arguments);
    }
  }
  return {"no tool named " + name, true};
}

}  // namespace slurm_rca::agents
