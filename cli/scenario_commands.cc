// rca-bench validate, list, show, export, inject, heal, record, smoke: the scenarios.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "agents/graph/graph.h"
#include "cli/common.h"
#include "scenarios/live/lab.h"
#include "scenarios/live/runner.h"
#include "scenarios/measure.h"
#include "scenarios/validate.h"
#include "scenarios/views.h"

namespace slurm_rca::cli {
namespace {

namespace sc = slurm_rca::scenarios;
using slurm_rca::live::FaultTarget;
using slurm_rca::live::Lab;
using slurm_rca::live::LabOptions;

int ValidateScenarios(const std::vector<std::string>& args, bool bundles) {
  base::Result<sc::Suite> loaded = LoadScenarios(args);
  if (!loaded.ok()) {
    Fail(loaded.status().message());
    return kUsage;
  }
  sc::Suite suite = std::move(loaded).value();
  std::vector<sc::Problem> problems = suite.problems;
  int hops = 0, measured = 0;
  std::ostringstream other_sets;
  if (bundles) {
    // Every set is measured; only the default one must hold every scenario (a missing bundle is
    // a problem there), another's missing bundles are counted. Problems of another set say so.
    for (const std::string& set : sc::BundleSets()) {
      bool is_default = set == sc::DefaultBundleSet();
      int recorded = 0, set_hops = 0, set_measured = 0, runnable = 0, not_shown = 0;
      const std::string release = sc::BundleSetRelease(set);
      for (const sc::Scenario& s : suite.scenarios) {
        // A task of its own lab (large, hosts) has one bundle, in its own set: measured with the
        // default set.
        if (!s.OwnSet().empty() && !is_default) continue;
        runnable += s.status == "runnable";
        if (s.status == "runnable" && !s.NotShownOn(release).empty()) {
          // Not part of this set; a bundle recorded anyway must not show it after all.
          ++not_shown;
          if (!sc::RecordedIn(s, set)) continue;
          for (sc::Problem& p :
               sc::MeasurementProblems(s, sc::MeasureScenario(s, sc::BundleOf(s, set)))) {
            p.message = set + " set: " + p.message;
            problems.push_back(std::move(p));
          }
          continue;
        }
        if (!is_default && (s.status != "runnable" || !sc::RecordedIn(s, set))) continue;
        recorded += s.status == "runnable";
        sc::Measurement m = sc::MeasureScenario(s, sc::BundleOf(s, set));
        for (sc::Problem& p : sc::MeasurementProblems(s, m)) {
          if (!is_default) p.message = set + " set: " + p.message;
          problems.push_back(std::move(p));
        }
        for (const sc::HopResult& h : m.hops) {
          ++set_hops;
          set_measured += h.measured;
        }
      }
      if (is_default) {
        hops = set_hops;
        measured = set_measured;
      } else {
        other_sets << "; " << set << " (Slurm " << release << "): " << recorded << " of "
                   << runnable - not_shown << " recorded, " << set_measured << " of " << set_hops
                   << " hops measured";
        if (not_shown > 0) other_sets << ", " << not_shown << " not shown on " << release;
      }
    }
  }
  if (args.empty()) {
    for (sc::Problem& p : sc::SuiteMinimum(suite.scenarios, Paths().scenarios)) {
      problems.push_back(std::move(p));
    }
  }
  // Scenarios written after the graph's freeze use none of the edges it measures.
  auto freeze = slurm_rca::graph::ReadFreeze(slurm_rca::graph::FreezePathFor(Paths().graph));
  auto graph = slurm_rca::graph::LoadGraphFile(Paths().graph);
  if (!freeze.ok() || !graph.graph) {
    problems.push_back({slurm_rca::graph::FreezePathFor(Paths().graph), 0, "post-freeze-edge",
                        freeze.ok() ? "the graph does not load" : freeze.status().message()});
  } else {
    for (sc::Problem& p :
         slurm_rca::graph::PostFreezeProblems(*graph.graph, *freeze, suite.scenarios)) {
      problems.push_back(std::move(p));
    }
  }
  for (const sc::Problem& p : problems) std::cout << p.ToString() << "\n";
  int runnable = 0, large = 0, hosts = 0;
  for (const sc::Scenario& s : suite.scenarios) {
    runnable += s.status == "runnable";
    large += s.status == "runnable" && s.Large();
    hosts += s.status == "runnable" && s.Hosts();
  }
  std::cerr << suite.scenarios.size() << " scenario(s), " << runnable << " runnable";
  if (bundles) {
    std::cerr << ", " << measured << " of " << hops << " hops measured in their "
              << sc::DefaultBundleSet() << " bundles"
              << (large > 0 ? " (" + std::to_string(large) + " large-profile tasks' in the " +
                                  sc::kLargeSet + " set)"
                            : std::string())
              << (hosts > 0 ? " (" + std::to_string(hosts) + " lab-of-hosts tasks' in the " +
                                  sc::kHostsSet + " set)"
                            : std::string())
              << other_sets.str();
  }
  std::cerr << ", " << problems.size() << " problem(s)\n";
  return problems.empty() ? 0 : 1;
}

int ListScenarios() {
  base::Result<sc::Suite> loaded = LoadScenarios({});
  if (!loaded.ok()) {
    Fail(loaded.status().message());
    return kUsage;
  }
  sc::Suite suite = std::move(loaded).value();
  // Every set, the default first (fewest calls is read from it), the others for comparison.
  std::vector<sc::SetMeasurements> sets = {
      {sc::DefaultBundleSet(), sc::MeasureSuite(suite.scenarios, sc::DefaultBundleSet())}};
  for (const std::string& set : sc::BundleSets()) {
    if (set != sc::DefaultBundleSet())
      sets.push_back({set, sc::MeasureSuite(suite.scenarios, set)});
  }
  std::cout << sc::ScenarioTable(suite.scenarios, sets);
  if (!suite.problems.empty()) {
    std::cerr << "rca-bench: " << suite.problems.size() << " problem(s); run rca-bench validate\n";
    return 1;
  }
  return 0;
}

int ExportScenarios(const std::string& view) {
  base::Result<sc::Suite> loaded = LoadScenarios({});
  if (!loaded.ok()) {
    Fail(loaded.status().message());
    return kUsage;
  }
  sc::Suite suite = std::move(loaded).value();
  if (!suite.problems.empty()) {
    std::cerr << "rca-bench: " << suite.problems.size() << " problem(s); run rca-bench validate\n";
    return 1;
  }
  std::cout << sc::ExportView(suite.scenarios, sc::MeasureSuite(suite.scenarios),
                              view == "agent" ? sc::View::kAgent : sc::View::kScorer)
                   .dump(2)
            << "\n";
  return 0;
}

int ShowScenario(const std::string& id) {
  base::Result<sc::Suite> loaded = LoadScenarios({});
  if (!loaded.ok()) {
    Fail(loaded.status().message());
    return kUsage;
  }
  sc::Suite suite = std::move(loaded).value();
  const sc::Scenario* found = FindScenario(suite, id);
  if (!found) return kUsage;
  const sc::Scenario& s = *found;
  sc::Measurement m = sc::MeasureScenario(s, sc::BundleOf(s));
  std::cout << s.id << ": " << s.title << "\n  task id:    " << s.TaskId()
            << "\n  file:       " << s.file << "\n  family:     " << s.family << ", "
            << s.difficulty << ", " << s.status
            << (s.blocked_reason.empty() ? "" : " (" + s.blocked_reason + ")")
            << "\n  reported:   " << s.reported_node << "\n  root cause: " << s.RootCause()
            << "\n  observe_s:  " << s.observe_s << " (propagation " << s.PropagationS()
            << " s)\n  bundle:     "
            << (m.error.empty() ? m.bundle + " (" + std::to_string(m.trials) + " trials)" : m.error);
  for (const auto& [release, why] : s.not_shown_on) {
    std::cout << "\n  not shown:  on " << release << ": " << why;
  }
  std::cout << "\n  ticket:     " << s.symptom << "\n  injection:  " << s.injection
            << "\n  faults:";
  for (const sc::FaultRef& f : s.faults) {
    std::cout << " " << f.name;
    for (const auto& [k, v] : f.target) std::cout << " --" << k << " " << v;
    if (f.at_s) std::cout << " at +" << f.at_s << " s";
    if (f.heal_at_s) std::cout << " healed at +" << *f.heal_at_s << " s";
    std::cout << ";";
  }
  std::cout << "\n  workload:";
  for (const sc::Workload& w : s.workload) {
    std::cout << " " << w.count << " x " << w.name << " (" << w.kind << ") at " << w.at_s << " s;";
  }
  std::cout << "\n  causal chain:\n";
  for (size_t i = 0; i < s.causal_chain.size(); ++i) {
    const sc::Hop& h = s.causal_chain[i];
    std::cout << "    t+" << h.observable_at_s << "s " << h.node << " (" << h.state << ")";
    if (i < m.hops.size()) {
      std::cout << (m.hops[i].measured ? "  MEASURED " : "  NOT MEASURED ") << m.hops[i].detail;
    }
    std::cout << "\n";
    for (const sc::Item& e : h.evidence) std::cout << "      - " << e.value << "\n";
  }
  std::cout << "  credit:\n";
  for (const sc::Credit& c : s.scoring) {
    std::cout << "    " << std::left << std::setw(22) << c.node << std::setw(6) << c.credit
              << c.rationale << "\n";
  }
  for (const sc::NodeNote& r : s.ruled_out) {
    std::cout << "  ruled out:  " << r.node << ": " << r.why << "\n";
  }
  for (const sc::NodeNote& d : s.distractors) {
    std::cout << "  distractor: " << d.node << ": " << d.why << "\n";
  }
  if (s.remediation_helpful) {
    for (const sc::Item& a : *s.remediation_helpful)
      std::cout << "  helpful:    " << a.value << "\n";
  }
  for (const sc::Item& a : s.harmful_actions) std::cout << "  harmful:    " << a.value << "\n";
  if (s.verification) std::cout << "  caveats:    " << s.verification->caveats << "\n";
  for (const sc::Problem& p : suite.problems) {
    if (p.file == s.file) std::cout << "  problem:    " << p.ToString() << "\n";
  }
  return 0;
}

class ScenarioCommands : public CommandGroup {
 public:
  explicit ScenarioCommands(CLI::App& app) {
    auto add_dir = [&](CLI::App* c) { AddLabDir(c, &options.dir); };
    validate = app.add_subcommand(
        "validate",
        "Check scenarios: schema, invariants, ticket leaks, and that each hop's signals show in "
        "its recorded bundle (fixtures/<id>); file:line: rule: message");
    validate->add_option(
        "paths", validate_paths,
        "scenario.yaml files or directories (default: every scenarios/*/scenario.yaml, plus the "
        "suite minima)");
    validate->add_flag("--no-bundles", no_bundles, "Skip the bundles (schema and invariants only)");
    list = app.add_subcommand(
        "list", "The scenario table of the README: family, root cause, hops measured, timings");
    show = app.add_subcommand("show", "One scenario in full (ground truth included)");
    show->add_option("id", show_id, "Scenario id or task id")->required();
    export_cmd = app.add_subcommand(
        "export", "The suite as JSON: --view agent (task ids and tickets only) or scorer (all)");
    export_cmd->add_option("--view", view, "agent or scorer")
        ->check(CLI::IsMember({"agent", "scorer"}))
        ->capture_default_str();

    sinject = app.add_subcommand(
        "inject", "Inject a scenario's faults and submit its workload into the lab (idempotent)");
    add_dir(sinject);
    sinject->add_option("id", ids, "Scenario id")->required()->expected(1);
    sheal = app.add_subcommand(
        "heal", "Heal a scenario's faults and cancel its jobs, or every scenario's (--all)");
    add_dir(sheal);
    sheal->add_option("id", ids, "Scenario id")->expected(0, 1);
    sheal->add_flag("--all", all, "Heal every scenario");
    srecord = app.add_subcommand(
        "record",
        "Record scenarios' evidence bundles into fixtures/<id>: each trial in a fresh private lab "
        "(port base + 1000 per trial), every slurm-mcp topic at scheduled offsets");
    srecord->add_option("ids", ids, "Scenario ids");
    srecord->add_flag("--all", all, "Every runnable scenario");
    srecord->add_option("--trials", rec.trials, "Trials per scenario")
        ->check(CLI::Range(1, 10))
        ->capture_default_str();
    srecord->add_option("--jobs", rec.jobs, "Trials run at once")
        ->check(CLI::Range(1, 4))
        ->capture_default_str();
    srecord->add_option("--port-base", rec.port_base, "Port base of the first trial's lab")
        ->check(CLI::Range(1024, 60000))
        ->capture_default_str();
    srecord->add_option("--fixtures", rec.fixtures,
                        "Bundle root (default: the source tree's fixtures)");
    srecord->add_option("--work-dir", rec.work_dir,
                        "Where the trials' labs and bundles are kept for --reuse (default /tmp)");
    srecord->add_flag("--reuse", rec.reuse_trials,
                      "Re-derive the timings from the trials a previous run left in /tmp");
    srecord->add_option("--timeout", rec.read_timeout_seconds, "Seconds before a read is killed")
        ->check(CLI::Range(1.0, 120.0))
        ->capture_default_str();
    AddProfile(srecord, &rec.profile, &rec.seed);
    AddSlurm(srecord, &rec.slurm_prefix);
    smoke_options.lab.dir = "/tmp/rca-bench-smoke";
    smoke_options.lab.port_base = 29800;
    smoke = app.add_subcommand(
        "smoke",
        "For each scenario, in a fresh private lab: check its first hop's signals do not hold yet, "
        "inject it, watch them through the slurm-mcp live back-end, heal it, take the lab down");
    smoke->add_option("ids", ids, "Scenario ids (default: every runnable one)");
    smoke
        ->add_option("--window", window,
                     "Seconds to wait for the first hop (a scenario's observe_s when longer)")
        ->check(CLI::Range(5, 600))
        ->capture_default_str();
    smoke
        ->add_option("--dir", smoke_options.lab.dir,
                     "Folder of the labs (one per slot: DIR/1, DIR/2, ...)")
        ->capture_default_str();
    smoke
        ->add_option("--port-base", smoke_options.lab.port_base,
                     "Port base of the first slot's lab (slot k: + 1000 k)")
        ->check(CLI::Range(1024, 60000))
        ->capture_default_str();
    smoke
        ->add_option("--jobs", smoke_options.jobs,
                     "Scenarios smoked at once, each in a fresh lab of its own")
        ->check(CLI::Range(1, 4))
        ->capture_default_str();
    AddProfile(smoke, &smoke_options.lab.profile, &smoke_options.lab.seed);
    AddSlurm(smoke, &smoke_options.lab.slurm_prefix);
  }

  std::optional<int> Run() override {
    if (*validate) return ValidateScenarios(validate_paths, !no_bundles);
    if (*list) return ListScenarios();
    if (*show) return ShowScenario(show_id);
    if (*export_cmd) return ExportScenarios(view);
    if (*sinject || *sheal || *srecord || *smoke) {
      base::Result<sc::Suite> loaded = LoadScenarios({});
      if (!loaded.ok()) {
        Fail(loaded.status().message());
        return kUsage;
      }
      sc::Suite suite = std::move(loaded).value();
      if (!suite.problems.empty()) {
        for (const sc::Problem& p : suite.problems) std::cerr << p.ToString() << "\n";
        return Fail("the suite has problems; fix them first (rca-bench validate)");
      }
      std::vector<const sc::Scenario*> chosen;
      if (all || (*smoke && ids.empty())) {
        for (const sc::Scenario& s : suite.scenarios) {
          if (s.status == "runnable") chosen.push_back(&s);
        }
      } else {
        for (const std::string& id : ids) {
          const sc::Scenario* s = FindScenario(suite, id);
          if (!s) return kUsage;
          chosen.push_back(s);
        }
      }
      if (chosen.empty()) {
        std::cerr << "rca-bench: name a scenario or --all (see rca-bench list)\n";
        return kUsage;
      }
      if (*srecord) {
        for (const sc::Scenario* s : chosen) {
          if (s->lab && (srecord->get_option("--profile")->count() > 0 ||
                         srecord->get_option("--slurm")->count() > 0)) {
            Fail(s->id + " is recorded on its own lab (lab: " + s->lab->profile + ", " +
                 std::to_string(s->lab->nodes) + " nodes, Debian's Slurm): --profile and --slurm "
                 "do not apply");
            return kUsage;
          }
        }
        // Every scenario is tried; the failures are reported together at the end.
        std::string failed;
        for (const sc::Scenario* s : chosen) {
          std::cout << "recording " << s->id << " (" << rec.trials << " trials, observe "
                    << s->observe_s << " s"
                    << (s->lab ? ", on the " + s->lab->profile + " lab of " +
                                     std::to_string(s->lab->nodes) + " nodes"
                               : std::string())
                    << ")\n";
          std::cout.flush();
          slurm_rca::base::Status st = slurm_rca::live::RecordScenario(*s, rec, std::cout);
          if (!st.ok()) {
            std::cout << "FAILED " << s->id << ": " << st.message() << "\n";
            failed += " " + s->id;
          }
          std::cout.flush();
          if (slurm_rca::live::Interrupted()) {
            Fail("interrupted; not recorded:" + failed);
            return 128 + slurm_rca::live::Interrupted();
          }
        }
        if (!failed.empty()) return Fail("not recorded:" + failed);
        return 0;
      }
      if (*smoke) {
        // The smoke's labs are 4-node ones: a large-profile scenario is measured by its
        // recording (rca-bench record), not smoked.
        std::vector<const sc::Scenario*> small;
        for (const sc::Scenario* s : chosen) {
          if (!s->lab) {
            small.push_back(s);
          } else if (!ids.empty()) {
            Fail(s->id + " needs the " + s->lab->profile +
                 " lab; the smoke runs 4-node labs (rca-bench record measures it)");
            return kUsage;
          } else {
            std::cout << "not smoked: " << s->id << " (lab: " << s->lab->profile << ", "
                      << s->lab->nodes << " nodes; rca-bench record measures it)\n";
          }
        }
        chosen = std::move(small);
        smoke_options.window_s = window;
        int missed = slurm_rca::live::SmokeSuite(chosen, smoke_options, std::cout);
        if (slurm_rca::live::Interrupted()) return 128 + slurm_rca::live::Interrupted();
        return missed == 0 ? 0 : 1;
      }
      Lab lab(options);
      if (!lab.exists()) return Fail("no lab in " + options.dir + " (rca-bench cluster up)");
      // A large-lab scenario in a smaller lab (LabMisfit): named, it is refused as a usage
      // error; under --all, heal passes it by and says so.
      auto misfit = [&](const sc::Scenario& s) {
        return slurm_rca::live::LabMisfit(lab.options(), s);
      };
      if (*sinject) {
        if (std::string why = misfit(*chosen[0]); !why.empty()) {
          Fail(why + " (rca-bench record brings its lab up)");
          return kUsage;
        }
        slurm_rca::base::Status st = slurm_rca::live::InjectScenario(lab, *chosen[0], std::cout);
        return st.ok() ? 0 : Fail(st.message());
      }
      std::vector<sc::Scenario> heal_list;
      for (const sc::Scenario* s : chosen) {
        if (std::string why = misfit(*s); why.empty()) {
          heal_list.push_back(*s);
        } else if (!all) {
          Fail(why);
          return kUsage;
        } else {
          std::cout << "not healed: " << why << "\n";
        }
      }
      slurm_rca::base::Status st = slurm_rca::live::HealAll(lab, heal_list, std::cout);
      if (st.ok()) std::cout << "healed " << heal_list.size() << " scenario(s)\n";
      return st.ok() ? 0 : Fail(st.message());
    }
    return std::nullopt;
  }

 private:
  LabOptions options{.dir = DefaultDir()};
  std::vector<std::string> validate_paths;
  bool no_bundles = false;
  CLI::App* validate = nullptr;
  CLI::App* list = nullptr;
  std::string show_id;
  CLI::App* show = nullptr;
  std::string view = "agent";
  CLI::App* export_cmd = nullptr;
  std::vector<std::string> ids;
  bool all = false;
  CLI::App* sinject = nullptr;
  CLI::App* sheal = nullptr;
  slurm_rca::live::ScenarioRecordOptions rec;
  CLI::App* srecord = nullptr;
  int window = 45;
  slurm_rca::live::SmokeSuiteOptions smoke_options;
  CLI::App* smoke = nullptr;
};

}  // namespace

std::unique_ptr<CommandGroup> AddScenarioCommands(CLI::App& app) {
  return std::make_unique<ScenarioCommands>(app);
}

}  // namespace slurm_rca::cli
