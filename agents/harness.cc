#include "agents/harness.h"

#include <chrono>
#include <cstdio>
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

Spend& Spend::operator+=(const Spend& o) {
  usage += o.usage;
  model_turns += o.model_turns;
  tool_calls += o.tool_calls;
  task_runs += o.task_runs;
  wall_s += o.wall_s;
  if (o.cost_usd) cost_usd = cost_usd.value_or(0) + *o.cost_usd;
  models_served.insert(o.models_served.begin(), o.models_served.end());
  return *this;
}

Json Spend::UsageJson() const {
  return {{"input_tokens", usage.input_tokens},
          {"output_tokens", usage.output_tokens},
          {"cached_input_tokens", usage.cached_input_tokens},
          {"cache_creation_input_tokens", usage.cache_creation_input_tokens},
          {"model_turns", model_turns},
          {"tool_calls", tool_calls},
          {"task_runs", task_runs},
          {"wall_s", wall_s}};
}

namespace {

// The run's back-end as the agents see it, counting what every request spent (a supervisor's and
// its specialists' alike): one per task run.
class MeteredBackend : public Backend {
 public:
  MeteredBackend(Backend* inner, Spend* spend) : inner_(inner), spend_(spend) {}
  std::string Describe() const override { return inner_->Describe(); }
  void SetDeadline(std::chrono::steady_clock::time_point deadline) override {
    inner_->SetDeadline(deadline);
  }
  Json SamplingSent() const override { return inner_->SamplingSent(); }
  base::Result<Reply> Complete(const std::vector<Message>& conversation,
                               const std::vector<ToolSpec>& tools) override {
    base::Result<Reply> r = inner_->Complete(conversation, tools);
    ++spend_->model_turns;
    if (r.ok()) {
      spend_->usage += r->usage;
      spend_->tool_calls += static_cast<int64_t>(r->tool_calls.size());
      if (!r->model.empty()) spend_->models_served.insert(r->model);
    }
    return r;
  }

 private:
  Backend* inner_;
  Spend* spend_;
};

// Why no further task run may start, or "".
std::string CapReached(const SpendCap& cap, const Spend& spent) {
  char buf[160];
  if (cap.max_tokens_total > 0 && spent.usage.total() >= cap.max_tokens_total) {
    std::snprintf(buf, sizeof buf, "--max-tokens-total %lld reached: %lld tokens spent",
                  static_cast<long long>(cap.max_tokens_total),
                  static_cast<long long>(spent.usage.total()));
    return buf;
  }
  if (cap.max_cost_usd && spent.cost_usd && *spent.cost_usd >= *cap.max_cost_usd) {
    std::snprintf(buf, sizeof buf, "--max-cost %g USD reached: %.4f USD spent", *cap.max_cost_usd,
                  *spent.cost_usd);
    return buf;
  }
  return "";
}

// The submission's header: who ran, against what, and what it spent and sent.
Json Header(const RunOptions& o, const Spend& spend, const std::string& stopped) {
  Json header = {{"configuration", o.config.name},
                 {"configuration_hash", o.config.hash},
                 {"model", o.model_name},
                 {"suite_fingerprint", o.fingerprint},
                 {"date", o.date}};
  if (o.config.kind == "reference") header["kind"] = "reference";
  header["usage"] = spend.UsageJson();
  if (spend.cost_usd) {
    header["cost_usd"] = *spend.cost_usd;
    header["prices_file"] = o.prices_file;
  }
  header["models_served"] = spend.models_served;
  Json sent = o.model && o.config.kind != "reference"
                  ? o.model->SamplingSent()
                  : Json{{"temperature", "not sent"}, {"seed", "not sent"}};
  header["temperature"] = sent["temperature"];
  header["seed"] = sent["seed"];
  if (!stopped.empty()) header["stopped"] = stopped;
  return header;
}

// Writes header + answers to `path` through a temporary file and a rename.
void WriteSubmission(const fs::path& path, const Json& header,
                     const std::vector<std::string>& answers) {
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << header.dump() << "\n";
    for (const std::string& a : answers) out << a << "\n";
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
}

}  // namespace

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
  for (int k = 1; k <= o.repeats && summary.stopped.empty(); ++k) {
    std::string stem = RunStem(o.config.name, o.model_name, k);
    fs::path sub = fs::path(o.out_dir) / (stem + ".jsonl");
    fs::path tdir = fs::path(o.out_dir) / (stem + ".transcripts");
    fs::remove_all(tdir);
    fs::create_directories(tdir);
    // Answers are appended as they come (a killed run keeps them); the header, which sums the
    // spend, is rewritten at the end of the repeat.
    Spend repeat_spend;
    std::vector<std::string> answers;
    std::ofstream out(sub, std::ios::binary | std::ios::trunc);
    out << Header(o, repeat_spend, "").dump() << "\n";
    for (const Task& task : o.tasks) {
      Spend so_far = o.spent_before;
      so_far += summary.spend;
      summary.stopped = CapReached(o.cap, so_far);
      if (!summary.stopped.empty()) break;
      if (o.progress) o.progress(done, total, o.config.name + " r" + std::to_string(k) + " " + task.task_id);
      auto task_t0 = std::chrono::steady_clock::now();  // the session's start counts
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
      Spend spend;
      MeteredBackend metered(o.model, &spend);
      if (session || o.config.tools == "none" || o.config.reference == "ticketonly") {
        r = RunConfigured(o.config, o.model ? &metered : nullptr, session.get(), o.graph, task, tr,
                          &calls);
      } else {
        r.end_reason = "no session: no evidence, answered unknown";
        if (tr) tr->Write(o.config.name, "end", {{"reason", r.end_reason}});
      }
      session.reset();
      spend.task_runs = 1;
      spend.wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - task_t0).count();
      if (o.price) spend.cost_usd = Cost(*o.price, spend.usage);
      if (tr) {
        Json fields = spend.UsageJson();
        fields.erase("task_runs");
        fields["models_served"] = spend.models_served;
        if (spend.cost_usd) fields["cost_usd"] = *spend.cost_usd;
        tr->Write(o.config.name, "task_usage", std::move(fields));
      }
      summary.mcp_calls += calls;
      ++summary.runs;
      repeat_spend += spend;
      summary.spend += spend;
      Json answer = {{"scenario_id", task.task_id},
                     {"root_cause", r.diagnosis.root_cause},
                     {"confidence", r.diagnosis.confidence},
                     {"ruled_out", r.diagnosis.ruled_out},
                     {"actions_proposed", r.diagnosis.actions_proposed}};
      answers.push_back(answer.dump());
      out << answers.back() << "\n";
      out.flush();
      ++done;
    }
    out.close();
    if (o.price && !repeat_spend.cost_usd) repeat_spend.cost_usd = 0;  // priced, nothing spent
    WriteSubmission(sub, Header(o, repeat_spend, summary.stopped), answers);
    summary.submissions.push_back(sub.string());
  }
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.progress)
    o.progress(done, total, o.config.name + (summary.stopped.empty() ? " finished" : " stopped"));
  return summary;
}

}  // namespace slurm_rca::agents
