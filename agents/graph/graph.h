// The dependency graph of a Slurm control plane, as data (agents/graph/graph.yaml): which
// component's failure propagates to which, how far (halts or degrades), how fast, and on what
// evidence (measured in one of this project's recorded bundles, documented by Slurm's manuals,
// or inferred). Nodes are the benchmark's vocabulary (scenarios/vocabulary.h) minus `unknown`.
//
//   LoadResult r = LoadGraphFile(paths.graph);   // base::DataPaths, resolved in main
//   for (const GraphError& e : r.errors) std::cerr << e.ToString() << "\n";  // file:line: ...
//   const Graph& g = *r.graph;
//   for (const Hypothesis& h : CausesOf(g, "slurm.scheduler", Severity::kHalts))
//     std::cout << h.cause << " " << ToString(h.weakest) << " " << h.hops << "\n";
//   for (const Refutation& x : RefutationsFor(g, "slurm.scheduler", Severity::kHalts)) ...;
//   std::cout << RenderCausesReport(g, "slurm.scheduler", Severity::kHalts);
//
// Semantics (reference mcp-guard-graph-skills.md section B.5):
// - An edge carries a severity when its propagation is at least that severity (on the edge's own
//   evidence), or when its untested mode's expected propagation is (then only as inferred).
// - A path explains a symptom at a severity only when every edge on it carries that severity:
//   propagation does not compose upward (a degrading hop never explains a halt).
// - A path's evidence is its weakest edge's. Per cause the preferred path is the one with the
//   strongest weakest link, then the fewest hops, then the component names.
// - A component is refuted ("ruled out, within this graph") when it has upstream paths to the
//   symptom and none of them explains it; each path is capped by its strongest edge that cannot
//   carry the severity.
// Only severity is checked along a path, not the state an edge leaves its target in: a path
// through two measured edges can join two different failure modes of the middle component.
//
// The loader refuses (errors as values, each with file and line): YAML that does not parse,
// unknown or missing keys, nodes outside the vocabulary or `unknown`, duplicate nodes or
// (source, target) pairs, self-loops, edges on unlisted nodes, an edge without a note, a causal
// edge without a symptom, a measured edge without scenario, hop, bundle (fixtures/<scenario>/...)
// and Slurm version, a documented edge without https:// sources, an inferred edge that cites
// either, a latency range with low > high or below zero, and an untested mode whose expected
// propagation is not strictly worse than the edge's. Whether a measured edge's bundle really
// measures it is checked by the tests (graph_test.cc) against fixtures/, not by the loader.
//
// Everything here is a pure function of the Graph; a Graph is immutable once loaded and may be
// read from any thread.
#ifndef SLURM_RCA_AGENTS_GRAPH_GRAPH_H_
#define SLURM_RCA_AGENTS_GRAPH_GRAPH_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenarios/scenario.h"
#include "base/diagnostic.h"
#include "base/status.h"

namespace slurm_rca::graph {

// How far a failure of the source propagates into the target. Ordered: kHalts is worse. kNone:
// checked, does not propagate (a non-causal edge; it can still carry through an untested mode).
enum class Propagation { kNone = 0, kDegrades = 1, kHalts = 2 };
// The severity of a symptom asked about: there is no "none", ask for halts or degrades.
enum class Severity { kDegrades = 1, kHalts = 2 };
// Whether propagation p reaches severity s.
inline bool Reaches(Propagation p, Severity s) {
  return static_cast<int>(p) >= static_cast<int>(s);
}

// How an edge is known. Ordered strongest first: kMeasured < kDocumented < kInferred.
enum class Evidence { kMeasured = 0, kDocumented = 1, kInferred = 2 };

std::string_view ToString(Propagation p);  // "halts", "degrades", "none"
std::string_view ToString(Severity s);     // "halts", "degrades"
std::string_view ToString(Evidence e);     // "measured", "documented", "inferred"
// "halts" or "degrades"; anything else (including "none") is nullopt.
std::optional<Severity> ParseSeverity(std::string_view text);
// "halts", "degrades" or "none"; anything else is nullopt.
std::optional<Propagation> ParsePropagation(std::string_view text);

struct LatencyRange {
  double low_s = 0;
  double high_s = 0;
};

// A recorded scenario whose bundle shows the edge: hop `hop` (1-based) of its causal chain.
// Either the hop is the edge's target and the hop before it the edge's source, or the chain is
// the source alone (hop 1) and the scenario's reported component is the edge's target.
struct MeasuredBy {
  std::string scenario;  // e.g. S06-state-save-unwritable
  int hop = 0;
  std::string bundle;  // fixtures/<scenario>/manifest.json: that file of the bundle (its pack)
  int line = 0;
};

// A failure mode of the source that no measurement covers, with the propagation expected of it
// (strictly worse than the edge's). Traversal may cross the edge through it, as inferred.
struct UntestedMode {
  std::string description;
  Propagation expected = Propagation::kHalts;
};

struct Edge {
  std::string source;
  std::string target;
  Propagation propagation = Propagation::kDegrades;
  std::optional<LatencyRange> latency_s;  // absent: no bound is known
  Evidence evidence = Evidence::kInferred;
  std::string note;                     // why this classification; required
  std::string symptom;                  // what the target shows; required on causal edges
  std::vector<MeasuredBy> measured_by;  // measured: at least one
  std::string slurm_version;            // measured: the Slurm the bundles were recorded on
  std::vector<std::string> sources;     // documented: https:// URLs
  std::vector<std::string> untested;    // what the evidence does not cover
  std::optional<UntestedMode> untested_mode;
  std::string reference;  // how this edge differs from the reference's (B.4), if it does
  int line = 0;           // of the edge in the file

  bool Causal() const { return propagation != Propagation::kNone; }
};

struct Graph {
  std::string file;
  std::vector<std::string> nodes;  // in file order
  std::vector<Edge> edges;         // in file order ("EDGES order" of the reference)

  bool HasNode(std::string_view id) const;
  const Edge* FindEdge(std::string_view source, std::string_view target) const;  // or nullptr
};

using GraphError = base::Diagnostic;  // file:line: rule: message

struct LoadResult {
  std::optional<Graph> graph;  // present only when there are no errors
  std::vector<GraphError> errors;
};

// Parses and validates; every error is reported, not only the first.
LoadResult ParseGraph(const std::string& text, const std::string& file);
LoadResult LoadGraphFile(const std::string& path);

// The freeze. agents/graph/FROZEN names the tag at which graph.yaml was frozen and its digest
// ("graph-v1 sha256:<16 hex>", comment lines start with #). Scenarios written after the freeze
// say so (`post_freeze: graph-v1`) and may not use an edge the frozen graph measures: on them,
// configuration C's graph holds nothing that was read out of their own recordings, so B against
// C is a clean experiment there. The graph test holds graph.yaml to the digest: changing the
// graph means a new freeze (and the suite fingerprint changes with it).
struct Freeze {
  std::string tag;     // e.g. graph-v1
  std::string digest;  // sha256:<16 hex> of graph.yaml's text (grader::GraphDigest)
};
// The FROZEN file. An io error when it cannot be read, an invalid argument when it is malformed;
// the message names the file (and the line).
base::Result<Freeze> ReadFreeze(const std::string& path);
// The FROZEN file beside the graph at graph_path (its directory + "/FROZEN").
std::string FreezePathFor(const std::string& graph_path);

// The (cause, effect) pairs a causal chain uses: each hop to the next, and the last hop to the
// reported component when they differ (a one-hop chain's edge, as measured_by reads it).
std::vector<std::pair<std::string, std::string>> ChainEdges(const scenarios::Scenario& s);

// post-freeze-edge problems over a suite: a scenario with post_freeze whose tag is not
// freeze.tag, or whose chain uses an edge that `frozen` measures.
std::vector<scenarios::Problem> PostFreezeProblems(const Graph& frozen, const Freeze& freeze,
                                                   const std::vector<scenarios::Scenario>& suite);

// One way `cause` can produce the symptom.
struct Hypothesis {
  std::string cause;
  std::vector<std::string> path;  // cause first, symptom last; no component repeated
  bool fully_measured = false;    // weakest == kMeasured
  Evidence weakest = Evidence::kInferred;
  // Edges crossed only through their untested mode, in path order.
  std::vector<std::pair<std::string, std::string>> untested_modes;
  int hops = 0;  // path.size() - 1
};

// Every component with a simple upstream path of at most max_hops edges (inclusive; 0 gives
// nothing) that explains `symptom` at `severity`, each with its preferred path, sorted by
// (weakest, hops, path names). A symptom that is not a node, or a negative max_hops, gives
// nothing: callers taking user input check Graph::HasNode first.
std::vector<Hypothesis> CausesOf(const Graph& graph, std::string_view symptom, Severity severity,
                                 int max_hops = 5);

// The edge that stops a path from explaining the symptom, and on what evidence it does.
struct Cap {
  std::string source;
  std::string target;
  // The edge's evidence; kInferred when the edge has an untested mode (also below the severity).
  Evidence confidence = Evidence::kInferred;
  bool operator==(const Cap&) const = default;
};

struct Refutation {
  std::string component;
  Evidence confidence = Evidence::kInferred;  // the weakest of its paths' caps
  Cap limiting_edge;      // the cap of its least well refuted path (ties: shorter, then names)
  std::vector<Cap> caps;  // limiting first, then every other path's cap in edge order, no repeats
  int hops = 0;           // length of the limiting path
};

// Every component with at least one simple upstream path (no hop limit) to `symptom` and none
// that explains it at `severity`, sorted by (confidence, hops, component). Disjoint from
// CausesOf's causes for every symptom and severity. Not a node: nothing.
std::vector<Refutation> RefutationsFor(const Graph& graph, std::string_view symptom,
                                       Severity severity);

struct EvidenceCounts {
  int measured = 0;
  int documented = 0;
  int inferred = 0;
  int total = 0;
};
EvidenceCounts CountEvidence(const Graph& graph);
double MeasuredFraction(const Graph& graph);  // measured / total; 0 for a graph without edges
// "17 edges, 11 measured (65%); documented 2, inferred 4"
std::string StatsLine(const Graph& graph);

// The causes of `symptom` at `severity` and what is ruled out (by measurement, then by
// documentation or inference only), then what the measurements behind it do not cover. A
// symptom that is not a node gives one line naming the valid components.
std::string RenderCausesReport(const Graph& graph, std::string_view symptom, Severity severity);

// A compact list of edges for an agent's instructions, one line per edge:
// "db.mysql -> slurm.slurmdbd: halts, measured (S01-accounting-backend-stall); <symptom>".
std::string SummaryForAgents(const Graph& graph);

// Loader rule ids.
inline constexpr const char* kRuleYamlSyntax = "yaml-syntax";
inline constexpr const char* kRuleWrongType = "wrong-type";
inline constexpr const char* kRuleUnknownKey = "unknown-key";
inline constexpr const char* kRuleDuplicateKey = "duplicate-key";
inline constexpr const char* kRuleMissingKey = "missing-key";
inline constexpr const char* kRuleBadEnum = "bad-enum";
inline constexpr const char* kRuleNotVocabulary = "not-vocabulary";
inline constexpr const char* kRuleDuplicateNode = "duplicate-node";
inline constexpr const char* kRuleUnlistedNode = "unlisted-node";
inline constexpr const char* kRuleSelfLoop = "self-loop";
inline constexpr const char* kRuleDuplicateEdge = "duplicate-edge";
inline constexpr const char* kRuleEmptyNote = "empty-note";
inline constexpr const char* kRuleEmptySymptom = "empty-symptom";
inline constexpr const char* kRuleMeasuredCitation = "measured-citation";
inline constexpr const char* kRuleDocumentedSources = "documented-sources";
inline constexpr const char* kRuleInferredCitation = "inferred-citation";
inline constexpr const char* kRuleLatency = "latency";
inline constexpr const char* kRuleUntestedMode = "untested-mode";

}  // namespace slurm_rca::graph

#endif  // SLURM_RCA_AGENTS_GRAPH_GRAPH_H_
