#include "guard/rule.h"

#include <array>
#include <utility>

namespace slurm_rca::guard {
namespace {

constexpr std::array<std::pair<Rule, std::string_view>, 34> kIds = {{
    {Rule::kEmptyArgv, "empty-argv"},
    {Rule::kTooManyArgs, "too-many-args"},
    {Rule::kArgTooLong, "arg-too-long"},
    {Rule::kControlByte, "control-byte"},
    {Rule::kNonAscii, "non-ascii"},
    {Rule::kBinaryPath, "binary-path"},
    {Rule::kUnknownBinary, "unknown-binary"},
    {Rule::kEndOfOptions, "end-of-options"},
    {Rule::kAbbreviatedOption, "abbreviated-option"},
    {Rule::kCaseVariant, "case-variant"},
    {Rule::kClusteredShort, "clustered-short"},
    {Rule::kUnknownOption, "unknown-option"},
    {Rule::kDuplicateOption, "duplicate-option"},
    {Rule::kMissingValue, "missing-value"},
    {Rule::kDashValue, "dash-value"},
    {Rule::kDetachedValue, "detached-value"},
    {Rule::kUnexpectedValue, "unexpected-value"},
    {Rule::kBadValue, "bad-value"},
    {Rule::kUnknownCluster, "unknown-cluster"},
    {Rule::kMutatingOption, "mutating-option"},
    {Rule::kFileOption, "file-option"},
    {Rule::kSecretOption, "secret-option"},
    {Rule::kScopeOption, "scope-option"},
    {Rule::kEndlessMode, "endless-mode"},
    {Rule::kInteractiveMode, "interactive-mode"},
    {Rule::kAbbreviatedWord, "abbreviated-word"},
    {Rule::kMutatingWord, "mutating-word"},
    {Rule::kFileWord, "file-word"},
    {Rule::kUnknownWord, "unknown-word"},
    {Rule::kMissingOperand, "missing-operand"},
    {Rule::kExtraOperand, "extra-operand"},
    {Rule::kBadOperand, "bad-operand"},
    {Rule::kOwnJobsFilter, "own-jobs-filter"},
    {Rule::kOwnJobsUnfilterable, "own-jobs-unfilterable"},
}};

}  // namespace

std::string_view RuleId(Rule rule) {
  for (const auto& [r, id] : kIds) {
    if (r == rule) return id;
  }
  return "unknown-rule";
}

std::optional<Rule> RuleFromId(std::string_view id) {
  for (const auto& [r, i] : kIds) {
    if (i == id) return r;
  }
  return std::nullopt;
}

const std::vector<Rule>& AllRules() {
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> v;
    for (const auto& [r, id] : kIds) v.push_back(r);
    return v;
  }();
  return rules;
}

}  // namespace slurm_rca::guard
