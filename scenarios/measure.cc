#include "scenarios/measure.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "mcp/backend/bundle_pack.h"
#include "mcp/backend/replay_backend.h"
#include "mcp/topics/overview.h"
#include "mcp/topics/topics.h"

namespace slurm_rca::scenarios {

const std::vector<PlannedRead>& RecorderPlan() {
  static const std::vector<PlannedRead> plan = [] {
    std::vector<PlannedRead> p;
    std::set<std::vector<std::string>> seen;
    auto add = [&](const mcp::Topic& t, const mcp::Filters& f) {
      base::Result<std::vector<std::string>> argv = mcp::BuildArgv(t, f);
      if (argv.ok() && seen.insert(*argv).second) p.push_back({&t, *argv});
    };
    for (const mcp::Topic& topic : mcp::Topics()) {
      // Node files (the fabric topic, #10) are not an argv: the recorder's Read would only record
      // a guard refusal. Bundles have none; replay answers the topic as not in the bundle.
      // GPU samples (gpu_idle) are the live server's own memory: not recorded either.
      if (topic.source == mcp::Source::kNodeFiles || topic.source == mcp::Source::kSamples) {
        continue;
      }
      add(topic, {});
      for (const mcp::Filter& f : topic.filters) {
        if (f.kind != mcp::Filter::Kind::kLocal && !f.example.empty()) {
          add(topic, {{f.name, f.example}});
        }
      }
    }
    for (const char* daemon : {"slurmdbd", "slurmd"}) {
      add(*mcp::FindTopic("logs"), {{"daemon", daemon}});
    }
    return p;
  }();
  return plan;
}

std::vector<std::string> SignalArgv(const Signal& signal) {
  const mcp::Topic* topic = mcp::FindTopic(signal.topic);
  if (!topic) return {};
  if (topic->source == mcp::Source::kDaemonLog) {
    return {"log", signal.daemon.empty() ? "slurmctld" : signal.daemon};
  }
  mcp::Filters f(signal.filters.begin(), signal.filters.end());
  base::Result<std::vector<std::string>> argv = mcp::BuildArgv(*topic, f);
  return argv.ok() ? *argv : std::vector<std::string>{};
}

namespace {

// The first line of text matching re, cut to 160 bytes.
std::string MatchingLine(const std::string& text, const RE2& re) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (RE2::PartialMatch(line, re)) return line.size() > 160 ? line.substr(0, 160) + "..." : line;
  }
  return "";
}

}  // namespace

SignalResult SignalHolds(mcp::Backend& backend, const Signal& signal) {
  std::vector<std::string> argv = SignalArgv(signal);
  if (argv.empty()) return {false, "not a read slurm-mcp can make"};
  mcp::Evidence e = argv[0] == "log" ? backend.ReadLog(argv[1], mcp::kLogTailLines)
                                     : backend.Read(argv);
  std::string outcome = mcp::OutcomeName(e.outcome);
  std::string what = signal.topic + (argv[0] == "log" ? " " + argv[1] : "") + ": " + outcome;
  if (outcome != signal.outcome) return {false, what + ", expected " + signal.outcome};
  if (signal.match.empty()) return {true, what};
  RE2 re(signal.match, RE2::Quiet);
  if (!re.ok()) return {false, "bad pattern"};
  for (const std::string* text : {&e.out, &e.err, &e.cause}) {
    std::string line = MatchingLine(*text, re);
    if (!line.empty()) return {true, what + ", '" + line + "'"};
  }
  return {false, what + ", nothing matches /" + signal.match + "/"};
}

namespace {

// The bare reads the overview makes (the topics' default argv) and, at the backend's current
// evidence, whether each of a hop's signals on them shows in the overview's own answer.
std::set<std::vector<std::string>> ShownByOverview(mcp::Backend& backend, const Hop& hop,
                                                   const std::string& slurm_version) {
  std::vector<mcp::Evidence> reads;
  for (const mcp::OverviewRead& r : mcp::OverviewReads()) {
    mcp::Evidence e = backend.Read(r.argv);
    if (e.outcome == mcp::Evidence::Outcome::kUnavailable && !r.fallback.empty()) {
      e = backend.Read(r.fallback);
    }
    reads.push_back(std::move(e));
  }
  const mcp::OverviewSummary overview = mcp::SummarizeOverview(reads, backend.Label());
  std::map<std::vector<std::string>, bool> shown;
  for (const Signal& signal : hop.signals) {
    if (!signal.AppliesTo(slurm_version)) continue;
    const std::vector<std::string> argv = SignalArgv(signal);
    std::size_t section = mcp::OverviewReads().size();
    for (std::size_t i = 0; i < mcp::OverviewReads().size(); ++i) {
      const mcp::Topic* topic = mcp::FindTopic(mcp::OverviewReads()[i].topic);
      if (topic && argv == mcp::DefaultArgv(*topic)) section = i;
    }
    if (section == mcp::OverviewReads().size()) continue;  // not a read the overview makes
    bool holds = mcp::OutcomeName(reads[section].outcome) == signal.outcome;
    if (holds && !signal.match.empty()) {
      RE2 re(signal.match, RE2::Quiet);
      holds = re.ok() && !MatchingLine(overview.text, re).empty();
    }
    auto [it, added] = shown.emplace(argv, holds);
    if (!added) it->second = it->second && holds;
  }
  std::set<std::vector<std::string>> out;
  for (const auto& [argv, holds] : shown) {
    if (holds) out.insert(argv);
  }
  return out;
}

}  // namespace

bool HopHolds(mcp::Backend& backend, const Hop& hop, std::string* detail,
              const std::string& slurm_version) {
  if (hop.signals.empty()) {
    if (detail) *detail = "no signals";
    return false;
  }
  bool all = true, any = false;
  std::string d;
  for (const Signal& s : hop.signals) {
    if (!s.AppliesTo(slurm_version)) continue;
    any = true;
    SignalResult r = SignalHolds(backend, s);
    all = all && r.holds;
    d += (d.empty() ? "" : "; ") + r.detail;
  }
  if (!any) {
    if (detail) {
      *detail = "no signal of this hop describes Slurm " +
                (slurm_version.empty() ? std::string("of unknown release") : slurm_version);
    }
    return false;
  }
  if (detail) *detail = d;
  return all;
}

bool Measurement::AllMeasured() const {
  if (!error.empty() || hops.empty()) return false;
  for (const HopResult& h : hops) {
    if (!h.measured) return false;
  }
  for (const HopResult& h : herrings) {
    if (!h.measured) return false;
  }
  return true;
}

namespace {
std::string& FixturesRootRef() {
  static std::string root = "fixtures";
  return root;
}

std::string& DefaultSet() {
  static std::string set = kBusySet;  // issue #17: the busy set is the default, clean the comparison
  return set;
}
}  // namespace

const std::vector<std::string>& BundleSets() {
  static const std::vector<std::string> sets = {kBusySet, kCleanSet, kBusy2511Set};
  return sets;
}

std::string BundleSetRelease(const std::string& set) {
  if (set == kBusySet || set == kCleanSet) return "22.05";
  if (set == kBusy2511Set) return "25.11";
  return "";
}

std::string BusySetOfRelease(const std::string& release) {
  if (release == "22.05") return kBusySet;
  if (release == "25.11") return kBusy2511Set;
  return "";
}

bool SetDefaultBundleSet(const std::string& set) {
  if (std::find(BundleSets().begin(), BundleSets().end(), set) == BundleSets().end()) return false;
  DefaultSet() = set;
  return true;
}

const std::string& DefaultBundleSet() { return DefaultSet(); }

void SetFixturesRoot(const std::string& root) { FixturesRootRef() = root; }

const std::string& FixturesRoot() { return FixturesRootRef(); }

std::string BundleDir(const std::string& scenario_id, const std::string& set) {
  std::string root = FixturesRoot();
  const std::string& which = set.empty() ? DefaultSet() : set;
  // The clean set is where bundles always were (fixtures/<id>); the others are fixtures/<set>/.
  if (which != kCleanSet) root += "/" + which;
  return root + "/" + scenario_id;
}

std::string BundleOf(const Scenario& scenario, const std::string& set) {
  const std::string& which = set.empty() ? DefaultSet() : set;
  if (!scenario.OwnSet().empty() && BundleSetRelease(which) == "22.05") {
    return BundleDir(scenario.id, scenario.OwnSet());
  }
  return BundleDir(scenario.id, which);
}

bool RecordedIn(const Scenario& scenario, const std::string& set) {
  return mcp::BundleExists(BundleOf(scenario, set));
}

Measurement MeasureScenario(const Scenario& scenario, const std::string& bundle_dir) {
  Measurement m;
  m.bundle = bundle_dir;
  if (!mcp::BundleExists(bundle_dir)) {
    m.error = "no recorded bundle " + bundle_dir + " (rca-bench record " + scenario.id + ")";
    return m;
  }
  auto opened = mcp::ReplayBackend::Open(bundle_dir);
  if (!opened.ok()) {
    m.error = opened.status().message();
    return m;
  }
  std::unique_ptr<mcp::ReplayBackend> replay = std::move(opened).value();
  if (replay->scenario() != scenario.id) {
    m.error = bundle_dir + " records scenario '" + replay->scenario() + "', not " + scenario.id;
    return m;
  }
  m.trials_json = replay->trials_json();
  if (!m.trials_json.empty()) {
    auto t = nlohmann::json::parse(m.trials_json, nullptr, false);
    if (t.is_object() && t.contains("count") && t["count"].is_number_integer()) {
      m.trials = t["count"].get<int>();
    }
  }
  const auto& snaps = replay->snapshots();
  // The baseline is the snapshot before the fault (negative offset); the first after it serves
  // hops at 0.
  double baseline = 0, first_after = 0;
  bool has_baseline = false, has_after = false;
  for (const auto& s : snaps) {
    if (s.offset_seconds < 0) {
      baseline = s.offset_seconds;
      has_baseline = true;
    } else if (!has_after) {
      first_after = s.offset_seconds;
      has_after = true;
    }
  }
  // A hop at 0 is the fault itself: its evidence must show by the time the next hop's does
  // (by the end of the window when no later hop is timed). When it first showed is the
  // bundle's trials.hops[].min_s .. max_s.
  auto evaluate = [&](const Hop& hop, int number) {
    HopResult r{number, hop.node, false, ""};
    if (!has_baseline || !has_after) {
      r.detail = "the bundle has no snapshot before the fault and after it";
      return r;
    }
    double at = hop.observable_at_s;
    if (at <= 0) {
      at = scenario.observe_s;
      for (const Hop& later : scenario.causal_chain) {
        if (later.observable_at_s > 0) {
          at = later.observable_at_s;
          break;
        }
      }
    }
    at = std::max(at, first_after);
    replay->SetOffset(at);
    std::string after, before;
    bool holds = HopHolds(*replay, hop, &after, replay->slurm_version());
    if (holds) r.shown_by_overview = ShownByOverview(*replay, hop, replay->slurm_version());
    replay->SetOffset(baseline);
    bool held_before = HopHolds(*replay, hop, &before, replay->slurm_version());
    if (!holds) {
      r.detail = "at " + std::to_string(static_cast<int>(at)) + " s: " + after;
    } else if (held_before) {
      r.detail = "already before the fault: " + before;
    } else {
      r.measured = true;
      r.detail = "at " + std::to_string(static_cast<int>(at)) + " s: " + after;
    }
    return r;
  };
  m.slurm_version = replay->slurm_version();
  for (size_t i = 0; i < scenario.causal_chain.size(); ++i) {
    m.hops.push_back(evaluate(scenario.causal_chain[i], static_cast<int>(i + 1)));
  }
  // A red herring is measured like a hop: a real anomaly that appeared with the faults.
  for (size_t i = 0; i < scenario.red_herrings.size(); ++i) {
    m.herrings.push_back(evaluate(scenario.red_herrings[i].shown, static_cast<int>(i + 1)));
  }
  return m;
}

std::optional<int> MinimumCalls(const Scenario& scenario, const Measurement& m) {
  if (!m.error.empty() || m.hops.empty()) return std::nullopt;
  for (const HopResult& h : m.hops) {
    if (!h.measured) return std::nullopt;
  }
  std::set<std::vector<std::string>> reads;
  for (const Hop& hop : scenario.causal_chain) {
    for (const Signal& g : hop.signals) reads.insert(SignalArgv(g));
  }
  // A read joins the overview call when the overview shows it for every hop that makes it.
  int in_overview = 0;
  for (const mcp::OverviewRead& o : mcp::OverviewReads()) {
    const std::vector<std::string> argv = mcp::DefaultArgv(*mcp::FindTopic(o.topic));
    if (!reads.count(argv)) continue;
    bool shown = true;
    for (size_t i = 0; i < scenario.causal_chain.size() && i < m.hops.size(); ++i) {
      bool makes = false;
      for (const Signal& g : scenario.causal_chain[i].signals) makes = makes || SignalArgv(g) == argv;
      if (makes && !m.hops[i].shown_by_overview.count(argv)) shown = false;
    }
    if (shown) ++in_overview;
  }
  int calls = static_cast<int>(reads.size()) - in_overview + (in_overview > 0 ? 1 : 0);
  return calls;
}

std::vector<Problem> MeasurementProblems(const Scenario& s, const Measurement& m) {
  std::vector<Problem> out;
  bool blocked = s.status == "blocked";
  if (blocked) {
    if (m.error.empty()) {
      out.push_back({s.file, s.Line("status"), "blocked-measured",
                     "blocked, but a bundle is recorded in " + m.bundle});
    }
    return out;
  }
  if (!m.error.empty()) {
    out.push_back({s.file, s.Line("id"), "bundle-missing", m.error});
    return out;
  }
  // A task that says its evidence does not show on this bundle's release: only a bundle that
  // shows it after all is a problem (the claim went stale).
  if (std::string why = s.NotShownOn(m.slurm_version); !why.empty()) {
    if (m.AllMeasured()) {
      out.push_back({s.file, s.Line("canary"), "not-shown-measured",
                     "not_shown_on says the evidence does not show on " + m.slurm_version +
                         " (" + why + "), but " + m.bundle +
                         " measures every hop: take the claim out"});
    }
    return out;
  }
  for (size_t i = 0; i < m.hops.size() && i < s.causal_chain.size(); ++i) {
    if (!m.hops[i].measured) {
      out.push_back({s.file, s.causal_chain[i].line, "hop-unmeasured",
                     "hop " + std::to_string(i + 1) + " (" + m.hops[i].node + "): " +
                         m.hops[i].detail});
    }
  }
  for (size_t i = 0; i < m.herrings.size() && i < s.red_herrings.size(); ++i) {
    if (!m.herrings[i].measured) {
      out.push_back({s.file, s.red_herrings[i].line, "herring-unmeasured",
                     "red herring " + std::to_string(i + 1) + " (" + m.herrings[i].node + "): " +
                         m.herrings[i].detail});
    }
  }
  return out;
}

}  // namespace slurm_rca::scenarios
