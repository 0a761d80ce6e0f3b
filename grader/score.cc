#include "grader/score.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "base/file.h"
#include "grader/baselines.h"
#include "scenarios/measure.h"
#include "scenarios/vocabulary.h"

namespace slurm_rca::grader {

namespace sc = scenarios;
using Json = nlohmann::json;

std::string GraphDigest(const std::string& graph_text) {
  return "sha256:" + sc::Sha256Hex(graph_text, 16);
}

std::string GraphDigestOfFile(const std::string& path) {
  std::optional<std::string> text = base::ReadFile(path);
  return text ? GraphDigest(*text) : "unreadable";
}

namespace {
std::string& GraphDigestRef() {
  static std::string digest = "unset";
  return digest;
}
}  // namespace

void SetGraphDigest(const std::string& digest) { GraphDigestRef() = digest; }

const std::string& CurrentGraphDigest() { return GraphDigestRef(); }

std::string SuiteFingerprint(const std::vector<sc::Scenario>& suite) {
  return SuiteFingerprint(suite, CurrentGraphDigest(), sc::DefaultBundleSet());
}

std::string SuiteFingerprint(const std::vector<sc::Scenario>& suite, const std::string& graph_digest,
                             const std::string& bundle_set) {
  std::vector<const sc::Scenario*> sorted;
  for (const sc::Scenario& s : suite) sorted.push_back(&s);
  std::sort(sorted.begin(), sorted.end(),
            [](const sc::Scenario* a, const sc::Scenario* b) { return a->id < b->id; });
  std::ostringstream o;
  for (const sc::Scenario* s : sorted) {
    o << s->id << '\n' << s->TaskId() << '\n' << s->status << '\n' << s->family << '\n'
      << s->difficulty << '\n';
    if (!s->split.empty()) o << "split " << s->split << '\n';
    for (const sc::Credit& c : s->scoring) o << c.node << '=' << c.credit << '\n';
    for (const sc::NodeNote& r : s->ruled_out) o << "ruled_out " << r.node << '\n';
    if (s->remediation_helpful) {
      for (const sc::Item& a : *s->remediation_helpful) o << "helpful " << a.value << '\n';
    }
    for (const sc::Item& a : s->harmful_actions) o << "harmful " << a.value << '\n';
  }
  o << "graph " << graph_digest << '\n' << "bundles " << bundle_set << '\n';
  return "sha256:" + sc::Sha256Hex(o.str(), 16);
}

namespace {

std::string TypeName(const Json& j) {
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_array()) return "an array";
  if (j.is_object()) return "an object";
  return "null";
}

class Parser {
 public:
  Parser(std::string file, const std::vector<sc::Scenario>& suite, ParsedSubmission* out)
      : file_(std::move(file)), suite_(suite), out_(out) {
    // A task id is a SHA-256: once per scenario, not once per scenario and answer.
    task_ids_.reserve(suite_.size());
    for (const sc::Scenario& x : suite_) task_ids_.push_back(x.TaskId());
  }

  void Add(int line, std::string message) { out_->problems.push_back({.file = file_, .line = line, .message = message}); }

  bool Keys(const Json& o, int line, const std::string& what, const std::set<std::string>& required,
            const std::set<std::string>& optional) {
    if (!o.is_object()) {
      Add(line, what + " must be a JSON object, got " + TypeName(o));
      return false;
    }
    bool ok = true;
    for (const auto& [k, v] : o.items()) {
      if (!required.count(k) && !optional.count(k)) {
        Add(line, "unknown key '" + k + "' in " + what);
        ok = false;
      }
    }
    for (const std::string& k : required) {
      if (!o.contains(k)) {
        Add(line, "missing key '" + k + "' in " + what);
        ok = false;
      }
    }
    return ok;
  }

  std::optional<std::string> Str(const Json& o, const std::string& key, int line) {
    if (!o.contains(key)) return std::nullopt;
    if (!o[key].is_string() || o[key].get<std::string>().empty()) {
      Add(line, key + " must be a non-empty string, got " + TypeName(o[key]));
      return std::nullopt;
    }
    return o[key].get<std::string>();
  }

  std::optional<std::vector<std::string>> Strings(const Json& o, const std::string& key,
                                                  int line) {
    if (!o.contains(key)) return std::vector<std::string>{};
    if (!o[key].is_array()) {
      Add(line, key + " must be an array of strings, got " + TypeName(o[key]));
      return std::nullopt;
    }
    std::vector<std::string> v;
    for (const Json& e : o[key]) {
      if (!e.is_string()) {
        Add(line, key + " must be an array of strings; an element is " + TypeName(e));
        return std::nullopt;
      }
      v.push_back(e.get<std::string>());
    }
    return v;
  }

  void Header(const Json& h, int line, Submission* s) {
    if (!Keys(h, line, "the header",
              {"configuration", "configuration_hash", "model", "suite_fingerprint", "date"},
              {"kind", "usage", "cost_usd", "prices_file", "models_served", "temperature", "seed",
               "stopped"})) {
      return;
    }
    RunExtras(h, line, s);
    if (h.contains("kind")) {
      auto kind = Str(h, "kind", line);
      if (kind && *kind != "agent" && *kind != "reference") {
        Add(line, "kind must be \"agent\" or \"reference\" (an audit of the benchmark), got \"" +
                      *kind + "\"");
      } else if (kind) {
        s->kind = *kind;
      }
    }
    s->configuration = Str(h, "configuration", line).value_or("");
    s->configuration_hash = Str(h, "configuration_hash", line).value_or("");
    s->model = Str(h, "model", line).value_or("");
    s->suite_fingerprint = Str(h, "suite_fingerprint", line).value_or("");
    s->date = Str(h, "date", line).value_or("");
    std::string want = SuiteFingerprint(suite_);
    if (!s->suite_fingerprint.empty() && s->suite_fingerprint != want) {
      Add(line, "suite_fingerprint " + s->suite_fingerprint + " is not this suite's (" + want +
                    "): the answers were made against another suite");
    }
  }

  // The header's optional record of what the run spent and sent (rca-bench run, issue #37).
  void RunExtras(const Json& h, int line, Submission* s) {
    if (h.contains("usage")) {
      const Json& u = h["usage"];
      RunUsage usage;
      const std::set<std::string> counts = {"input_tokens",
                                            "output_tokens",
                                            "cached_input_tokens",
                                            "cache_creation_input_tokens",
                                            "model_turns",
                                            "tool_calls",
                                            "task_runs"};
      std::set<std::string> keys = counts;
      keys.insert("wall_s");
      if (Keys(u, line, "the header's usage", keys, {})) {
        bool ok = true;
        for (const auto& [k, v] : u.items()) {
          if (!v.is_number() || v.get<double>() < 0 ||
              (counts.count(k) && !v.is_number_integer())) {
            Add(line, "usage." + k + " must be a non-negative " +
                          (counts.count(k) ? "integer" : "number") + ", got " + v.dump());
            ok = false;
          }
        }
        if (ok) {
          usage.input_tokens = u["input_tokens"];
          usage.output_tokens = u["output_tokens"];
          usage.cached_input_tokens = u["cached_input_tokens"];
          usage.cache_creation_input_tokens = u["cache_creation_input_tokens"];
          usage.model_turns = u["model_turns"];
          usage.tool_calls = u["tool_calls"];
          usage.task_runs = u["task_runs"];
          usage.wall_s = u["wall_s"];
          s->usage = usage;
        }
      }
    }
    if (h.contains("cost_usd")) {
      if (!h["cost_usd"].is_number() || h["cost_usd"].get<double>() < 0) {
        Add(line, "cost_usd must be a non-negative number, got " + h["cost_usd"].dump());
      } else {
        s->cost_usd = h["cost_usd"].get<double>();
      }
    }
    if (h.contains("prices_file")) Str(h, "prices_file", line);
    if (h.contains("models_served")) {
      if (auto v = Strings(h, "models_served", line)) s->models_served = *v;
    }
    for (const char* key : {"temperature", "seed"}) {
      if (h.contains(key) && !h[key].is_number() && h[key] != "not sent") {
        Add(line, std::string(key) + " must be a number or \"not sent\", got " + h[key].dump());
      }
    }
    if (h.contains("stopped")) s->stopped = Str(h, "stopped", line).value_or("");
  }

  void Answer(const Json& a, int line, Submission* s) {
    if (!Keys(a, line, "an answer", {"scenario_id", "root_cause", "confidence"},
              {"ruled_out", "actions_proposed", "time_to_hypothesis_s"})) {
      return;
    }
    grader::Answer ans;
    ans.line = line;
    auto id = Str(a, "scenario_id", line);
    auto cause = Str(a, "root_cause", line);
    const sc::Scenario* found = nullptr;
    if (id) {
      for (size_t i = 0; i < suite_.size(); ++i) {
        if (suite_[i].id == *id || task_ids_[i] == *id) found = &suite_[i];
      }
      if (!found) {
        Add(line, "unknown scenario_id '" + *id + "' (an id or a task id of rca-bench list)");
      } else if (found->status != "runnable") {
        Add(line, "scenario " + *id + " is blocked: it is not scored");
        found = nullptr;
      } else if (!seen_.insert(found->id).second) {
        Add(line, "a second answer to " + *id + " (one per scenario)");
        found = nullptr;
      }
    }
    if (cause && !sc::IsComponent(*cause)) {
      Add(line, "root_cause '" + *cause + "' is not a component of the vocabulary");
      cause.reset();
    }
    if (!a["confidence"].is_number()) {
      Add(line, "confidence must be a number in [0, 1], got " + TypeName(a["confidence"]));
    } else {
      ans.confidence = a["confidence"].get<double>();
      if (!(ans.confidence >= 0 && ans.confidence <= 1)) {
        Add(line, "confidence " + a["confidence"].dump() + " is outside [0, 1]");
      }
    }
    auto ruled = Strings(a, "ruled_out", line);
    if (ruled) {
      for (const std::string& r : *ruled) {
        if (!sc::IsComponent(r) || r == sc::kUnknown) {
          Add(line, "ruled_out '" + r + "' is not a component that can be ruled out");
        }
      }
      ans.ruled_out = *ruled;
    }
    auto actions = Strings(a, "actions_proposed", line);
    if (actions) {
      for (const std::string& act : *actions) {
        base::Result<sc::Action> parsed = sc::ParseAction(act);
        if (!parsed.ok()) Add(line, "actions_proposed: " + parsed.status().message());
      }
      ans.actions = *actions;
    }
    if (a.contains("time_to_hypothesis_s")) {
      const Json& t = a["time_to_hypothesis_s"];
      if (!t.is_number() || t.get<double>() < 0) {
        Add(line, "time_to_hypothesis_s must be a number >= 0, got " + t.dump());
      } else {
        ans.time_to_hypothesis_s = t.get<double>();
      }
    }
    if (found) ans.scenario_id = found->id;
    if (cause) ans.root_cause = *cause;
    s->answers.push_back(std::move(ans));
  }

  void Run(const std::string& text) {
    Submission s;
    std::vector<std::pair<Json, int>> items;
    std::string trimmed = text;
    trimmed.erase(0, trimmed.find_first_not_of(" \t\r\n"));
    if (!trimmed.empty() && trimmed[0] == '[') {
      Json arr = Json::parse(text, nullptr, false);
      if (arr.is_discarded()) {
        Add(1, "not valid JSON");
        return;
      }
      // A JSON array has no lines per item: items are numbered from 1.
      int k = 0;
      for (const Json& e : arr) items.push_back({e, ++k});
    } else {
      std::istringstream in(text);
      std::string line;
      int n = 0;
      while (std::getline(in, line)) {
        ++n;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        Json j = Json::parse(line, nullptr, false);
        if (j.is_discarded()) {
          Add(n, "not valid JSON");
          continue;
        }
        items.push_back({j, n});
      }
    }
    if (items.empty()) {
      Add(1, "empty submission: a header object and one answer per scenario are expected");
      return;
    }
    const auto& [first, first_line] = items.front();
    if (!first.is_object() || first.contains("scenario_id")) {
      Add(first_line, "the first object must be the header (configuration, configuration_hash, "
                      "model, suite_fingerprint, date)");
    } else {
      Header(first, first_line, &s);
    }
    for (size_t i = 1; i < items.size(); ++i) Answer(items[i].first, items[i].second, &s);
    if (out_->problems.empty()) out_->submission = std::move(s);
  }

 private:
  std::string file_;
  const std::vector<sc::Scenario>& suite_;
  std::vector<std::string> task_ids_;  // suite_[i].TaskId()
  ParsedSubmission* out_;
  std::set<std::string> seen_;
};

std::string Fixed(double v, int digits = 3) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

ParsedSubmission ParseSubmission(const std::string& text, const std::string& file,
                                 const std::vector<sc::Scenario>& suite) {
  ParsedSubmission out;
  Parser(file, suite, &out).Run(text);
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string LabOf(const sc::Scenario& s) { return s.lab ? s.lab->profile : "4-node"; }

Report Score(const Submission& submission, const std::vector<sc::Scenario>& suite,
             const HarnessTimes* times) {
  Report r;
  if (times) r.harness_problems = times->problems;
  std::map<std::string, const Answer*> by_id;
  for (const Answer& a : submission.answers) by_id[a.scenario_id] = &a;
  std::map<std::string, std::pair<double, int>> fam, diff, split;
  std::pair<double, int> post_freeze{0, 0};
  double brier_e = 0, brier_p = 0, time_sum = 0;
  int time_n = 0;
  std::vector<std::pair<double, int>> bins(10, {0.0, 0});
  std::vector<int> bin_right(10, 0);
  for (const sc::Scenario& s : suite) {
    if (s.status != "runnable") continue;
    ++r.scenarios;
    auto it = by_id.find(s.id);
    double credit = 0;
    if (it == by_id.end()) {
      ++r.missing;
    } else {
      const Answer& a = *it->second;
      ++r.answered;
      credit = s.CreditFor(a.root_cause);
      bool right = a.root_cause == s.RootCause();
      r.correct += right;
      brier_e += std::pow(a.confidence - (right ? 1.0 : 0.0), 2);
      brier_p += std::pow(a.confidence - credit, 2);
      int b = std::min(9, static_cast<int>(a.confidence * 10));
      bins[b].first += a.confidence;
      ++bins[b].second;
      bin_right[b] += right;
      if (s.remediation_helpful) {
        std::set<std::string> helpful, harmful;
        for (const sc::Item& x : *s.remediation_helpful) helpful.insert(x.value);
        for (const sc::Item& x : s.harmful_actions) harmful.insert(x.value);
        for (const std::string& act : a.actions) {
          ++r.actions_proposed;
          if (helpful.count(act)) {
            ++r.actions_helpful;
          } else if (harmful.count(act)) {
            ++r.actions_harmful;
          } else {
            ++r.actions_useless;
          }
        }
      }
      std::set<std::string> eliminated;
      for (const sc::NodeNote& n : s.ruled_out) eliminated.insert(n.node);
      for (const std::string& x : a.ruled_out) {
        ++r.ruled_out_given;
        r.ruled_out_right += eliminated.count(x) ? 1 : 0;
        if (s.Diagnosable() && x == s.RootCause()) ++r.ruled_out_true_cause;
      }
      if (times) {
        auto t = times->by_scenario.find(s.id);
        if (t != times->by_scenario.end() && t->second.root_cause == a.root_cause) {
          r.harness_times_s.push_back(t->second.seconds);
          r.harness_bytes_read.push_back(static_cast<double>(t->second.bytes_read));
          r.harness_tool_results.push_back(t->second.tool_results);
        } else if (t != times->by_scenario.end()) {
          r.harness_problems.push_back(t->second.file + ": committed " + t->second.root_cause +
                                       " but the submission answers " + a.root_cause +
                                       "; its time is not used");
        } else if (std::find(times->unanswered.begin(), times->unanswered.end(), s.id) ==
                   times->unanswered.end()) {
          r.harness_problems.push_back(s.id + ": no transcript; no time");
        }
      }
      if (a.time_to_hypothesis_s) {
        time_sum += *a.time_to_hypothesis_s;
        ++time_n;
      }
    }
    r.credit[s.id] = credit;
    r.depth += credit;
    fam[s.family].first += credit;
    ++fam[s.family].second;
    diff[s.difficulty].first += credit;
    ++diff[s.difficulty].second;
    if (!s.split.empty()) {
      split[s.split].first += credit;
      ++split[s.split].second;
    }
    if (!s.post_freeze.empty()) {
      post_freeze.first += credit;
      ++post_freeze.second;
    }
    r.depth_by_lab[LabOf(s)] += credit;
    ++r.scenarios_by_lab[LabOf(s)];
  }
  for (auto& [k, v] : r.depth_by_lab) v /= r.scenarios_by_lab[k];
  for (const auto& [k, v] : split) r.depth_by_split[k] = v.first / v.second;
  if (post_freeze.second > 0) {
    r.depth_post_freeze = post_freeze.first / post_freeze.second;
    r.post_freeze_scenarios = post_freeze.second;
  }
  if (r.scenarios > 0) r.depth /= r.scenarios;
  for (const auto& [k, v] : fam) r.depth_by_family[k] = v.first / v.second;
  for (const auto& [k, v] : diff) r.depth_by_difficulty[k] = v.first / v.second;
  if (r.answered > 0) {
    r.brier_exact = brier_e / r.answered;
    r.brier_partial = brier_p / r.answered;
    double ece = 0;
    for (int b = 0; b < 10; ++b) {
      Bin bin;
      bin.count = bins[b].second;
      if (bin.count > 0) {
        bin.mean_confidence = bins[b].first / bin.count;
        bin.accuracy = static_cast<double>(bin_right[b]) / bin.count;
        ece += static_cast<double>(bin.count) / r.answered *
               std::fabs(bin.mean_confidence - bin.accuracy);
      }
      r.reliability.push_back(bin);
    }
    r.ece = ece;
  }
  if (time_n > 0) r.self_reported_time_s = time_sum / time_n;
  if (!r.harness_times_s.empty()) {
    r.harness_time_median_s = Median(r.harness_times_s);
    r.harness_bytes_median = Median(r.harness_bytes_read);
    r.harness_tool_results_median = Median(r.harness_tool_results);
  }
  std::vector<Baseline> b = ComputeBaselines(suite);
  if (!b.empty()) {
    r.floor_name = b.front().name;
    r.floor_depth = b.front().depth;
  }
  return r;
}

std::string RenderReport(const Submission& s, const Report& r) {
  std::ostringstream o;
  o << "configuration " << s.configuration << " (" << s.configuration_hash << ")"
    << (s.kind == "reference" ? " [reference agent: an audit of the benchmark, not a contestant]"
                              : "")
    << ", model " << s.model << ", " << s.date << ", suite " << s.suite_fingerprint << "\n";
  o << "RCA depth      " << Fixed(r.depth) << "  over " << r.scenarios << " runnable scenarios ("
    << r.answered << " answered, " << r.missing << " missing: scored 0, not abstentions)\n";
  o << "floor          " << Fixed(r.floor_depth) << "  " << r.floor_name << "; margin "
    << (r.depth >= r.floor_depth ? "+" : "") << Fixed(r.depth - r.floor_depth) << "\n";
  o << "exactly right  " << r.correct << " of " << r.scenarios << "\n";
  if (r.brier_exact) {
    o << "Brier          " << Fixed(*r.brier_exact) << " against exact correctness, "
      << Fixed(*r.brier_partial) << " against partial credit (read beside depth, never alone)\n";
    o << "ECE            " << Fixed(*r.ece) << " (10 bins)\n";
  }
  o << "actions        " << r.actions_proposed << " proposed where the scenario has action ground "
    << "truth: " << r.actions_helpful << " helpful, " << r.actions_useless << " useless, "
    << r.actions_harmful << " harmful\n";
  o << "ruled out      " << r.ruled_out_right << " of " << r.ruled_out_given
    << " right; the true cause ruled out " << r.ruled_out_true_cause << " time(s)\n";
  if (r.harness_time_median_s) {
    o << "time to hyp.   " << Fixed(*r.harness_time_median_s, 1) << " s median, measured by the "
      << "harness from the transcripts of " << r.harness_times_s.size() << " answer(s)\n";
    o << "read to hyp.   " << Fixed(*r.harness_bytes_median, 0) << " bytes median in "
      << Fixed(*r.harness_tool_results_median, 1) << " tool results median, before the answer "
      << "(the same transcripts)\n";
  } else {
    o << "time to hyp.   unmeasured (no transcript of this run agrees with its answers)\n";
  }
  for (const std::string& p : r.harness_problems) o << "  no time: " << p << "\n";
  if (r.self_reported_time_s) {
    o << "time (self-reported, not ranked) " << Fixed(*r.self_reported_time_s, 1) << " s mean\n";
  }
  o << "by family     ";
  for (const auto& [k, v] : r.depth_by_family) o << " " << k << " " << Fixed(v);
  o << "\nby difficulty ";
  for (const auto& [k, v] : r.depth_by_difficulty) o << " " << k << " " << Fixed(v);
  if (!r.depth_by_split.empty()) {
    o << "\ndepth by split:";
    for (const auto& [k, v] : r.depth_by_split) o << " " << k << " " << Fixed(v);
  }
  if (r.depth_by_lab.size() > 1) {
    o << "\ndepth by lab:  ";
    for (const auto& [k, v] : r.depth_by_lab) {
      o << " " << k << " " << Fixed(v) << " (" << r.scenarios_by_lab.at(k) << ")";
    }
  }
  if (r.depth_post_freeze) {
    o << "\ndepth on the " << r.post_freeze_scenarios
      << " scenarios written after the graph's freeze: " << Fixed(*r.depth_post_freeze);
  }
  o << "\n";
  return o.str();
}

nlohmann::ordered_json ReportJson(const Submission& s, const Report& r) {
  nlohmann::ordered_json j;
  j["configuration"] = s.configuration;
  j["configuration_hash"] = s.configuration_hash;
  j["kind"] = s.kind;
  j["model"] = s.model;
  j["date"] = s.date;
  j["suite_fingerprint"] = s.suite_fingerprint;
  j["scenarios"] = r.scenarios;
  j["answered"] = r.answered;
  j["missing"] = r.missing;
  j["correct"] = r.correct;
  j["depth"] = r.depth;
  j["floor"] = {{"strategy", r.floor_name}, {"depth", r.floor_depth},
                {"margin", r.depth - r.floor_depth}};
  j["brier_exact"] = r.brier_exact ? Json(*r.brier_exact) : Json(nullptr);
  j["brier_partial"] = r.brier_partial ? Json(*r.brier_partial) : Json(nullptr);
  j["ece"] = r.ece ? Json(*r.ece) : Json(nullptr);
  nlohmann::ordered_json bins = nlohmann::ordered_json::array();
  for (const Bin& b : r.reliability) {
    bins.push_back({{"count", b.count}, {"mean_confidence", b.mean_confidence},
                    {"accuracy", b.accuracy}});
  }
  j["reliability"] = bins;
  j["actions"] = {{"proposed", r.actions_proposed}, {"helpful", r.actions_helpful},
                  {"useless", r.actions_useless}, {"harmful", r.actions_harmful}};
  j["ruled_out"] = {{"given", r.ruled_out_given}, {"right", r.ruled_out_right},
                    {"true_cause", r.ruled_out_true_cause}};
  j["time_to_hypothesis"] = {
      {"median_s", r.harness_time_median_s ? Json(*r.harness_time_median_s) : Json(nullptr)},
      {"timed_answers", r.harness_times_s.size()},
      {"median_bytes_read", r.harness_bytes_median ? Json(*r.harness_bytes_median) : Json(nullptr)},
      {"median_tool_results",
       r.harness_tool_results_median ? Json(*r.harness_tool_results_median) : Json(nullptr)},
      {"source", "harness transcripts"},
      {"problems", r.harness_problems}};
  j["self_reported_time_s"] =
      r.self_reported_time_s ? Json(*r.self_reported_time_s) : Json(nullptr);
  j["depth_by_family"] = r.depth_by_family;
  j["depth_by_difficulty"] = r.depth_by_difficulty;
  j["depth_by_split"] = r.depth_by_split;
  j["depth_post_freeze"] = r.depth_post_freeze ? nlohmann::ordered_json(*r.depth_post_freeze)
                                               : nlohmann::ordered_json(nullptr);
  j["post_freeze_scenarios"] = r.post_freeze_scenarios;
  j["depth_by_lab"] = r.depth_by_lab;
  j["scenarios_by_lab"] = r.scenarios_by_lab;
  j["credit"] = r.credit;
  return j;
}

}  // namespace slurm_rca::grader
