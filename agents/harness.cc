#include "agents/harness.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "agents/reference.h"
#include "agents/tools.h"

namespace slurm_rca::agents {

using base::Status;

namespace fs = std::filesystem;
using Json = nlohmann::json;

RunResult RunConfigured(const AgentConfig& config, Backend* model, Session* session,
                        const graph::Graph* graph, const Task& task, Transcript* transcript,
                        int* mcp_calls) {
  int calls = 0;
  RunResult r;
  const bool reads_mcp = (config.kind == "reference" && config.reference != "ticketonly") ||
                         config.tools == "mcp" || !config.specialists.empty();
  if (transcript && reads_mcp && session && session->client()) {
    // Which MCP era the run's evidence came through (agents/llm/README.md, "Transcript").
    const mcp::Connection& c = session->client()->connection();
    Json fields = {{"era", mcp::EraName(c.era)},
                   {"protocol_version", c.protocol_version},
                   {"server", c.server_info}};
    if (!c.fallback.empty()) fields["fallback"] = c.fallback;
    transcript->Write(config.name, "mcp", std::move(fields));
  }
  if (config.kind == "reference") {
    McpTools tools(session ? session->client() : nullptr);
    ToolSet* offered = nullptr;
    NoTools none;
    if (config.reference == "ticketonly" || !session) {
      offered = &none;
    } else if (Status st = tools.Load(); st.ok()) {
      offered = &tools;
    } else {
      offered = &none;
    }
    r = RunReference(config.reference, offered, graph, task.ticket, transcript);
    calls = tools.calls();
  } else {
    if (!model) {
      r.end_reason = "backend: no model back-end for configuration " + config.name;
      if (mcp_calls) *mcp_calls = 0;
      return r;
    }
    CombinedTools all;
    std::unique_ptr<RawCommandTools> raw;
    std::unique_ptr<McpTools> mcp_tools;
    std::unique_ptr<GraphTools> graph_tools;
    std::unique_ptr<SpecialistTools> specialists;
    std::string system = config.instructions;
    if (config.tools == "raw" && session) {
      raw = std::make_unique<RawCommandTools>(session->backend(), guard::GuardOptions{});
      all.Add(raw.get());
    }
    if (config.tools == "mcp" && session && config.specialists.empty()) {
      mcp_tools = std::make_unique<McpTools>(session->client());
      if (Status st = mcp_tools->Load(); !st.ok()) {
        r.end_reason = "tools: " + st.ToString();
        if (mcp_calls) *mcp_calls = 0;
        return r;
      }
      all.Add(mcp_tools.get());
    }
    if (config.graph && graph) {
      graph_tools = std::make_unique<GraphTools>(graph);
      all.Add(graph_tools.get());
      system += "\n\nThe dependency graph of this control plane (source -> target: propagation, "
                "evidence; symptom):\n" + graph::SummaryForAgents(*graph);
    }
    if (!config.specialists.empty() && session) {
      specialists = std::make_unique<SpecialistTools>(model, session->client(), config.specialists,
                                                      config.budget, transcript);
      all.Add(specialists.get());
    }
    AgentSpec spec;
    spec.name = config.name;
    spec.system = system;
    spec.budget = config.budget;
    r = RunAgent(*model, all, spec, task.ticket, transcript);
    calls = (raw ? raw->calls() : 0) + (mcp_tools ? mcp_tools->calls() : 0) +
            (specialists ? specialists->mcp_calls() : 0);
    if (config.abstention && r.finished && r.diagnosis.root_cause != "unknown" &&
        r.diagnosis.confidence < config.abstention->threshold) {
      Diagnosis abstained = r.diagnosis;
      abstained.root_cause = "unknown";
      abstained.actions_proposed.clear();
      abstained.rationale = "abstained: confidence " + std::to_string(r.diagnosis.confidence) +
                            " is below the fitted threshold " +
                            std::to_string(config.abstention->threshold) + " (" +
                            r.diagnosis.root_cause + ")";
      if (transcript) {
        transcript->Write(config.name, "submit",
                          {{"valid", true}, {"by", "harness"}, {"answer", DiagnosisToJson(abstained)}});
      }
      r.diagnosis = abstained;
    }
  }
  if (mcp_calls) *mcp_calls = calls;
  return r;
}

std::string RunStem(const std::string& config, const std::string& model, int repeat) {
  std::string s = config + "-" + model + "-r" + std::to_string(repeat);
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  }
  return s;
}

RunSummary RunSuite(const RunOptions& o) {
  RunSummary summary;
  auto t0 = std::chrono::steady_clock::now();
  int total = static_cast<int>(o.tasks.size()) * o.repeats, done = 0;
  fs::create_directories(o.out_dir);
  for (int k = 1; k <= o.repeats; ++k) {
    std::string stem = RunStem(o.config.name, o.model_name, k);
    fs::path sub = fs::path(o.out_dir) / (stem + ".jsonl");
    fs::path tdir = fs::path(o.out_dir) / (stem + ".transcripts");
    fs::remove_all(tdir);
    fs::create_directories(tdir);
    std::ofstream out(sub, std::ios::binary | std::ios::trunc);
    Json header = {{"configuration", o.config.name},
                   {"configuration_hash", o.config.hash},
                   {"model", o.model_name},
                   {"suite_fingerprint", o.fingerprint},
                   {"date", o.date}};
    if (o.config.kind == "reference") header["kind"] = "reference";
    out << header.dump() << "\n";
    for (const Task& task : o.tasks) {
      if (o.progress) o.progress(done, total, o.config.name + " r" + std::to_string(k) + " " + task.task_id);
      auto transcript = Transcript::Open((tdir / (task.task_id + ".jsonl")).string());
      Transcript* tr = transcript.ok() ? transcript.value().get() : nullptr;
      std::unique_ptr<Session> session;
      if (o.sessions && (o.config.tools != "none" && o.config.reference != "ticketonly")) {
        auto s = o.sessions(task);
        if (s.ok()) {
          session = std::move(s.value());
        } else {
          summary.errors.push_back(task.task_id + ": " + s.status().ToString());
        }
      }
      int calls = 0;
      RunResult r;
      if (session || o.config.tools == "none" || o.config.reference == "ticketonly") {
        r = RunConfigured(o.config, o.model, session.get(), o.graph, task, tr, &calls);
      } else {
        r.end_reason = "no session: no evidence, answered unknown";
        if (tr) tr->Write(o.config.name, "end", {{"reason", r.end_reason}});
      }
      session.reset();
      summary.mcp_calls += calls;
      ++summary.runs;
      Json answer = {{"scenario_id", task.task_id},
                     {"root_cause", r.diagnosis.root_cause},
                     {"confidence", r.diagnosis.confidence},
                     {"ruled_out", r.diagnosis.ruled_out},
                     {"actions_proposed", r.diagnosis.actions_proposed}};
      out << answer.dump() << "\n";
      out.flush();
      ++done;
    }
    out.close();
    summary.submissions.push_back(sub.string());
  }
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.progress) o.progress(done, total, o.config.name + " finished");
  return summary;
}

}  // namespace slurm_rca::agents
