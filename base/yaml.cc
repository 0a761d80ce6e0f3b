#include "base/yaml.h"

#include <algorithm>
#include <regex>
#include <set>

namespace slurm_rca::base {

std::optional<std::string> YamlReader::Plain(const YAML::Node& n) {
  if (!n.IsScalar() || n.Tag() != "?") return std::nullopt;
  return n.Scalar();
}

void YamlReader::Err(int line, std::string_view rule, std::string message) {
  out_->push_back({file_, line, std::string(rule), std::move(message)});
}

std::optional<YAML::Node> YamlReader::Load(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    Err(e.mark.is_null() ? 1 : e.mark.line + 1, kRuleYamlSyntax, e.msg);
    return std::nullopt;
  }
}

bool YamlReader::Keys(const YAML::Node& map, const std::vector<std::string>& required,
                      const std::vector<std::string>& optional, const std::string& where,
                      int line, bool* complete) {
  if (complete) *complete = false;
  if (!map.IsMap()) {
    Err(At(map, line), kRuleWrongType, where + " must be a mapping");
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
  bool all = true;
  for (const std::string& r : required) {
    if (!seen.count(r)) {
      Err(At(map, line), kRuleMissingKey, "missing required key '" + r + "' in " + where);
      all = false;
    }
  }
  if (complete) *complete = all;
  return true;
}

std::optional<std::string> YamlReader::Str(const YAML::Node& n, const std::string& what,
                                           int line) {
  if (!n.IsScalar()) {
    Err(At(n, line), kRuleWrongType, what + " must be a string");
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<int> YamlReader::Int(const YAML::Node& n, const std::string& what, int line) {
  static const std::regex re("[-+]?[0-9]{1,9}");
  auto s = Plain(n);
  if (!s || !std::regex_match(*s, re)) {
    Err(At(n, line), kRuleWrongType, what + " must be an integer");
    return std::nullopt;
  }
  return std::stoi(*s);
}

std::optional<double> YamlReader::Number(const YAML::Node& n, const std::string& what, int line) {
  static const std::regex re("[-+]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][-+]?[0-9]+)?");
  auto s = Plain(n);
  if (!s || !std::regex_match(*s, re)) {
    Err(At(n, line), kRuleWrongType, what + " must be a number");
    return std::nullopt;
  }
  return std::stod(*s);
}

std::optional<bool> YamlReader::Bool(const YAML::Node& n, const std::string& what, int line) {
  auto s = Plain(n);
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  Err(At(n, line), kRuleWrongType, what + " must be a boolean (true or false)");
  return std::nullopt;
}

std::optional<std::string> YamlReader::Enum(const YAML::Node& n, const std::string& what,
                                            const std::vector<std::string_view>& allowed,
                                            int line) {
  auto s = Str(n, what, line);
  if (!s) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), *s) != allowed.end()) return s;
  std::string list;
  for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  Err(LineOf(n), kRuleBadEnum, what + " '" + *s + "' is not one of " + list);
  return std::nullopt;
}

}  // namespace slurm_rca::base
