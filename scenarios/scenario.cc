#include "scenarios/scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "base/yaml.h"
#include "mcp/backend/bundle_pack.h"
#include "scenarios/vocabulary.h"

namespace slurm_rca::scenarios {

int Scenario::Line(const std::string& key) const {
  auto it = key_lines.find(key);
  return it == key_lines.end() ? 1 : it->second;
}

bool Scenario::Diagnosable() const {
  return std::any_of(scoring.begin(), scoring.end(),
                     [](const Credit& c) { return c.credit >= 1.0 && c.node != kUnknown; });
}

std::string Scenario::RootCause() const {
  for (const Credit& c : scoring) {
    if (c.credit >= 1.0) return c.node;
  }
  return std::string(kUnknown);
}

int Scenario::PropagationS() const {
  int m = 0;
  for (const Hop& h : causal_chain) m = std::max(m, h.observable_at_s);
  return m;
}

std::string Sha256Hex(const std::string& text, std::size_t hex_chars) {
  return mcp::Sha256OfBytes(text).substr(0, hex_chars);
}

std::string Scenario::TaskId() const { return "T-" + Sha256Hex(canary, 10); }

bool IsOfRelease(const std::string& version, const std::string& release) {
  return version == release || version.rfind(release + ".", 0) == 0;
}

std::string Scenario::NotShownOn(const std::string& release) const {
  for (const auto& [r, why] : not_shown_on) {
    if (IsOfRelease(release, r)) return why;
  }
  return "";
}

bool Signal::AppliesTo(const std::string& slurm_version) const {
  if (releases.empty()) return true;
  return std::any_of(releases.begin(), releases.end(),
                     [&](const std::string& r) { return IsOfRelease(slurm_version, r); });
}

double Scenario::CreditFor(const std::string& node) const {
  for (const Credit& c : scoring) {
    if (c.node == node) return c.credit;
  }
  return 0.0;
}

namespace {

using base::YamlReader;
constexpr auto LineOf = &YamlReader::LineOf;

// The scenario's own shapes over base::YamlReader. A key absent from the document is reported at
// the line of its parent (top_lines_), where the reader's node has none.
class Parser : public YamlReader {
 public:
  Parser(std::string file, std::vector<Problem>* out) : YamlReader(std::move(file), out) {}

  std::optional<std::string> Str(const YAML::Node& n, const std::string& what) {
    return YamlReader::Str(n, what, At(n, what));
  }
  std::optional<int> Int(const YAML::Node& n, const std::string& what) {
    return YamlReader::Int(n, what, At(n, what));
  }
  std::optional<double> Number(const YAML::Node& n, const std::string& what) {
    return YamlReader::Number(n, what, At(n, what));
  }
  std::optional<bool> Bool(const YAML::Node& n, const std::string& what) {
    return YamlReader::Bool(n, what, At(n, what));
  }
  std::optional<std::string> Enum(const YAML::Node& n, const std::string& what,
                                  const std::vector<std::string_view>& allowed) {
    return YamlReader::Enum(n, what, allowed, At(n, what));
  }

  std::optional<std::vector<Item>> Strings(const YAML::Node& n, const std::string& what) {
    if (!n.IsSequence()) {
      Err(At(n, what), kRuleWrongType, what + " must be a list of strings");
      return std::nullopt;
    }
    std::vector<Item> items;
    bool ok = true;
    for (const auto& e : n) {
      auto s = Str(e, what + " entry");
      if (s) items.push_back({*s, LineOf(e)});
      ok = ok && s;
    }
    if (!ok) return std::nullopt;
    return items;
  }

  std::optional<std::vector<std::pair<std::string, std::string>>> StringMap(
      const YAML::Node& n, const std::string& what) {
    if (!n.IsMap()) {
      Err(At(n, what), kRuleWrongType, what + " must be a mapping of strings");
      return std::nullopt;
    }
    std::vector<std::pair<std::string, std::string>> out;
    bool ok = true;
    for (const auto& kv : n) {
      auto k = Str(kv.first, what + " key");
      auto v = Str(kv.second, what + " value");
      if (k && v) out.emplace_back(*k, *v);
      ok = ok && k && v;
    }
    if (!ok) return std::nullopt;
    return out;
  }

  std::optional<std::vector<NodeNote>> Notes(const YAML::Node& n, const std::string& what) {
    auto m = StringMap(n, what);
    if (!m) return std::nullopt;
    std::vector<NodeNote> out;
    for (const auto& kv : n)
      out.push_back({kv.first.Scalar(), kv.second.Scalar(), LineOf(kv.first)});
    return out;
  }

  bool ParseTop(const YAML::Node& root, Scenario* s);
  bool ParseHop(const YAML::Node& h, const std::vector<std::string>& extra,
                const std::string& where, Hop* hop);

 private:
  // A null value's mark is where the next token starts; report a top-level key's own line.
  int At(const YAML::Node& n, const std::string& what) const {
    if (n.IsNull() && top_lines_) {
      auto it = top_lines_->find(what);
      if (it != top_lines_->end()) return it->second;
    }
    return LineOf(n);
  }
  const std::map<std::string, int>* top_lines_ = nullptr;
};

// A causal-chain hop, or the shown part of a red herring (which also takes `extra` keys).
bool Parser::ParseHop(const YAML::Node& h, const std::vector<std::string>& extra,
                      const std::string& where, Hop* hop) {
  hop->line = LineOf(h);
  std::vector<std::string> optional = {"signals"};
  optional.insert(optional.end(), extra.begin(), extra.end());
  if (!Keys(h, {"node", "state", "observable_at_s", "evidence"}, optional, where, hop->line)) {
    return false;
  }
  if (h["node"]) hop->node = Str(h["node"], "node").value_or("");
  if (h["state"]) hop->state = Str(h["state"], "state").value_or("");
  if (h["observable_at_s"]) {
    hop->observable_at_s = Int(h["observable_at_s"], "observable_at_s").value_or(0);
  }
  if (h["evidence"]) hop->evidence = Strings(h["evidence"], "evidence").value_or(std::vector<Item>{});
  if (const YAML::Node sg = h["signals"]; sg && !sg.IsNull()) {
    if (!sg.IsSequence()) {
      Err(LineOf(sg), kRuleWrongType, "signals must be a list of {topic, ...}");
      return true;
    }
    for (const auto& e : sg) {
      Signal sig;
      sig.line = LineOf(e);
      if (!Keys(e, {"topic"}, {"filters", "daemon", "outcome", "match", "releases"}, "signal",
                sig.line)) {
        continue;
      }
      if (e["topic"]) sig.topic = Str(e["topic"], "signal topic").value_or("");
      if (e["daemon"]) sig.daemon = Str(e["daemon"], "signal daemon").value_or("");
      if (e["match"]) sig.match = Str(e["match"], "signal match").value_or("");
      if (e["outcome"]) {
        sig.outcome =
            Enum(e["outcome"], "signal outcome", {"ok", "failed", "timed_out"}).value_or("ok");
      }
      if (e["filters"] && !e["filters"].IsNull()) {
        sig.filters = StringMap(e["filters"], "signal filters")
                          .value_or(std::vector<std::pair<std::string, std::string>>{});
      }
      if (e["releases"]) {
        static const std::regex release("[0-9]{2}\\.[0-9]{2}");
        for (const Item& r : Strings(e["releases"], "signal releases").value_or(std::vector<Item>{})) {
          if (!std::regex_match(r.value, release)) {
            Err(r.line, kRuleWrongType,
                "signal release '" + r.value + "' must be a Slurm release such as 25.11");
            continue;
          }
          sig.releases.push_back(r.value);
        }
      }
      hop->signals.push_back(std::move(sig));
    }
  }
  return true;
}

bool Parser::ParseTop(const YAML::Node& root, Scenario* s) {
  size_t before = found();
  static const std::vector<std::string> required = {
      "id",     "title",     "family",       "difficulty", "symptom", "reported_node",
      "canary", "injection", "causal_chain", "scoring"};
  static const std::vector<std::string> optional = {
      "status",      "blocked_reason",      "notes",           "observe_s", "verification",
      "distractors", "remediation_helpful", "harmful_actions", "ruled_out", "faults",
      "workload",    "split",               "post_freeze",     "red_herrings", "parameters",
      "variants",    "variants_exhausted",  "lab"};
  if (!root.IsMap()) {
    Err(LineOf(root) ? LineOf(root) : 1, kRuleNotMapping, "a scenario must be a YAML mapping");
    return false;
  }
  Keys(root, required, optional, "scenario", 1);
  for (const auto& kv : root) {
    if (kv.first.IsScalar()) s->key_lines[kv.first.Scalar()] = LineOf(kv.first);
  }
  top_lines_ = &s->key_lines;
  auto str = [&](const char* key, std::string* dst) {
    if (root[key]) {
      if (auto v = Str(root[key], key)) *dst = *v;
    }
  };
  str("id", &s->id);
  str("title", &s->title);
  str("symptom", &s->symptom);
  str("reported_node", &s->reported_node);
  str("canary", &s->canary);
  str("injection", &s->injection);
  str("notes", &s->notes);
  if (root["blocked_reason"] && !root["blocked_reason"].IsNull()) {
    str("blocked_reason", &s->blocked_reason);
  }
  if (root["family"]) {
    if (auto v = Enum(root["family"], "family", Families())) s->family = *v;
  }
  if (root["difficulty"]) {
    if (auto v = Enum(root["difficulty"], "difficulty", Difficulties())) s->difficulty = *v;
  }
  if (root["status"]) {
    if (auto v = Enum(root["status"], "status", {"runnable", "blocked"})) s->status = *v;
  }
  if (root["observe_s"]) {
    if (auto v = Int(root["observe_s"], "observe_s")) s->observe_s = *v;
  }
  if (root["split"]) {
    if (auto v = Enum(root["split"], "split", {"dev", "test"})) s->split = *v;
  }
  str("post_freeze", &s->post_freeze);
  str("variants_exhausted", &s->variants_exhausted);
  if (const YAML::Node v = root["lab"]; v && !v.IsNull()) {
    LabSpec lab;
    lab.line = s->Line("lab");
    if (Keys(v, {"profile"}, {"nodes", "history"}, "lab", s->Line("lab"))) {
      if (auto p = Enum(v["profile"], "lab.profile", {"large", "hosts"})) lab.profile = *p;
      // The lab of hosts is a 4-node lab (two compute hosts of two nodes) with no history.
      if (lab.profile == "hosts") {
        lab.nodes = 4;
        lab.history = 0;
      }
      if (v["nodes"]) lab.nodes = Int(v["nodes"], "lab.nodes").value_or(lab.nodes);
      if (v["history"]) lab.history = Int(v["history"], "lab.history").value_or(lab.history);
    }
    s->lab = lab;
  }
  if (const YAML::Node v = root["verification"]; v && !v.IsNull()) {
    Verification ver;
    ver.line = LineOf(v);
    // `measured` is derived from the bundle, never asserted: the key is unknown here.
    if (Keys(v, {"caveats"}, {}, "verification", s->Line("verification"))) {
      if (v["caveats"]) {
        if (auto m = Str(v["caveats"], "verification.caveats")) ver.caveats = *m;
      }
    }
    s->verification = ver;
  }
  if (const YAML::Node c = root["causal_chain"]) {
    if (!c.IsSequence()) {
      Err(At(c, "causal_chain"), kRuleWrongType, "causal_chain must be a list of hops");
    } else {
      for (const auto& h : c) {
        Hop hop;
        if (ParseHop(h, {}, "causal_chain item", &hop)) s->causal_chain.push_back(std::move(hop));
      }
    }
  }
  if (const YAML::Node c = root["red_herrings"]; c && !c.IsNull()) {
    if (!c.IsSequence()) {
      Err(At(c, "red_herrings"), kRuleWrongType, "red_herrings must be a list of anomalies");
    } else {
      for (const auto& h : c) {
        RedHerring rh;
        rh.line = LineOf(h);
        if (!ParseHop(h, {"why"}, "red_herrings item", &rh.shown)) continue;
        if (h["why"]) rh.why = Str(h["why"], "why").value_or("");
        s->red_herrings.push_back(std::move(rh));
      }
    }
  }
  if (const YAML::Node c = root["scoring"]) {
    if (!c.IsSequence()) {
      Err(At(c, "scoring"), kRuleWrongType, "scoring must be a list of credits");
    } else {
      for (const auto& e : c) {
        Credit cr;
        cr.line = LineOf(e);
        if (!Keys(e, {"node", "credit", "rationale"}, {}, "scoring item", cr.line)) continue;
        if (e["node"]) cr.node = Str(e["node"], "node").value_or("");
        if (e["credit"]) cr.credit = Number(e["credit"], "credit").value_or(0);
        if (e["rationale"]) cr.rationale = Str(e["rationale"], "rationale").value_or("");
        s->scoring.push_back(std::move(cr));
      }
    }
  }
  if (const YAML::Node d = root["distractors"]; d && !d.IsNull()) {
    s->distractors = Notes(d, "distractors").value_or(std::vector<NodeNote>{});
  }
  if (const YAML::Node d = root["ruled_out"]; d && !d.IsNull()) {
    s->ruled_out = Notes(d, "ruled_out").value_or(std::vector<NodeNote>{});
  }
  if (const YAML::Node r = root["remediation_helpful"]; r && !r.IsNull()) {
    s->remediation_helpful = Strings(r, "remediation_helpful").value_or(std::vector<Item>{});
  }
  if (const YAML::Node r = root["harmful_actions"]; r && !r.IsNull()) {
    s->harmful_actions = Strings(r, "harmful_actions").value_or(std::vector<Item>{});
  }
  if (const YAML::Node f = root["faults"]; f && !f.IsNull()) {
    if (!f.IsSequence()) {
      Err(At(f, "faults"), kRuleWrongType, "faults must be a list of {name, target}");
    } else {
      for (const auto& e : f) {
        FaultRef ref;
        ref.line = LineOf(e);
        if (!Keys(e, {"name"}, {"target", "at_s", "heal_at_s"}, "faults item", ref.line)) {
          continue;
        }
        if (e["name"]) ref.name = Str(e["name"], "fault name").value_or("");
        if (e["at_s"]) ref.at_s = Int(e["at_s"], "at_s").value_or(0);
        if (e["heal_at_s"]) ref.heal_at_s = Int(e["heal_at_s"], "heal_at_s");
        if (e["target"] && !e["target"].IsNull()) {
          ref.target = StringMap(e["target"], "fault target")
                           .value_or(std::vector<std::pair<std::string, std::string>>{});
        }
        s->faults.push_back(std::move(ref));
      }
    }
  }
  if (const YAML::Node w = root["workload"]; w && !w.IsNull()) {
    if (!w.IsSequence()) {
      Err(At(w, "workload"), kRuleWrongType, "workload must be a list of {name, ...}");
    } else {
      for (const auto& e : w) {
        Workload job;
        job.line = LineOf(e);
        if (!Keys(e, {"name"},
                  {"count", "at_s", "kind", "seconds", "partition", "account", "nodelist",
                   "nodes"},
                  "workload item", job.line)) {
          continue;
        }
        if (e["name"]) job.name = Str(e["name"], "workload name").value_or("");
        if (e["count"]) job.count = Int(e["count"], "count").value_or(1);
        if (e["at_s"]) job.at_s = Int(e["at_s"], "at_s").value_or(0);
        if (e["seconds"]) job.seconds = Int(e["seconds"], "seconds").value_or(30);
        if (e["nodes"]) job.nodes = Int(e["nodes"], "nodes").value_or(1);
        if (e["kind"]) {
          job.kind = Enum(e["kind"], "workload kind", {"sleep", "true", "flaky", "sigkill"})
                         .value_or("sleep");
        }
        if (e["partition"]) job.partition = Str(e["partition"], "partition").value_or("");
        if (e["account"]) job.account = Str(e["account"], "account").value_or("");
        if (e["nodelist"]) job.nodelist = Str(e["nodelist"], "nodelist").value_or("");
        s->workload.push_back(std::move(job));
      }
    }
  }
  return found() == before;
}

}  // namespace

namespace {

// One instance of the file's text: parsed as a plain scenario.
LoadResult ParseInstance(const std::string& text, const std::string& file) {
  LoadResult r;
  Parser p(file, &r.problems);
  std::optional<YAML::Node> root = p.Load(text);
  if (!root) return r;
  Scenario s;
  s.file = file;
  p.Guarded([&] {
    if (p.ParseTop(*root, &s)) {
      s.base_id = s.id;
      r.scenario = std::move(s);
    }
  });
  return r;
}

// Where a key of a mapping at the top level starts (its line), for messages.
int TopLine(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.rfind(key + ":", 0) == 0) return n;
  }
  return 1;
}

// ${name} -> value, for every parameter; each line keeps its number.
std::string Substitute(const std::string& text, const Parameters& values) {
  std::string out = text;
  for (const auto& [name, value] : values) {
    const std::string token = "${" + name + "}";
    for (size_t at = out.find(token); at != std::string::npos; at = out.find(token, at)) {
      out.replace(at, token.size(), value);
      at += value.size();
    }
  }
  return out;
}

// The parameters and variants of a file, checked; a problem for each thing that is wrong.
struct Expansion {
  Parameters defaults;
  struct Variant {
    std::string name, canary;
    Parameters values;  // defaults overridden by `set`
    std::map<std::string, std::string> not_shown_on;  // release -> why
    int line = 0;
  };
  std::vector<Variant> variants;
};

// The text with every whole-line comment blanked (line numbers kept): a ${name} in a comment is
// neither a use nor a reference.
std::string WithoutCommentLines(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    size_t first = line.find_first_not_of(" \t");
    out += (first != std::string::npos && line[first] == '#') ? "" : line;
    out += '\n';
  }
  return out;
}

Expansion ReadExpansion(const YAML::Node& root, const std::string& full_text,
                        const std::string& file, std::vector<Problem>* problems) {
  Expansion x;
  const std::string text = WithoutCommentLines(full_text);
  auto err = [&](int line, const char* rule, std::string m) {
    problems->push_back({file, line, rule, std::move(m)});
  };
  static const std::regex name_re("[a-z][a-z0-9_]{0,31}");
  // A value goes into the YAML text as it is: one plain word that YAML cannot misread.
  static const std::regex value_re("[A-Za-z0-9][A-Za-z0-9_.=,/+\\[\\]-]{0,63}");
  auto value_ok = [&](const YAML::Node& v, const std::string& what) -> std::optional<std::string> {
    if (!v.IsScalar() || !std::regex_match(v.Scalar(), value_re)) {
      err(LineOf(v), kRuleParameter,
          what + " must be one word of letters, digits and _.=,/+[]- (it is put into the text)");
      return std::nullopt;
    }
    return v.Scalar();
  };
  if (const YAML::Node p = root["parameters"]; p && !p.IsNull()) {
    if (!p.IsMap()) {
      err(LineOf(p) ? LineOf(p) : TopLine(text, "parameters"), kRuleParameter,
          "parameters must be a mapping of name to default value");
    } else {
      for (const auto& kv : p) {
        std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "?";
        if (!std::regex_match(name, name_re)) {
          err(LineOf(kv.first), kRuleParameter,
              "parameter name '" + name + "' is not [a-z][a-z0-9_]* (at most 32 characters)");
          continue;
        }
        if (auto v = value_ok(kv.second, "parameter " + name)) x.defaults.emplace_back(name, *v);
        if (text.find("${" + name + "}") == std::string::npos) {
          err(LineOf(kv.first), kRuleParameter,
              "parameter " + name + " is never used as ${" + name + "}");
        }
      }
    }
  }
  // Every ${...} in the text names a parameter.
  static const std::regex used("\\$\\{([^}]*)\\}");
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    for (std::sregex_iterator it(line.begin(), line.end(), used), end; it != end; ++it) {
      std::string name = (*it)[1].str();
      bool known = std::any_of(x.defaults.begin(), x.defaults.end(),
                               [&](const auto& d) { return d.first == name; });
      if (!known) err(n, kRuleParameter, "${" + name + "} is not a declared parameter");
    }
  }
  const YAML::Node vs = root["variants"];
  if (!vs || vs.IsNull()) return x;
  if (!vs.IsSequence()) {
    err(TopLine(text, "variants"), kRuleVariant, "variants must be a list of {name, canary, set}");
    return x;
  }
  if (x.defaults.empty()) {
    err(TopLine(text, "variants"), kRuleVariant, "variants need parameters to differ in");
  }
  static const std::regex vname_re("[a-z0-9]+(-[a-z0-9]+)*");
  std::set<std::string> names;
  std::set<Parameters> seen = {x.defaults};
  for (const auto& v : vs) {
    Expansion::Variant var;
    var.line = LineOf(v);
    if (!v.IsMap()) {
      err(var.line, kRuleVariant, "a variant must be a mapping {name, canary, set}");
      continue;
    }
    bool ok = true;
    for (const auto& kv : v) {
      std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      if (k != "name" && k != "canary" && k != "set" && k != "not_shown_on") {
        err(LineOf(kv.first), kRuleVariant,
            "unknown key '" + k + "' in a variant (name, canary, set, not_shown_on)");
        ok = false;
      }
    }
    for (const char* k : {"name", "canary", "set"}) {
      if (!v[k]) {
        err(var.line, kRuleVariant, std::string("a variant needs '") + k + "'");
        ok = false;
      }
    }
    if (!ok) continue;
    var.name = v["name"].IsScalar() ? v["name"].Scalar() : "";
    var.canary = v["canary"].IsScalar() ? v["canary"].Scalar() : "";
    if (!std::regex_match(var.name, vname_re) || var.name.size() > 24) {
      err(LineOf(v["name"]), kRuleVariant,
          "variant name '" + var.name + "' is not kebab-case (at most 24 characters)");
      continue;
    }
    if (!names.insert(var.name).second) {
      err(LineOf(v["name"]), kRuleVariant, "variant " + var.name + " is named twice");
      continue;
    }
    var.values = x.defaults;
    const YAML::Node set = v["set"];
    if (!set.IsMap() || set.size() == 0) {
      err(LineOf(set) ? LineOf(set) : var.line, kRuleVariant,
          "variant " + var.name + ": set must be a mapping of parameters to values");
      continue;
    }
    for (const auto& kv : set) {
      std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      auto slot = std::find_if(var.values.begin(), var.values.end(),
                               [&](const auto& d) { return d.first == name; });
      if (slot == var.values.end()) {
        err(LineOf(kv.first), kRuleVariant,
            "variant " + var.name + " sets " + name + ", which is not a parameter");
        ok = false;
      } else if (auto value = value_ok(kv.second, "variant " + var.name + " " + name)) {
        slot->second = *value;
      } else {
        ok = false;
      }
    }
    // not_shown_on: {RELEASE: why}: a release on which this task's evidence does not show.
    if (const YAML::Node nso = v["not_shown_on"]) {
      static const std::regex release_re("[0-9]+\\.[0-9]+");
      if (!nso.IsMap() || nso.size() == 0) {
        err(LineOf(nso) ? LineOf(nso) : var.line, kRuleVariant,
            "variant " + var.name + ": not_shown_on must map a release (25.11) to why");
        ok = false;
      } else {
        for (const auto& kv : nso) {
          std::string release = kv.first.IsScalar() ? kv.first.Scalar() : "";
          std::string why = kv.second.IsScalar() ? kv.second.Scalar() : "";
          if (!std::regex_match(release, release_re) || why.empty()) {
            err(LineOf(kv.first), kRuleVariant,
                "variant " + var.name + ": not_shown_on needs MAJOR.MINOR: a reason, got '" +
                    release + "'");
            ok = false;
          } else {
            var.not_shown_on[release] = why;
          }
        }
      }
    }
    if (!ok) continue;
    if (!seen.insert(var.values).second) {
      err(var.line, kRuleVariant,
          "variant " + var.name + " has the same parameters as the base or another variant");
      continue;
    }
    x.variants.push_back(std::move(var));
  }
  return x;
}

}  // namespace

std::vector<Scenario> LoadResult::Instances() const {
  std::vector<Scenario> out;
  if (scenario) out.push_back(*scenario);
  out.insert(out.end(), variants.begin(), variants.end());
  return out;
}

LoadResult ParseScenario(const std::string& text, const std::string& file) {
  // A first look, only for `parameters` and `variants`: without them the file is one instance.
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception&) {
    return ParseInstance(text, file);  // reports the syntax error
  }
  bool has_parameters = root.IsMap() && root["parameters"];
  bool has_variants = root.IsMap() && root["variants"];
  if (!has_parameters && !has_variants && text.find("${") == std::string::npos) {
    return ParseInstance(text, file);
  }
  std::vector<Problem> problems;
  Expansion x;
  try {
    x = ReadExpansion(root.IsMap() ? root : YAML::Node(), text, file, &problems);
  } catch (const YAML::Exception& e) {
    problems.push_back({file, e.mark.is_null() ? 1 : e.mark.line + 1, kRuleYamlSyntax, e.msg});
  }
  LoadResult r = ParseInstance(Substitute(text, x.defaults), file);
  r.problems.insert(r.problems.begin(), problems.begin(), problems.end());
  if (!r.scenario) return r;
  r.scenario->parameters = x.defaults;
  if (!problems.empty()) {
    r.scenario.reset();
    return r;
  }
  for (const Expansion::Variant& v : x.variants) {
    LoadResult one = ParseInstance(Substitute(text, v.values), file);
    if (!one.scenario) {
      for (Problem& p : one.problems) {
        p.message = "variant " + v.name + ": " + p.message;
        r.problems.push_back(std::move(p));
      }
      continue;
    }
    Scenario s = std::move(*one.scenario);
    s.base_id = s.id;
    s.id = s.base_id + "@" + v.name;
    s.variant = v.name;
    s.canary = v.canary;
    s.key_lines["canary"] = v.line;
    s.parameters = v.values;
    s.not_shown_on = v.not_shown_on;
    r.variants.push_back(std::move(s));
  }
  if (!r.problems.empty()) {
    r.scenario.reset();
    r.variants.clear();
  }
  return r;
}

LoadResult LoadScenarioFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    LoadResult r;
    r.problems.push_back({path, 0, kRuleYamlSyntax, "cannot read the file"});
    return r;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseScenario(ss.str(), path);
}

}  // namespace slurm_rca::scenarios
