#include "agents/harness.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "agents/reference.h"
#include "agents/tools.h"

namespace slurm_rca::agents {

using base::Status;

namespace fs = std::filesystem;
using Json = nlohmann::json;

SessionNeeds NeedsOf(const AgentConfig& config) {
  SessionNeeds needs;
  needs.client = (config.kind == "reference" && config.reference != "ticketonly") ||
                 config.tools == "mcp" || !config.specialists.empty();
  needs.backend = config.kind != "reference" && config.tools == "raw";
  return needs;
}

RunResult RunConfigured(const AgentConfig& config, Backend* model, Session* session,
                        const graph::Graph* graph, const Task& task, Transcript* transcript,
                        int* mcp_calls) {
  int calls = 0;
  RunResult r;
  const bool reads_mcp = NeedsOf(config).client;
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

namespace {

// One task run's outcome, made on a worker's thread.
struct TaskOutcome {
  Json answer;
  Spend spend;
  int mcp_calls = 0;
  std::string error;  // the session did not start
};

// Runs `task` with `model` (the worker's own back-end), its transcript in `tdir`.
TaskOutcome RunOneTask(const RunOptions& o, Backend* model, const Task& task,
                       const fs::path& tdir) {
  TaskOutcome out;
  auto task_t0 = std::chrono::steady_clock::now();  // the session's start counts
  auto transcript = Transcript::Open((tdir / (task.task_id + ".jsonl")).string());
  Transcript* tr = transcript.ok() ? transcript.value().get() : nullptr;
  std::unique_ptr<Session> session;
  if (o.sessions && (o.config.tools != "none" && o.config.reference != "ticketonly")) {
    auto s = o.sessions(task, NeedsOf(o.config));
    if (s.ok()) {
      session = std::move(s.value());
    } else {
      out.error = task.task_id + ": " + s.status().ToString();
    }
  }
  RunResult r;
  Spend& spend = out.spend;
  MeteredBackend metered(model, &spend);
  if (session || o.config.tools == "none" || o.config.reference == "ticketonly") {
    r = RunConfigured(o.config, model ? &metered : nullptr, session.get(), o.graph, task, tr,
                      &out.mcp_calls);
  } else {
    r.end_reason = "no session: no evidence, answered unknown";
    if (tr) tr->Write(o.config.name, "end", {{"reason", r.end_reason}});
  }
  session.reset();
  spend.task_runs = 1;
  spend.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - task_t0).count();
  if (o.price) spend.cost_usd = Cost(*o.price, spend.usage);
  if (tr) {
    Json fields = spend.UsageJson();
    fields.erase("task_runs");
    fields["models_served"] = spend.models_served;
    if (spend.cost_usd) fields["cost_usd"] = *spend.cost_usd;
    tr->Write(o.config.name, "task_usage", std::move(fields));
  }
  out.answer = {{"scenario_id", task.task_id},
                {"root_cause", r.diagnosis.root_cause},
                {"confidence", r.diagnosis.confidence},
                {"ruled_out", r.diagnosis.ruled_out},
                {"actions_proposed", r.diagnosis.actions_proposed}};
  return out;
}

}  // namespace

Json SpendToJson(const Spend& spend) {
  Json j = spend.UsageJson();
  j["models_served"] = spend.models_served;
  if (spend.cost_usd) j["cost_usd"] = *spend.cost_usd;
  return j;
}

Spend SpendFromJson(const Json& j) {
  Spend s;
  if (!j.is_object()) return s;
  s.usage.input_tokens = j.value("input_tokens", int64_t{0});
  s.usage.output_tokens = j.value("output_tokens", int64_t{0});
  s.usage.cached_input_tokens = j.value("cached_input_tokens", int64_t{0});
  s.usage.cache_creation_input_tokens = j.value("cache_creation_input_tokens", int64_t{0});
  s.model_turns = j.value("model_turns", int64_t{0});
  s.tool_calls = j.value("tool_calls", int64_t{0});
  s.task_runs = j.value("task_runs", int64_t{0});
  s.wall_s = j.value("wall_s", 0.0);
  if (j.contains("cost_usd") && j["cost_usd"].is_number()) s.cost_usd = j["cost_usd"].get<double>();
  if (j.contains("models_served") && j["models_served"].is_array()) {
    for (const Json& m : j["models_served"]) {
      if (m.is_string()) s.models_served.insert(m.get<std::string>());
    }
  }
  return s;
}

RunSummary RunSuite(const RunOptions& o) {
  RunSummary summary;
  auto t0 = std::chrono::steady_clock::now();
  const size_t n_tasks = o.tasks.size();
  const int total = static_cast<int>(n_tasks) * o.repeats;
  fs::create_directories(o.out_dir);
  // One slot per task run, in the order one worker takes them: repeat by repeat, task by task.
  struct Slot {
    bool finished = false;
    Json answer;
    Spend spend;
  };
  std::vector<Slot> slots(static_cast<size_t>(total));
  std::vector<fs::path> subs, tdirs;
  int last_repeat = -1;  // the last repeat (index) with a task run kept or started
  Spend kept;
  for (int r = 0; r < o.repeats; ++r) {
    const int k = o.first_repeat + r;
    std::string stem = RunStem(o.config.name, o.model_name, k);
    subs.push_back(fs::path(o.out_dir) / (stem + ".jsonl"));
    tdirs.push_back(fs::path(o.out_dir) / (stem + ".transcripts"));
    bool any = false;
    for (size_t i = 0; i < n_tasks; ++i) {
      const RunJournal::Entry* e =
          o.journal ? o.journal->Find(o.config.name, k, o.tasks[i].task_id) : nullptr;
      if (!e) continue;
      Slot& slot = slots[r * n_tasks + i];
      slot.finished = true;
      slot.answer = e->answer;
      slot.spend = SpendFromJson(e->spend);
      kept += slot.spend;
      ++summary.kept;
      any = true;
    }
    if (!any) {
      fs::remove(subs.back());
      fs::remove_all(tdirs.back());
    } else {
      // The transcripts of task runs the journal does not hold are half-written: made again.
      for (size_t i = 0; i < n_tasks; ++i) {
        if (!slots[r * n_tasks + i].finished) fs::remove(tdirs.back() / (o.tasks[i].task_id + ".jsonl"));
      }
      last_repeat = r;
    }
    fs::create_directories(tdirs.back());
  }

  std::mutex mu;  // guards everything below until the workers are joined
  size_t next = 0;
  int in_flight = 0, done = summary.kept;
  Spend made;
  auto spent_so_far = [&] {
    Spend s = o.spent_before;
    s += kept;
    s += made;
    return s;
  };
  auto report = [&](const std::string& what) {
    if (o.progress) o.progress({done, total, in_flight, spent_so_far().usage.total(), what});
  };
  auto work = [&](Backend* model) {
    for (;;) {
      size_t item;
      {
        std::lock_guard<std::mutex> lock(mu);
        while (next < slots.size() && slots[next].finished) ++next;
        if (next >= slots.size() || !summary.stopped.empty()) return;
        // Caps are checked before a task run starts; one that runs is never cut.
        summary.stopped = CapReached(o.cap, spent_so_far());
        if (!summary.stopped.empty()) {
          last_repeat = std::max(last_repeat, static_cast<int>(next / n_tasks));
          return;
        }
        item = next++;
        ++in_flight;
        last_repeat = std::max(last_repeat, static_cast<int>(item / n_tasks));
        report(o.config.name + " r" + std::to_string(o.first_repeat + item / n_tasks) + " " +
               o.tasks[item % n_tasks].task_id);
      }
      const int r = static_cast<int>(item / n_tasks);
      const Task& task = o.tasks[item % n_tasks];
      TaskOutcome out = RunOneTask(o, model, task, tdirs[r]);
      base::Status journaled;
      if (o.journal) {
        journaled = o.journal->Append({o.config.name, o.config.hash, o.first_repeat + r,
                                       task.task_id, out.answer, SpendToJson(out.spend),
                                       out.mcp_calls});
      }
      std::lock_guard<std::mutex> lock(mu);
      slots[item] = {true, out.answer, out.spend};
      made += out.spend;
      summary.mcp_calls += out.mcp_calls;
      ++summary.runs;
      if (!out.error.empty()) summary.errors.push_back(out.error);
      if (!journaled.ok()) summary.errors.push_back("journal: " + journaled.ToString());
      --in_flight;
      ++done;
      report(o.config.name + " r" + std::to_string(o.first_repeat + r) + " " + task.task_id +
             " done");
    }
  };
  const int jobs = std::max(1, o.jobs);
  if (jobs == 1) {
    work(o.model);
  } else {
    std::vector<std::thread> workers;
    for (int w = 0; w < jobs; ++w) {
      Backend* model = o.model;
      if (w > 0 && o.model) {
        model = static_cast<size_t>(w - 1) < o.extra_models.size() ? o.extra_models[w - 1] : nullptr;
      }
      // A worker without a back-end of its own would share one across threads: not started.
      if (o.model && !model) break;
      workers.emplace_back(work, model);
    }
    for (std::thread& t : workers) t.join();
  }

  // The submissions, answers in task order and spend summed in that order: the same for any
  // number of workers and for a run resumed from its journal.
  if (last_repeat < 0) last_repeat = 0;  // stopped before anything: say so in the first
  for (int r = 0; r <= last_repeat && r < o.repeats; ++r) {
    Spend repeat_spend;
    std::vector<std::string> answers;
    bool complete = true;
    for (size_t i = 0; i < n_tasks; ++i) {
      const Slot& slot = slots[r * n_tasks + i];
      if (!slot.finished) {
        complete = false;
        continue;
      }
      answers.push_back(slot.answer.dump());
      repeat_spend += slot.spend;
    }
    if (o.price && !repeat_spend.cost_usd) repeat_spend.cost_usd = 0;  // priced, nothing spent
    std::string stopped = complete ? "" : summary.stopped;
    if (!complete && stopped.empty()) stopped = "unfinished";
    WriteSubmission(subs[r], Header(o, repeat_spend, stopped), answers);
    summary.submissions.push_back(subs[r].string());
    summary.spend += repeat_spend;
  }
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report(o.config.name + (summary.stopped.empty() ? " finished" : " stopped"));
  return summary;
}

}  // namespace slurm_rca::agents
