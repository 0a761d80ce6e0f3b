#include "scenarios/scenario.h"

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "scenarios/vocabulary.h"

namespace slurm_rca::scenarios {

std::string Problem::ToString() const {
  return file + ":" + std::to_string(line) + ": " + rule + ": " + message;
}

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
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  // Fetched once: with EVP_sha256() OpenSSL 3 looks the implementation up on every digest, which
  // was most of the cost of a task id.
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  EVP_Digest(text.data(), text.size(), digest, &len, sha256 ? sha256 : EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len && out.size() < hex_chars; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out.substr(0, hex_chars);
}

std::string Scenario::TaskId() const { return "T-" + Sha256Hex(canary, 10); }

double Scenario::CreditFor(const std::string& node) const {
  for (const Credit& c : scoring) {
    if (c.node == node) return c.credit;
  }
  return 0.0;
}

namespace {

int LineOf(const YAML::Node& n) { return n.Mark().is_null() ? 0 : n.Mark().line + 1; }

class Parser {
 public:
  Parser(std::string file, std::vector<Problem>* out) : file_(std::move(file)), out_(out) {}

  void Err(int line, const char* rule, std::string message) {
    out_->push_back({file_, line, rule, std::move(message)});
  }

  // Checks the keys of a mapping; returns false if it is not one. `where` names it in messages.
  bool Keys(const YAML::Node& map, const std::vector<std::string>& required,
            const std::vector<std::string>& optional, const std::string& where, int line) {
    if (!map.IsMap()) {
      Err(LineOf(map) ? LineOf(map) : line, kRuleWrongType, where + " must be a mapping");
      return false;
    }
    std::set<std::string> seen;
    for (const auto& kv : map) {
      std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      if (!seen.insert(k).second) {
        Err(LineOf(kv.first), kRuleDuplicateKey, "key '" + k + "' appears twice in " + where);
      }
      if (std::find(required.begin(), required.end(), k) == required.end() &&
          std::find(optional.begin(), optional.end(), k) == optional.end()) {
        Err(LineOf(kv.first), kRuleUnknownKey, "unknown key '" + k + "' in " + where);
      }
    }
    for (const std::string& r : required) {
      if (!seen.count(r)) {
        Err(LineOf(map) ? LineOf(map) : line, kRuleMissingKey,
            "missing required key '" + r + "' in " + where);
      }
    }
    return true;
  }

  std::optional<std::string> Str(const YAML::Node& n, const std::string& what) {
    if (!n.IsScalar()) {
      Err(At(n, what), kRuleWrongType, what + " must be a string");
      return std::nullopt;
    }
    return n.Scalar();
  }

  // A plain (unquoted) scalar that is not a boolean.
  std::optional<std::string> Plain(const YAML::Node& n) {
    if (!n.IsScalar() || n.Tag() != "?") return std::nullopt;
    return n.Scalar();
  }

  std::optional<int> Int(const YAML::Node& n, const std::string& what) {
    static const std::regex re("[-+]?[0-9]{1,9}");
    auto s = Plain(n);
    if (!s || !std::regex_match(*s, re)) {
      Err(At(n, what), kRuleWrongType, what + " must be an integer");
      return std::nullopt;
    }
    return std::stoi(*s);
  }

  std::optional<double> Number(const YAML::Node& n, const std::string& what) {
    static const std::regex re("[-+]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][-+]?[0-9]+)?");
    auto s = Plain(n);
    if (!s || !std::regex_match(*s, re)) {
      Err(At(n, what), kRuleWrongType, what + " must be a number");
      return std::nullopt;
    }
    return std::stod(*s);
  }

  std::optional<bool> Bool(const YAML::Node& n, const std::string& what) {
    auto s = Plain(n);
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    Err(At(n, what), kRuleWrongType, what + " must be a boolean (true or false)");
    return std::nullopt;
  }

  std::optional<std::string> Enum(const YAML::Node& n, const std::string& what,
                                  const std::vector<std::string_view>& allowed) {
    auto s = Str(n, what);
    if (!s) return std::nullopt;
    if (std::find(allowed.begin(), allowed.end(), *s) != allowed.end()) return s;
    std::string list;
    for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    Err(LineOf(n), kRuleBadEnum, what + " '" + *s + "' is not one of " + list);
    return std::nullopt;
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

  std::string file_;
  std::vector<Problem>* out_;
};

bool Parser::ParseTop(const YAML::Node& root, Scenario* s) {
  size_t before = out_->size();
  static const std::vector<std::string> required = {
      "id",     "title",     "family",       "difficulty", "symptom", "reported_node",
      "canary", "injection", "causal_chain", "scoring"};
  static const std::vector<std::string> optional = {
      "status",      "blocked_reason",      "notes",           "observe_s", "verification",
      "distractors", "remediation_helpful", "harmful_actions", "ruled_out", "faults",
      "workload"};
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
        hop.line = LineOf(h);
        if (!Keys(h, {"node", "state", "observable_at_s", "evidence"}, {"signals"},
                  "causal_chain item", hop.line)) {
          continue;
        }
        if (h["node"]) hop.node = Str(h["node"], "node").value_or("");
        if (h["state"]) hop.state = Str(h["state"], "state").value_or("");
        if (h["observable_at_s"]) {
          hop.observable_at_s = Int(h["observable_at_s"], "observable_at_s").value_or(0);
        }
        if (h["evidence"])
          hop.evidence = Strings(h["evidence"], "evidence").value_or(std::vector<Item>{});
        if (const YAML::Node sg = h["signals"]; sg && !sg.IsNull()) {
          if (!sg.IsSequence()) {
            Err(LineOf(sg), kRuleWrongType, "signals must be a list of {topic, ...}");
          } else {
            for (const auto& e : sg) {
              Signal sig;
              sig.line = LineOf(e);
              if (!Keys(e, {"topic"}, {"filters", "daemon", "outcome", "match"}, "signal",
                        sig.line)) {
                continue;
              }
              if (e["topic"]) sig.topic = Str(e["topic"], "signal topic").value_or("");
              if (e["daemon"]) sig.daemon = Str(e["daemon"], "signal daemon").value_or("");
              if (e["match"]) sig.match = Str(e["match"], "signal match").value_or("");
              if (e["outcome"]) {
                sig.outcome = Enum(e["outcome"], "signal outcome", {"ok", "failed", "timed_out"})
                                  .value_or("ok");
              }
              if (e["filters"] && !e["filters"].IsNull()) {
                sig.filters = StringMap(e["filters"], "signal filters")
                                  .value_or(std::vector<std::pair<std::string, std::string>>{});
              }
              hop.signals.push_back(std::move(sig));
            }
          }
        }
        s->causal_chain.push_back(std::move(hop));
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
  return out_->size() == before;
}

}  // namespace

LoadResult ParseScenario(const std::string& text, const std::string& file) {
  LoadResult r;
  Parser p(file, &r.problems);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    p.Err(e.mark.is_null() ? 1 : e.mark.line + 1, kRuleYamlSyntax, e.msg);
    return r;
  }
  Scenario s;
  s.file = file;
  try {
    if (p.ParseTop(root, &s)) r.scenario = std::move(s);
  } catch (const YAML::Exception& e) {
    p.Err(e.mark.is_null() ? 1 : e.mark.line + 1, kRuleYamlSyntax, e.msg);
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
