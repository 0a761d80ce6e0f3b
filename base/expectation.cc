#include "base/expectation.h"

#include <functional>

#include "base/strings.h"

namespace slurm_rca::base {
namespace {

bool IsRuleChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

bool IsRuleId(std::string_view s) {
  if (s.empty() || s.front() == '-') return false;
  for (char c : s) {
    if (!IsRuleChar(c)) return false;
  }
  return true;
}

// The next blank-separated word of s, which is advanced past it and the blanks after it.
std::string_view NextWord(std::string_view& s) {
  size_t end = s.find_first_of(kBlanks);
  std::string_view word = s.substr(0, end);
  s = end == std::string_view::npos ? std::string_view() : Trim(s.substr(end), kBlanks);
  return word;
}

// A quoted text that must be all of s: '...' literal, or "..." with \\ and \" escapes.
Result<std::string> ReadQuoted(std::string_view s) {
  char quote = s.front();
  std::string out;
  size_t i = 1;
  for (; i < s.size() && s[i] != quote; ++i) {
    if (quote == '"' && s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '"' || s[i + 1] == '\\')) {
      ++i;
    }
    out += s[i];
  }
  if (i >= s.size()) return Status::InvalidArgument(std::string("unterminated ") + quote);
  if (i + 1 != s.size()) {
    return Status::InvalidArgument("text after the closing quote: '" +
                                   std::string(s.substr(i + 1)) + "'");
  }
  if (out.empty()) return Status::InvalidArgument("an empty quoted text matches every message");
  return out;
}

// The words after `deny` on a header line: [RULE] [at LINE] ['TEXT' | "TEXT"].
Result<ExpectedDiagnostic> ParseDeny(std::string_view rest) {
  ExpectedDiagnostic e;
  if (!rest.empty() && rest.front() != '\'' && rest.front() != '"') {
    std::string_view copy = rest;
    std::string_view word = NextWord(copy);
    if (word != "at") {
      if (!IsRuleId(word)) {
        return Status::InvalidArgument("'" + std::string(word) +
                                       "' is not a rule id (lowercase letters, digits, '-'); "
                                       "quote a message text");
      }
      e.rule = word;
      rest = copy;
    }
  }
  if (!rest.empty() && rest.front() != '\'' && rest.front() != '"') {
    std::string_view word = NextWord(rest);
    if (word != "at") {
      return Status::InvalidArgument("expected 'at LINE' or a quoted text, not '" +
                                     std::string(word) + "'");
    }
    std::string_view number = NextWord(rest);
    int line = 0;
    for (char c : number) {
      if (c < '0' || c > '9' || line > 1000000) {
        line = 0;
        break;
      }
      line = line * 10 + (c - '0');
    }
    if (line <= 0) {
      return Status::InvalidArgument("'at' needs a line number from 1, not '" +
                                     std::string(number) + "'");
    }
    e.line = line;
  }
  if (!rest.empty()) {
    if (rest.front() != '\'' && rest.front() != '"') {
      return Status::InvalidArgument("expected a quoted text, not '" + std::string(rest) + "'");
    }
    Result<std::string> text = ReadQuoted(rest);
    if (!text.ok()) return text.status();
    e.text = *text;
  }
  if (e.rule.empty() && e.text.empty()) {
    return Status::InvalidArgument("'deny' needs a rule id or a quoted message text");
  }
  return e;
}

// "key" when s is "key: value" or "key:" with key in [a-z_]; nullopt otherwise (a free comment).
std::optional<std::string_view> SettingKey(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  for (char c : s.substr(0, colon)) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) return std::nullopt;
  }
  if (colon + 1 < s.size() && s[colon + 1] != ' ' && s[colon + 1] != '\t') return std::nullopt;
  return s.substr(0, colon);
}

}  // namespace

bool ExpectedDiagnostic::Matches(const Diagnostic& d) const {
  if (!rule.empty() && d.rule != rule) return false;
  if (line != 0 && d.line != line) return false;
  return text.empty() || d.message.find(text) != std::string::npos;
}

std::string ExpectedDiagnostic::ToString() const {
  std::string s = rule;
  if (line) s += (s.empty() ? "at " : " at ") + std::to_string(line);
  if (!text.empty()) {
    char quote = text.find('\'') == std::string::npos ? '\'' : '"';
    std::string body;
    for (char c : text) {
      if (quote == '"' && (c == '"' || c == '\\')) body += '\\';
      body += c;
    }
    s += (s.empty() ? "" : " ") + std::string(1, quote) + body + quote;
  }
  return "deny " + s;
}

std::set<std::string> Expectation::Rules() const {
  std::set<std::string> rules;
  for (const ExpectedDiagnostic& e : deny) {
    if (!e.rule.empty()) rules.insert(e.rule);
  }
  return rules;
}

Result<Expectation> ParseExpectation(std::string_view text, std::string_view file,
                                     const ExpectationOptions& options) {
  Expectation expect;
  int number = 0;
  int allow_line = 0;
  auto error = [&](const std::string& reason) {
    return Status::InvalidArgument(std::string(file) + ":" + std::to_string(number) + ": " +
                                   reason);
  };
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    line = Trim(line, "\r");
    if (line.empty() || line.front() != '#') {
      if (!options.sidecar) break;  // the input begins
      if (Trim(line).empty()) continue;
      return error("a sidecar holds only '#' lines");
    }
    std::string_view content = Trim(line.substr(1));
    std::string_view rest = content;
    std::string_view word = NextWord(rest);
    if (word == "allow") {
      if (!rest.empty()) return error("'allow' takes nothing after it");
      if (allow_line) return error("a second 'allow'");
      allow_line = number;
    } else if (word == "deny") {
      Result<ExpectedDiagnostic> e = ParseDeny(rest);
      if (!e.ok()) return error(e.status().message());
      expect.deny.push_back(*e);
    } else if (std::optional<std::string_view> key = SettingKey(content)) {
      std::string name(*key);
      if (name != "why" && !options.settings.count(name)) {
        std::string known = "why";
        for (const std::string& s : options.settings) known += ", " + s;
        return error("unknown setting '" + name + "' (this corpus reads: " + known + ")");
      }
      std::string value(Trim(content.substr(key->size() + 1)));
      if (value.empty()) return error("'" + name + ":' without a value");
      if (!expect.settings.emplace(name, value).second) return error("a second '" + name + ":'");
    }
    // Anything else is a free comment.
  }
  if (allow_line && !expect.deny.empty()) {
    number = allow_line;
    return error("'allow' and 'deny' in one case");
  }
  if (!allow_line && expect.deny.empty()) {
    return Status::InvalidArgument(std::string(file) +
                                   ": no '# deny ...' or '# allow' line says what to expect");
  }
  expect.allow = allow_line != 0;
  return expect;
}

Result<LineCase> ParseLineCase(std::string_view line) {
  std::string_view rest = Trim(line, kBlanks);
  std::string_view verdict = NextWord(rest);
  LineCase c;
  if (verdict == "allow") {
    c.expect.allow = true;
  } else if (verdict == "deny") {
    std::string_view rule = NextWord(rest);
    if (!IsRuleId(rule)) {
      return Status::InvalidArgument("'deny' needs a rule id, not '" + std::string(rule) + "'");
    }
    c.expect.deny.push_back(ExpectedDiagnostic{.rule = std::string(rule)});
  } else {
    return Status::InvalidArgument("a case starts with 'allow' or 'deny <rule-id>', not '" +
                                   std::string(verdict) + "'");
  }
  c.input = rest;
  return c;
}

std::optional<std::string> Mismatch(const Expectation& expect, const std::vector<Diagnostic>& got) {
  // Pair expectations with diagnostics one to one (augmenting paths: an early, loose expectation
  // must not take the diagnostic a later, exact one needs).
  const size_t n = expect.deny.size();
  std::vector<int> owner(got.size(), -1);  // diagnostic -> the expectation paired with it
  std::function<bool(size_t, std::vector<bool>&)> pair = [&](size_t e, std::vector<bool>& seen) {
    for (size_t d = 0; d < got.size(); ++d) {
      if (seen[d] || !expect.deny[e].Matches(got[d])) continue;
      seen[d] = true;
      if (owner[d] < 0 || pair(static_cast<size_t>(owner[d]), seen)) {
        owner[d] = static_cast<int>(e);
        return true;
      }
    }
    return false;
  };
  std::vector<bool> paired(n, false);
  for (size_t e = 0; e < n; ++e) {
    std::vector<bool> seen(got.size(), false);
    paired[e] = pair(e, seen);
  }
  std::string out;
  if (expect.allow && !got.empty()) out += "expected no diagnostic\n";
  for (size_t e = 0; e < n; ++e) {
    if (!paired[e]) out += "expected, not produced: " + expect.deny[e].ToString() + "\n";
  }
  for (size_t d = 0; d < got.size(); ++d) {
    if (owner[d] < 0) out += "produced, not expected: " + got[d].ToString() + "\n";
  }
  if (out.empty()) return std::nullopt;
  out.pop_back();
  return out;
}

}  // namespace slurm_rca::base
