// scenario_test: the vocabulary, the strict parser and every invariant. Each file of
// scenarios/testdata/broken/ says in its header (`# deny RULE at LINE`, testing/README.md) the
// diagnostics it must get; the one corpus runner asserts it gets exactly those, and the example
// scenarios pass.
#include "scenarios/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "scenarios/live/faults.h"
#include "scenarios/validate.h"
#include "scenarios/views.h"
#include "scenarios/vocabulary.h"
#include "testing/corpus.h"

namespace slurm_rca::scenarios {
namespace {

namespace fs = std::filesystem;

const std::string kSource = SLURM_RCA_SOURCE_DIR;
const std::string kBroken = kSource + "/scenarios/testdata/broken";

// The broken corpus through the one corpus runner (testing/corpus.h): each file's header says
// which diagnostics CheckFile must give it, with their lines.
const base::CorpusReport& BrokenCorpus() {
  static const base::CorpusReport report =
      base::RunCorpus({.path = kBroken, .extension = ".yaml"}, [](const base::CorpusCase& c) {
        std::vector<Problem> problems = CheckFile(c.path);
        for (const Problem& p : problems) {
          EXPECT_EQ(p.file, c.path);
          EXPECT_GT(p.line, 0) << p.ToString();
        }
        return problems;
      });
  return report;
}

TEST(Vocabulary, SeedComponentsPlusMunge) {
  const auto& c = Components();
  EXPECT_EQ(c.size(), 14u);
  for (size_t i = 1; i < c.size(); ++i) EXPECT_LT(c[i - 1].id, c[i].id);
  for (const char* id :
       {"storage.shared_fs", "storage.state_save", "db.mysql", "slurm.slurmdbd", "slurm.slurmctld",
        "slurm.scheduler", "slurm.slurmd", "slurm.config", "gpu.device", "gpu.driver",
        "fabric.interconnect", "network.control_plane", "unknown", "auth.munge"}) {
    EXPECT_TRUE(IsComponent(id)) << id;
  }
  for (const Component& x : c) EXPECT_FALSE(x.meaning.empty()) << x.id;
  EXPECT_FALSE(IsComponent("slurm.partition"));
}

TEST(Vocabulary, Actions) {
  base::Result<Action> a = ParseAction("repair:storage.state_save");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->verb, "repair");
  EXPECT_EQ(a->component, "storage.state_save");
  EXPECT_EQ(ParseAction("repair").status().message(), "action 'repair' is not verb:component");
  EXPECT_FALSE(ParseAction("reboot:slurm.slurmd").ok());
  EXPECT_EQ(ParseAction("restart:slurm.nothing").status().message(),
            "action 'restart:slurm.nothing': unknown component");
  EXPECT_EQ(ParseAction("investigate:unknown").status().message(),
            "action 'investigate:unknown': cannot act on unknown");
}

TEST(Vocabulary, FaultsMirrorTheLiveCatalog) {
  const auto& catalog = live::FaultCatalog();
  ASSERT_EQ(catalog.size(), FaultPrimitives().size());
  for (size_t i = 0; i < catalog.size(); ++i) {
    const FaultPrimitive& p = FaultPrimitives()[i];
    EXPECT_EQ(catalog[i].name, p.name);
    std::string options;
    for (std::string_view o : p.options)
      options += (options.empty() ? "--" : " --") + std::string(o);
    EXPECT_EQ(catalog[i].options, options) << p.name;
  }
}

TEST(Scenarios, ExamplesValidate) {
  auto paths = ScenarioPaths(kSource + "/scenarios");
  ASSERT_GE(paths.size(), 3u);
  Suite suite = LoadSuite(paths);
  for (const Problem& p : suite.problems) ADD_FAILURE() << p.ToString();
  // One scenario per file, and one more per variant.
  size_t instances = 0;
  for (const std::string& p : paths) instances += LoadScenarioFile(p).Instances().size();
  EXPECT_EQ(suite.scenarios.size(), instances);
  EXPECT_GT(instances, paths.size());
  for (const Scenario& s : suite.scenarios) {
    EXPECT_EQ(s.status, "runnable") << s.id;
    EXPECT_TRUE(!s.faults.empty() || !s.workload.empty()) << s.id;
    for (const Hop& h : s.causal_chain) EXPECT_FALSE(h.signals.empty()) << s.id;
  }
  EXPECT_TRUE(SuiteMinimum(suite.scenarios, "suite").empty());
}

TEST(Scenarios, BrokenCorpusTriggersExactlyItsRule) {
  testing::ExpectCorpusPasses(BrokenCorpus());
  for (const base::CaseResult& r : BrokenCorpus().cases) {
    EXPECT_FALSE(r.c.expect.allow) << r.c.name << ": a broken file must be refused";
  }
}

TEST(Scenarios, EveryRuleHasABrokenFile) {
  const std::set<std::string> covered = BrokenCorpus().Rules();
  // Rules that need more than one file or a directory are covered by the tests below.
  // Rules about bundles and the whole suite are covered by measure_test and the tests below.
  const std::set<std::string> elsewhere = {"id-dir",          "duplicate-id",   "duplicate-canary",
                                           "duplicate-task-id", "suite-minimum", "bundle-missing",
                                           "hop-unmeasured",  "blocked-measured",
                                           "not-shown-measured",
                                           // measure_test, the split test below, graph_test
                                           "herring-unmeasured", "split-missing",
                                           "post-freeze-edge"};
  for (const RuleInfo& r : Rules()) {
    if (elsewhere.count(std::string(r.id))) continue;
    EXPECT_TRUE(covered.count(std::string(r.id))) << "no broken file for rule " << r.id;
  }
  for (const std::string& c : covered) {
    bool known =
        std::any_of(Rules().begin(), Rules().end(), [&](const RuleInfo& r) { return r.id == c; });
    EXPECT_TRUE(known) << "unknown rule " << c;
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Scenarios, IdMustMatchDirectory) {
  fs::path dir = fs::temp_directory_path() / ("scenario_test_" + std::to_string(::getpid()));
  fs::create_directories(dir / "S99-elsewhere");
  std::string good = kSource + "/scenarios/S06-state-save-unwritable/scenario.yaml";
  fs::copy_file(good, dir / "S99-elsewhere" / "scenario.yaml");
  auto problems = CheckFile((dir / "S99-elsewhere" / "scenario.yaml").string());
  fs::remove_all(dir);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].rule, "id-dir");
  EXPECT_EQ(problems[0].line, 2);
}

TEST(Scenarios, SuiteRejectsDuplicateIdsAndCanaries) {
  std::string good = kSource + "/scenarios/S06-state-save-unwritable/scenario.yaml";
  Suite suite = LoadSuite({good, good});
  std::set<std::string> rules;
  for (const Problem& p : suite.problems) rules.insert(p.rule);
  EXPECT_EQ(rules,
            (std::set<std::string>{"duplicate-id", "duplicate-canary", "duplicate-task-id"}));
}

TEST(Scenarios, TaskIdIsTheCanarysSha256) {
  LoadResult r =
      LoadScenarioFile(kSource + "/scenarios/S01-accounting-backend-stall/scenario.yaml");
  ASSERT_TRUE(r.scenario);
  EXPECT_EQ(r.scenario->TaskId(), "T-8018cbddf2");  // the seed's README example
}

TEST(Scenarios, SuiteMinimumCountsRunnableKinds) {
  LoadResult r = LoadScenarioFile(kSource + "/scenarios/S06-state-save-unwritable/scenario.yaml");
  ASSERT_TRUE(r.scenario);
  std::vector<Problem> p = SuiteMinimum({*r.scenario}, "x");
  std::string all;
  for (const Problem& q : p) {
    EXPECT_EQ(q.rule, "suite-minimum");
    all += q.message + "\n";
  }
  EXPECT_NE(all.find("1 runnable tasks (at least " + std::to_string(kMinRunnable) + ")"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("0 runnable scenarios with a red herring (at least 4)"), std::string::npos)
      << all;
  EXPECT_NE(all.find("0 runnable scenarios written after the graph's freeze (at least 6)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("0 runnable undiagnosable"), std::string::npos) << all;
  EXPECT_NE(all.find("0 runnable multi_layer"), std::string::npos) << all;
  EXPECT_NE(all.find("family gpu"), std::string::npos) << all;
  EXPECT_EQ(all.find("family storage"), std::string::npos) << all;
}

// Red herrings and post-freeze scenarios are counted by scenario file: variants of one incident
// (another node, another partition) are not further experiments.
TEST(Scenarios, SuiteMinimumCountsHerringsAndPostFreezeByScenarioNotVariant) {
  LoadResult r = LoadScenarioFile(kSource + "/scenarios/S06-state-save-unwritable/scenario.yaml");
  ASSERT_TRUE(r.scenario);
  Scenario s = *r.scenario;
  s.red_herrings.push_back(RedHerring{s.causal_chain.front(), "another incident", 0});
  s.post_freeze = "graph-v1";
  std::vector<Scenario> suite;
  for (const char* v : {"", "a", "b", "c", "d", "e", "f"}) {
    Scenario one = s;
    one.base_id = "S90-one";
    one.id = std::string("S90-one") + (*v ? std::string("@") + v : "");
    suite.push_back(one);
  }
  auto messages = [](const std::vector<Problem>& p) {
    std::string all;
    for (const Problem& q : p) all += q.message + "\n";
    return all;
  };
  std::string all = messages(SuiteMinimum(suite, "x"));
  EXPECT_NE(all.find("1 runnable scenarios with a red herring (at least 4)"), std::string::npos)
      << all;
  EXPECT_NE(all.find("1 runnable scenarios written after the graph's freeze"), std::string::npos)
      << all;
  for (int k = 2; k <= 6; ++k) {
    Scenario other = s;
    other.base_id = other.id = "S9" + std::to_string(k) + "-other";
    suite.push_back(other);
  }
  all = messages(SuiteMinimum(suite, "x"));
  EXPECT_EQ(all.find("red herring"), std::string::npos) << all;
  EXPECT_EQ(all.find("graph's freeze"), std::string::npos) << all;
}

// Issue #17: every runnable single_layer scenario has two variants, or says in
// variants_exhausted why its parameters allow no more; a stale variants_exhausted is a problem too.
TEST(Scenarios, SuiteMinimumWantsTwoVariantsPerSingleLayerScenario) {
  LoadResult r = LoadScenarioFile(kSource + "/scenarios/S06-state-save-unwritable/scenario.yaml");
  ASSERT_TRUE(r.scenario);
  ASSERT_GE(r.variants.size(), 2u);
  const Scenario& base = *r.scenario;
  auto variant_problems = [](const std::vector<Scenario>& suite) {
    std::string all;
    for (const Problem& q : SuiteMinimum(suite, "x")) {
      if (q.message.find("variant") != std::string::npos) all += q.message + "\n";
    }
    return all;
  };
  EXPECT_EQ(variant_problems({base, r.variants[0], r.variants[1]}), "");
  std::string one = variant_problems({base, r.variants[0]});
  EXPECT_NE(one.find("S06-state-save-unwritable is single_layer with 1 variant(s): at least 2"),
            std::string::npos)
      << one;
  Scenario exhausted = base;
  exhausted.variants_exhausted = "the lab has two GPU nodes and the scenario needs both";
  EXPECT_EQ(variant_problems({exhausted, r.variants[0]}), "");
  std::string stale = variant_problems({exhausted, r.variants[0], r.variants[1]});
  EXPECT_NE(stale.find("has 2 variants: its variants_exhausted is stale"), std::string::npos)
      << stale;
  Scenario multi = base;
  multi.difficulty = "multi_layer";
  EXPECT_EQ(variant_problems({multi}), "");
  Scenario blank = base;
  blank.variants_exhausted = "  ";
  EXPECT_NE(variant_problems({blank}).find("with 0 variant(s)"), std::string::npos);
}

TEST(Scenarios, DuplicateKeysAreRejected) {
  std::string text = ReadFile(kSource + "/scenarios/S06-state-save-unwritable/scenario.yaml");
  text += "observe_s: 30\n";
  LoadResult r = ParseScenario(text, "x.yaml");
  bool found = false;
  for (const Problem& p : r.problems) found = found || p.rule == kRuleDuplicateKey;
  EXPECT_TRUE(found);
}

TEST(Scenarios, ProblemsCarryTheLine) {
  std::string text = ReadFile(kSource + "/scenarios/S06-state-save-unwritable/scenario.yaml");
  text += "colour: blue\n";
  LoadResult r = ParseScenario(text, "x.yaml");
  ASSERT_EQ(r.problems.size(), 1u);
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  EXPECT_EQ(r.problems[0].line, lines);
  EXPECT_EQ(r.problems[0].rule, "unknown-key");
  EXPECT_EQ(r.problems[0].ToString().rfind("x.yaml:" + std::to_string(lines) + ": unknown-key:", 0),
            0u);
}

TEST(Scenarios, AnEmptyValueIsReportedAtItsKey) {
  std::string f = kBroken + "/wrong-type-chain-null.yaml";
  std::string text = ReadFile(f);
  int key_line = 1 + static_cast<int>(std::count(
                         text.begin(), text.begin() + text.find("\ncausal_chain:") + 1, '\n'));
  auto problems = CheckFile(f);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].line, key_line);
}

TEST(Scenarios, SchemaDocNamesEveryRuleAndComponent) {
  std::string doc = ReadFile(kSource + "/scenarios/SCHEMA.md");
  for (const RuleInfo& r : Rules()) {
    EXPECT_NE(doc.find("`" + std::string(r.id) + "`"), std::string::npos) << r.id;
  }
  for (const Component& c : Components()) {
    EXPECT_NE(doc.find("`" + std::string(c.id) + "`"), std::string::npos) << c.id;
  }
}

// S16 as shipped: its partition is a parameter, and the variant `cpu` takes the other one.
std::string S16WithVariant() { return ReadFile(kSource + "/scenarios/S16-partition-down/scenario.yaml"); }

TEST(Scenarios, VariantsExpandToTheirOwnTasks) {
  LoadResult r = ParseScenario(S16WithVariant(), "S16-partition-down/scenario.yaml");
  ASSERT_TRUE(r.scenario) << (r.problems.empty() ? "" : r.problems[0].ToString());
  ASSERT_EQ(r.variants.size(), 2u);
  const Scenario& base = *r.scenario;
  const Scenario& v = r.variants[0];
  // The base keeps its id and task id; the variant has its own, and inherits the split.
  EXPECT_EQ(base.id, "S16-partition-down");
  EXPECT_EQ(base.TaskId(), "T-6fb88746ce");
  EXPECT_EQ(v.id, "S16-partition-down@cpu");
  EXPECT_EQ(v.base_id, "S16-partition-down");
  EXPECT_EQ(v.variant, "cpu");
  EXPECT_NE(v.TaskId(), base.TaskId());
  EXPECT_EQ(v.split, base.split);
  EXPECT_FALSE(v.split.empty());
  // The values reach the faults, the workload and the signals.
  ASSERT_FALSE(v.faults.empty());
  EXPECT_EQ(v.faults[0].target[0], (std::pair<std::string, std::string>{"partition", "cpu"}));
  EXPECT_EQ(v.workload[0].partition, "cpu");
  EXPECT_EQ(base.workload[0].partition, "gpu");
  EXPECT_NE(v.causal_chain[0].signals[1].match.find("PartitionName=cpu"), std::string::npos);
  EXPECT_EQ(v.parameters,
            (Parameters{{"partition", "cpu"},
                        {"kind", "CPU"},
                        {"other", "GPU"},
                        {"all", "all"},
                        {"account", "research"}}));
  EXPECT_EQ(base.parameters,
            (Parameters{{"partition", "gpu"},
                        {"kind", "GPU"},
                        {"other", "CPU"},
                        {"all", "both"},
                        {"account", "research"}}));
  // The second variant changes only the account of the jobs.
  const Scenario& ops = r.variants[1];
  EXPECT_EQ(ops.id, "S16-partition-down@ops-jobs");
  EXPECT_EQ(ops.workload[0].account, "ops");
  EXPECT_EQ(ops.workload[0].partition, "gpu");
  EXPECT_EQ(base.workload[0].account, "research");
  EXPECT_NE(v.symptom.find("CPU jobs submitted"), std::string::npos) << v.symptom;
  EXPECT_EQ(v.symptom.find("${"), std::string::npos) << v.symptom;
  // All validate; the suite holds three tasks with distinct ids and task ids.
  EXPECT_TRUE(Validate(base).empty());
  EXPECT_TRUE(Validate(v).empty());
  EXPECT_TRUE(Validate(ops).empty());
  EXPECT_EQ(r.Instances().size(), 3u);
}

TEST(Scenarios, AVariantsOwnValuesCanBreakARule) {
  std::string text = S16WithVariant();
  // A value YAML would misread is refused before it reaches the text.
  std::string bad = text;
  bad.replace(bad.find("      partition: cpu\n", bad.find("variants:")), 21, "      partition: 'a b'\n");
  LoadResult r = ParseScenario(bad, "x.yaml");
  EXPECT_FALSE(r.scenario);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_EQ(r.problems[0].rule, kRuleParameter);
  // Two variants of the same name.
  text += "  - name: cpu\n    canary: 4e0c2a55-90a8-4a55-8f0e-2b7b1c5a6f02\n    set:\n"
          "      partition: debug\n      kind: GPU\n";
  r = ParseScenario(text, "x.yaml");
  ASSERT_FALSE(r.problems.empty());
  EXPECT_EQ(r.problems[0].rule, kRuleVariant);
  EXPECT_NE(r.problems[0].message.find("named twice"), std::string::npos);
}

TEST(Scenarios, EveryScenarioOfTheSuiteDeclaresASplit) {
  LoadResult r = LoadScenarioFile(kSource + "/scenarios/S06-state-save-unwritable/scenario.yaml");
  ASSERT_TRUE(r.scenario);
  Scenario s = *r.scenario;
  s.split.clear();
  int missing = 0;
  for (const Problem& p : SuiteMinimum({s}, "x")) missing += p.rule == "split-missing";
  EXPECT_EQ(missing, 1);
  // Every shipped scenario declares one, and both splits have runnable scenarios.
  Suite suite = LoadSuite(ScenarioPaths(kSource + "/scenarios"));
  std::set<std::string> splits;
  for (const Scenario& x : suite.scenarios) {
    EXPECT_TRUE(x.split == "dev" || x.split == "test") << x.id;
    splits.insert(x.split);
  }
  EXPECT_EQ(splits, (std::set<std::string>{"dev", "test"}));
}

TEST(Scenarios, LabOfTheLargeProfileParsesWithItsDefaults) {
  LoadResult small =
      LoadScenarioFile(kSource + "/scenarios/S01-accounting-backend-stall/scenario.yaml");
  ASSERT_TRUE(small.scenario);
  EXPECT_FALSE(small.scenario->lab);
  EXPECT_FALSE(small.scenario->Large());
  std::string text = ReadFile(kSource + "/scenarios/testdata/broken/lab-size.yaml");
  const std::string bad = "  nodes: 100\n";
  ASSERT_NE(text.find(bad), std::string::npos);
  LoadResult r = ParseScenario(text.replace(text.find(bad), bad.size(), "  nodes: 512\n"), "x");
  ASSERT_TRUE(r.scenario);
  ASSERT_TRUE(r.scenario->lab);
  EXPECT_TRUE(r.scenario->Large());
  EXPECT_EQ(r.scenario->lab->nodes, 512);
  EXPECT_EQ(r.scenario->lab->history, 2000);
  EXPECT_EQ(r.scenario->lab->line, 17);
}

TEST(Scenarios, DerivedProperties) {
  LoadResult r =
      LoadScenarioFile(kSource + "/scenarios/S01-accounting-backend-stall/scenario.yaml");
  ASSERT_TRUE(r.scenario);
  EXPECT_EQ(r.scenario->RootCause(), "db.mysql");
  EXPECT_EQ(r.scenario->PropagationS(), r.scenario->causal_chain.back().observable_at_s);
  EXPECT_DOUBLE_EQ(r.scenario->CreditFor("slurm.slurmdbd"), 0.2);
  EXPECT_DOUBLE_EQ(r.scenario->CreditFor("gpu.device"), 0.0);
}

}  // namespace
}  // namespace slurm_rca::scenarios
