// A strict reader of YAML documents that people write by hand (scenarios, the causal graph):
// every key known, none twice, every value of its declared type, each finding with its line.
// A module derives its parser from it and adds its own shapes.
//
//   class Parser : public base::YamlReader {
//     using YamlReader::YamlReader;
//     void Top(const YAML::Node& root) {
//       if (!Keys(root, {"id"}, {"title"}, "the scenario", 1)) return;
//       std::optional<std::string> id = Str(root["id"], "id", 1);
//     }
//   };
//   std::vector<base::Diagnostic> found;
//   Parser(path, &found).Top(YAML::LoadFile(path));
#ifndef SLURM_RCA_BASE_YAML_H_
#define SLURM_RCA_BASE_YAML_H_

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/diagnostic.h"

namespace slurm_rca::base {

// The rule ids the reader reports under.
inline constexpr const char* kRuleUnknownKey = "unknown-key";
inline constexpr const char* kRuleMissingKey = "missing-key";
inline constexpr const char* kRuleWrongType = "wrong-type";
inline constexpr const char* kRuleBadEnum = "bad-enum";
inline constexpr const char* kRuleDuplicateKey = "duplicate-key";
inline constexpr const char* kRuleYamlSyntax = "yaml-syntax";

class YamlReader {
 public:
  YamlReader(std::string file, std::vector<Diagnostic>* out)
      : file_(std::move(file)), out_(out) {}

  // The node's 1-based line; 0 when it has none (a key that is absent).
  static int LineOf(const YAML::Node& n) { return n.Mark().is_null() ? 0 : n.Mark().line + 1; }
  // A plain (unquoted) scalar: what numbers and booleans must be, so that "3" stays a string.
  static std::optional<std::string> Plain(const YAML::Node& n);

  void Err(int line, std::string_view rule, std::string message);

  // The document, or nullopt and a yaml-syntax finding at the line yaml-cpp names.
  std::optional<YAML::Node> Load(const std::string& text);
  // Runs parse(); a yaml-cpp exception thrown while reading (a bad alias, a bad conversion)
  // becomes a yaml-syntax finding instead of escaping. False when one was thrown.
  template <typename Parse>
  bool Guarded(Parse&& parse) {
    try {
      parse();
      return true;
    } catch (const YAML::Exception& e) {
      Err(e.mark.is_null() ? 1 : e.mark.line + 1, kRuleYamlSyntax, e.msg);
      return false;
    }
  }

  // Checks that map is a mapping whose keys are all in required or optional, none twice, every
  // required one present. `where` names it in messages; `line` is used when map has none.
  // False only when map is not a mapping; *complete says whether every required key is there.
  bool Keys(const YAML::Node& map, const std::vector<std::string>& required,
            const std::vector<std::string>& optional, const std::string& where, int line,
            bool* complete = nullptr);

  // The typed readers: nullopt (and a wrong-type finding) when n is not of the type. `line` is
  // reported when n has no line of its own.
  std::optional<std::string> Str(const YAML::Node& n, const std::string& what, int line);
  std::optional<int> Int(const YAML::Node& n, const std::string& what, int line);
  std::optional<double> Number(const YAML::Node& n, const std::string& what, int line);
  std::optional<bool> Bool(const YAML::Node& n, const std::string& what, int line);
  // A string that must be one of allowed (bad-enum otherwise).
  std::optional<std::string> Enum(const YAML::Node& n, const std::string& what,
                                  const std::vector<std::string_view>& allowed, int line);

  const std::string& file() const { return file_; }
  // How many findings the output holds so far (a parser compares before and after a part).
  size_t found() const { return out_->size(); }

 private:
  int At(const YAML::Node& n, int line) const { return LineOf(n) ? LineOf(n) : line; }

  std::string file_;
  std::vector<Diagnostic>* out_;
};

}  // namespace slurm_rca::base

#endif  // SLURM_RCA_BASE_YAML_H_
