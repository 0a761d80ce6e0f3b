#include "cli/agent_commands.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "agents/config.h"
#include "agents/graph/graph.h"
#include "agents/harness.h"
#include "cli/paths.h"
#include "grader/score.h"
#include "grader/transcript_times.h"
#include "mcp/backend/live_flags.h"
#include "scenarios/live/mcp_child.h"
#include "scenarios/live/runner.h"
#include "scenarios/measure.h"
#include "session/session.h"

namespace slurm_rca::cli {

using namespace slurm_rca::grader;  // scoring and baselines are what these commands report

namespace fs = std::filesystem;
namespace sc = scenarios;
using Json = nlohmann::json;

namespace {

constexpr int kUsage = 2;

int Fail(const std::string& what, int code = 1) {
  std::cerr << "rca-bench: " << what << "\n";
  return code;
}

std::string Today() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

std::string Fixed(double v, int digits = 3) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::string SlurmMcpPath(const std::string& given) {
  if (!given.empty()) return given;
  return live::SiblingProgram("slurm-mcp");
}

// The session of one task of `run`: its bundle replayed, or (--mode live) a fresh lab with its
// scenario injected. Whatever stops it opening, the harness answers the task unknown and reports
// the evidence unavailable.
base::Result<std::unique_ptr<agents::Session>> OpenTaskSession(
    const RunCommandOptions& o, const std::string& slurm_mcp,
    const std::map<std::string, const sc::Scenario*>& by_task, const agents::Task& t,
    const agents::SessionNeeds& needs) {
  session::SessionOptions so;
  so.slurm_mcp = slurm_mcp;
  so.needs = needs;
  so.offset_s = t.offset_s;
  if (o.mode == "live") {
    so.source = session::SessionOptions::Source::kLab;
    so.scenario = *by_task.at(t.task_id);
    so.lab.dir = o.lab_dir;
    so.lab.port_base = o.port_base;
    so.lab.profile = o.profile;
    so.lab.seed = o.seed;
    so.lab.slurm_prefix = o.slurm_prefix;
  } else {
    so.bundle_dir = t.bundle_dir;
  }
  base::Result<std::unique_ptr<agents::Session>> opened = session::OpenSession(so);
  if (!opened.ok()) return base::Status::Unavailable(opened.status().message());
  return opened;
}

// One line that redraws itself on a terminal; elsewhere a line every tenth of the work. It says
// what is done of the whole run, what is running, how many requests the model endpoint made us
// retry and the tokens spent so far.
class Progress {
 public:
  Progress(int total, const agents::EndpointLimiter* limiter)
      : total_(total), tty_(::isatty(2)), limiter_(limiter), t0_(std::chrono::steady_clock::now()) {}
  void Update(int done, int in_flight, int64_t tokens, const std::string& what) {
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    std::string eta = done > fresh_ ? Fixed(el / (done - fresh_) * (total_ - done), 0) + " s" : "?";
    std::string state = std::to_string(in_flight) + " running, " +
                        std::to_string(limiter_ ? limiter_->stats().retries : 0) + " retries, " +
                        std::to_string(tokens) + " tokens";
    if (tty_) {
      int width = 30, filled = total_ ? done * width / total_ : width;
      std::cerr << "\r[" << std::string(filled, '#') << std::string(width - filled, '.') << "] "
                << done << "/" << total_ << " (" << state << ") ETA " << eta << "  " << what
                << "\033[K" << std::flush;
      if (done == total_ && in_flight == 0) std::cerr << "\n";
    } else if (done == total_ || total_ < 10 || done % std::max(1, total_ / 10) == 0) {
      if (done != last_) std::cerr << "rca-bench: " << done << "/" << total_ << " (" << state << "; "
                                   << Fixed(el, 1) << " s, ETA " << eta << ") " << what << "\n";
      last_ = done;
    }
  }
  // Task runs the journal kept: done before this process started (the ETA leaves them out).
  void Kept(int n) { fresh_ += n; }

 private:
  int total_;
  bool tty_;
  const agents::EndpointLimiter* limiter_;
  int last_ = -1;
  int fresh_ = 0;
  std::chrono::steady_clock::time_point t0_;
};

// The runnable tasks spec names ("all", or ids, task ids and prefixes separated by commas); an
// invalid argument for a name that matches no task or a blocked one. Empty when spec names none.
base::Result<std::vector<const sc::Scenario*>> Chosen(const std::vector<sc::Scenario>& suite,
                                                      const std::string& spec) {
  std::vector<const sc::Scenario*> out;
  if (spec == "all") {
    for (const sc::Scenario& s : suite) {
      if (s.status == "runnable") out.push_back(&s);
    }
    return out;
  }
  std::stringstream in(spec);
  std::string id;
  while (std::getline(in, id, ',')) {
    // An exact id or task id names one task (a variant by <id>@<variant>); a prefix (S16) names
    // the scenario's base instance, never one of its variants.
    const sc::Scenario* found = nullptr;
    for (const sc::Scenario& s : suite) {
      if (s.id == id || s.TaskId() == id) {
        found = &s;
        break;
      }
      if (!found && s.variant.empty() && s.id.rfind(id + "-", 0) == 0) found = &s;
    }
    if (!found) return base::Status::InvalidArgument("no scenario '" + id + "' (rca-bench list)");
    if (found->status != "runnable") {
      return base::Status::InvalidArgument(found->id + " is blocked: it has no evidence to run on");
    }
    out.push_back(found);
  }
  return out;
}

std::string ShellQuote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

std::vector<std::string> ModelFlags(const ModelOptions& m) {
  std::vector<std::string> f;
  const auto& b = m.backend;
  if (b.kind.empty()) return f;
  f = {"--backend", b.kind};
  if (!b.model.empty()) f.insert(f.end(), {"--model", b.model});
  if (!b.base_url.empty()) f.insert(f.end(), {"--base-url", b.base_url});
  if (!b.api_key_env.empty()) f.insert(f.end(), {"--api-key-env", b.api_key_env});
  if (!b.script.empty()) f.insert(f.end(), {"--script", fs::absolute(b.script).string()});
  if (!b.ca_file.empty()) f.insert(f.end(), {"--ca-file", fs::absolute(b.ca_file).string()});
  return f;
}

std::string ModelName(const ModelOptions& m, const agents::AgentConfig& c) {
  if (c.kind == "reference") return "none";
  if (m.backend.kind == "scripted") return "scripted";
  return m.backend.model.empty() ? m.backend.kind : m.backend.model;
}

// The configurations `o` names, loaded; nullopt after saying on stderr which one is unusable
// (the exit code is then kUsage).
std::optional<std::vector<agents::AgentConfig>> LoadConfigs(const RunCommandOptions& o,
                                                            const std::vector<sc::Scenario>& suite) {
  std::vector<std::string> ids;
  for (const sc::Scenario& s : suite) ids.push_back(s.id);
  std::vector<agents::AgentConfig> configs;
  for (const std::string& name : o.configs) {
    auto c = agents::LoadConfig(agents::ConfigPath(Paths().configs, name), ids);
    if (!c.ok()) {
      std::cerr << c.status().message() << "\n";
      Fail("configuration " + name + " is not usable", kUsage);
      return std::nullopt;
    }
    if (c->kind == "agent" && o.model.backend.kind.empty()) {
      Fail("configuration " + name + " needs a model: --backend openai|anthropic|scripted "
           "(and --model, --base-url, --api-key-env; see rca-bench run --help)", kUsage);
      return std::nullopt;
    }
    configs.push_back(*c);
  }
  return configs;
}

// run --slurm: writes the job-array script that runs each configuration x task x repeat as one
// array task, instead of running anything here.
int WriteSlurmArray(const RunCommandOptions& o, const std::vector<agents::AgentConfig>& configs,
                    const std::vector<const sc::Scenario*>& chosen) {
  for (const auto& c : configs) {
    if (c.file.find_first_of(" \t\"'$`\\") != std::string::npos) {
      return Fail("--slurm needs configuration paths without spaces or quotes: " + c.file, kUsage);
    }
  }
  // Every task writes its Slurm output and its part under --out on a compute node: a relative
  // path would name each task's working directory, so it must be absolute (on a file system the
  // nodes share). The folders are made now: slurmd opens --output before the task starts, and
  // a folder that does not exist fails every task at once (exit code 0:53).
  if (!fs::path(o.out).is_absolute() || o.out.find_first_of(" \t\"'$`\\%") != std::string::npos) {
    return Fail("--slurm needs an absolute --out, without spaces, quotes or %, on a file system "
                "the compute nodes can see (got '" + o.out + "')", kUsage);
  }
  std::error_code made;
  fs::create_directories(fs::path(o.out) / "parts", made);
  if (made) return Fail("cannot create " + o.out + "/parts: " + made.message());
  std::ofstream out(o.slurm_script, std::ios::binary | std::ios::trunc);
  std::string self = live::SiblingProgram("rca-bench");
  int n = 0;
  std::ostringstream tasks;
  for (const auto& c : configs) {
    for (const sc::Scenario* s : chosen) {
      for (int k = o.first_repeat; k < o.first_repeat + o.repeats; ++k) {
        tasks << "  \"" << c.file << " " << s->id << " " << k << "\"\n";
        ++n;
      }
    }
  }
  std::string flags;
  for (const std::string& f : ModelFlags(o.model)) flags += " " + ShellQuote(f);
  if (!o.prices.empty()) flags += " --prices " + ShellQuote(fs::absolute(o.prices).string());
  const std::string& outdir = o.out;  // absolute, checked above
  out << "#!/bin/bash\n"
      << "# rca-bench run as a Slurm job array: one task per configuration x scenario x repeat.\n"
      << "# Submit with sbatch; when every task is done: rca-bench collect " << outdir
      << "/parts --out " << outdir << "\n"
      << "#SBATCH --job-name=rca-bench\n#SBATCH --array=0-" << n - 1 << "\n"
      << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n#SBATCH --output=" << outdir
      << "/slurm-%A_%a.out\nset -euo pipefail\n"
      << "tasks=(\n" << tasks.str() << ")\n"
      << "read -r config scenario repeat <<< \"${tasks[$SLURM_ARRAY_TASK_ID]}\"\n"
      << ShellQuote(self.empty() ? "rca-bench" : self) << " run --config \"$config\" --scenarios "
      << "\"$scenario\" --repeats 1 --first-repeat \"$repeat\" --mode " << o.mode << flags
      << " --no-score --out " << ShellQuote(outdir)
      << "/parts/\"$(basename \"$config\" .yaml)-$scenario-r$repeat\"\n";
  out.close();
  if (!out) return Fail("cannot write " + o.slurm_script);
  std::cout << "wrote " << o.slurm_script << ": " << n << " array tasks; sbatch it, then "
            << "rca-bench collect " << outdir << "/parts --out " << outdir << "\n";
  return 0;
}

// The agents' tasks, one per chosen scenario, at --offset or the scenario's observation time;
// `by_task` maps each task id back to its scenario (a live session injects it).
std::vector<agents::Task> TasksOf(const RunCommandOptions& o,
                                  const std::vector<const sc::Scenario*>& chosen,
                                  std::map<std::string, const sc::Scenario*>& by_task) {
  std::vector<agents::Task> tasks;
  for (const sc::Scenario* s : chosen) {
    agents::Task t;
    t.id = s->id;
    t.task_id = s->TaskId();
    t.ticket = s->symptom;
    t.bundle_dir = sc::BundleOf(*s);
    t.offset_s = o.offset_s >= 0 ? o.offset_s : s->observe_s;
    by_task[t.task_id] = s;
    tasks.push_back(t);
  }
  return tasks;
}

// What must be the same for `run` to resume from OUT/run.journal: the suite, the model, the
// configurations and their hashes, the tasks and offsets, the repeats, the mode and the prices.
Json RunIdentity(const RunCommandOptions& o, const std::vector<agents::AgentConfig>& configs,
                 const std::vector<agents::Task>& tasks, const std::string& fingerprint,
                 const std::optional<agents::ModelPrice>& price) {
  Json model = Json::object();
  bool any_agent = false;
  for (const auto& c : configs) any_agent = any_agent || c.kind == "agent";
  if (any_agent) {
    model = {{"backend", o.model.backend.kind}, {"model", o.model.backend.model}};
    if (o.model.backend.seed) model["seed"] = *o.model.backend.seed;
    if (o.model.backend.kind == "scripted") {
      std::ifstream in(o.model.backend.script, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      model["script"] = "sha256:" + sc::Sha256Hex(text.str(), 16);
    }
  } else {
    model = "none";
  }
  Json cs = Json::array();
  for (const auto& c : configs) cs.push_back({{"name", c.name}, {"hash", c.hash}});
  Json ts = Json::array();
  for (const auto& t : tasks) ts.push_back({t.task_id, t.offset_s});
  Json id = {{"suite_fingerprint", fingerprint}, {"model", model},   {"configurations", cs},
             {"tasks", ts},                      {"repeats", o.repeats},
             {"first_repeat", o.first_repeat},   {"mode", o.mode}};
  if (o.mode == "live") id["lab"] = {{"profile", o.profile}, {"seed", o.seed}};
  id["prices"] = price ? Json{{"input", price->input},
                              {"output", price->output},
                              {"cached_input", price->cached_input},
                              {"cache_write", price->cache_write ? Json(*price->cache_write) : Json()}}
                       : Json("unmeasured");
  return id;
}

// Scores each submission the run wrote, one line each; 1 when the grader refuses one.
int ScoreSubmissions(const std::vector<std::string>& submissions,
                     const std::vector<sc::Scenario>& suite) {
  for (const std::string& path : submissions) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = ParseSubmission(text.str(), path, suite);
    if (!parsed.submission) {
      for (const auto& p : parsed.problems) std::cerr << p.ToString() << "\n";
      return Fail("the harness wrote a submission the grader refuses: " + path);
    }
    HarnessTimes times = ReadTranscripts(fs::path(path).replace_extension(".transcripts").string(), suite);
    Report r = Score(*parsed.submission, suite, &times);
    std::cout << path << ": depth " << Fixed(r.depth) << " over " << r.scenarios
              << " scenarios (floor " << Fixed(r.floor_depth) << " " << r.floor_name << ", margin "
              << (r.depth >= r.floor_depth ? "+" : "") << Fixed(r.depth - r.floor_depth)
              << "); time to hypothesis "
              << (r.harness_time_median_s ? Fixed(*r.harness_time_median_s, 2) + " s median" : "unmeasured")
              << "\n";
  }
  return 0;
}

}  // namespace

int RunCommand(const RunCommandOptions& o, const std::vector<sc::Scenario>& suite) {
  base::Result<std::vector<const sc::Scenario*>> found = Chosen(suite, o.scenarios);
  if (!found.ok()) return Fail(found.status().message(), kUsage);
  if (found->empty()) return Fail("no scenario to run", kUsage);
  std::vector<const sc::Scenario*> chosen = *found;
  if (o.mode == "live") {
    // A task of the large lab or of the lab of hosts is not run on the 4-node lab of --mode live
    // (LabMisfit): named, it is refused; in --scenarios all it is left out, said here, and
    // counted missing by the score.
    live::LabOptions each{.dir = o.lab_dir, .profile = o.profile};
    std::vector<const sc::Scenario*> here;
    std::string left_out;
    for (const sc::Scenario* s : chosen) {
      std::string why = live::LabMisfit(each, *s);
      if (why.empty()) {
        here.push_back(s);
      } else if (o.scenarios != "all") {
        return Fail(why + ": --mode live runs a 4-node lab per task run; replay its bundle", kUsage);
      } else {
        left_out += (left_out.empty() ? "" : ", ") + s->id;
      }
    }
    if (!left_out.empty()) {
      std::cerr << "rca-bench: --mode live leaves out the tasks of their own lab (large, hosts: "
                << left_out
                << "): replay them; the score counts them missing\n";
    }
    if (here.empty()) return Fail("no scenario to run on a 4-node lab", kUsage);
    chosen = std::move(here);
  }
  std::optional<std::vector<agents::AgentConfig>> loaded = LoadConfigs(o, suite);
  if (!loaded) return kUsage;
  const std::vector<agents::AgentConfig>& configs = *loaded;
  if (o.max_cost_usd && o.prices.empty()) {
    return Fail("--max-cost needs --prices FILE: money is never guessed", kUsage);
  }
  std::optional<agents::PriceTable> prices;
  if (!o.prices.empty()) {
    base::Result<agents::PriceTable> t = agents::PriceTable::Load(o.prices);
    if (!t.ok()) return Fail(t.status().message(), kUsage);
    prices = std::move(t).value();
  }
  std::optional<agents::ModelPrice> model_price;
  for (const auto& c : configs) {
    if (c.kind != "agent" || !prices) continue;
    base::Result<agents::ModelPrice> p = prices->For(ModelName(o.model, c), o.model.backend.kind);
    if (!p.ok()) return Fail(p.status().message(), kUsage);
    model_price = *p;
  }
  const bool http_model = o.model.backend.kind == "openai" || o.model.backend.kind == "anthropic";
  if ((o.requests_per_minute > 0 || o.tokens_per_minute > 0) && !http_model) {
    return Fail("--requests-per-minute and --tokens-per-minute limit an HTTP model endpoint "
                "(--backend openai or anthropic)", kUsage);
  }
  if (!o.slurm_script.empty()) {
    if (o.max_cost_usd || o.max_tokens_total > 0) {
      return Fail(
          "--max-cost and --max-tokens-total need one rca-bench process; a --slurm array "
          "runs each task apart",
          kUsage);
    }
    if (o.jobs > 1) return Fail("--jobs runs task runs at once in one process; a --slurm array "
                                "runs each task apart (leave --jobs at 1)", kUsage);
    return WriteSlurmArray(o, configs, chosen);
  }
  if (o.jobs > 1 && o.mode == "live") {
    return Fail("--mode live brings up one lab per task run on one port base and directory: "
                "--jobs must be 1 (replay runs task runs at once)", kUsage);
  }
  std::string slurm_mcp = SlurmMcpPath(o.slurm_mcp);
  if (slurm_mcp.empty()) return Fail("no slurm-mcp next to rca-bench; give --slurm-mcp PATH", kUsage);
  if (o.mode == "live" && ::geteuid() != 0) {
    return Fail("--mode live starts a control plane and injects faults: run as root", kUsage);
  }
  auto g = graph::LoadGraphFile(Paths().graph);
  const graph::Graph* graph = g.graph ? &*g.graph : nullptr;
  for (const auto& c : configs) {
    if ((c.graph || c.reference == "graphwalk") && !graph) {
      for (const auto& e : g.errors) std::cerr << e.ToString() << "\n";
      return Fail("configuration " + c.name + " needs the dependency graph, which did not load");
    }
  }
  // One back-end per worker (a Backend serves one thread at a time), all sharing the endpoint's
  // limiter: its request and token limits, and the pause a 429 puts on every worker.
  std::vector<std::unique_ptr<agents::Backend>> models;
  std::shared_ptr<agents::EndpointLimiter> limiter;
  bool any_agent = false;
  for (const auto& c : configs) any_agent = any_agent || c.kind == "agent";
  if (any_agent) {
    agents::BackendConfig bc = o.model.backend;
    if (http_model) {
      agents::EndpointLimits limits;
      limits.requests_per_window = o.requests_per_minute;
      limits.tokens_per_window = o.tokens_per_minute;
      limiter = std::make_shared<agents::EndpointLimiter>(limits);
      bc.limiter = limiter;
    }
    for (int w = 0; w < std::max(1, o.jobs); ++w) {
      auto m = agents::MakeBackend(bc, ProcessEnvironment);
      if (!m.ok()) return Fail("model back-end: " + m.status().ToString(), kUsage);
      models.push_back(std::move(m.value()));
    }
  }
  std::vector<agents::Backend*> extra_models;
  for (size_t w = 1; w < models.size(); ++w) extra_models.push_back(models[w].get());
  std::string fp = SuiteFingerprint(suite);
  std::map<std::string, const sc::Scenario*> by_task;
  std::vector<agents::Task> tasks = TasksOf(o, chosen, by_task);
  // What this directory has finished: kept, unless it was made by another run (refused).
  std::error_code made;
  fs::create_directories(o.out, made);
  if (made) return Fail("cannot create " + o.out + ": " + made.message());
  auto journal = agents::RunJournal::Open((fs::path(o.out) / "run.journal").string(),
                                          RunIdentity(o, configs, tasks, fp, model_price), o.fresh);
  if (!journal.ok()) {
    return Fail(journal.status().message(),
                journal.status().code() == base::Status::Code::kInvalidArgument ? kUsage : 1);
  }
  if ((*journal)->loaded() > 0) {
    std::cerr << "rca-bench: resuming from " << (*journal)->path() << ": " << (*journal)->loaded()
              << " task run(s) finished before are kept (--fresh starts over)\n";
  }
  int total = static_cast<int>(configs.size() * tasks.size()) * o.repeats, base = 0;
  Progress progress(total, limiter.get());
  int all_calls = 0, kept = 0, made_runs = 0;
  double all_wall = 0;
  std::vector<std::string> submissions;
  agents::Spend spent;
  std::string stopped;
  for (const auto& c : configs) {
    if (!stopped.empty()) break;
    agents::RunOptions ro;
    ro.config = c;
    ro.model = models.empty() ? nullptr : models[0].get();
    ro.model_name = ModelName(o.model, c);
    ro.tasks = tasks;
    ro.repeats = o.repeats;
    ro.first_repeat = o.first_repeat;
    ro.jobs = std::max(1, o.jobs);
    ro.extra_models = extra_models;
    ro.journal = journal->get();
    ro.out_dir = o.out;
    ro.fingerprint = fp;
    ro.date = Today();
    ro.graph = graph;
    ro.sessions = [&](const agents::Task& t, const agents::SessionNeeds& needs) {
      return OpenTaskSession(o, slurm_mcp, by_task, t, needs);
    };
    bool first_report = true;
    ro.progress = [&](const agents::RunProgress& p) {
      if (first_report) {
        progress.Kept(p.done);  // what the journal kept of this configuration
        first_report = false;
      }
      progress.Update(base + p.done, p.in_flight, p.tokens, p.what);
    };
    // A reference configuration makes no model call: with prices given its cost is a true 0.
    if (prices) ro.price = c.kind == "agent" ? model_price : agents::ModelPrice{};
    ro.prices_file = o.prices;
    ro.cap.max_tokens_total = o.max_tokens_total;
    ro.cap.max_cost_usd = o.max_cost_usd;
    ro.spent_before = spent;
    agents::RunSummary sum = agents::RunSuite(ro);
    spent += sum.spend;
    stopped = sum.stopped;
    base += sum.runs + sum.kept;
    kept += sum.kept;
    made_runs += sum.runs;
    all_calls += sum.mcp_calls;
    all_wall += sum.wall_s;
    for (const std::string& e : sum.errors) {
      std::cerr << "rca-bench: " << (e.rfind("journal: ", 0) == 0 ? "" : "no evidence for ") << e
                << "\n";
    }
    submissions.insert(submissions.end(), sum.submissions.begin(), sum.submissions.end());
  }
  std::cout << "ran " << made_runs << " task run(s) in " << Fixed(all_wall, 1) << " s: " << all_calls
            << " MCP calls (" << (all_wall > 0 ? Fixed(all_calls / all_wall, 1) : "-")
            << " per second)";
  if (kept > 0) std::cout << "; " << kept << " kept from " << (*journal)->path();
  std::cout << "\n";
  std::cout << "spent " << spent.usage.input_tokens << " input tokens ("
            << spent.usage.cached_input_tokens << " cached), " << spent.usage.output_tokens
            << " output tokens over " << spent.model_turns << " model turns and "
            << spent.tool_calls << " tool calls; cost "
            << (spent.cost_usd ? Fixed(*spent.cost_usd, 4) + " USD"
                               : std::string("unmeasured (no --prices)"))
            << "\n";
  if (!stopped.empty()) {
    for (const std::string& s : submissions) std::cout << "wrote " << s << "\n";
    std::cerr << "rca-bench: stopped at cap after " << base << " of " << total
              << " task runs: " << stopped
              << "; the submission it was writing says so in its header and the leaderboard "
                 "refuses it. The run is resumable: run the same command on --out "
              << o.out << " with a larger cap (or none) to finish it\n";
    return kStoppedAtCap;
  }
  if (!o.score) {
    for (const std::string& s : submissions) std::cout << "wrote " << s << "\n";
    return 0;
  }
  return ScoreSubmissions(submissions, suite);
}

int DiagnoseCommand(const DiagnoseOptions& o) {
  if (o.symptom.empty()) return Fail("--symptom is required", kUsage);
  auto c = agents::LoadConfig(agents::ConfigPath(Paths().configs, o.config));
  if (!c.ok()) {
    std::cerr << c.status().message() << "\n";
    return Fail("configuration " + o.config + " is not usable", kUsage);
  }
  if (c->kind == "agent" && o.model.backend.kind.empty()) {
    return Fail("configuration " + o.config + " needs a model: --backend ...", kUsage);
  }
  session::SessionOptions so;
  if (!o.mcp_url.empty()) {
    if (c->tools == "raw") {
      return Fail("configuration " + o.config +
                      " reads Slurm itself (raw commands), which a remote slurm-mcp cannot do; "
                      "drop --mcp-url or pick an MCP configuration",
                  kUsage);
    }
    base::Result<session::SessionOptions::Remote> remote = session::RemoteFromUrl(o.mcp_url);
    if (!remote.ok()) return Fail(remote.status().message(), kUsage);
    if (!o.mcp_tls_ca.empty() && !remote->tls) {
      return Fail("--mcp-tls-ca goes with an https --mcp-url", kUsage);
    }
    remote->ca_file = o.mcp_tls_ca;
    base::Result<mcp::auth::TokenFunction> token =
        mcp::auth::MakeTokenSource(o.mcp_auth, o.mcp_url, "--mcp-");
    if (!token.ok()) return Fail(token.status().message(), kUsage);
    remote->token = *token;
    so.source = session::SessionOptions::Source::kRemote;
    so.remote = *remote;
  }
  std::string slurm_mcp = SlurmMcpPath(o.slurm_mcp);
  if (slurm_mcp.empty() && o.mcp_url.empty()) {
    return Fail("no slurm-mcp next to rca-bench; give --slurm-mcp PATH", kUsage);
  }
  std::unique_ptr<agents::Backend> model;
  if (c->kind == "agent") {
    auto m = agents::MakeBackend(o.model.backend, ProcessEnvironment);
    if (!m.ok()) return Fail("model back-end: " + m.status().ToString(), kUsage);
    model = std::move(m.value());
  }
  auto g = graph::LoadGraphFile(Paths().graph);
  // The cluster flags are checked with --replay too, as they always were.
  if (auto mapped = mcp::LiveOptionsFromFlags(o.cluster); !mapped.ok()) {
    return Fail(mapped.status().message(), kUsage);
  }
  so.slurm_mcp = slurm_mcp;
  if (!o.mcp_url.empty()) {
    // kRemote, set above
  } else if (!o.replay.empty()) {
    so.bundle_dir = o.replay;
    so.offset_s = o.offset_s;
  } else {
    so.source = session::SessionOptions::Source::kCluster;
    so.cluster = o.cluster;
  }
  base::Result<std::unique_ptr<agents::Session>> opened = session::OpenSession(so);
  if (!opened.ok()) {
    // A bundle that does not open is a usage error; a child that does not start is not.
    const base::Status& st = opened.status();
    return Fail(st.message(), st.code() == base::Status::Code::kInvalidArgument ? kUsage : 1);
  }
  std::unique_ptr<agents::Transcript> transcript;
  if (!o.transcript.empty()) {
    auto t = agents::Transcript::Open(o.transcript);
    if (!t.ok()) return Fail(t.status().ToString());
    transcript = std::move(t.value());
  }
  agents::Task task;
  task.task_id = "diagnose";
  task.ticket = o.symptom;
  int calls = 0;
  agents::RunResult r = agents::RunConfigured(
      *c, model.get(), opened->get(), g.graph ? &*g.graph : nullptr, task, transcript.get(),
      &calls);
  Json answer = agents::DiagnosisToJson(r.diagnosis);
  if (o.json) {
    Json j = {{"configuration", c->name},
              {"configuration_hash", c->hash},
              {"answered", r.finished},
              {"end_reason", r.end_reason},
              {"answer", answer},
              {"mcp_calls", calls},
              {"wall_s", r.wall_s}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "root cause   " << r.diagnosis.root_cause << " (confidence "
              << Fixed(r.diagnosis.confidence, 2) << ")\n";
    if (!r.finished) std::cout << "no answer    " << r.end_reason << "\n";
    std::cout << "rationale    " << r.diagnosis.rationale << "\n";
    std::string ro, ac;
    for (const auto& x : r.diagnosis.ruled_out) ro += (ro.empty() ? "" : ", ") + x;
    for (const auto& x : r.diagnosis.actions_proposed) ac += (ac.empty() ? "" : ", ") + x;
    std::cout << "ruled out    " << (ro.empty() ? "-" : ro) << "\n"
              << "actions      " << (ac.empty() ? "-" : ac) << " (proposed only: nothing was changed)\n"
              << "evidence     " << calls << " read-only MCP calls, " << Fixed(r.wall_s, 1) << " s\n";
  }
  return r.finished ? 0 : 1;
}

namespace {

// Adds a part's spend to the merged header: usage summed field by field, cost_usd summed while
// every part has one (else dropped: unmeasured), models_served united.
void MergeSpend(const Json& part, Json* merged) {
  if (merged->contains("usage") && part.contains("usage") && (*merged)["usage"].is_object() &&
      part["usage"].is_object()) {
    for (auto& [k, v] : (*merged)["usage"].items()) {
      const Json& add = part["usage"].value(k, Json());
      if (v.is_number_integer() && add.is_number_integer()) {
        v = v.get<int64_t>() + add.get<int64_t>();
      } else if (v.is_number() && add.is_number()) {
        v = v.get<double>() + add.get<double>();
      }
    }
  } else {
    merged->erase("usage");
  }
  if (merged->contains("cost_usd") && (*merged)["cost_usd"].is_number() &&
      part.contains("cost_usd") && part["cost_usd"].is_number()) {
    (*merged)["cost_usd"] = (*merged)["cost_usd"].get<double>() + part["cost_usd"].get<double>();
  } else {
    merged->erase("cost_usd");
    merged->erase("prices_file");
  }
  if (part.contains("models_served") && part["models_served"].is_array() &&
      merged->contains("models_served") && (*merged)["models_served"].is_array()) {
    std::set<std::string> served;
    const Json& mine = (*merged)["models_served"];
    for (const Json* list : {&mine, &part["models_served"]}) {
      for (const Json& m : *list) {
        if (m.is_string()) served.insert(m.get<std::string>());
      }
    }
    (*merged)["models_served"] = served;
  }
}

}  // namespace

int CollectCommand(const std::string& parts_dir, const std::string& out,
                   const std::vector<sc::Scenario>& suite) {
  std::error_code ec;
  if (!fs::is_directory(parts_dir, ec)) return Fail("no directory " + parts_dir, kUsage);
  std::map<std::string, std::vector<fs::path>> by_stem;
  for (const auto& part : fs::directory_iterator(parts_dir)) {
    if (!part.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(part.path())) {
      if (f.path().extension() == ".jsonl") by_stem[f.path().stem().string()].push_back(f.path());
    }
  }
  if (by_stem.empty()) return Fail("no submission under " + parts_dir + "/*/", 1);
  fs::create_directories(out);
  int problems = 0;
  for (auto& [stem, files] : by_stem) {
    std::sort(files.begin(), files.end());
    std::string header;
    Json merged;  // the header with the parts' spend summed (usage, cost_usd, models_served)
    std::set<std::string> seen;
    std::vector<std::string> answers;
    fs::path tdir = fs::path(out) / (stem + ".transcripts");
    fs::create_directories(tdir);
    // What the parts must agree on: all of the header but the date and what each part spent.
    auto comparable = [](Json h) {
      if (h.is_object()) {
        for (const char* k : {"date", "usage", "cost_usd", "prices_file", "models_served"}) {
          h.erase(k);
        }
      }
      return h;
    };
    for (const fs::path& f : files) {
      std::ifstream in(f);
      std::string line;
      bool first = true;
      while (std::getline(in, line)) {
        if (line.empty()) continue;
        if (first) {
          Json h = Json::parse(line, nullptr, false);
          if (header.empty()) {
            header = line;
            merged = h;
          } else if (comparable(Json::parse(header, nullptr, false)) != comparable(h)) {
            std::cerr << "rca-bench: " << f << ": its header differs from the others of " << stem
                      << "; left out\n";
            ++problems;
            break;
          } else {
            MergeSpend(h, &merged);
          }
          first = false;
          continue;
        }
        Json a = Json::parse(line, nullptr, false);
        std::string id = a.is_object() ? a.value("scenario_id", "") : "";
        if (!seen.insert(id).second) {
          std::cerr << "rca-bench: " << f << ": a second answer to " << id << "; left out\n";
          ++problems;
          continue;
        }
        answers.push_back(line);
      }
      fs::path t = f;
      t.replace_extension(".transcripts");
      if (fs::is_directory(t)) {
        for (const auto& tf : fs::directory_iterator(t)) {
          fs::copy_file(tf.path(), tdir / tf.path().filename(), fs::copy_options::overwrite_existing);
        }
      }
    }
    std::ofstream o(fs::path(out) / (stem + ".jsonl"), std::ios::binary | std::ios::trunc);
    o << (merged.is_object() ? merged.dump() : header) << "\n";
    for (const std::string& a : answers) o << a << "\n";
    std::cout << "collected " << stem << ".jsonl: " << answers.size() << " answer(s) from "
              << files.size() << " part(s)\n";
  }
  std::cout << "next: rca-bench leaderboard " << out << "\n";
  return problems ? 1 : 0;
}

int ConfigsCommand(const std::vector<sc::Scenario>& suite) {
  std::vector<std::string> ids;
  for (const sc::Scenario& s : suite) ids.push_back(s.id);
  int bad = 0;
  std::cout << "| configuration | kind | tools | graph | specialists | abstention | hash | question |\n"
            << "|---|---|---|---|---|---|---|---|\n";
  for (const std::string& name : agents::ConfigNames(Paths().configs)) {
    auto c = agents::LoadConfig(agents::ConfigPath(Paths().configs, name), ids);
    if (!c.ok()) {
      std::cerr << c.status().message() << "\n";
      ++bad;
      continue;
    }
    const auto& x = *c;
    std::string sp;
    for (const auto& s : x.specialists) sp += (sp.empty() ? "" : ", ") + s;
    std::cout << "| " << x.name << " | " << x.kind << (x.kind == "reference" ? " (" + x.reference + ")" : "")
              << " | " << x.tools << " | " << (x.graph ? "yes" : "no") << " | " << (sp.empty() ? "-" : sp)
              << " | " << (x.abstention ? "below " + Fixed(x.abstention->threshold, 2) : "-") << " | "
              << x.hash << " | " << x.question << " |\n";
  }
  return bad ? 1 : 0;
}

int GraphCommand(const std::string& what, const std::string& component, const std::string& severity) {
  auto g = graph::LoadGraphFile(Paths().graph);
  if (!g.graph) {
    for (const auto& e : g.errors) std::cerr << e.ToString() << "\n";
    return Fail("the dependency graph did not load");
  }
  if (what == "stats") {
    std::cout << graph::StatsLine(*g.graph) << "\n";
    return 0;
  }
  if (what == "summary") {
    std::cout << graph::SummaryForAgents(*g.graph);
    return 0;
  }
  auto sev = graph::ParseSeverity(severity);
  if (!sev) return Fail("--severity is halts or degrades", kUsage);
  if (!g.graph->HasNode(component)) {
    std::cout << graph::RenderCausesReport(*g.graph, component, *sev);
    return kUsage;
  }
  std::cout << graph::RenderCausesReport(*g.graph, component, *sev);
  return 0;
}

int FitAbstentionCommand(const std::string& submission, const std::string& config,
                         const std::vector<sc::Scenario>& suite) {
  std::vector<std::string> ids;
  for (const sc::Scenario& s : suite) ids.push_back(s.id);
  auto c = agents::LoadConfig(agents::ConfigPath(Paths().configs, config), ids);
  if (!c.ok()) {
    std::cerr << c.status().message() << "\n";
    return Fail("configuration " + config + " is not usable", kUsage);
  }
  if (!c->abstention) return Fail(config + " declares no abstention", kUsage);
  std::ifstream in(submission, std::ios::binary);
  if (!in) return Fail("cannot read " + submission, kUsage);
  std::stringstream text;
  text << in.rdbuf();
  auto p = ParseSubmission(text.str(), submission, suite);
  if (!p.submission) {
    for (const auto& q : p.problems) std::cout << q.ToString() << "\n";
    return Fail("the submission has problems; nothing was fitted");
  }
  // Fitted on the development split only: the test split ranks the leaderboard.
  std::vector<std::pair<const sc::Scenario*, const Answer*>> dev;
  for (const sc::Scenario& s : suite) {
    if (s.split != c->abstention->development_split || s.status != "runnable") continue;
    const Answer* a = nullptr;
    for (const Answer& x : p.submission->answers) {
      if (x.scenario_id == s.id) a = &x;
    }
    dev.push_back({&s, a});
  }
  std::set<double> candidates = {0.0, 1.0};
  for (const auto& [s, a] : dev) {
    if (a) candidates.insert(a->confidence);
  }
  double best_t = 0, best = -1;
  std::cout << "threshold  depth on the development split (" << dev.size() << " scenarios)\n";
  for (double t : candidates) {
    double sum = 0;
    for (const auto& [s, a] : dev) {
      if (!a) continue;
      sum += s->CreditFor(a->confidence < t ? std::string("unknown") : a->root_cause);
    }
    double depth = dev.empty() ? 0 : sum / dev.size();
    std::cout << Fixed(t, 3) << "      " << Fixed(depth) << "\n";
    if (depth > best + 1e-12) {
      best = depth;
      best_t = t;
    }
  }
  std::cout << "fitted threshold " << Fixed(best_t, 3) << " (depth " << Fixed(best)
            << " on the development split; the lowest threshold reaching it). Record it in "
            << c->file << " with how it was fitted, before any test-split result.\n";
  return 0;
}

}  // namespace slurm_rca::cli
