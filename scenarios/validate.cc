#include "scenarios/validate.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "base/strings.h"
#include "mcp/topics/topics.h"
#include "scenarios/measure.h"
#include "scenarios/vocabulary.h"
#include <re2/re2.h>

namespace slurm_rca::scenarios {

const std::vector<RuleInfo>& Rules() {
  static const std::vector<RuleInfo> rules = {
      {kRuleYamlSyntax, "the file is not readable YAML"},
      {kRuleNotMapping, "the top level is not a mapping"},
      {kRuleUnknownKey, "a key the schema does not define"},
      {kRuleMissingKey, "a required key is absent"},
      {kRuleWrongType, "a value of the wrong type (string for list, quoted number, ...)"},
      {kRuleBadEnum, "family, difficulty or status outside its closed set"},
      {"id-format", "id must match ^S\\d{2}-[a-z0-9]+(-[a-z0-9]+)*$"},
      {"id-dir", "a scenario.yaml must sit in a directory named after its id"},
      {"blank-text", "title, symptom and injection must not be blank"},
      {"canary-uuid", "canary must be a UUID"},
      {"blocked-reason", "blocked needs a blocked_reason; runnable must not have one"},
      {"blocked-measured", "a blocked scenario has a recorded bundle: it cannot have run"},
      {"chain-empty", "causal_chain must not be empty"},
      {"chain-order", "observable_at_s must not decrease along the chain"},
      {"chain-start", "the first hop is observable at 0"},
      {"evidence-empty", "every hop has at least one non-blank evidence string"},
      {"multi-layer-hops", "multi_layer needs at least 3 hops"},
      {"node-unknown", "a component outside the closed vocabulary"},
      {"credit-range", "credit must be within [0, 1]"},
      {"credit-monotone", "a consequence never outscores its cause along the chain"},
      {"full-credit-count", "at most one answer earns full credit"},
      {"score-duplicate", "a component is scored twice"},
      {"rationale-blank", "every credit has a rationale"},
      {"undiagnosable-credit", "undiagnosable: only unknown earns full credit"},
      {"root-cause", "diagnosable: the full-credit answer is the first hop's component"},
      {"unknown-credit", "diagnosable: abstaining earns less than 0.2"},
      {"reported-credit", "the reported component, if not the cause, earns at most 0.2"},
      {"distractor", "distractors are explained and are never the root cause"},
      {"ruled-out", "ruled_out components are explained, not unknown and never the root cause"},
      {"action-invalid", "an action is verb:component with a known verb and component"},
      {"action-duplicate", "an action is listed twice, or is both helpful and harmful"},
      {kRuleDuplicateKey, "a key appears twice in one mapping"},
      {kRuleParameter, "a parameter is badly named, never used, or a ${name} names none"},
      {kRuleVariant, "a variant's name, canary or set is invalid, or repeats another's values"},
      {"red-herring",
       "a red herring is a known, measured anomaly that is not the cause: ruled out, credit <= 0.1"},
      {"herring-unmeasured", "the bundle does not show a red herring's signals at its offset"},
      {"split-missing", "every scenario of the default suite declares split: dev or test"},
      {"post-freeze-edge",
       "a scenario written after the graph freeze uses an edge the frozen graph measures"},
      {"signals-missing", "every hop of a runnable scenario has signals the recorder can check"},
      {"signal-invalid", "a signal's topic, filters, daemon or match pattern is not valid"},
      {"fault-schedule", "at_s and heal_at_s lie in the window, heal after inject"},
      {"workload-invalid", "a workload item's name, count, seconds, nodes or names are invalid"},
      {"observe-window", "observe_s covers the chain (>= propagation_s)"},
      {"lab-size", "a lab: of the large profile has 256-1024 nodes, a multiple of 64, and a "
                   "history of 0-1,000,000 jobs"},
      {"fault-unknown", "a fault primitive FaultCatalog() does not have"},
      {"fault-option", "a fault target option the primitive does not read, or a bad value"},
      {"faults-missing", "a runnable scenario names the faults or the workload that produce it"},
      {"ticket-leak", "the ticket names the root cause, its key words or quotes its evidence"},
      {"bundle-missing", "a runnable scenario has no recorded bundle that opens"},
      {"hop-unmeasured", "the bundle does not show a hop's signals at its offset (or showed them before the fault)"},
      {"not-shown-measured",
       "a variant says its evidence does not show on a release, but that release's bundle shows "
       "every hop"},
      {"duplicate-id", "two scenarios share an id"},
      {"duplicate-canary", "two scenarios share a canary"},
      {"duplicate-task-id", "two canaries give the same task id"},
      {"suite-minimum",
       "the suite has 108 runnable tasks, 3 undiagnosable, 4 multi_layer, 4 scenarios with a red "
       "herring, 6 post-freeze scenarios, every family"},
  };
  return rules;
}

namespace {

bool Blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

using base::Lower;

bool IsUuid(std::string s) {
  static const std::regex dashed(
      "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
  static const std::regex plain("[0-9a-fA-F]{32}");
  if (s.rfind("urn:uuid:", 0) == 0) s = s.substr(9);
  if (s.size() > 2 && s.front() == '{' && s.back() == '}') s = s.substr(1, s.size() - 2);
  return std::regex_match(s, dashed) || std::regex_match(s, plain);
}

int WordCount(const std::string& s) {
  int n = 0;
  bool in = false;
  for (unsigned char c : s) {
    bool w = !std::isspace(c);
    if (w && !in) ++n;
    in = w;
  }
  return n;
}

std::string Fmt(double d) {
  std::string s = std::to_string(d);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// OK, or why the signal cannot be measured (its topic, filters, daemon or match).
base::Status CheckSignal(const Signal& g) {
  auto bad = [](std::string why) { return base::Status::InvalidArgument(std::move(why)); };
  const mcp::Topic* topic = mcp::FindTopic(g.topic);
  if (!topic) return bad("no slurm-mcp topic '" + g.topic + "'");
  if (topic->source == mcp::Source::kDaemonLog) {
    if (!g.filters.empty()) return bad("a logs signal takes daemon and match, not filters");
    if (!g.daemon.empty() && g.daemon != "slurmctld" && g.daemon != "slurmdbd" &&
        g.daemon != "slurmd") {
      return bad("daemon '" + g.daemon + "' is not slurmctld, slurmdbd or slurmd");
    }
  } else {
    if (!g.daemon.empty()) return bad("daemon is for the logs topic only");
    mcp::Filters f(g.filters.begin(), g.filters.end());
    base::Result<std::vector<std::string>> argv = mcp::BuildArgv(*topic, f);
    if (!argv.ok()) return bad(g.topic + ": " + argv.status().message());
    bool recorded = false;
    for (const PlannedRead& p : RecorderPlan()) recorded = recorded || p.argv == *argv;
    if (!recorded) {
      return bad(g.topic +
                 ": the recorder reads each topic bare or with one filter at its example "
                 "value (slurm_describe), not with these filters");
    }
  }
  if (!g.match.empty()) {
    RE2 re(g.match, RE2::Quiet);
    if (!re.ok()) return bad("match '" + g.match + "' is not RE2: " + re.error());
  }
  return base::Status();
}

// True when a hop (or a red herring's shown hop) has no evidence, or a blank evidence string.
bool NoOrBlankEvidence(const Hop& h) {
  return h.evidence.empty() || std::any_of(h.evidence.begin(), h.evidence.end(),
                                           [](const Item& e) { return Blank(e.value); });
}

// Checks one scenario against every per-scenario rule of Rules(). Run() calls the steps below in
// a fixed order and then sorts by line with a stable sort, so two problems on one line keep the
// order of the steps: the broken-scenario corpus and `rca-bench validate` depend on that order.
class Checker {
 public:
  explicit Checker(const Scenario& s)
      : s_(s),
        blocked_(s.status == "blocked"),
        diagnosable_(s.Diagnosable()),
        root_(s.RootCause()) {}

  std::vector<Problem> Run();

 private:
  void Add(int line, const char* rule, std::string message) {
    out_.push_back({s_.file, line, rule, std::move(message)});
  }
  void Node(const std::string& node, int line, const std::string& where) {
    if (!IsComponent(node)) Add(line, "node-unknown", where + ": unknown component '" + node + "'");
  }
  void Actions(const std::vector<Item>& items, const std::string& where,
               std::set<std::string>* seen);
  void Signals(int line, const std::string& who, const std::vector<Signal>& signals);

  void CheckIdentity();
  void CheckBlockedReason();
  void CheckVocabulary();
  void CheckChain();
  void CheckChainSize();
  void CheckCreditTable();
  void CheckCreditMonotone();
  void CheckRootCauseCredit();
  void CheckReportedCredit();
  void CheckDistractorsAndRuledOut();
  void CheckRedHerring(const RedHerring& rh);
  void CheckActions();
  void CheckFaults();
  void CheckFaultSchedule();
  void CheckWorkload();
  void CheckHopSignals();
  void CheckTicketNamesRoot();
  void CheckTicketQuotesEvidence();

  const Scenario& s_;
  const bool blocked_;      // status: blocked (it has not run: no signals or faults required)
  const bool diagnosable_;  // some component other than unknown earns full credit
  const std::string root_;  // the first full-credit component, else unknown
  std::vector<Problem> out_;
};

std::vector<Problem> Checker::Run() {
  CheckIdentity();
  CheckBlockedReason();
  CheckVocabulary();
  CheckChain();
  CheckChainSize();
  CheckCreditTable();
  CheckCreditMonotone();
  CheckRootCauseCredit();
  CheckReportedCredit();
  CheckDistractorsAndRuledOut();
  for (const RedHerring& rh : s_.red_herrings) CheckRedHerring(rh);
  CheckActions();
  CheckFaults();
  CheckFaultSchedule();
  CheckWorkload();
  CheckHopSignals();
  CheckTicketNamesRoot();
  CheckTicketQuotesEvidence();
  std::stable_sort(out_.begin(), out_.end(),
                   [](const Problem& a, const Problem& b) { return a.line < b.line; });
  return out_;
}

// Each action parses as verb:component and appears once in its list (`seen` collects them).
void Checker::Actions(const std::vector<Item>& items, const std::string& where,
                      std::set<std::string>* seen) {
  for (const Item& a : items) {
    if (base::Result<Action> act = ParseAction(a.value); !act.ok()) {
      Add(a.line, "action-invalid", where + ": " + act.status().message());
    } else if (!seen->insert(a.value).second) {
      Add(a.line, "action-duplicate", where + ": '" + a.value + "' is listed twice");
    }
  }
}

// A runnable scenario's hop or red herring (`who`) has signals, and each is a read slurm-mcp can
// make and the recorder records, so the bundle can show it.
void Checker::Signals(int line, const std::string& who, const std::vector<Signal>& signals) {
  if (!blocked_ && signals.empty()) {
    Add(line, "signals-missing", who + " has no signals to measure it by");
  }
  for (const Signal& g : signals) {
    if (base::Status st = CheckSignal(g); !st.ok()) Add(g.line, "signal-invalid", st.message());
  }
}

// The id (a variant's base id), the texts a reader sees first, the canary.
void Checker::CheckIdentity() {
  static const std::regex id_re("S[0-9]{2}-[a-z0-9]+(-[a-z0-9]+)*");
  if (!std::regex_match(s_.base_id.empty() ? s_.id : s_.base_id, id_re)) {
    Add(s_.Line("id"), "id-format", "id '" + s_.id + "' is not S<two digits>-kebab-name");
  }
  for (const char* key : {"title", "symptom", "injection"}) {
    const std::string& v = key == std::string("title")     ? s_.title
                           : key == std::string("symptom") ? s_.symptom
                                                           : s_.injection;
    if (Blank(v)) Add(s_.Line(key), "blank-text", std::string(key) + " is blank");
  }
  if (!IsUuid(s_.canary)) {
    Add(s_.Line("canary"), "canary-uuid", "canary '" + s_.canary + "' is not a UUID");
  }
}

// blocked_reason goes with status blocked, and only with it; it must say what blocks the
// scenario and what would unblock it, which takes more than ten words.
void Checker::CheckBlockedReason() {
  if (blocked_ && Blank(s_.blocked_reason)) {
    Add(s_.Line("status"), "blocked-reason", "status blocked needs a non-blank blocked_reason");
  }
  if (!blocked_ && !Blank(s_.blocked_reason)) {
    Add(s_.Line("blocked_reason"), "blocked-reason", "a runnable scenario has a blocked_reason");
  }
  if (blocked_ && !s_.blocked_reason.empty() && WordCount(s_.blocked_reason) <= 10) {
    Add(s_.Line("blocked_reason"), "blocked-reason",
        "blocked_reason says too little (more than 10 words: what blocks it, what would "
        "unblock it)");
  }
}

// Every component named by the reported node, the chain and the credit table is in the closed
// vocabulary; every credit is in [0, 1].
void Checker::CheckVocabulary() {
  Node(s_.reported_node, s_.Line("reported_node"), "reported_node");
  for (const Hop& h : s_.causal_chain) Node(h.node, h.line, "causal_chain");
  for (const Credit& c : s_.scoring) {
    Node(c.node, c.line, "scoring");
    if (c.credit < 0.0 || c.credit > 1.0) {
      Add(c.line, "credit-range",
          "credit " + Fmt(c.credit) + " for " + c.node + " is outside [0, 1]");
    }
  }
}

// The chain is not empty, starts at offset 0, never goes back in time, and every hop has
// evidence.
void Checker::CheckChain() {
  const auto& chain = s_.causal_chain;
  if (chain.empty()) {
    Add(s_.Line("causal_chain"), "chain-empty", "causal_chain is empty");
    return;
  }
  if (chain.front().observable_at_s != 0) {
    Add(chain.front().line, "chain-start",
        "the first hop is observable at " + std::to_string(chain.front().observable_at_s) +
            " s, not 0");
  }
  for (size_t i = 1; i < chain.size(); ++i) {
    if (chain[i].observable_at_s < chain[i - 1].observable_at_s) {
      Add(chain[i].line, "chain-order",
          "hop " + std::to_string(i + 1) + " (" + chain[i].node + ") is observable before hop " +
              std::to_string(i));
    }
  }
  for (const Hop& h : chain) {
    if (NoOrBlankEvidence(h))
      Add(h.line, "evidence-empty", "hop " + h.node + " has no or blank evidence");
  }
}

// multi_layer means at least three hops; the observation window must cover the whole chain,
// or the last hops could never be measured.
void Checker::CheckChainSize() {
  const size_t hops = s_.causal_chain.size();
  if (s_.difficulty == "multi_layer" && hops < 3) {
    Add(s_.Line("difficulty"), "multi-layer-hops",
        "multi_layer needs at least 3 hops, the chain has " + std::to_string(hops));
  }
  if (s_.Hosts() && (s_.lab->nodes != 4 || s_.lab->history != 0)) {
    Add(s_.lab->line, "lab-size",
        "lab: the lab of hosts is 4 nodes with no history (give neither nodes nor history)");
  }
  if (s_.Large() && (s_.lab->nodes < 256 || s_.lab->nodes > 1024 || s_.lab->nodes % 64 != 0 ||
                 s_.lab->history < 0 || s_.lab->history > 1000000)) {
    Add(s_.lab->line, "lab-size",
        "lab: " + std::to_string(s_.lab->nodes) + " nodes and a history of " +
            std::to_string(s_.lab->history) +
            " jobs; the large profile needs 256-1024 nodes, a multiple of 64, and 0-1,000,000");
  }
  if (s_.observe_s < s_.PropagationS()) {
    Add(s_.Line("observe_s"), "observe-window",
        "observe_s " + std::to_string(s_.observe_s) + " is shorter than the chain (" +
            std::to_string(s_.PropagationS()) + " s)");
  }
}

// The credit table scores each component once, with a rationale, and gives full credit at most
// once (reported at the second full-credit row).
void Checker::CheckCreditTable() {
  std::set<std::string> scored;
  int full = 0;
  for (const Credit& c : s_.scoring) {
    if (!scored.insert(c.node).second) {
      Add(c.line, "score-duplicate", c.node + " is scored twice");
    }
    if (Blank(c.rationale)) Add(c.line, "rationale-blank", c.node + " has a blank rationale");
    if (c.credit >= 1.0) {
      ++full;
      if (full == 2) Add(c.line, "full-credit-count", "more than one answer earns full credit");
    }
  }
}

// Along the chain a consequence never earns more than any hop before it: naming a symptom must
// not pay better than naming its cause. A component seen again later in the chain is judged at
// its first hop only.
void Checker::CheckCreditMonotone() {
  if (!diagnosable_) return;
  double prev = 2.0;  // above any valid credit: the first hop is never flagged
  std::set<std::string> seen;
  for (const Hop& h : s_.causal_chain) {
    if (!seen.insert(h.node).second) continue;
    double c = s_.CreditFor(h.node);
    if (c > prev) {
      Add(h.line, "credit-monotone",
          h.node + " (" + Fmt(c) + ") outscores its cause (" + Fmt(prev) + ")");
    }
    prev = std::min(prev, c);
  }
}

// Full credit goes to unknown when the scenario is undiagnosable, else to the chain's first hop,
// and abstaining then earns under 0.2. A scenario without a difficulty is checked for neither.
void Checker::CheckRootCauseCredit() {
  const auto& chain = s_.causal_chain;
  if (s_.difficulty == "undiagnosable") {
    if (diagnosable_ || s_.CreditFor(std::string(kUnknown)) < 1.0) {
      Add(s_.Line("scoring"), "undiagnosable-credit",
          "an undiagnosable scenario gives full credit to unknown and to nothing else");
    }
    return;
  }
  if (s_.difficulty.empty()) return;
  if (!diagnosable_) {
    Add(s_.Line("scoring"), "root-cause", "no component earns full credit");
  } else if (!chain.empty() && chain.front().node != root_) {
    Add(s_.Line("scoring"), "root-cause",
        "full credit goes to " + root_ + ", the chain starts at " + chain.front().node);
  }
  double u = s_.CreditFor(std::string(kUnknown));
  if (u >= 0.2) {
    Add(s_.Line("scoring"), "unknown-credit",
        "unknown earns " + Fmt(u) + " in a diagnosable scenario (must be < 0.2)");
  }
}

// Repeating the ticket's own component back, when it is not the cause, earns at most 0.2.
void Checker::CheckReportedCredit() {
  if (s_.reported_node != root_ && s_.CreditFor(s_.reported_node) > 0.2) {
    Add(s_.Line("reported_node"), "reported-credit",
        "the reported component " + s_.reported_node + " earns " +
            Fmt(s_.CreditFor(s_.reported_node)) + " (at most 0.2 when it is not the cause)");
  }
}

// Distractors and ruled_out entries are known components, explained, and never the root cause;
// unknown cannot be ruled out.
void Checker::CheckDistractorsAndRuledOut() {
  for (const NodeNote& d : s_.distractors) {
    Node(d.node, d.line, "distractors");
    if (Blank(d.why)) Add(d.line, "distractor", "distractor " + d.node + " has no explanation");
    if (diagnosable_ && d.node == root_) {
      Add(d.line, "distractor", "the root cause " + d.node + " is listed as a distractor");
    }
  }
  for (const NodeNote& r : s_.ruled_out) {
    Node(r.node, r.line, "ruled_out");
    if (Blank(r.why)) Add(r.line, "ruled-out", r.node + " is ruled out without the evidence");
    if (r.node == kUnknown) Add(r.line, "ruled-out", "unknown cannot be ruled out");
    if (diagnosable_ && r.node == root_) {
      Add(r.line, "ruled-out", "the root cause " + r.node + " is ruled out");
    }
  }
}

// A red herring is real (a known component, explained, with evidence inside the window and
// signals to measure it by), shown (in the credit table and under ruled_out) and not the cause
// (off the chain, at most 0.1).
void Checker::CheckRedHerring(const RedHerring& rh) {
  const Hop& h = rh.shown;
  Node(h.node, rh.line, "red_herrings");
  auto bad = [&](const std::string& m) { Add(rh.line, "red-herring", h.node + ": " + m); };
  const auto& chain = s_.causal_chain;
  if (h.node == kUnknown) bad("unknown is not an anomaly");
  if (diagnosable_ && h.node == root_) bad("the root cause cannot be a red herring");
  if (std::any_of(chain.begin(), chain.end(), [&](const Hop& c) { return c.node == h.node; })) {
    bad("is on the causal chain, so it is not a red herring");
  }
  if (s_.CreditFor(h.node) > 0.1) {
    bad("earns " + Fmt(s_.CreditFor(h.node)) + " (a red herring earns at most 0.1)");
  }
  if (std::none_of(s_.scoring.begin(), s_.scoring.end(),
                   [&](const Credit& c) { return c.node == h.node; })) {
    bad("is not in the credit table (give it its credit and the rationale)");
  }
  if (std::none_of(s_.ruled_out.begin(), s_.ruled_out.end(),
                   [&](const NodeNote& r) { return r.node == h.node; })) {
    bad("is not listed under ruled_out");
  }
  if (Blank(rh.why)) bad("has no why");
  if (NoOrBlankEvidence(h)) bad("has no or blank evidence");
  if (h.observable_at_s < 0 || h.observable_at_s > s_.observe_s) {
    bad("observable_at_s is outside [0, observe_s]");
  }
  Signals(rh.line, "red herring " + h.node, h.signals);
}

// Helpful and harmful actions are valid and listed once, and no action is both.
void Checker::CheckActions() {
  std::set<std::string> helpful, harmful;
  if (s_.remediation_helpful) Actions(*s_.remediation_helpful, "remediation_helpful", &helpful);
  Actions(s_.harmful_actions, "harmful_actions", &harmful);
  for (const Item& a : s_.harmful_actions) {
    if (helpful.count(a.value)) {
      Add(a.line, "action-duplicate", "'" + a.value + "' is both helpful and harmful");
    }
  }
}

// Each fault is a primitive of FaultCatalog() with options it reads and valid values; a runnable
// scenario needs a fault or a workload, or nothing would produce it.
void Checker::CheckFaults() {
  for (const FaultRef& f : s_.faults) {
    const FaultPrimitive* p = FindFault(f.name);
    if (!p) {
      Add(f.line, "fault-unknown", "no fault primitive '" + f.name + "' (rca-bench fault list)");
      continue;
    }
    for (const auto& [opt, value] : f.target) {
      if (std::find(p->options.begin(), p->options.end(), opt) == p->options.end()) {
        Add(f.line, "fault-option", f.name + " does not read the option '" + opt + "'");
      } else if (base::Status st = CheckFaultOption(opt, value); !st.ok()) {
        Add(f.line, "fault-option", f.name + ": " + st.message());
      }
    }
  }
  if (!blocked_ && s_.faults.empty() && s_.workload.empty()) {
    Add(s_.Line("status"), "faults-missing",
        "a runnable scenario names no fault primitive and no workload");
  }
}

// A fault is injected inside the observation window and, if it heals, heals after it was
// injected and before the window ends.
void Checker::CheckFaultSchedule() {
  for (const FaultRef& f : s_.faults) {
    if (f.at_s < 0 || f.at_s > s_.observe_s) {
      Add(f.line, "fault-schedule",
          f.name + ": at_s " + std::to_string(f.at_s) + " is outside [0, observe_s]");
    }
    if (f.heal_at_s && (*f.heal_at_s <= f.at_s || *f.heal_at_s > s_.observe_s)) {
      Add(f.line, "fault-schedule",
          f.name + ": heal_at_s " + std::to_string(*f.heal_at_s) +
              " is not after at_s and within observe_s");
    }
  }
}

// Workload items become sbatch jobs: a job name, bounded counts and sizes, a start at most a
// minute before the window, and partition, account and nodelist Slurm can parse.
void Checker::CheckWorkload() {
  static const std::regex job_name("[a-z0-9]+(-[a-z0-9]+)*");
  static const std::regex slurm_name("[A-Za-z0-9_.\\[\\],-]*");
  for (const Workload& w : s_.workload) {
    auto bad = [&](const std::string& what) {
      Add(w.line, "workload-invalid", w.name + ": " + what);
    };
    if (!std::regex_match(w.name, job_name) || w.name.size() > 24) {
      bad("name is not kebab-case (at most 24 characters)");
    }
    if (w.count < 1 || w.count > 200) bad("count must be in [1, 200]");
    if (w.seconds < 1 || w.seconds > 3600) bad("seconds must be in [1, 3600]");
    if (w.nodes < 1 || w.nodes > 4) bad("nodes must be in [1, 4]");
    if (w.at_s < -60 || w.at_s > s_.observe_s) bad("at_s must be in [-60, observe_s]");
    for (const std::string* v : {&w.partition, &w.account, &w.nodelist}) {
      if (!std::regex_match(*v, slurm_name)) bad("'" + *v + "' is not a Slurm name or hostlist");
    }
  }
}

// Every hop of the chain has signals, each a read slurm-mcp can make.
void Checker::CheckHopSignals() {
  for (const Hop& h : s_.causal_chain) Signals(h.line, "hop " + h.node, h.signals);
}

// The ticket (the symptom text the agent is given) must not give the answer away: it must not
// name the root cause, nor use one of the root cause's key words (the first one found is named).
void Checker::CheckTicketNamesRoot() {
  if (!diagnosable_) return;
  const std::string ticket = Lower(s_.symptom);
  const int line = s_.Line("symptom");
  if (ticket.find(Lower(root_)) != std::string::npos) {
    Add(line, "ticket-leak", "the ticket names the root cause " + root_);
  } else if (const Component* c = FindComponent(root_)) {
    for (std::string_view w : c->keywords) {
      if (ticket.find(w) != std::string::npos) {
        Add(line, "ticket-leak",
            "the ticket uses '" + std::string(w) + "', a key word of " + root_);
        break;
      }
    }
  }
}

// Nor does the ticket quote the root hop's evidence: any '...' quotation of 12 characters or
// more in the first hop's evidence must not appear in it (case-insensitive).
void Checker::CheckTicketQuotesEvidence() {
  if (s_.causal_chain.empty()) return;
  static const std::regex quoted("'([^']{12,})'");
  const std::string ticket = Lower(s_.symptom);
  const int line = s_.Line("symptom");
  for (const Item& e : s_.causal_chain.front().evidence) {
    for (std::sregex_iterator it(e.value.begin(), e.value.end(), quoted), end; it != end; ++it) {
      std::string q = Lower((*it)[1].str());
      if (ticket.find(q) != std::string::npos) {
        Add(line, "ticket-leak", "the ticket quotes the root hop's evidence '" + q + "'");
      }
    }
  }
}

std::vector<Problem> CheckIdDir(const Scenario& s) {
  std::filesystem::path p(s.file);
  if (p.filename() != "scenario.yaml") return {};
  std::string dir = p.parent_path().filename().string();
  const std::string& id = s.base_id.empty() ? s.id : s.base_id;
  if (dir == id) return {};
  return {{s.file, s.Line("id"), "id-dir",
           "id '" + id + "' differs from its directory '" + dir + "'"}};
}

}  // namespace

std::vector<Problem> Validate(const Scenario& s) { return Checker(s).Run(); }

namespace {

// The problems of every instance of a file; a problem of the shared text is reported once, a
// variant's own (its values broke a rule) with the variant named.
std::vector<Problem> CheckInstances(const LoadResult& r) {
  std::vector<Problem> out;
  if (!r.scenario) return out;
  std::set<std::string> seen;
  auto add = [&](Problem p, const Scenario& s) {
    std::string key = p.file + ":" + std::to_string(p.line) + ":" + p.rule;
    if (!s.variant.empty()) {
      std::string base_key = key + ":" + p.message;
      if (seen.count(base_key)) return;
      p.message = "variant " + s.variant + ": " + p.message;
    }
    if (!seen.insert(key + ":" + p.message).second) return;
    out.push_back(std::move(p));
  };
  for (Problem& p : CheckIdDir(*r.scenario)) add(std::move(p), *r.scenario);
  for (const Scenario& s : r.Instances()) {
    for (Problem& p : Validate(s)) add(std::move(p), s);
  }
  return out;
}

}  // namespace

std::vector<Problem> CheckFile(const std::string& path) {
  LoadResult r = LoadScenarioFile(path);
  if (!r.scenario) return r.problems;
  return CheckInstances(r);
}

Suite LoadSuite(const std::vector<std::string>& paths) {
  Suite suite;
  for (const std::string& path : paths) {
    LoadResult r = LoadScenarioFile(path);
    for (Problem& p : r.problems) suite.problems.push_back(std::move(p));
    if (!r.scenario) continue;
    for (Problem& p : CheckInstances(r)) suite.problems.push_back(std::move(p));
    for (Scenario& s : r.Instances()) suite.scenarios.push_back(std::move(s));
  }
  std::map<std::string, std::string> ids, canaries, task_ids;
  for (const Scenario& s : suite.scenarios) {
    if (auto [it, fresh] = ids.emplace(s.id, s.file); !fresh) {
      suite.problems.push_back(
          {s.file, s.Line("id"), "duplicate-id", "id " + s.id + " is also in " + it->second});
    }
    std::string canary = Lower(s.canary);
    canary.erase(std::remove_if(canary.begin(), canary.end(),
                                [](char c) { return c == '-' || c == '{' || c == '}'; }),
                 canary.end());
    if (canary.rfind("urn:uuid:", 0) == 0) canary = canary.substr(9);
    if (auto [it, fresh] = canaries.emplace(canary, s.file); !fresh) {
      suite.problems.push_back({s.file, s.Line("canary"), "duplicate-canary",
                                "canary " + s.canary + " is also in " + it->second});
    }
    if (auto [jt, fresh_task] = task_ids.emplace(s.TaskId(), s.file); !fresh_task) {
      suite.problems.push_back({s.file, s.Line("canary"), "duplicate-task-id",
                                "task id " + s.TaskId() + " is also " + jt->second + "'s"});
    }
  }
  return suite;
}

std::vector<std::string> ScenarioPaths(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::filesystem::path p = e.path() / "scenario.yaml";
    if (e.is_directory() && std::filesystem::is_regular_file(p)) paths.push_back(p.string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace slurm_rca::scenarios
