#include "agents/graph/graph.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "base/strings.h"
#include "base/yaml.h"
#include "scenarios/vocabulary.h"

namespace slurm_rca::graph {

std::string_view ToString(Propagation p) {
  switch (p) {
    case Propagation::kHalts:
      return "halts";
    case Propagation::kDegrades:
      return "degrades";
    case Propagation::kNone:
      return "none";
  }
  return "none";
}

std::string_view ToString(Severity s) { return s == Severity::kHalts ? "halts" : "degrades"; }

std::string_view ToString(Evidence e) {
  switch (e) {
    case Evidence::kMeasured:
      return "measured";
    case Evidence::kDocumented:
      return "documented";
    case Evidence::kInferred:
      return "inferred";
  }
  return "inferred";
}

std::optional<Severity> ParseSeverity(std::string_view text) {
  if (text == "halts") return Severity::kHalts;
  if (text == "degrades") return Severity::kDegrades;
  return std::nullopt;
}

std::optional<Propagation> ParsePropagation(std::string_view text) {
  if (text == "halts") return Propagation::kHalts;
  if (text == "degrades") return Propagation::kDegrades;
  if (text == "none") return Propagation::kNone;
  return std::nullopt;
}

bool Graph::HasNode(std::string_view id) const {
  return std::find(nodes.begin(), nodes.end(), id) != nodes.end();
}

const Edge* Graph::FindEdge(std::string_view source, std::string_view target) const {
  for (const Edge& e : edges) {
    if (e.source == source && e.target == target) return &e;
  }
  return nullptr;
}

namespace {

using base::YamlReader;
constexpr auto LineOf = &YamlReader::LineOf;

// The graph's shapes over base::YamlReader.
class Parser : public YamlReader {
 public:
  Parser(std::string file, std::vector<GraphError>* out) : YamlReader(std::move(file), out) {}

  // A mapping with every required key (the graph stops at the first part that lacks one).
  bool Keys(const YAML::Node& map, const std::vector<std::string>& required,
            const std::vector<std::string>& optional, const std::string& where, int line) {
    bool complete = false;
    return YamlReader::Keys(map, required, optional, where, line, &complete) && complete;
  }

  std::vector<std::string> StrList(const YAML::Node& n, const std::string& what, int line) {
    std::vector<std::string> out;
    if (!n.IsSequence()) {
      Err(LineOf(n) ? LineOf(n) : line, kRuleWrongType, what + " must be a list of strings");
      return out;
    }
    for (const auto& item : n) {
      if (auto s = Str(item, what + " item", LineOf(n))) out.push_back(*s);
    }
    return out;
  }

  std::optional<Propagation> Prop(const YAML::Node& n, const std::string& what, int line) {
    auto s = Str(n, what, line);
    if (!s) return std::nullopt;
    if (auto p = ParsePropagation(*s)) return p;
    Err(LineOf(n), kRuleBadEnum, what + " must be halts, degrades or none, not '" + *s + "'");
    return std::nullopt;
  }

  void ParseTop(const YAML::Node& root, Graph* g) {
    if (!Keys(root, {"nodes", "edges"}, {}, "the graph", 1)) return;
    std::set<std::string> nodes;
    const YAML::Node& ns = root["nodes"];
    if (!ns.IsSequence()) {
      Err(LineOf(ns), kRuleWrongType, "nodes must be a list of components");
    } else {
      for (const auto& n : ns) {
        auto id = Str(n, "a node", LineOf(ns));
        if (!id) continue;
        if (!scenarios::IsComponent(*id) || *id == scenarios::kUnknown) {
          Err(LineOf(n), kRuleNotVocabulary,
              "node '" + *id + "' is not a component of the vocabulary (unknown excluded)");
          continue;
        }
        if (!nodes.insert(*id).second) {
          Err(LineOf(n), kRuleDuplicateNode, "node '" + *id + "' is listed twice");
          continue;
        }
        g->nodes.push_back(*id);
      }
    }
    const YAML::Node& es = root["edges"];
    if (!es.IsSequence()) {
      Err(LineOf(es), kRuleWrongType, "edges must be a list");
      return;
    }
    std::map<std::pair<std::string, std::string>, int> seen;
    for (const auto& en : es) {
      Edge e;
      if (!ParseEdge(en, nodes, &e)) continue;
      auto [it, fresh] = seen.emplace(std::make_pair(e.source, e.target), e.line);
      if (!fresh) {
        Err(e.line, kRuleDuplicateEdge,
            e.source + " -> " + e.target + " is already an edge (line " +
                std::to_string(it->second) + ")");
        continue;
      }
      g->edges.push_back(std::move(e));
    }
  }

  bool ParseEdge(const YAML::Node& n, const std::set<std::string>& nodes, Edge* e) {
    e->line = LineOf(n);
    const size_t errors_before = found();
    if (!Keys(n, {"source", "target", "propagation", "latency_s", "evidence", "note"},
              {"symptom", "measured_by", "slurm_version", "sources", "untested", "untested_mode",
               "reference"},
              "an edge", e->line)) {
      return false;
    }
    for (auto [key, field] : {std::pair{"source", &e->source}, std::pair{"target", &e->target}}) {
      auto id = Str(n[key], key, e->line);
      if (!id) continue;
      *field = *id;
      if (!scenarios::IsComponent(*id) || *id == scenarios::kUnknown) {
        Err(LineOf(n[key]), kRuleNotVocabulary,
            std::string(key) + " '" + *id + "' is not a component of the vocabulary");
      } else if (!nodes.count(*id)) {
        Err(LineOf(n[key]), kRuleUnlistedNode,
            std::string(key) + " '" + *id + "' is not among the graph's nodes");
      }
    }
    if (!e->source.empty() && e->source == e->target) {
      Err(e->line, kRuleSelfLoop, "an edge from " + e->source + " to itself");
    }
    if (auto p = Prop(n["propagation"], "propagation", e->line)) e->propagation = *p;

    const YAML::Node& lat = n["latency_s"];
    if (!lat.IsNull()) {
      if (!lat.IsSequence() || lat.size() != 2) {
        Err(LineOf(lat), kRuleWrongType, "latency_s must be [low, high] in seconds, or null");
      } else {
        auto lo = Number(lat[0], "latency_s low", LineOf(lat));
        auto hi = Number(lat[1], "latency_s high", LineOf(lat));
        if (lo && hi) {
          if (*lo < 0 || *hi < 0 || *lo > *hi) {
            Err(LineOf(lat), kRuleLatency,
                "latency_s needs 0 <= low <= high, got [" + lat[0].Scalar() + ", " +
                    lat[1].Scalar() + "]");
          }
          e->latency_s = LatencyRange{*lo, *hi};
        }
      }
    }

    if (auto s = Str(n["evidence"], "evidence", e->line)) {
      if (*s == "measured") {
        e->evidence = Evidence::kMeasured;
      } else if (*s == "documented") {
        e->evidence = Evidence::kDocumented;
      } else if (*s == "inferred") {
        e->evidence = Evidence::kInferred;
      } else {
        Err(LineOf(n["evidence"]), kRuleBadEnum,
            "evidence must be measured, documented or inferred, not '" + *s + "'");
      }
    }
    const std::string name = e->source + " -> " + e->target;
    if (auto s = Str(n["note"], "note", e->line)) e->note = *s;
    if (n["symptom"]) {
      if (auto s = Str(n["symptom"], "symptom", e->line)) e->symptom = *s;
    }
    if (Trim(e->note).empty()) Err(LineOf(n["note"]), kRuleEmptyNote, name + " has no note");
    if (e->Causal() && Trim(e->symptom).empty()) {
      Err(n["symptom"] ? LineOf(n["symptom"]) : e->line, kRuleEmptySymptom,
          name + " propagates but has no symptom");
    }

    if (n["measured_by"]) {
      const YAML::Node& mb = n["measured_by"];
      if (!mb.IsSequence()) {
        Err(LineOf(mb), kRuleWrongType, "measured_by must be a list");
      } else {
        for (const auto& m : mb) ParseMeasuredBy(m, e);
      }
    }
    if (n["slurm_version"]) {
      if (auto s = Str(n["slurm_version"], "slurm_version", e->line)) e->slurm_version = *s;
    }
    if (n["sources"]) e->sources = StrList(n["sources"], "sources", e->line);
    if (n["untested"]) e->untested = StrList(n["untested"], "untested", e->line);
    if (n["reference"]) {
      if (auto s = Str(n["reference"], "reference", e->line)) e->reference = *s;
    }
    if (n["untested_mode"]) {
      const YAML::Node& um = n["untested_mode"];
      if (Keys(um, {"description", "expected"}, {}, "untested_mode", LineOf(um))) {
        UntestedMode mode;
        auto d = Str(um["description"], "untested_mode description", LineOf(um));
        auto x = Prop(um["expected"], "untested_mode expected", LineOf(um));
        if (d && x) {
          mode.description = *d;
          mode.expected = *x;
          if (mode.expected <= e->propagation) {
            Err(LineOf(um["expected"]), kRuleUntestedMode,
                name + ": the untested mode is expected to " + std::string(ToString(*x)) +
                    ", which is not worse than the edge's " +
                    std::string(ToString(e->propagation)));
          }
          e->untested_mode = mode;
        }
      }
    }

    // Evidence discipline: what each class must (and must not) cite.
    const int ev_line = LineOf(n["evidence"]);
    if (e->evidence == Evidence::kMeasured) {
      if (!n["measured_by"] || (n["measured_by"].IsSequence() && n["measured_by"].size() == 0)) {
        Err(ev_line, kRuleMeasuredCitation, name + " is measured but names no scenario");
      }
      if (Trim(e->slurm_version).empty()) {
        Err(ev_line, kRuleMeasuredCitation, name + " is measured but names no slurm_version");
      }
    } else {
      if (!e->measured_by.empty() || !e->slurm_version.empty()) {
        Err(ev_line,
            e->evidence == Evidence::kDocumented ? kRuleMeasuredCitation : kRuleInferredCitation,
            name + " is " + std::string(ToString(e->evidence)) +
                " but cites a measurement (measured_by or slurm_version)");
      }
    }
    if (e->evidence == Evidence::kDocumented && e->sources.empty()) {
      Err(ev_line, kRuleDocumentedSources, name + " is documented but has no sources");
    }
    if (e->evidence == Evidence::kInferred && !e->sources.empty()) {
      Err(ev_line, kRuleInferredCitation,
          name + " is inferred but cites sources (documented, then?)");
    }
    for (const std::string& url : e->sources) {
      if (url.rfind("https://", 0) != 0 || url.size() <= 8 ||
          url.find_first_of(" \t\n") != std::string::npos) {
        Err(LineOf(n["sources"]), kRuleDocumentedSources,
            name + ": source '" + url + "' is not an https:// URL");
      }
    }
    return found() == errors_before;
  }

  void ParseMeasuredBy(const YAML::Node& m, Edge* e) {
    MeasuredBy by;
    by.line = LineOf(m);
    if (!Keys(m, {"scenario", "hop", "bundle"}, {}, "measured_by", by.line)) return;
    auto sc = Str(m["scenario"], "measured_by scenario", by.line);
    auto bundle = Str(m["bundle"], "measured_by bundle", by.line);
    static const std::regex int_re("[0-9]{1,4}");
    const YAML::Node& hop = m["hop"];
    if (!hop.IsScalar() || !std::regex_match(hop.Scalar(), int_re) || std::stoi(hop.Scalar()) < 1) {
      Err(LineOf(hop), kRuleWrongType, "measured_by hop must be a positive integer");
      return;
    }
    if (!sc || !bundle) return;
    by.scenario = *sc;
    by.hop = std::stoi(hop.Scalar());
    by.bundle = *bundle;
    static const std::regex id_re("S[0-9]{2,}-[a-z0-9-]+");
    if (!std::regex_match(by.scenario, id_re)) {
      Err(LineOf(m["scenario"]), kRuleMeasuredCitation,
          "measured_by scenario '" + by.scenario + "' is not a scenario id");
    }
    const std::string prefix = "fixtures/" + by.scenario + "/";
    if (by.bundle.rfind(prefix, 0) != 0 || by.bundle.size() == prefix.size()) {
      Err(LineOf(m["bundle"]), kRuleMeasuredCitation,
          "measured_by bundle '" + by.bundle + "' is not a file under " + prefix);
    }
    e->measured_by.push_back(std::move(by));
  }

  static std::string Trim(const std::string& s) { return std::string(base::Trim(s, " \t\n")); }
};

}  // namespace

LoadResult ParseGraph(const std::string& text, const std::string& file) {
  LoadResult r;
  Parser p(file, &r.errors);
  std::optional<YAML::Node> root = p.Load(text);
  if (!root) return r;
  Graph g;
  g.file = file;
  p.Guarded([&] { p.ParseTop(*root, &g); });
  if (r.errors.empty()) r.graph = std::move(g);
  return r;
}

LoadResult LoadGraphFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    LoadResult r;
    r.errors.push_back({path, 0, kRuleYamlSyntax, "cannot read the file"});
    return r;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseGraph(ss.str(), path);
}

std::string FreezePathFor(const std::string& g) {
  size_t slash = g.rfind('/');
  return (slash == std::string::npos ? std::string(".") : g.substr(0, slash)) + "/FROZEN";
}

base::Result<Freeze> ReadFreeze(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return base::Status::IoError("cannot read " + path +
                                 " (the graph freeze: 'TAG sha256:DIGEST')");
  }
  static const std::regex line_re("(graph-v[0-9]+) (sha256:[0-9a-f]{16})");
  std::string line;
  std::optional<Freeze> found;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::smatch m;
    if (!std::regex_match(line, m, line_re) || found) {
      return base::Status::InvalidArgument(path + ":" + std::to_string(n) +
                                           ": expected one line 'graph-vN sha256:<16 hex digits>'");
    }
    found = Freeze{m[1].str(), m[2].str()};
  }
  if (!found) return base::Status::InvalidArgument(path + ": no 'graph-vN sha256:...' line");
  return *found;
}

std::vector<std::pair<std::string, std::string>> ChainEdges(const scenarios::Scenario& s) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto& chain = s.causal_chain;
  for (size_t i = 1; i < chain.size(); ++i) {
    if (chain[i - 1].node != chain[i].node) out.emplace_back(chain[i - 1].node, chain[i].node);
  }
  if (!chain.empty() && chain.back().node != s.reported_node) {
    out.emplace_back(chain.back().node, s.reported_node);
  }
  return out;
}

std::vector<scenarios::Problem> PostFreezeProblems(const Graph& frozen, const Freeze& freeze,
                                                   const std::vector<scenarios::Scenario>& suite) {
  std::vector<scenarios::Problem> out;
  std::set<std::string> reported;  // a file's variants share one chain shape: report it once
  for (const scenarios::Scenario& s : suite) {
    if (s.post_freeze.empty()) continue;
    int line = s.Line("post_freeze");
    auto add = [&](std::string m) {
      std::string key = s.file + m;
      if (reported.insert(key).second) out.push_back({s.file, line, "post-freeze-edge", m});
    };
    if (s.post_freeze != freeze.tag) {
      add("post_freeze names " + s.post_freeze + ", but the graph is frozen at " + freeze.tag);
      continue;
    }
    for (const auto& [source, target] : ChainEdges(s)) {
      const Edge* e = frozen.FindEdge(source, target);
      if (e && e->evidence == Evidence::kMeasured) {
        add("the chain uses " + source + " -> " + target + ", an edge the frozen graph (" +
            freeze.tag + ") measures");
      }
    }
  }
  return out;
}

namespace {

// How an edge carries a severity: on its own evidence, through its untested mode (inferred),
// or not at all.
struct Carry {
  bool carries = false;
  bool via_untested = false;
  Evidence confidence = Evidence::kInferred;
};

Carry Carries(const Edge& e, Severity severity) {
  if (Reaches(e.propagation, severity)) return {true, false, e.evidence};
  if (e.untested_mode && Reaches(e.untested_mode->expected, severity)) {
    return {true, true, Evidence::kInferred};
  }
  return {};
}

// The confidence with which an edge stops a path: its own, but never better than inferred when
// an untested mode of it might (at a lower severity) propagate further than measured.
Evidence CapConfidence(const Edge& e) { return e.untested_mode ? Evidence::kInferred : e.evidence; }

Evidence Weaker(Evidence a, Evidence b) { return std::max(a, b); }

// Every simple upstream path into `symptom`, as edge indices ordered cause first. `step` says
// whether an edge may be crossed; `visit` gets each path; at most max_hops edges (< 0: no limit).
template <typename Step, typename Visit>
void UpstreamPaths(const Graph& g, const std::string& symptom, int max_hops, Step step,
                   Visit visit) {
  std::vector<int> rev;  // edges from the symptom upward
  std::vector<std::string> on_path = {symptom};
  auto dfs = [&](auto&& self, const std::string& node) -> void {
    if (max_hops >= 0 && static_cast<int>(rev.size()) >= max_hops) return;
    for (size_t i = 0; i < g.edges.size(); ++i) {
      const Edge& e = g.edges[i];
      if (e.target != node || !step(e)) continue;
      if (std::find(on_path.begin(), on_path.end(), e.source) != on_path.end()) continue;
      rev.push_back(static_cast<int>(i));
      on_path.push_back(e.source);
      visit(std::vector<int>(rev.rbegin(), rev.rend()));
      self(self, e.source);
      on_path.pop_back();
      rev.pop_back();
    }
  };
  dfs(dfs, symptom);
}

std::vector<std::string> PathNames(const Graph& g, const std::vector<int>& path) {
  std::vector<std::string> names;
  if (path.empty()) return names;
  names.push_back(g.edges[path.front()].source);
  for (int i : path) names.push_back(g.edges[i].target);
  return names;
}

auto HypothesisKey(const Hypothesis& h) { return std::tie(h.weakest, h.hops, h.path); }

}  // namespace

std::vector<Hypothesis> CausesOf(const Graph& graph, std::string_view symptom, Severity severity,
                                 int max_hops) {
  std::map<std::string, Hypothesis> best;
  if (!graph.HasNode(symptom) || max_hops <= 0) return {};
  UpstreamPaths(
      graph, std::string(symptom), max_hops,
      [&](const Edge& e) { return Carries(e, severity).carries; },
      [&](const std::vector<int>& path) {
        Hypothesis h;
        h.path = PathNames(graph, path);
        h.cause = h.path.front();
        h.hops = static_cast<int>(path.size());
        h.weakest = Evidence::kMeasured;
        for (int i : path) {
          const Edge& e = graph.edges[i];
          Carry c = Carries(e, severity);
          h.weakest = Weaker(h.weakest, c.confidence);
          if (c.via_untested) h.untested_modes.emplace_back(e.source, e.target);
        }
        h.fully_measured = h.weakest == Evidence::kMeasured;
        auto it = best.find(h.cause);
        if (it == best.end() || HypothesisKey(h) < HypothesisKey(it->second)) {
          best[h.cause] = std::move(h);
        }
      });
  std::vector<Hypothesis> out;
  for (auto& [cause, h] : best) out.push_back(std::move(h));
  std::sort(out.begin(), out.end(), [](const Hypothesis& a, const Hypothesis& b) {
    return HypothesisKey(a) < HypothesisKey(b);
  });
  return out;
}

std::vector<Refutation> RefutationsFor(const Graph& graph, std::string_view symptom,
                                       Severity severity) {
  struct PathCap {
    int cap_edge;
    Evidence confidence;
    int hops;
    std::vector<std::string> names;
  };
  std::map<std::string, std::vector<PathCap>> by_source;
  std::set<std::string> explained;
  if (!graph.HasNode(symptom)) return {};
  UpstreamPaths(
      graph, std::string(symptom), -1, [](const Edge&) { return true; },
      [&](const std::vector<int>& path) {
        const std::string& source = graph.edges[path.front()].source;
        int cap = -1;
        Evidence cap_conf = Evidence::kInferred;
        // The strongest edge that cannot carry; among equals the one nearest the symptom.
        for (int i : path) {
          const Edge& e = graph.edges[i];
          if (Carries(e, severity).carries) continue;
          Evidence c = CapConfidence(e);
          if (cap < 0 || c <= cap_conf) {
            cap = i;
            cap_conf = c;
          }
        }
        if (cap < 0) {
          explained.insert(source);
          return;
        }
        by_source[source].push_back(
            {cap, cap_conf, static_cast<int>(path.size()), PathNames(graph, path)});
      });
  std::vector<Refutation> out;
  for (auto& [component, caps] : by_source) {
    if (explained.count(component)) continue;
    // The least well refuted path: weakest cap, then shorter, then names.
    const PathCap* limiting = &caps.front();
    auto more_limiting = [](const PathCap& a, const PathCap& b) {
      if (a.confidence != b.confidence) return a.confidence > b.confidence;
      return std::tie(a.hops, a.names) < std::tie(b.hops, b.names);
    };
    for (const PathCap& pc : caps) {
      if (more_limiting(pc, *limiting)) limiting = &pc;
    }
    Refutation r;
    r.component = component;
    r.confidence = limiting->confidence;
    r.hops = limiting->hops;
    auto cap_of = [&](int i) {
      const Edge& e = graph.edges[i];
      return Cap{e.source, e.target, CapConfidence(e)};
    };
    r.limiting_edge = cap_of(limiting->cap_edge);
    r.caps.push_back(r.limiting_edge);
    std::set<int> cap_edges;
    for (const PathCap& pc : caps) cap_edges.insert(pc.cap_edge);
    for (int i : cap_edges) {  // edge order
      Cap c = cap_of(i);
      if (std::find(r.caps.begin(), r.caps.end(), c) == r.caps.end()) r.caps.push_back(c);
    }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const Refutation& a, const Refutation& b) {
    return std::tie(a.confidence, a.hops, a.component) <
           std::tie(b.confidence, b.hops, b.component);
  });
  return out;
}

EvidenceCounts CountEvidence(const Graph& graph) {
  EvidenceCounts c;
  for (const Edge& e : graph.edges) {
    ++c.total;
    switch (e.evidence) {
      case Evidence::kMeasured:
        ++c.measured;
        break;
      case Evidence::kDocumented:
        ++c.documented;
        break;
      case Evidence::kInferred:
        ++c.inferred;
        break;
    }
  }
  return c;
}

double MeasuredFraction(const Graph& graph) {
  EvidenceCounts c = CountEvidence(graph);
  return c.total == 0 ? 0.0 : static_cast<double>(c.measured) / c.total;
}

std::string StatsLine(const Graph& graph) {
  EvidenceCounts c = CountEvidence(graph);
  return std::to_string(c.total) + " edges, " + std::to_string(c.measured) + " measured (" +
         std::to_string(static_cast<int>(std::lround(100.0 * MeasuredFraction(graph)))) +
         "%); documented " + std::to_string(c.documented) + ", inferred " +
         std::to_string(c.inferred);
}

namespace {

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s;
}

std::string Hops(int n) { return std::to_string(n) + (n == 1 ? " hop" : " hops"); }

std::string Citation(const Edge& e) {
  if (e.evidence != Evidence::kMeasured) return std::string(ToString(e.evidence));
  std::vector<std::string> ids;
  for (const MeasuredBy& m : e.measured_by) {
    if (std::find(ids.begin(), ids.end(), m.scenario) == ids.end()) ids.push_back(m.scenario);
  }
  return "measured (" + Join(ids, ", ") + ")";
}

}  // namespace

std::string RenderCausesReport(const Graph& graph, std::string_view symptom, Severity severity) {
  const std::string sym(symptom);
  const std::string sev(ToString(severity));
  if (!graph.HasNode(symptom)) {
    return "'" + sym + "' is not a component of the graph; valid: " + Join(graph.nodes, ", ") +
           "\n";
  }
  std::ostringstream out;
  std::vector<const Edge*> measured_used;
  auto use = [&](const Edge* e) {
    if (e && e->evidence == Evidence::kMeasured &&
        std::find(measured_used.begin(), measured_used.end(), e) == measured_used.end()) {
      measured_used.push_back(e);
    }
  };

  std::vector<Hypothesis> causes = CausesOf(graph, symptom, severity);
  out << "Causes of " << sym << " at " << sev << " (within this graph):\n";
  if (causes.empty()) out << "  no component in the graph can produce that symptom\n";
  for (const Hypothesis& h : causes) {
    out << "  " << Pad(h.cause, 22) << " " << Pad(std::string(ToString(h.weakest)), 10) << " "
        << Pad(Hops(h.hops), 7) << " " << Join(h.path, " -> ") << "\n";
    for (size_t i = 0; i + 1 < h.path.size(); ++i) use(graph.FindEdge(h.path[i], h.path[i + 1]));
    for (const auto& [s, t] : h.untested_modes) {
      const Edge* e = graph.FindEdge(s, t);
      out << "      only through an untested failure mode of " << s << " -> " << t << ": "
          << (e && e->untested_mode ? e->untested_mode->description : "") << "\n";
    }
  }

  std::vector<Refutation> refuted = RefutationsFor(graph, symptom, severity);
  auto cap_text = [&](const Cap& c) {
    const Edge* e = graph.FindEdge(c.source, c.target);
    std::string how = !e || !e->Causal() ? " does not propagate"
                                         : " only " + std::string(ToString(e->propagation));
    return c.source + " -> " + c.target + how + " (" + std::string(ToString(c.confidence)) + ")";
  };
  auto print_group = [&](const std::string& title, bool measured) {
    bool any = false;
    for (const Refutation& r : refuted) {
      if ((r.confidence == Evidence::kMeasured) != measured) continue;
      if (!any) out << title << "\n";
      any = true;
      std::vector<std::string> caps;
      for (const Cap& c : r.caps) {
        caps.push_back(cap_text(c));
        if (measured) use(graph.FindEdge(c.source, c.target));
      }
      out << "  " << Pad(r.component, 22) << " " << Join(caps, "; ") << "\n";
    }
    if (!any) out << title << " none\n";
  };
  print_group("Ruled out at " + sev + " by measurement:", true);
  print_group("Ruled out at " + sev + " by documentation or inference only:", false);

  bool header = false;
  for (const Edge* e : measured_used) {
    for (const std::string& u : e->untested) {
      if (!header) out << "Not covered by those measurements:\n";
      header = true;
      out << "  - " << e->source << " -> " << e->target << ": " << u << "\n";
    }
  }
  return out.str();
}

std::string SummaryForAgents(const Graph& graph) {
  std::ostringstream out;
  out << "Dependency graph (" << StatsLine(graph)
      << "). Each line: cause -> affected, how far it propagates (halts or degrades), on what "
         "evidence; a path explains a symptom only if every edge on it reaches that severity.\n";
  for (const Edge& e : graph.edges) {
    out << "- " << e.source << " -> " << e.target << ": " << ToString(e.propagation) << ", "
        << Citation(e) << "; " << e.symptom;
    if (e.untested_mode) {
      out << " [untested mode, expected to " << ToString(e.untested_mode->expected) << ": "
          << e.untested_mode->description << "]";
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace slurm_rca::graph
