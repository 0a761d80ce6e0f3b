// The dependency graph: the loader's broken corpus (testdata/broken), traversal on small
// synthetic graphs (testdata/synthetic), the invariants of reference B.6 on the shipped graph,
// and its agreement with the vocabulary, every scenario and every recorded bundle.
#include "agents/graph/graph.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "mcp/backend/bundle_pack.h"
#include "scenarios/measure.h"
#include "scenarios/scenario.h"
#include "scenarios/validate.h"
#include "scenarios/vocabulary.h"
#include "testing/corpus.h"

namespace slurm_rca::graph {
namespace {

namespace fs = std::filesystem;

const std::string kSource = SLURM_RCA_SOURCE_DIR;
const std::string kTestdata = kSource + "/agents/graph/testdata";
const std::string kGraphPath = kSource + "/agents/graph/graph.yaml";
constexpr Severity kSeverities[] = {Severity::kHalts, Severity::kDegrades};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Graph Load(const std::string& path) {
  LoadResult r = LoadGraphFile(path);
  std::string errors;
  for (const GraphError& e : r.errors) errors += e.ToString() + "\n";
  EXPECT_TRUE(r.graph.has_value()) << errors;
  return r.graph.value_or(Graph{});
}

const Graph& Shipped() {
  static const Graph g = Load(kGraphPath);
  return g;
}

Graph Synthetic(const std::string& name) { return Load(kTestdata + "/synthetic/" + name); }

// Copies, so that a result of CausesOf may be searched in place.
std::optional<Hypothesis> FindCause(const std::vector<Hypothesis>& causes, const std::string& c) {
  for (const Hypothesis& h : causes) {
    if (h.cause == c) return h;
  }
  return std::nullopt;
}

std::optional<Refutation> FindRefuted(const std::vector<Refutation>& r, const std::string& c) {
  for (const Refutation& x : r) {
    if (x.component == c) return x;
  }
  return std::nullopt;
}

using Pair = std::pair<std::string, std::string>;

// ---- The loader: the broken corpus (each NAME.yaml's header: the errors it must give). ----

// Through the one corpus runner (testing/corpus.h): exactly the header's errors, with their lines.
TEST(GraphLoader, BrokenCorpusGivesExactlyTheExpectedErrors) {
  base::CorpusReport report = base::RunCorpus(
      {.path = kTestdata + "/broken", .extension = ".yaml"}, [](const base::CorpusCase& c) {
        LoadResult r = LoadGraphFile(c.path);
        EXPECT_FALSE(r.graph.has_value()) << c.path << " loaded";
        for (const GraphError& e : r.errors) {
          EXPECT_EQ(e.file, c.path);
          EXPECT_FALSE(e.message.empty());
        }
        return r.errors;
      });
  testing::ExpectCorpusPasses(report);
  EXPECT_GE(report.cases.size(), 25u);
}

TEST(GraphLoader, MissingFileIsAnErrorNotAnException) {
  LoadResult r = LoadGraphFile(kTestdata + "/no-such-graph.yaml");
  EXPECT_FALSE(r.graph.has_value());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].ToString().find("no-such-graph.yaml:0: "), std::string::npos);
}

TEST(GraphLoader, SeverityIsHaltsOrDegradesNeverNone) {
  EXPECT_EQ(ParseSeverity("halts"), Severity::kHalts);
  EXPECT_EQ(ParseSeverity("degrades"), Severity::kDegrades);
  EXPECT_FALSE(ParseSeverity("none").has_value());
  EXPECT_FALSE(ParseSeverity("HALTS").has_value());
  EXPECT_EQ(ParsePropagation("none"), Propagation::kNone);
}

// ---- Traversal on synthetic graphs (reference B.6 regressions). ----

TEST(GraphTraversal, MeasuredTwoHopBeatsInferredOneHop) {
  Graph g = Synthetic("ranking.yaml");
  auto causes = CausesOf(g, "slurm.slurmctld", Severity::kDegrades);
  auto h = FindCause(causes, "db.mysql");
  ASSERT_NE(h, std::nullopt);
  EXPECT_EQ(h->path, (std::vector<std::string>{"db.mysql", "slurm.slurmdbd", "slurm.slurmctld"}));
  EXPECT_EQ(h->weakest, Evidence::kMeasured);
  EXPECT_TRUE(h->fully_measured);
  EXPECT_EQ(h->hops, 2);
}

TEST(GraphTraversal, MeasuredDegradingPathBeatsInferredHaltingPathAtDegrades) {
  Graph g = Synthetic("ranking.yaml");
  // At halts only the inferred edge carries; at degrades the measured path is preferred.
  auto halts = CausesOf(g, "slurm.slurmctld", Severity::kHalts);
  ASSERT_EQ(halts.size(), 1u);
  EXPECT_EQ(halts[0].cause, "db.mysql");
  EXPECT_EQ(halts[0].weakest, Evidence::kInferred);
  EXPECT_EQ(halts[0].hops, 1);
  auto degrades = CausesOf(g, "slurm.slurmctld", Severity::kDegrades);
  ASSERT_EQ(degrades.size(), 2u);
  EXPECT_EQ(degrades[0].cause, "slurm.slurmdbd");  // measured, 1 hop
  EXPECT_EQ(degrades[1].cause, "db.mysql");        // measured, 2 hops
  EXPECT_EQ(degrades[1].weakest, Evidence::kMeasured);
  // slurmdbd cannot halt slurmctld, on measured evidence.
  auto refuted = RefutationsFor(g, "slurm.slurmctld", Severity::kHalts);
  ASSERT_EQ(refuted.size(), 1u);
  EXPECT_EQ(refuted[0].component, "slurm.slurmdbd");
  EXPECT_EQ(refuted[0].confidence, Evidence::kMeasured);
}

TEST(GraphTraversal, EdgesBeforeACapDoNotWeakenTheRefutation) {
  Graph g = Synthetic("cap.yaml");
  auto refuted = RefutationsFor(g, "slurm.slurmdbd", Severity::kHalts);
  ASSERT_EQ(refuted.size(), 2u);
  auto fs_r = FindRefuted(refuted, "storage.shared_fs");
  ASSERT_NE(fs_r, std::nullopt);
  EXPECT_EQ(fs_r->confidence, Evidence::kMeasured);  // shared_fs -> mysql is only inferred
  EXPECT_EQ(fs_r->limiting_edge, (Cap{"db.mysql", "slurm.slurmdbd", Evidence::kMeasured}));
  EXPECT_EQ(fs_r->hops, 2);
  EXPECT_TRUE(CausesOf(g, "slurm.slurmdbd", Severity::kHalts).empty());
  EXPECT_EQ(CausesOf(g, "slurm.slurmdbd", Severity::kDegrades).size(), 2u);
}

TEST(GraphTraversal, HopLimitIsInclusiveAndALongPathIsNeverARefutation) {
  Graph g = Synthetic("long.yaml");
  const std::string symptom = "slurm.config";  // end of a chain of seven halting edges
  EXPECT_TRUE(CausesOf(g, symptom, Severity::kHalts, 0).empty());
  auto one = CausesOf(g, symptom, Severity::kHalts, 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].cause, "slurm.slurmd");
  auto five = CausesOf(g, symptom, Severity::kHalts);
  ASSERT_EQ(five.size(), 5u);
  EXPECT_EQ(five.back().cause, "db.mysql");
  EXPECT_EQ(five.back().hops, 5);
  EXPECT_EQ(FindCause(five, "storage.state_save"), std::nullopt);  // 6 hops
  EXPECT_EQ(FindCause(five, "storage.shared_fs"), std::nullopt);   // 7 hops
  EXPECT_EQ(CausesOf(g, symptom, Severity::kHalts, 7).size(), 7u);
  EXPECT_TRUE(RefutationsFor(g, symptom, Severity::kHalts).empty());
  EXPECT_TRUE(CausesOf(g, symptom, Severity::kHalts, -1).empty());
}

TEST(GraphTraversal, UntestedModeBelowSeverityCapsOnlyAsInferred) {
  Graph g = Synthetic("untested.yaml");
  // config -> scheduler: measured not to propagate, but an untested mode might degrade.
  auto refuted = RefutationsFor(g, "slurm.scheduler", Severity::kHalts);
  auto r = FindRefuted(refuted, "slurm.config");
  ASSERT_NE(r, std::nullopt);
  EXPECT_EQ(r->confidence, Evidence::kInferred);
  EXPECT_EQ(r->limiting_edge, (Cap{"slurm.config", "slurm.scheduler", Evidence::kInferred}));
  auto degrades = CausesOf(g, "slurm.scheduler", Severity::kDegrades);
  auto h = FindCause(degrades, "slurm.config");
  ASSERT_NE(h, std::nullopt);
  EXPECT_EQ(h->weakest, Evidence::kInferred);
  EXPECT_EQ(h->untested_modes, (std::vector<Pair>{{"slurm.config", "slurm.scheduler"}}));
}

TEST(GraphTraversal, DocumentedModePreferredWhereItSuffices) {
  Graph g = Synthetic("untested.yaml");
  auto degrades = CausesOf(g, "slurm.scheduler", Severity::kDegrades);
  auto d = FindCause(degrades, "slurm.slurmctld");
  ASSERT_NE(d, std::nullopt);
  EXPECT_EQ(d->weakest, Evidence::kDocumented);
  EXPECT_TRUE(d->untested_modes.empty());
  auto halts = CausesOf(g, "slurm.scheduler", Severity::kHalts);
  auto h = FindCause(halts, "slurm.slurmctld");
  ASSERT_NE(h, std::nullopt);
  EXPECT_EQ(h->weakest, Evidence::kInferred);
  EXPECT_EQ(h->untested_modes, (std::vector<Pair>{{"slurm.slurmctld", "slurm.scheduler"}}));
  EXPECT_FALSE(h->fully_measured);
}

// ---- The shipped graph: reference B.6 invariants, adapted to this project's evidence. ----

TEST(ShippedGraph, NodesAreExactlyTheVocabularyWithoutUnknown) {
  std::set<std::string> vocabulary;
  for (const auto& c : scenarios::Components()) {
    if (c.id != scenarios::kUnknown) vocabulary.insert(std::string(c.id));
  }
  std::set<std::string> nodes(Shipped().nodes.begin(), Shipped().nodes.end());
  EXPECT_EQ(nodes, vocabulary);
  EXPECT_EQ(nodes.size(), Shipped().nodes.size());
  EXPECT_EQ(nodes.size(), 13u);
  EXPECT_TRUE(nodes.count("auth.munge"));
}

TEST(ShippedGraph, EvidenceDiscipline) {
  const Graph& g = Shipped();
  std::set<Pair> pairs;
  ASSERT_FALSE(g.edges.empty());
  for (const Edge& e : g.edges) {
    const std::string name = e.source + " -> " + e.target;
    EXPECT_TRUE(pairs.insert({e.source, e.target}).second) << name;
    EXPECT_FALSE(e.note.empty()) << name;
    EXPECT_TRUE(e.Causal()) << name << ": every shipped edge propagates";
    EXPECT_FALSE(e.symptom.empty()) << name;
    if (e.latency_s) {
      EXPECT_GE(e.latency_s->low_s, 0) << name;
      EXPECT_LE(e.latency_s->low_s, e.latency_s->high_s) << name;
    }
    if (e.evidence == Evidence::kMeasured) {
      EXPECT_FALSE(e.measured_by.empty()) << name;
      EXPECT_EQ(e.slurm_version, "22.05.8") << name;
      EXPECT_FALSE(e.untested.empty()) << name << ": a measurement covers one mode";
    }
    if (e.evidence == Evidence::kDocumented) {
      ASSERT_FALSE(e.sources.empty()) << name;
      for (const std::string& u : e.sources) EXPECT_EQ(u.rfind("https://", 0), 0u) << u;
    }
    if (e.untested_mode) {
      EXPECT_GT(e.untested_mode->expected, e.propagation) << name;
    }
  }
}

TEST(ShippedGraph, SlurmdbdDegradesTheSchedulerOnDocumentationHere) {
  const Edge* e = Shipped().FindEdge("slurm.slurmdbd", "slurm.scheduler");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->propagation, Propagation::kDegrades);
  // Measured in the reference (25.11.4); no hop of this project's bundles shows the scheduler.
  EXPECT_EQ(e->evidence, Evidence::kDocumented);
  std::string untested;
  for (const auto& u : e->untested) untested += u + "\n";
  EXPECT_NE(untested.find("MaxDBDMsgs"), std::string::npos);
  EXPECT_NE(untested.find("AccountingStorageEnforce"), std::string::npos);
}

TEST(ShippedGraph, ASchedulerHaltIsNeverBlamedOnAccounting) {
  const Graph& g = Shipped();
  auto causes = CausesOf(g, "slurm.scheduler", Severity::kHalts);
  for (const char* c : {"db.mysql", "slurm.slurmdbd"}) {
    EXPECT_EQ(FindCause(causes, c), std::nullopt) << c;
  }
  // Unlike the reference, storage.shared_fs is offered, but not through accounting: only as a
  // stall under StateSaveLocation (inferred edge, then state_save's untested mode).
  auto shared = FindCause(causes, "storage.shared_fs");
  ASSERT_NE(shared, std::nullopt);
  EXPECT_EQ(shared->weakest, Evidence::kInferred);
  EXPECT_EQ(shared->path, (std::vector<std::string>{"storage.shared_fs", "storage.state_save",
                                                    "slurm.slurmctld", "slurm.scheduler"}));
  auto refuted = RefutationsFor(g, "slurm.scheduler", Severity::kHalts);
  auto dbd = FindRefuted(refuted, "slurm.slurmdbd");
  ASSERT_NE(dbd, std::nullopt);
  EXPECT_EQ(dbd->limiting_edge.source, "slurm.slurmdbd");
  EXPECT_EQ(dbd->confidence, Evidence::kDocumented);
  EXPECT_EQ(dbd->caps,
            (std::vector<Cap>{{"slurm.slurmdbd", "slurm.scheduler", Evidence::kDocumented},
                              {"slurm.slurmdbd", "slurm.slurmctld", Evidence::kMeasured}}));
  auto db = FindRefuted(refuted, "db.mysql");
  ASSERT_NE(db, std::nullopt);
  EXPECT_EQ(db->limiting_edge, dbd->limiting_edge);
  // The accounting path of shared_fs is capped the same way: a slurmctld halt needs state_save.
  EXPECT_EQ(FindRefuted(RefutationsFor(g, "slurm.slurmdbd", Severity::kHalts), "storage.shared_fs"),
            std::nullopt);
}

TEST(ShippedGraph, AtDegradesSlurmdbdIsACauseOfTheSchedulerAndNotRefuted) {
  const Graph& g = Shipped();
  auto h = FindCause(CausesOf(g, "slurm.scheduler", Severity::kDegrades), "slurm.slurmdbd");
  ASSERT_NE(h, std::nullopt);
  EXPECT_EQ(h->weakest, Evidence::kDocumented);
  EXPECT_EQ(h->hops, 1);
  EXPECT_EQ(
      FindRefuted(RefutationsFor(g, "slurm.scheduler", Severity::kDegrades), "slurm.slurmdbd"),
      std::nullopt);
}

TEST(ShippedGraph, AccountingSymptomsReachTheDatabaseAndItsStorage) {
  for (Severity s : kSeverities) {
    auto causes = CausesOf(Shipped(), "slurm.slurmdbd", s);
    auto db = FindCause(causes, "db.mysql");
    ASSERT_NE(db, std::nullopt);
    EXPECT_TRUE(db->fully_measured);
    EXPECT_NE(FindCause(causes, "storage.shared_fs"), std::nullopt);
    auto net = FindCause(causes, "network.control_plane");
    ASSERT_NE(net, std::nullopt);
    EXPECT_TRUE(net->fully_measured);
  }
}

TEST(ShippedGraph, StateSaveReachesTheControllerMeasuredAndTheSchedulerOnlyUntested) {
  const Graph& g = Shipped();
  const Edge* e = g.FindEdge("storage.state_save", "slurm.slurmctld");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->note.find("untouched"), std::string::npos);
  bool running = false;
  for (const auto& u : e->untested) running |= u.find("already running") != std::string::npos;
  EXPECT_TRUE(running);

  EXPECT_EQ(
      FindRefuted(RefutationsFor(g, "slurm.scheduler", Severity::kHalts), "storage.state_save"),
      std::nullopt);
  auto h = FindCause(CausesOf(g, "slurm.scheduler", Severity::kHalts), "storage.state_save");
  ASSERT_NE(h, std::nullopt);
  EXPECT_EQ(h->weakest, Evidence::kInferred);
  EXPECT_EQ(h->untested_modes, (std::vector<Pair>{{"storage.state_save", "slurm.slurmctld"}}));

  auto deg = FindCause(CausesOf(g, "slurm.slurmctld", Severity::kDegrades), "storage.state_save");
  ASSERT_NE(deg, std::nullopt);
  EXPECT_TRUE(deg->fully_measured);
  auto halt = FindCause(CausesOf(g, "slurm.slurmctld", Severity::kHalts), "storage.state_save");
  ASSERT_NE(halt, std::nullopt);
  EXPECT_EQ(halt->weakest, Evidence::kInferred);
}

TEST(ShippedGraph, NoMeasuredRefutationRestsOnAnUntestedModeOrAnUnmeasuredCap) {
  int measured = 0;
  for (const std::string& n : Shipped().nodes) {
    for (Severity s : kSeverities) {
      for (const Refutation& r : RefutationsFor(Shipped(), n, s)) {
        if (r.confidence != Evidence::kMeasured) continue;
        ++measured;
        for (const Cap& c : r.caps) {
          EXPECT_EQ(c.confidence, Evidence::kMeasured) << n << " " << r.component;
          const Edge* e = Shipped().FindEdge(c.source, c.target);
          ASSERT_NE(e, nullptr);
          EXPECT_FALSE(e->untested_mode.has_value()) << c.source << " -> " << c.target;
        }
      }
    }
  }
  EXPECT_GT(measured, 0);  // e.g. db.mysql for a halted slurmctld
}

TEST(ShippedGraph, SchedulerNodeAndGpuReachability) {
  const Graph& g = Shipped();
  auto sched = CausesOf(g, "slurm.scheduler", Severity::kHalts);
  EXPECT_NE(FindCause(sched, "slurm.slurmctld"), std::nullopt);
  auto config = FindCause(sched, "slurm.config");
  ASSERT_NE(config, std::nullopt);
  EXPECT_TRUE(config->fully_measured);  // S08, S16-S18: limits enforced in this lab
  auto slurmd_deg = CausesOf(g, "slurm.slurmd", Severity::kDegrades);
  EXPECT_NE(FindCause(slurmd_deg, "gpu.device"), std::nullopt);
  EXPECT_NE(FindCause(slurmd_deg, "fabric.interconnect"), std::nullopt);
  auto slurmd_halt = CausesOf(g, "slurm.slurmd", Severity::kHalts);
  auto driver = FindCause(slurmd_halt, "gpu.driver");
  ASSERT_NE(driver, std::nullopt);
  EXPECT_EQ(driver->weakest, Evidence::kInferred);  // only through its untested mode
  EXPECT_EQ(FindCause(slurmd_halt, "gpu.device"), std::nullopt);
}

TEST(ShippedGraph, PathsHaveTheirShapeAndRankingIsMonotoneInEvidence) {
  const Graph& g = Shipped();
  int checked = 0;
  for (const std::string& n : g.nodes) {
    for (Severity s : kSeverities) {
      auto causes = CausesOf(g, n, s);
      for (size_t i = 0; i < causes.size(); ++i) {
        const Hypothesis& h = causes[i];
        ++checked;
        ASSERT_GE(h.path.size(), 2u);
        EXPECT_EQ(h.path.front(), h.cause);
        EXPECT_EQ(h.path.back(), n);
        EXPECT_EQ(h.hops + 1, static_cast<int>(h.path.size()));
        EXPECT_LE(h.hops, 5);
        EXPECT_EQ(std::set<std::string>(h.path.begin(), h.path.end()).size(), h.path.size());
        EXPECT_EQ(h.fully_measured, h.weakest == Evidence::kMeasured);
        Evidence weakest = Evidence::kMeasured;
        for (size_t k = 0; k + 1 < h.path.size(); ++k) {
          const Edge* e = g.FindEdge(h.path[k], h.path[k + 1]);
          ASSERT_NE(e, nullptr) << h.path[k] << " -> " << h.path[k + 1];
          Pair p{e->source, e->target};
          bool via_mode = std::find(h.untested_modes.begin(), h.untested_modes.end(), p) !=
                          h.untested_modes.end();
          EXPECT_EQ(via_mode, !Reaches(e->propagation, s));
          weakest = std::max(weakest, via_mode ? Evidence::kInferred : e->evidence);
        }
        EXPECT_EQ(weakest, h.weakest);
        if (i > 0) {
          const Hypothesis& prev = causes[i - 1];
          EXPECT_TRUE(std::tie(prev.weakest, prev.hops) <= std::tie(h.weakest, h.hops))
              << n << ": " << prev.cause << " before " << h.cause;
        }
      }
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(ShippedGraph, LeavesHaveNoCauses) {
  for (const char* leaf : {"storage.shared_fs", "slurm.config", "gpu.device", "gpu.driver",
                           "fabric.interconnect", "network.control_plane", "auth.munge"}) {
    for (Severity s : kSeverities) EXPECT_TRUE(CausesOf(Shipped(), leaf, s).empty()) << leaf;
  }
}

TEST(ShippedGraph, CausesAndRefutationsAreDisjointForEveryComponentAndSeverity) {
  int refutations = 0;
  for (const std::string& n : Shipped().nodes) {
    for (Severity s : kSeverities) {
      std::set<std::string> causes;
      for (const Hypothesis& h : CausesOf(Shipped(), n, s)) causes.insert(h.cause);
      for (const Refutation& r : RefutationsFor(Shipped(), n, s)) {
        ++refutations;
        EXPECT_FALSE(causes.count(r.component)) << n << " " << ToString(s) << " " << r.component;
        EXPECT_EQ(r.caps.front(), r.limiting_edge);
      }
    }
  }
  EXPECT_GT(refutations, 0);
}

TEST(ShippedGraph, ConfigSymptomNamesRealReasons) {
  const Edge* e = Shipped().FindEdge("slurm.config", "slurm.scheduler");
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->symptom.find("AssocGrpJobsLimit"), std::string::npos);
  // Reason codes that do not exist in Slurm (the reference's earlier symptom named them).
  EXPECT_FALSE(RE2::PartialMatch(e->symptom, "\\bQOSMaxJobs\\b|\\bAssocMaxJobs\\b"));
}

TEST(ShippedGraph, WhatIsNotMeasuredHere) {
  const Graph& g = Shipped();
  // Nothing in the lab stalls a filesystem, or has a fabric.
  for (Pair p : {Pair{"storage.shared_fs", "db.mysql"}, Pair{"fabric.interconnect", "slurm.slurmd"},
                 Pair{"slurm.slurmctld", "slurm.scheduler"}}) {
    const Edge* e = g.FindEdge(p.first, p.second);
    ASSERT_NE(e, nullptr) << p.first;
    EXPECT_NE(e->evidence, Evidence::kMeasured) << p.first << " -> " << p.second;
  }
  // Unlike the reference: measured here (limits enforced, a node cut off).
  for (Pair p :
       {Pair{"slurm.config", "slurm.scheduler"}, Pair{"slurm.slurmd", "slurm.slurmctld"}}) {
    const Edge* e = g.FindEdge(p.first, p.second);
    ASSERT_NE(e, nullptr) << p.first;
    EXPECT_EQ(e->evidence, Evidence::kMeasured) << p.first << " -> " << p.second;
    EXPECT_FALSE(e->reference.empty());
  }
}

// ---- Agreement with the scenarios and their bundles. ----

const scenarios::Suite& SuiteOnce() {
  static const scenarios::Suite suite =
      scenarios::LoadSuite(scenarios::ScenarioPaths(kSource + "/scenarios"));
  return suite;
}

// The scenarios the graph was built from: S01-S21, the suite at tag graph-v1. A variant or a
// later scenario may use a measured edge without the frozen graph citing it (the graph does not
// change after its freeze), and its credit table is not held to the graph's offers.
bool FrozenWithTheGraph(const scenarios::Scenario& s) {
  return s.variant.empty() && s.id.size() > 3 && std::stoi(s.id.substr(1, 2)) <= 21;
}

const scenarios::Scenario* FindScenario(const std::string& id) {
  for (const auto& s : SuiteOnce().scenarios) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

const scenarios::Measurement& MeasurementOf(const scenarios::Scenario& s) {
  static std::map<std::string, scenarios::Measurement> cache;
  auto it = cache.find(s.id);
  if (it == cache.end()) {
    it = cache.emplace(s.id, scenarios::MeasureScenario(s, kSource + "/fixtures/" + s.id)).first;
  }
  return it->second;
}

TEST(GraphScenarioAgreement, SuiteLoads) {
  EXPECT_TRUE(SuiteOnce().problems.empty());
  EXPECT_GE(SuiteOnce().scenarios.size(), 21u);
}

TEST(GraphScenarioAgreement, EveryChainPairIsACausalEdge) {
  int pairs = 0;
  for (const auto& s : SuiteOnce().scenarios) {
    for (size_t i = 0; i + 1 < s.causal_chain.size(); ++i) {
      ++pairs;
      const Edge* e = Shipped().FindEdge(s.causal_chain[i].node, s.causal_chain[i + 1].node);
      ASSERT_NE(e, nullptr) << s.id << ": " << s.causal_chain[i].node << " -> "
                            << s.causal_chain[i + 1].node;
      EXPECT_TRUE(e->Causal());
    }
  }
  EXPECT_GE(pairs, 11);  // S01, S02, S04, S07, S09, S14, S19 today
}

TEST(GraphScenarioAgreement, EveryChainRootIsACauseOfItsLastNode) {
  int chains = 0;
  for (const auto& s : SuiteOnce().scenarios) {
    if (s.causal_chain.size() < 2) continue;
    ++chains;
    const std::string& root = s.causal_chain.front().node;
    const std::string& last = s.causal_chain.back().node;
    EXPECT_NE(FindCause(CausesOf(Shipped(), last, Severity::kDegrades), root), std::nullopt)
        << s.id << ": " << root << " is not a cause of " << last;
  }
  EXPECT_GE(chains, 7);
}

// A measured edge's citation: the bundle exists and was recorded on the edge's Slurm, the hop
// is measured in it (MeasureScenario), the hop has the edge's shape, and the latency range
// holds the slowest first sighting of the hop in the recorded trials.
TEST(GraphScenarioAgreement, EveryMeasuredEdgeIsMeasuredByTheBundleItCites) {
  int citations = 0;
  for (const Edge& e : Shipped().edges) {
    if (e.evidence != Evidence::kMeasured) continue;
    const std::string name = e.source + " -> " + e.target;
    for (const MeasuredBy& by : e.measured_by) {
      ++citations;
      SCOPED_TRACE(name + " cites " + by.scenario + " hop " + std::to_string(by.hop));
      const scenarios::Scenario* s = FindScenario(by.scenario);
      ASSERT_NE(s, nullptr);
      // The citation names a file of the bundle (its manifest.json), in the pack the bundle is.
      const fs::path cited(kSource + "/" + by.bundle);
      EXPECT_EQ(cited.parent_path(), fs::path(kSource + "/fixtures/" + s->id));
      base::Result<mcp::BundleFiles> files = mcp::ReadBundle(cited.parent_path().string());
      ASSERT_TRUE(files.ok()) << files.status().message();
      ASSERT_TRUE(files->count(cited.filename().string())) << by.bundle << " is not in its bundle";
      auto manifest = nlohmann::json::parse(files->at(cited.filename().string()), nullptr, false);
      ASSERT_FALSE(manifest.is_discarded());
      EXPECT_EQ(manifest.value("slurm_version", ""), e.slurm_version);

      const scenarios::Measurement& m = MeasurementOf(*s);
      ASSERT_TRUE(m.error.empty()) << m.error;
      ASSERT_GE(by.hop, 1);
      ASSERT_LE(by.hop, static_cast<int>(m.hops.size()));
      EXPECT_TRUE(m.hops[by.hop - 1].measured) << m.hops[by.hop - 1].detail;

      const auto& chain = s->causal_chain;
      if (by.hop > 1) {
        EXPECT_EQ(chain[by.hop - 2].node, e.source);
        EXPECT_EQ(chain[by.hop - 1].node, e.target);
      } else {
        EXPECT_EQ(chain.size(), 1u) << "hop 1 cites a one-hop chain only";
        EXPECT_EQ(chain[0].node, e.source);
        EXPECT_EQ(s->reported_node, e.target);
      }

      auto trials = nlohmann::json::parse(m.trials_json, nullptr, false);
      ASSERT_TRUE(trials.is_object()) << m.trials_json;
      double slowest = -1;
      for (const auto& hop : trials["hops"]) {
        if (hop.value("hop", 0) == by.hop) slowest = hop.value("max_s", -1.0);
      }
      ASSERT_GE(slowest, 0);
      ASSERT_TRUE(e.latency_s.has_value());
      EXPECT_LE(slowest, e.latency_s->high_s);
    }
  }
  EXPECT_GE(citations, 19);
}

// The converse: where a chain pair is measured, the edge says so and cites it.
TEST(GraphScenarioAgreement, EveryMeasuredChainPairIsAMeasuredEdgeCitingIt) {
  for (const auto& s : SuiteOnce().scenarios) {
    if (!FrozenWithTheGraph(s)) continue;
    const scenarios::Measurement& m = MeasurementOf(s);
    ASSERT_TRUE(m.error.empty()) << s.id << ": " << m.error;
    for (size_t i = 1; i < s.causal_chain.size(); ++i) {
      if (!m.hops[i].measured || !m.hops[i - 1].measured) continue;
      const Edge* e = Shipped().FindEdge(s.causal_chain[i - 1].node, s.causal_chain[i].node);
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(e->evidence, Evidence::kMeasured) << s.id << " hop " << i + 1;
      bool cited = std::any_of(e->measured_by.begin(), e->measured_by.end(), [&](auto& by) {
        return by.scenario == s.id && by.hop == static_cast<int>(i) + 1;
      });
      EXPECT_TRUE(cited) << e->source << " -> " << e->target << " does not cite " << s.id;
    }
  }
}

// Reference B.7's zero-credit rule: a component a scenario's credit table gives nothing is not
// offered as a cause of the chain's last node at degrades, unless only on inferred evidence.
// Where a measured or documented edge from another scenario offers it anyway, the conflict is
// listed with its reason in testdata/zero_credit_exemptions.yaml; the list must be exact.
TEST(GraphScenarioAgreement, ZeroCreditComponentsAreOfferedOnlyOnInferenceOrListed) {
  std::map<Pair, std::string> exempt;
  YAML::Node doc = YAML::LoadFile(kTestdata + "/zero_credit_exemptions.yaml");
  for (const auto& x : doc) {
    std::string why = x["why"].as<std::string>("");
    EXPECT_FALSE(why.empty());
    exempt[{x["scenario"].as<std::string>(), x["component"].as<std::string>()}] = why;
  }
  std::set<Pair> conflicts;
  int zero_credit_offers_checked = 0;
  for (const auto& s : SuiteOnce().scenarios) {
    if (!FrozenWithTheGraph(s)) continue;
    auto causes = CausesOf(Shipped(), s.causal_chain.back().node, Severity::kDegrades);
    for (const auto& c : s.scoring) {
      if (c.credit != 0.0 || c.node == scenarios::kUnknown) continue;
      auto h = FindCause(causes, c.node);
      if (!h) continue;
      ++zero_credit_offers_checked;
      if (h->weakest != Evidence::kInferred) conflicts.insert({s.id, c.node});
    }
  }
  EXPECT_GT(zero_credit_offers_checked,
            static_cast<int>(conflicts.size()));  // some offers rest on inference
  for (const Pair& c : conflicts) {
    EXPECT_TRUE(exempt.count(c)) << c.first << ": zero-credit " << c.second
                                 << " offered on measured or documented evidence";
  }
  for (const auto& [c, why] : exempt) {
    EXPECT_TRUE(conflicts.count(c)) << "stale exemption " << c.first << " " << c.second;
  }
}

// ---- Reports. ----

TEST(GraphReports, CausesReportForASchedulerHalt) {
  std::string r = RenderCausesReport(Shipped(), "slurm.scheduler", Severity::kHalts);
  EXPECT_EQ(r.rfind("Causes of slurm.scheduler at halts (within this graph):\n", 0), 0u) << r;
  EXPECT_TRUE(RE2::PartialMatch(r,
                                "\\n  slurm.config +measured +1 hop +slurm.config -> "
                                "slurm.scheduler\\n"))
      << r;
  EXPECT_TRUE(RE2::PartialMatch(r,
                                "only through an untested failure mode of "
                                "storage.state_save -> slurm.slurmctld: a StateSaveLocation "
                                "that stalls"))
      << r;
  size_t doc = r.find("Ruled out at halts by documentation or inference only:\n");
  ASSERT_NE(doc, std::string::npos) << r;
  EXPECT_TRUE(RE2::PartialMatch(r.substr(doc),
                                "\\n  slurm.slurmdbd +slurm.slurmdbd -> "
                                "slurm.scheduler only degrades \\(documented\\)"))
      << r;
  EXPECT_NE(r.find("Not covered by those measurements:\n"), std::string::npos) << r;
}

// As in the reference: at degrades accounting is a cause of the scheduler and nothing is ruled
// out (every shipped edge at least degrades).
TEST(GraphReports, CausesReportForADegradedScheduler) {
  std::string r = RenderCausesReport(Shipped(), "slurm.scheduler", Severity::kDegrades);
  EXPECT_TRUE(RE2::PartialMatch(r, "\\n  slurm.slurmdbd +documented +1 hop ")) << r;
  EXPECT_TRUE(RE2::PartialMatch(r,
                                "\\n  db.mysql +documented +2 hops +db.mysql -> "
                                "slurm.slurmctld -> slurm.scheduler\\n"))
      << r;
  EXPECT_NE(r.find("Ruled out at degrades by measurement: none\n"), std::string::npos) << r;
  EXPECT_NE(r.find("Ruled out at degrades by documentation or inference only: none\n"),
            std::string::npos)
      << r;
}

TEST(GraphReports, UnknownComponentNamesTheValidOnes) {
  std::string r = RenderCausesReport(Shipped(), "slurm.fairshare", Severity::kHalts);
  EXPECT_EQ(r.rfind("'slurm.fairshare' is not a component of the graph; valid: ", 0), 0u) << r;
  EXPECT_NE(r.find("auth.munge"), std::string::npos);
}

TEST(GraphReports, LeafSymptomSaysNothingCanProduceIt) {
  std::string r = RenderCausesReport(Shipped(), "auth.munge", Severity::kDegrades);
  EXPECT_NE(r.find("no component in the graph can produce that symptom"), std::string::npos) << r;
}

TEST(GraphReports, SummaryHasOneLinePerEdge) {
  std::string s = SummaryForAgents(Shipped());
  std::istringstream in(s);
  std::string first;
  std::getline(in, first);
  EXPECT_NE(first.find(StatsLine(Shipped())), std::string::npos);
  size_t i = 0;
  for (std::string line; std::getline(in, line); ++i) {
    ASSERT_LT(i, Shipped().edges.size());
    const Edge& e = Shipped().edges[i];
    EXPECT_EQ(line.rfind("- " + e.source + " -> " + e.target + ": " +
                             std::string(ToString(e.propagation)) + ", " +
                             std::string(ToString(e.evidence)),
                         0),
              0u)
        << line;
  }
  EXPECT_EQ(i, Shipped().edges.size());
}

// The README's numbers and its example output are the computed ones.
TEST(GraphReports, ReadmeMatchesTheGraph) {
  const std::string readme = ReadFile(kSource + "/agents/graph/README.md");
  EXPECT_NE(readme.find(StatsLine(Shipped())), std::string::npos) << StatsLine(Shipped());
  const std::string begin = "<!-- graph causes slurm.scheduler halts -->\n```\n";
  size_t b = readme.find(begin);
  ASSERT_NE(b, std::string::npos);
  size_t e = readme.find("```\n", b + begin.size());
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(readme.substr(b + begin.size(), e - b - begin.size()),
            RenderCausesReport(Shipped(), "slurm.scheduler", Severity::kHalts));
  EvidenceCounts c = CountEvidence(Shipped());
  EXPECT_EQ(c.measured + c.documented + c.inferred, c.total);
  EXPECT_DOUBLE_EQ(MeasuredFraction(Shipped()), static_cast<double>(c.measured) / c.total);
}

}  // namespace
}  // namespace slurm_rca::graph

namespace slurm_rca::graph {
namespace {

TEST(GraphFreeze, TheShippedGraphIsTheFrozenOne) {
  base::Result<Freeze> f = ReadFreeze(FreezePathFor(kGraphPath));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->tag, "graph-v1");
  // graph.yaml's digest as the suite fingerprint takes it (grader::GraphDigest): a change to the
  // graph fails here until it is frozen again under a new tag.
  std::string digest = "sha256:" + scenarios::Sha256Hex(ReadFile(kGraphPath), 16);
  EXPECT_EQ(f->digest, digest) << "agents/graph/graph.yaml changed after its freeze at " << f->tag
                               << ": freeze it again (a new tag in FROZEN)";
}

TEST(GraphFreeze, AMalformedFreezeFileIsRefused) {
  fs::path p = fs::temp_directory_path() / ("FROZEN-" + std::to_string(::getpid()));
  std::ofstream(p) << "# a comment\ngraph-v1 sha256:1234\n";
  base::Result<Freeze> malformed = ReadFreeze(p.string());
  EXPECT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().code(), base::Status::Code::kInvalidArgument);
  EXPECT_EQ(malformed.status().message(),
            p.string() + ":2: expected one line 'graph-vN sha256:<16 hex digits>'");
  base::Result<Freeze> missing = ReadFreeze("/nonexistent/FROZEN");
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), base::Status::Code::kIoError);
  fs::remove(p);
}

scenarios::Scenario Chain(const std::vector<std::string>& nodes, const std::string& reported) {
  scenarios::Scenario s;
  s.id = "S99-post-freeze";
  s.file = "x.yaml";
  s.post_freeze = "graph-v1";
  s.reported_node = reported;
  for (const std::string& n : nodes) s.causal_chain.push_back({.node = n});
  return s;
}

TEST(GraphFreeze, ChainEdgesAreHopToHopAndLastToReported) {
  using E = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(ChainEdges(Chain({"db.mysql", "slurm.slurmdbd", "slurm.slurmctld"}, "slurm.slurmdbd")),
            (E{{"db.mysql", "slurm.slurmdbd"}, {"slurm.slurmdbd", "slurm.slurmctld"},
               {"slurm.slurmctld", "slurm.slurmdbd"}}));
  EXPECT_EQ(ChainEdges(Chain({"slurm.slurmctld"}, "slurm.slurmctld")), E{});
  EXPECT_EQ(ChainEdges(Chain({"slurm.config"}, "slurm.scheduler")),
            (E{{"slurm.config", "slurm.scheduler"}}));
}

TEST(GraphFreeze, APostFreezeScenarioMayNotUseAMeasuredEdge) {
  Freeze f{"graph-v1", "sha256:0000000000000000"};
  // slurm.config -> slurm.scheduler is measured (S08, S16, S17, S18).
  std::vector<scenarios::Scenario> suite = {Chain({"slurm.config"}, "slurm.scheduler")};
  auto p = PostFreezeProblems(Shipped(), f, suite);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].rule, "post-freeze-edge");
  EXPECT_NE(p[0].message.find("slurm.config -> slurm.scheduler"), std::string::npos);
  // A documented edge (slurm.slurmctld -> slurm.scheduler) or one the graph lacks is allowed.
  suite = {Chain({"slurm.slurmctld"}, "slurm.scheduler"), Chain({"slurm.config"}, "slurm.slurmctld")};
  EXPECT_TRUE(PostFreezeProblems(Shipped(), f, suite).empty());
  // Without post_freeze the rule does not apply; with another tag it is refused.
  suite = {Chain({"slurm.config"}, "slurm.scheduler")};
  suite[0].post_freeze.clear();
  EXPECT_TRUE(PostFreezeProblems(Shipped(), f, suite).empty());
  suite[0].post_freeze = "graph-v0";
  p = PostFreezeProblems(Shipped(), f, suite);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].message.find("frozen at graph-v1"), std::string::npos);
}

TEST(GraphFreeze, TheShippedPostFreezeScenariosUseNoMeasuredEdge) {
  base::Result<Freeze> f = ReadFreeze(FreezePathFor(kGraphPath));
  ASSERT_TRUE(f.ok()) << f.status().message();
  scenarios::Suite suite = scenarios::LoadSuite(scenarios::ScenarioPaths(kSource + "/scenarios"));
  for (const scenarios::Problem& p : PostFreezeProblems(Shipped(), *f, suite.scenarios)) {
    ADD_FAILURE() << p.ToString();
  }
}

}  // namespace
}  // namespace slurm_rca::graph
