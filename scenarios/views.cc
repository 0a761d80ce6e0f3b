#include "scenarios/views.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "scenarios/vocabulary.h"

namespace slurm_rca::scenarios {

using Json = nlohmann::ordered_json;

std::vector<Measurement> MeasureSuite(const std::vector<Scenario>& scenarios,
                                      const std::string& set) {
  std::vector<Measurement> out;
  for (const Scenario& s : scenarios) out.push_back(MeasureScenario(s, BundleOf(s, set)));
  return out;
}

namespace {

std::string Collapse(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      out += c;
      space = false;
    }
  }
  return out;
}

std::string Num(const Json& j) {
  if (!j.is_number()) return "-";
  double v = j.get<double>();
  std::ostringstream s;
  s << v;
  return s.str();
}

// "5–30" (min–max over the trials) of one hop, from the trials object; "-" when never seen.
std::string Spread(const Measurement& m, size_t hop) {
  Json t = Json::parse(m.trials_json.empty() ? "{}" : m.trials_json, nullptr, false);
  if (!t.is_object() || !t.contains("hops") || hop >= t["hops"].size()) return "-";
  const Json& h = t["hops"][hop];
  std::string lo = Num(h["min_s"]), hi = Num(h["max_s"]);
  std::string s = lo == hi ? lo : lo + "–" + hi;
  if (h.value("not_seen_in", 0) > 0) s += " (missed in " + std::to_string(h["not_seen_in"].get<int>()) + ")";
  return s;
}

// A bundle's path below the directory that holds the fixtures root ("fixtures/busy/S01-..." when
// the root is a tree's fixtures/), so that an export does not carry this machine's layout.
std::string RelativeToSource(const std::string& path) {
  const std::string root = std::filesystem::path(FixturesRoot()).parent_path().string() + "/";
  return path.rfind(root, 0) == 0 ? path.substr(root.size()) : path;
}

// "2/2 (3 trials), herring 1/1" of one scenario in one set, or "no bundle"; "..., not shown on
// 25.11" for a task whose evidence does not show on the set's release.
std::string HopsMeasured(const Scenario& s, const Measurement& m, const std::string& release) {
  const std::string not_shown =
      s.NotShownOn(release).empty() ? "" : ", not shown on " + release;
  if (!m.error.empty()) return "no bundle" + not_shown;
  int ok = 0;
  for (const HopResult& h : m.hops) ok += h.measured ? 1 : 0;
  std::string hops = std::to_string(ok) + "/" + std::to_string(s.causal_chain.size()) + " (" +
                     std::to_string(m.trials) + " trials)";
  if (!m.herrings.empty()) {
    int shown = 0;
    for (const HopResult& h : m.herrings) shown += h.measured ? 1 : 0;
    hops += ", herring " + std::to_string(shown) + "/" + std::to_string(m.herrings.size());
  }
  return hops + not_shown;
}

}  // namespace

std::string ScenarioTable(const std::vector<Scenario>& scenarios,
                          const std::vector<SetMeasurements>& sets) {
  std::ostringstream o;
  o << "| ID | family | difficulty | split | reported | root cause |";
  for (const SetMeasurements& m : sets) {
    std::string name = m.set + " (" + BundleSetRelease(m.set) + ")";
    o << " " << name << ": hops measured | " << name
      << ": first seen, s (per hop, min–max of trials) |";
  }
  o << " fewest calls | task id |\n|---|---|---|---|---|---|";
  for (size_t k = 0; k < sets.size(); ++k) o << "---|---|";
  o << "---|---|\n";
  int runnable = 0;
  std::vector<int> measured(sets.size(), 0);
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario& s = scenarios[i];
    if (s.status == "runnable") ++runnable;
    o << "| " << s.id << " | " << s.family << " | " << s.difficulty
      << (s.status == "runnable" ? "" : " (" + s.status + ")") << " | "
      << (s.split.empty() ? "-" : s.split) << " | " << s.reported_node << " | " << s.RootCause()
      << " |";
    for (size_t k = 0; k < sets.size(); ++k) {
      const Measurement& m = sets[k].measurements[i];
      if (m.AllMeasured()) ++measured[k];
      std::string seen;
      for (size_t h = 0; h < s.causal_chain.size(); ++h) {
        seen += (h ? " → " : "") + (m.error.empty() ? Spread(m, h) : std::string("-"));
      }
      o << " " << HopsMeasured(s, m, BundleSetRelease(sets[k].set)) << " | " << seen << " |";
    }
    std::optional<int> calls;
    if (!sets.empty()) calls = MinimumCalls(s, sets.front().measurements[i]);
    o << " " << (calls ? std::to_string(*calls) : "-") << " | " << s.TaskId() << " |\n";
  }
  o << "\n" << scenarios.size() << " scenarios, " << runnable << " runnable";
  for (size_t k = 0; k < sets.size(); ++k) {
    const std::string release = BundleSetRelease(sets[k].set);
    int recorded = 0, not_shown = 0;
    for (const Measurement& m : sets[k].measurements) recorded += m.error.empty();
    for (const Scenario& s : scenarios) not_shown += !s.NotShownOn(release).empty();
    o << (k ? "; " : ", ") << measured[k] << " with every hop measured in its " << sets[k].set
      << " (" << release << ") bundle";
    if (recorded < static_cast<int>(scenarios.size())) o << " (" << recorded << " recorded)";
    if (not_shown > 0) o << " (" << not_shown << " not shown on " << release << ")";
  }
  o << ".\n";
  return o.str();
}

Json ExportView(const std::vector<Scenario>& scenarios,
                const std::vector<Measurement>& measurements, View view) {
  Json out = Json::array();
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario& s = scenarios[i];
    if (view == View::kAgent) {
      if (s.status != "runnable") continue;
      out.push_back({{"task_id", s.TaskId()}, {"symptom", Collapse(s.symptom)}});
      continue;
    }
    const Measurement& m = measurements[i];
    Json chain = Json::array();
    for (size_t h = 0; h < s.causal_chain.size(); ++h) {
      const Hop& hop = s.causal_chain[h];
      Json ev = Json::array();
      for (const Item& e : hop.evidence) ev.push_back(e.value);
      Json sig = Json::array();
      for (const Signal& g : hop.signals) {
        Json one = {{"topic", g.topic}, {"outcome", g.outcome}};
        if (!g.filters.empty()) {
          Json f = Json::object();
          for (const auto& [k, v] : g.filters) f[k] = v;
          one["filters"] = f;
        }
        if (!g.daemon.empty()) one["daemon"] = g.daemon;
        if (!g.match.empty()) one["match"] = g.match;
        sig.push_back(one);
      }
      Json one = {{"node", hop.node},
                  {"state", hop.state},
                  {"observable_at_s", hop.observable_at_s},
                  {"evidence", ev},
                  {"signals", sig}};
      if (h < m.hops.size()) {
        one["measured"] = m.hops[h].measured;
        one["measurement"] = m.hops[h].detail;
      }
      chain.push_back(one);
    }
    Json scoring = Json::array();
    for (const Credit& c : s.scoring) {
      scoring.push_back({{"node", c.node}, {"credit", c.credit}, {"rationale", c.rationale}});
    }
    auto notes = [](const std::vector<NodeNote>& v) {
      Json j = Json::object();
      for (const NodeNote& n : v) j[n.node] = n.why;
      return j;
    };
    auto items = [](const std::vector<Item>& v) {
      Json j = Json::array();
      for (const Item& a : v) j.push_back(a.value);
      return j;
    };
    Json faults = Json::array();
    for (const FaultRef& f : s.faults) {
      Json t = Json::object();
      for (const auto& [k, v] : f.target) t[k] = v;
      Json one = {{"name", f.name}, {"target", t}, {"at_s", f.at_s}};
      if (f.heal_at_s) one["heal_at_s"] = *f.heal_at_s;
      faults.push_back(one);
    }
    Json trials = m.trials_json.empty() ? Json(nullptr) : Json::parse(m.trials_json, nullptr, false);
    Json params = Json::object();
    for (const auto& [k, v] : s.parameters) params[k] = v;
    Json herrings = Json::array();
    for (size_t h = 0; h < s.red_herrings.size(); ++h) {
      const RedHerring& rh = s.red_herrings[h];
      Json one = {{"node", rh.shown.node}, {"state", rh.shown.state}, {"why", rh.why}};
      if (h < m.herrings.size()) one["measured"] = m.herrings[h].measured;
      herrings.push_back(one);
    }
    std::optional<int> calls = MinimumCalls(s, m);
    out.push_back({{"id", s.id},
                   {"task_id", s.TaskId()},
                   {"title", s.title},
                   {"family", s.family},
                   {"difficulty", s.difficulty},
                   {"base_id", s.base_id},
                   {"variant", s.variant},
                   {"parameters", params},
                   {"split", s.split},
                   {"post_freeze", s.post_freeze},
                   {"red_herrings", herrings},
                   {"fewest_calls", calls ? Json(*calls) : Json(nullptr)},
                   {"status", s.status},
                   {"blocked_reason", s.blocked_reason},
                   {"reported_node", s.reported_node},
                   {"canary", s.canary},
                   {"symptom", Collapse(s.symptom)},
                   {"notes", s.notes},
                   {"injection", Collapse(s.injection)},
                   {"observe_s", s.observe_s},
                   {"propagation_s", s.PropagationS()},
                   {"root_cause", s.RootCause()},
                   {"diagnosable", s.Diagnosable()},
                   {"measured", m.AllMeasured()},
                   {"bundle", m.error.empty() ? Json(RelativeToSource(m.bundle)) : Json(nullptr)},
                   {"trials", trials},
                   {"causal_chain", chain},
                   {"scoring", scoring},
                   {"distractors", notes(s.distractors)},
                   {"ruled_out", notes(s.ruled_out)},
                   {"remediation_helpful",
                    s.remediation_helpful ? items(*s.remediation_helpful) : Json(nullptr)},
                   {"harmful_actions", items(s.harmful_actions)},
                   {"faults", faults},
                   {"caveats", s.verification ? Json(s.verification->caveats) : Json(nullptr)}});
  }
  return out;
}

std::vector<Problem> SuiteMinimum(const std::vector<Scenario>& scenarios,
                                  const std::string& where) {
  int runnable = 0, undiagnosable = 0, multi = 0;
  // Red herrings and post-freeze count scenarios (files), not tasks: a variant is the same
  // incident with other names, not another experiment.
  std::set<std::string> herrings, post_freeze;
  std::set<std::string> families;
  for (const Scenario& s : scenarios) {
    if (s.status != "runnable") continue;
    ++runnable;
    undiagnosable += s.difficulty == "undiagnosable";
    multi += s.difficulty == "multi_layer";
    const std::string& base = s.base_id.empty() ? s.id : s.base_id;
    if (!s.red_herrings.empty()) herrings.insert(base);
    if (!s.post_freeze.empty()) post_freeze.insert(base);
    families.insert(s.family);
  }
  std::vector<Problem> out;
  auto add = [&](std::string m) { out.push_back({where, 0, "suite-minimum", std::move(m)}); };
  if (runnable < kMinRunnable) {
    add(std::to_string(runnable) + " runnable tasks (at least " + std::to_string(kMinRunnable) + ")");
  }
  if (static_cast<int>(herrings.size()) < kMinRedHerrings) {
    add(std::to_string(herrings.size()) + " runnable scenarios with a red herring (at least " +
        std::to_string(kMinRedHerrings) + ")");
  }
  if (static_cast<int>(post_freeze.size()) < kMinPostFreeze) {
    add(std::to_string(post_freeze.size()) +
        " runnable scenarios written after the graph's freeze (at least " +
        std::to_string(kMinPostFreeze) + ")");
  }
  if (undiagnosable < 3) add(std::to_string(undiagnosable) + " runnable undiagnosable (at least 3)");
  if (multi < 4) add(std::to_string(multi) + " runnable multi_layer (at least 4)");
  for (std::string_view f : Families()) {
    if (!families.count(std::string(f))) add("no runnable scenario of family " + std::string(f));
  }
  std::set<std::string> splits;
  for (const Scenario& s : scenarios) {
    if (s.split.empty()) {
      if (!s.variant.empty()) continue;  // reported once, for the file
      out.push_back({s.file, s.Line("id"), "split-missing",
                     s.id + " declares no split (split: dev or split: test)"});
    } else if (s.status == "runnable") {
      splits.insert(s.split);
    }
  }
  if (runnable > 0 && splits.size() < 2) add("the runnable scenarios need both a dev and a test split");
  // Issue #17: at least two variants per single_layer scenario, so that a rule keyed to one node,
  // partition or account stops paying.
  std::map<std::string, int> variants;
  std::map<std::string, const Scenario*> bases;
  for (const Scenario& s : scenarios) {
    if (s.status != "runnable" || s.difficulty != "single_layer") continue;
    if (s.variant.empty()) {
      bases[s.id] = &s;
    } else {
      ++variants[s.base_id];
    }
  }
  for (const auto& [id, s] : bases) {
    int n = variants[id];
    bool exhausted = s->variants_exhausted.find_first_not_of(" \t\n") != std::string::npos;
    if (n < kMinVariants && !exhausted) {
      out.push_back({s->file, s->Line("id"), "suite-minimum",
                     id + " is single_layer with " + std::to_string(n) + " variant(s): at least " +
                         std::to_string(kMinVariants) +
                         ", or variants_exhausted saying why its parameters allow no more"});
    } else if (n >= kMinVariants && !s->variants_exhausted.empty()) {
      out.push_back({s->file, s->Line("variants_exhausted"), "suite-minimum",
                     id + " has " + std::to_string(n) + " variants: its variants_exhausted is stale"});
    }
  }
  return out;
}

}  // namespace slurm_rca::scenarios
