#include "skills/lint.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <system_error>

#include "base/file.h"
#include "base/status.h"
#include "mcp/backend/bundle_pack.h"

namespace slurm_rca::skills {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

constexpr Severity E = Severity::kError;
constexpr Severity W = Severity::kWarning;

const std::vector<Rule> kRules = {
    // Agent Skills specification.
    {"no-skills", E, "the path holds no skill (or cannot be read)"},
    {"missing-skill-md", E, "a skill directory has no readable SKILL.md"},
    {"frontmatter-missing", E, "SKILL.md does not start with a '---' line"},
    {"frontmatter-unclosed", E, "no '---' line closes the frontmatter"},
    {"yaml-invalid", E, "the frontmatter is not valid YAML"},
    {"frontmatter-not-mapping", E, "the frontmatter is not a YAML mapping"},
    {"duplicate-key", E, "a frontmatter key appears more than once"},
    {"unknown-key", E, "a frontmatter key the profile does not know"},
    {"name-missing", E, "name is absent, empty or not a string"},
    {"name-charset", E, "name is not lowercase a-z, 0-9 and single inner hyphens"},
    {"name-length", E, "name is longer than 64 characters"},
    {"name-directory", E, "name differs from the skill's directory name"},
    {"description-missing", E, "description is absent, empty or not a string"},
    {"description-length", E, "description is longer than 1024 characters"},
    {"compatibility-invalid", E, "compatibility is not a string of 1-500 characters"},
    {"license-invalid", E, "license is not a string"},
    {"metadata-invalid", E, "metadata is not a map of strings to strings"},
    {"allowed-tools-invalid", E, "allowed-tools is not one space-separated string"},
    {"body-lines", W, "the body is longer than 500 lines"},
    {"body-tokens", W, "the body is longer than about 5000 tokens (4 bytes a token)"},
    {"reference-depth", W, "a linked file is more than one folder below the skill"},
    {"claude-code-value", E, "a Claude Code key has a value of the wrong type"},
    // This project's runbook contract.
    {"name-reserved", E, "name contains a reserved word (anthropic, claude)"},
    {"xml-tag", E, "name or description contains an XML tag"},
    {"description-range", E, "description is not 80-500 characters"},
    {"description-use-when", E, "description does not say 'Use when'"},
    {"section-missing", E, "a required section (Steps, What not to conclude, Escalate when)"},
    {"link-broken", E, "a relative link does not resolve to a file inside the skill"},
    {"allowed-tools-unknown", E, "allowed-tools names a tool slurm-mcp does not offer"},
    {"unknown-tool", E, "the text names a slurm_ tool slurm-mcp does not offer"},
    {"unknown-topic", E, "the text queries a topic slurm-mcp does not offer"},
    {"unknown-filter", E, "the text filters a topic by a filter it does not accept"},
    // The claims ledger.
    {"figure-unclaimed", E, "a figure lies in no claims-ledger entry"},
    {"claims-invalid", E, "the ledger or an entry is malformed"},
    {"claim-kind", E, "kind is not measured, documented or illustrative"},
    {"claim-source", E, "a source is not a bundle line of this repository or an upstream document"},
    {"claim-note", E, "an illustrative claim has no note"},
    {"claim-target", E, "a claim names a skill or file that does not exist"},
    {"claim-stale", E, "a claim's text does not occur in its document"},
    {"claim-ambiguous", E, "a claim's text occurs more than once in its document"},
    // Claude Code plugin packaging.
    {"plugin-manifest", E, ".claude-plugin/plugin.json is missing or invalid"},
    {"marketplace-manifest", E, ".claude-plugin/marketplace.json is missing or invalid"},
};

const std::set<std::string> kSpecKeys = {"name",          "description", "license",
                                         "compatibility", "metadata",    "allowed-tools"};
// Keys Claude Code reads beyond the specification (reference: eval-skills-guard-anchors §2.4).
const std::set<std::string> kClaudeCodeKeys = {"disable-model-invocation",
                                               "user-invocable",
                                               "argument-hint",
                                               "model",
                                               "context",
                                               "agent",
                                               "hooks",
                                               "when_to_use",
                                               "arguments",
                                               "paths",
                                               "effort",
                                               "shell",
                                               "disallowed-tools",
                                               "version"};

const char* const kSections[] = {"## Steps", "## What not to conclude", "## Escalate when"};

// Upstream documentation a documented claim may cite.
const char* const kDocPrefixes[] = {
    "https://slurm.schedmd.com/",       "https://github.com/SchedMD/",
    "https://slinky.schedmd.com/",      "https://github.com/SlinkyProject/",
    "https://docs.nvidia.com/",         "https://github.com/NVIDIA/",
    "https://github.com/linux-rdma/",   "https://kubernetes.io/",
    "https://code.claude.com/",         "https://agentskills.io/",
    "https://modelcontextprotocol.io/", "https://man7.org/"};

constexpr size_t kMaxBodyLines = 500;
constexpr size_t kMaxBodyTokens = 5000;
constexpr size_t kBytesPerToken = 4;

class Sink {
 public:
  explicit Sink(std::vector<base::Diagnostic>* out) : out_(out) {}
  void Add(const char* rule, const std::string& file, int line, std::string message) {
    out_->push_back({.file = file, .line = line, .rule = rule, .message = std::move(message)});
  }

 private:
  std::vector<base::Diagnostic>* out_;
};

int LineOf(const std::string& text, size_t offset) {
  return 1 + static_cast<int>(
                 std::count(text.begin(), text.begin() + std::min(offset, text.size()), '\n'));
}

// Line of a frontmatter key's value, from its YAML mark.
int KeyLine(const Skill& s, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return m.line >= 0 ? s.frontmatter_line + m.line : s.frontmatter_line;
}

bool IsString(const YAML::Node& n) { return n && n.IsScalar(); }

// --------------------------------------------------------------------------------- masking

bool IsFenceLine(const std::string& text, size_t line_start) {
  size_t p = line_start;
  while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
  return text.compare(p, 3, "```") == 0 || text.compare(p, 3, "~~~") == 0;
}

void Blank(std::string& s, size_t from, size_t to) {
  for (size_t i = from; i < to && i < s.size(); ++i) {
    if (s[i] != '\n') s[i] = ' ';
  }
}

// Positions of inline code spans `...` outside fenced blocks: [open backtick, close backtick].
struct Span {
  size_t open;
  size_t close;
};
std::vector<Span> CodeSpans(const std::string& text) {
  std::vector<Span> spans;
  bool in_fence = false;
  size_t line_start = 0;
  while (line_start < text.size()) {
    size_t end = text.find('\n', line_start);
    if (end == std::string::npos) end = text.size();
    if (IsFenceLine(text, line_start)) {
      in_fence = !in_fence;
    } else if (!in_fence) {
      for (size_t i = line_start; i < end; ++i) {
        if (text[i] != '`') continue;
        size_t run = i;
        while (run < end && text[run] == '`') ++run;
        const std::string ticks = text.substr(i, run - i);
        size_t close = text.find(ticks, run);
        if (close == std::string::npos || close >= end) {
          i = run - 1;
          continue;
        }
        spans.push_back({i, close + ticks.size() - 1});
        i = close + ticks.size() - 1;
      }
    }
    line_start = end + 1;
  }
  return spans;
}

std::string Masked(const std::string& text) {
  std::string m = text;
  for (const Span& s : CodeSpans(text)) Blank(m, s.open, s.close + 1);
  for (size_t p = 0; (p = m.find("<!--", p)) != std::string::npos;) {
    size_t e = m.find("-->", p + 4);
    e = e == std::string::npos ? m.size() : e + 3;
    Blank(m, p, e);
    p = e;
  }
  for (size_t p = 0; (p = m.find("](", p)) != std::string::npos;) {
    size_t e = m.find(')', p + 2);
    if (e == std::string::npos) break;
    Blank(m, p + 2, e);
    p = e;
  }
  static const RE2 kUrl(R"((<?https?://[^\s)>]+>?))");
  static const RE2 kManRef(R"([A-Za-z][A-Za-z0-9_.-]*(\([1-8]\)))");
  static const RE2 kListMarker(R"((?m)^([ \t]*[0-9]+[.)])[ \t])");
  for (const RE2* re : {&kUrl, &kManRef, &kListMarker}) {
    re2::StringPiece input(m);
    re2::StringPiece group;
    while (RE2::FindAndConsume(&input, *re, &group)) {
      size_t at = group.data() - m.data();
      Blank(m, at, at + group.size());
      if (group.empty()) break;
    }
  }
  return m;
}

const std::set<std::string> kCardinals = {
    "two",      "three",    "four",    "five",     "six",      "seven",     "eight",   "nine",
    "ten",      "eleven",   "twelve",  "thirteen", "fourteen", "fifteen",   "sixteen", "seventeen",
    "eighteen", "nineteen", "twenty",  "thirty",   "forty",    "fifty",     "sixty",   "seventy",
    "eighty",   "ninety",   "hundred", "hundreds", "thousand", "thousands", "million", "millions",
    "billion",  "billions", "dozen",   "dozens"};

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// ---------------------------------------------------------------- whitespace-free matching

// The text with whitespace runs collapsed to one space, and for each of its bytes the offset of
// the original byte.
struct Normalised {
  std::string text;
  std::vector<size_t> origin;
};
Normalised Normalise(const std::string& s) {
  Normalised n;
  bool space = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      space = !n.text.empty();
      continue;
    }
    if (space) {
      n.text.push_back(' ');
      n.origin.push_back(i);
      space = false;
    }
    n.text.push_back(s[i]);
    n.origin.push_back(i);
  }
  return n;
}

// ------------------------------------------------------------------------------ the skill

void LintFrontmatter(const Skill& s, const LintOptions& o, Sink& out) {
  std::map<std::string, int> seen;
  for (auto it = s.meta.begin(); it != s.meta.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
    const int line = KeyLine(s, it->first);
    if (++seen[key] == 2) out.Add("duplicate-key", s.path, line, "key '" + key + "' appears twice");
    const bool known =
        kSpecKeys.count(key) || (o.profile == Profile::kClaudeCode && kClaudeCodeKeys.count(key));
    if (!known) {
      out.Add("unknown-key", s.path, line,
              "key '" + key + "' is not allowed in the " +
                  (o.profile == Profile::kSpec ? "spec" : "claude-code") + " profile");
    }
  }
  const YAML::Node name = s.meta["name"];
  static const RE2 kName("[a-z0-9]+(-[a-z0-9]+)*");
  static const RE2 kReserved("(?i).*(anthropic|claude).*");
  static const RE2 kXmlTag(R"(<\s*/?\s*[A-Za-z][^<>]*>)");
  if (!IsString(name) || name.Scalar().empty()) {
    out.Add("name-missing", s.path, name ? KeyLine(s, name) : s.frontmatter_line,
            "name is required and must be a non-empty string");
  } else {
    const std::string& n = name.Scalar();
    const int line = KeyLine(s, name);
    if (!RE2::FullMatch(n, kName)) {
      out.Add("name-charset", s.path, line,
              "name '" + n + "' must be lowercase a-z and 0-9 words joined by single hyphens");
    } else if (n.size() > 64) {
      out.Add("name-length", s.path, line,
              "name is " + std::to_string(n.size()) + " characters; at most 64");
    }
    if (n != s.dir_name) {
      out.Add("name-directory", s.path, line,
              "name '" + n + "' must equal the directory name '" + s.dir_name + "'");
    }
    if (RE2::FullMatch(n, kReserved)) {
      out.Add("name-reserved", s.path, line, "name must not contain 'anthropic' or 'claude'");
    }
    if (RE2::PartialMatch(n, kXmlTag)) out.Add("xml-tag", s.path, line, "name holds an XML tag");
  }

  const YAML::Node desc = s.meta["description"];
  if (!IsString(desc) || desc.Scalar().empty()) {
    out.Add("description-missing", s.path, desc ? KeyLine(s, desc) : s.frontmatter_line,
            "description is required and must be a non-empty string");
  } else {
    const std::string& d = desc.Scalar();
    const int line = KeyLine(s, desc);
    if (d.size() > 1024) {
      out.Add("description-length", s.path, line,
              "description is " + std::to_string(d.size()) + " characters; at most 1024");
    } else if (d.size() < 80 || d.size() > 500) {
      out.Add("description-range", s.path, line,
              "description is " + std::to_string(d.size()) +
                  " characters; runbooks need 80-500 to say what and when");
    }
    static const RE2 kUseWhen("(?i)use when");
    if (!RE2::PartialMatch(d, kUseWhen)) {
      out.Add("description-use-when", s.path, line,
              "description must say when to use the skill ('Use when ...')");
    }
    if (RE2::PartialMatch(d, kXmlTag)) {
      out.Add("xml-tag", s.path, line, "description holds an XML tag");
    }
  }

  if (const YAML::Node c = s.meta["compatibility"]) {
    if (!IsString(c) || c.Scalar().empty() || c.Scalar().size() > 500) {
      out.Add("compatibility-invalid", s.path, KeyLine(s, c),
              "compatibility must be a string of 1-500 characters");
    }
  }
  if (const YAML::Node l = s.meta["license"]) {
    if (!IsString(l)) out.Add("license-invalid", s.path, KeyLine(s, l), "license must be a string");
  }
  if (const YAML::Node m = s.meta["metadata"]) {
    bool ok = m.IsMap();
    if (ok) {
      for (auto it = m.begin(); it != m.end(); ++it) {
        ok = ok && it->first.IsScalar() && it->second.IsScalar();
      }
    }
    if (!ok) {
      out.Add("metadata-invalid", s.path, KeyLine(s, m),
              "metadata must map string keys to string values");
    }
  }
  if (const YAML::Node t = s.meta["allowed-tools"]) {
    const int line = KeyLine(s, t);
    if (!IsString(t) || t.Scalar().find(',') != std::string::npos) {
      out.Add("allowed-tools-invalid", s.path, line,
              "allowed-tools must be one string of tools separated by spaces (no list, no commas)");
    } else {
      const std::string prefix = "mcp__" + o.surface.server + "__";
      std::istringstream in(t.Scalar());
      for (std::string tool; in >> tool;) {
        if (tool.rfind(prefix, 0) != 0 || !o.surface.tools.count(tool.substr(prefix.size()))) {
          out.Add(
              "allowed-tools-unknown", s.path, line,
              "'" + tool + "' is not a " + o.surface.server + " tool (" + prefix +
                  "<tool>, tools: " +
                  [&] {
                    std::string all;
                    for (const auto& x : o.surface.tools) all += (all.empty() ? "" : ", ") + x;
                    return all;
                  }() +
                  ")");
        }
      }
    }
  }
  if (o.profile == Profile::kClaudeCode) {
    for (const char* key : {"disable-model-invocation", "user-invocable"}) {
      const YAML::Node b = s.meta[key];
      if (b && !(b.IsScalar() && (b.Scalar() == "true" || b.Scalar() == "false"))) {
        out.Add("claude-code-value", s.path, KeyLine(s, b),
                std::string(key) + " must be true or false");
      }
    }
    const YAML::Node hint = s.meta["argument-hint"];
    if (hint && !hint.IsScalar()) {
      out.Add("claude-code-value", s.path, KeyLine(s, hint),
              "argument-hint must be a string (quote it: '[x]' is a YAML list)");
    }
  }
}

void LintSections(const Skill& s, Sink& out) {
  std::set<std::string> lines;
  std::istringstream in(s.body);
  for (std::string l; std::getline(in, l);) {
    while (!l.empty() && std::isspace(static_cast<unsigned char>(l.back()))) l.pop_back();
    lines.insert(l);
  }
  for (const char* section : kSections) {
    if (!lines.count(section)) {
      out.Add("section-missing", s.path, s.body_line,
              std::string("the body needs a '") + section + "' section");
    }
  }
  const size_t n = std::count(s.body.begin(), s.body.end(), '\n');
  if (n > kMaxBodyLines) {
    out.Add("body-lines", s.path, s.body_line,
            "the body is " + std::to_string(n) +
                " lines; keep it under 500 and move detail to references/");
  }
  if (s.body.size() / kBytesPerToken > kMaxBodyTokens) {
    out.Add("body-tokens", s.path, s.body_line,
            "the body is about " + std::to_string(s.body.size() / kBytesPerToken) +
                " tokens; keep it under 5000 and move detail to references/");
  }
}

// Relative Markdown links of one document must name files inside the skill.
void LintLinks(const Skill& s, const std::string& file, const std::string& text, Sink& out) {
  std::string m = text;
  for (const Span& sp : CodeSpans(text)) Blank(m, sp.open, sp.close + 1);
  static const RE2 kLink(R"(\]\(([^)\s]+)(?:\s+"[^"]*")?\))");
  re2::StringPiece input(m);
  re2::StringPiece target;
  std::error_code dir_ec;
  const fs::path skill_dir = fs::weakly_canonical(s.dir, dir_ec);
  while (RE2::FindAndConsume(&input, kLink, &target)) {
    std::string t(target);
    const int line = LineOf(text, target.data() - m.data());
    if (t.rfind("http://", 0) == 0 || t.rfind("https://", 0) == 0 || t.rfind("mailto:", 0) == 0 ||
        t[0] == '#') {
      continue;
    }
    t = t.substr(0, t.find('#'));
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(fs::path(file).parent_path() / t, ec);
    const fs::path rel = resolved.lexically_relative(skill_dir);
    const bool inside = !rel.empty() && *rel.begin() != "..";
    if (ec || !inside || !fs::exists(resolved, ec)) {
      out.Add("link-broken", file, line,
              "link '" + t + "' does not resolve to a file inside the skill " + s.dir_name);
      continue;
    }
    if (std::distance(rel.begin(), rel.end()) > 2) {
      out.Add("reference-depth", file, line,
              "'" + rel.generic_string() + "' is more than one folder deep; keep references flat");
    }
  }
}

std::string Inner(const std::string& text, const Span& sp) {
  size_t a = sp.open, b = sp.close;
  while (a < b && text[a] == '`') ++a;
  while (b > a && text[b] == '`') --b;
  std::string v = text.substr(a, b - a + 1);
  while (!v.empty() && v.front() == ' ') v.erase(v.begin());
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

// The tools, topics and filters a document names:
//   `slurm_x`                   a tool;  `mcp__slurm-mcp__x` likewise
//   Query `a`, `b` and `c`      topics (also "Attempt"); chains by commas, "and", "or"
//   `a` filtered by `f` or `g=v`  filters of topic a
void LintSurface(const std::string& file, const std::string& text, const Surface& surface,
                 Sink& out) {
  const std::vector<Span> spans = CodeSpans(text);
  static const RE2 kTool("slurm_[A-Za-z0-9_]+");
  static const RE2 kMcpTool(R"(mcp__([A-Za-z0-9_-]+)__([A-Za-z0-9_-]+))");
  static const RE2 kQueryVerb(R"((?is).*\b(query|attempt)\s+$)");
  static const RE2 kChain(R"((?is)^\s*(,|and|or|,\s*and|,\s*or)\s*$)");
  static const RE2 kFilteredBy(R"((?is)^\s+filtered\s+by\s+$)");
  enum class Mode { kNone, kTopic, kFilter };
  Mode mode = Mode::kNone;
  std::string topic;  // the last topic named, for filters
  size_t prev_end = 0;
  for (const Span& sp : spans) {
    const std::string between = text.substr(prev_end, sp.open - prev_end);
    const std::string v = Inner(text, sp);
    const int line = LineOf(text, sp.open);
    prev_end = sp.close + 1;
    std::string server, name;
    if (RE2::FullMatch(v, kMcpTool, &server, &name)) {
      if (server == surface.server && !surface.tools.count(name)) {
        out.Add("unknown-tool", file, line, "'" + v + "' is not a tool of " + surface.server);
      }
    } else if (RE2::FullMatch(v, kTool) && !surface.tools.count(v)) {
      out.Add("unknown-tool", file, line, "'" + v + "' is not a tool of " + surface.server);
    }
    if (RE2::FullMatch(between, kQueryVerb)) {
      mode = Mode::kTopic;
    } else if (mode != Mode::kNone && RE2::FullMatch(between, kChain)) {
      // same mode as the previous span
    } else if (RE2::FullMatch(between, kFilteredBy)) {
      mode = Mode::kFilter;
    } else {
      // A span followed by "filtered by" is a topic even without "Query" before it.
      mode = Mode::kNone;
      const size_t after = sp.close + 1;
      static const RE2 kFollowedByFilter(R"((?is)^\s+filtered\s+by\s+`)");
      if (RE2::PartialMatch(text.substr(after, 40), kFollowedByFilter)) mode = Mode::kTopic;
      if (mode == Mode::kNone) continue;
    }
    if (mode == Mode::kTopic) {
      topic = v;
      if (!surface.topics.count(v)) {
        out.Add("unknown-topic", file, line, "'" + v + "' is not a topic of " + surface.server);
      }
    } else if (mode == Mode::kFilter) {
      const std::string filter = v.substr(0, v.find('='));
      auto t = surface.topics.find(topic);
      if (t != surface.topics.end() && !t->second.count(filter)) {
        std::string accepted;
        for (const auto& f : t->second) accepted += (accepted.empty() ? "" : ", ") + f;
        out.Add("unknown-filter", file, line,
                "topic '" + topic + "' has no filter '" + filter +
                    "' (it accepts: " + (accepted.empty() ? "none" : accepted) + ")");
      }
    }
  }
}

// -------------------------------------------------------------------------------- ledger

struct Doc {
  const Skill* skill;
  std::string relative;  // "SKILL.md" or "references/x.md"
  std::string path;
  const std::string* text;
  std::vector<std::pair<size_t, size_t>> claimed;  // spans covered by claims
};

// OK when `source` names lines of a file of this repository that hold `quote`; else why not.
base::Status CheckMeasuredSource(const std::string& source, const std::string& quote,
                                 const fs::path& root) {
  static const RE2 kSource(R"((fixtures/[A-Za-z0-9_./-]+):([0-9]+)(?:-([0-9]+))?)");
  std::string path;
  int first = 0, last = 0;
  std::string last_s;
  if (!RE2::FullMatch(source, kSource, &path, &first, &last_s)) {
    return base::Status::InvalidArgument(
        "a measured source is fixtures/<bundle>/<file>:LINE[-LINE] (an evidence bundle of this "
        "repository), got '" +
        source + "'");
  }
  if (path.find("..") != std::string::npos) {
    return base::Status::InvalidArgument("the source path must not contain '..'");
  }
  last = first;
  if (!last_s.empty() &&
      std::from_chars(last_s.data(), last_s.data() + last_s.size(), last).ec != std::errc()) {
    return base::Status::InvalidArgument("the line range of '" + source + "' is not a number");
  }
  // A bundle's file is cited by its path through the bundle, which is one pack file
  // (mcp/backend/bundle_pack.h): fixtures/S01-x/manifest.json is in fixtures/S01-x.evidence.gz.
  base::Result<std::string> content = mcp::ReadFileThroughBundles((root / path).string());
  if (!content.ok()) {
    return base::Status::InvalidArgument("no file " + path + " under the repository root " +
                                         root.string() + " (" + content.status().message() + ")");
  }
  std::istringstream in(*content);
  std::string lines;
  int n = 0;
  for (std::string l; std::getline(in, l);) {
    ++n;
    if (n >= first && n <= last) lines += l + "\n";
  }
  if (first < 1 || last < first || last > n) {
    return base::Status::InvalidArgument(path + " has " + std::to_string(n) +
                                         " lines; the source names " + source);
  }
  if (quote.empty()) {
    return base::Status::InvalidArgument(
        "a measured claim needs a `quote`: text found verbatim on the cited line(s)");
  }
  if (lines.find(quote) == std::string::npos) {
    return base::Status::InvalidArgument("the quote '" + quote + "' is not on " + source);
  }
  return base::Status();
}

}  // namespace

const std::vector<Rule>& Rules() { return kRules; }

const Rule* FindRule(std::string_view id) {
  for (const Rule& r : kRules) {
    if (id == r.id) return &r;
  }
  return nullptr;
}

Severity SeverityOf(const base::Diagnostic& finding) {
  const Rule* r = FindRule(finding.rule);
  return r ? r->severity : E;
}

int LintResult::errors() const {
  return static_cast<int>(
      std::count_if(findings.begin(), findings.end(),
                    [](const base::Diagnostic& f) { return SeverityOf(f) == E; }));
}
int LintResult::warnings() const { return static_cast<int>(findings.size()) - errors(); }

std::vector<Figure> FindFigures(const std::string& text) {
  const std::string m = Masked(text);
  std::vector<Figure> figures;
  for (size_t i = 0; i < m.size();) {
    const char c = m[i];
    const bool boundary = i == 0 || !(IsWordChar(m[i - 1]) || m[i - 1] == '.');
    if (std::isdigit(static_cast<unsigned char>(c)) && boundary) {
      size_t j = i;
      while (j < m.size()) {
        while (j < m.size() && std::isdigit(static_cast<unsigned char>(m[j]))) ++j;
        if (j + 1 < m.size() && (m[j] == '.' || m[j] == ',') &&
            std::isdigit(static_cast<unsigned char>(m[j + 1]))) {
          ++j;
          continue;
        }
        break;
      }
      size_t k = j;
      bool hash = false;
      while (k < m.size() && std::isalnum(static_cast<unsigned char>(m[k]))) {
        hash = hash || std::isdigit(static_cast<unsigned char>(m[k]));
        ++k;
      }
      if (!hash) figures.push_back({i, j - i, LineOf(text, i), text.substr(i, j - i)});
      i = k;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) && (i == 0 || !IsWordChar(m[i - 1]))) {
      size_t j = i;
      while (j < m.size() && IsWordChar(m[j])) ++j;
      std::string word = m.substr(i, j - i);
      std::transform(word.begin(), word.end(), word.begin(), ::tolower);
      bool figure = kCardinals.count(word) > 0;
      size_t len = j - i;
      if (word == "tens") {
        static const RE2 kTensOf(R"((?i)^tens\s+of\b)");
        figure = RE2::PartialMatch(m.substr(i, 12), kTensOf);
      }
      if (figure) figures.push_back({i, len, LineOf(text, i), text.substr(i, len)});
      i = j;
      continue;
    }
    ++i;
  }
  return figures;
}

std::vector<base::Diagnostic> LintSkill(const Skill& skill, const LintOptions& options) {
  std::vector<base::Diagnostic> findings;
  Sink out(&findings);
  LintFrontmatter(skill, options, out);
  LintSections(skill, out);
  LintLinks(skill, skill.path, skill.text, out);
  LintSurface(skill.path, skill.text, options.surface, out);
  for (const SkillFile& f : skill.references) {
    LintLinks(skill, f.path, f.text, out);
    LintSurface(f.path, f.text, options.surface, out);
  }
  return findings;
}

std::vector<base::Diagnostic> LintClaims(const std::string& ledger_path,
                                         const std::vector<Skill>& skills) {
  std::vector<base::Diagnostic> findings;
  Sink out(&findings);
  std::vector<Doc> docs;
  for (const Skill& s : skills) {
    docs.push_back({&s, "SKILL.md", s.path, &s.text, {}});
    for (const SkillFile& f : s.references)
      docs.push_back({&s, f.relative_path, f.path, &f.text, {}});
  }
  std::error_code ec;
  YAML::Node ledger;
  bool have_ledger = fs::exists(ledger_path, ec);
  fs::path root = fs::path(ledger_path).parent_path();
  if (have_ledger) {
    try {
      ledger = YAML::LoadFile(ledger_path);
    } catch (const YAML::Exception& e) {
      out.Add("claims-invalid", ledger_path, e.mark.line + 1, "not valid YAML: " + e.msg);
      have_ledger = false;
    }
  }
  if (have_ledger && (!ledger.IsMap() || !ledger["claims"] || !ledger["claims"].IsSequence())) {
    out.Add("claims-invalid", ledger_path, 1, "the ledger is a mapping with a `claims:` list");
    have_ledger = false;
  }
  if (have_ledger) {
    for (auto it = ledger.begin(); it != ledger.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (key != "claims" && key != "root") {
        out.Add("claims-invalid", ledger_path, it->first.Mark().line + 1,
                "unknown top-level key '" + key + "' (claims, root)");
      }
    }
    if (ledger["root"]) {
      if (!ledger["root"].IsScalar()) {
        out.Add("claims-invalid", ledger_path, ledger["root"].Mark().line + 1,
                "root must be a path");
      } else {
        root = root / ledger["root"].Scalar();
      }
    }
    static const std::set<std::string> kKeys = {"skill",  "file",  "text", "kind",
                                                "source", "quote", "note"};
    for (const YAML::Node& c : ledger["claims"]) {
      const int line = c.Mark().line + 1;
      if (!c.IsMap()) {
        out.Add("claims-invalid", ledger_path, line, "each claim is a mapping");
        continue;
      }
      bool ok = true;
      std::map<std::string, std::string> v;
      for (auto it = c.begin(); it != c.end(); ++it) {
        const std::string key = it->first.Scalar();
        if (!kKeys.count(key)) {
          out.Add("claims-invalid", ledger_path, it->first.Mark().line + 1,
                  "unknown claim key '" + key + "' (skill, file, text, kind, source, quote, note)");
          ok = false;
        } else if (!it->second.IsScalar()) {
          out.Add("claims-invalid", ledger_path, it->second.Mark().line + 1,
                  key + " must be a string");
          ok = false;
        } else {
          v[key] = it->second.Scalar();
        }
      }
      for (const char* req : {"skill", "text", "kind"}) {
        if (ok && v[req].empty()) {
          out.Add("claims-invalid", ledger_path, line,
                  std::string("a claim needs a non-empty ") + req);
          ok = false;
        }
      }
      if (!ok) continue;
      const std::string file = v.count("file") ? v["file"] : "SKILL.md";
      const std::string& kind = v["kind"];
      const std::string& source = v["source"];
      Doc* doc = nullptr;
      for (Doc& d : docs) {
        if (d.skill->dir_name == v["skill"] && d.relative == file) doc = &d;
      }
      if (kind == "measured") {
        if (base::Status st = CheckMeasuredSource(source, v["quote"], root); !st.ok()) {
          out.Add("claim-source", ledger_path, line, st.message());
        }
      } else if (kind == "documented") {
        bool known = false;
        for (const char* p : kDocPrefixes) known = known || source.rfind(p, 0) == 0;
        if (!known) {
          out.Add("claim-source", ledger_path, line,
                  "a documented source is an upstream document URL (slurm.schedmd.com, "
                  "docs.nvidia.com, ...), got '" +
                      source + "'");
        } else if (doc &&
                   doc->text->find(source.substr(0, source.find('#'))) == std::string::npos) {
          out.Add("claim-source", ledger_path, line,
                  "the document " + doc->relative + " of " + v["skill"] +
                      " must link the source it relies on: " + source.substr(0, source.find('#')));
        }
      } else if (kind == "illustrative") {
        if (v["note"].empty()) {
          out.Add("claim-note", ledger_path, line, "an illustrative claim needs a note saying so");
        }
      } else {
        out.Add("claim-kind", ledger_path, line,
                "kind '" + kind + "' is not measured, documented or illustrative");
      }
      if (!doc) {
        out.Add("claim-target", ledger_path, line,
                "no document " + file + " in a skill " + v["skill"]);
        continue;
      }
      const Normalised hay = Normalise(*doc->text);
      const Normalised needle = Normalise(v["text"]);
      std::vector<size_t> hits;
      for (size_t p = 0; (p = hay.text.find(needle.text, p)) != std::string::npos; ++p)
        hits.push_back(p);
      if (hits.empty()) {
        out.Add("claim-stale", ledger_path, line,
                "'" + v["text"] + "' does not occur in " + v["skill"] + "/" + file);
      } else if (hits.size() > 1) {
        out.Add("claim-ambiguous", ledger_path, line,
                "'" + v["text"] + "' occurs " + std::to_string(hits.size()) + " times in " +
                    v["skill"] + "/" + file + "; quote more of it");
      } else {
        const size_t begin = hay.origin[hits[0]];
        const size_t end = hay.origin[hits[0] + needle.text.size() - 1] + 1;
        doc->claimed.push_back({begin, end});
      }
    }
  }
  for (const Doc& d : docs) {
    for (const Figure& f : FindFigures(*d.text)) {
      bool covered = false;
      for (const auto& [b, e] : d.claimed)
        covered = covered || (f.offset >= b && f.offset + f.length <= e);
      if (!covered) {
        out.Add("figure-unclaimed", d.path, f.line,
                "the figure '" + f.text + "' needs an entry in " +
                    (have_ledger ? ledger_path : ledger_path + " (no ledger found)") +
                    " whose text covers it");
      }
    }
  }
  return findings;
}

namespace {

int JsonKeyLine(const std::string& text, const std::string& key) {
  size_t p = text.find("\"" + key + "\"");
  return p == std::string::npos ? 1 : LineOf(text, p);
}

bool IsKebab(const Json& j) {
  static const RE2 kKebab("[a-z0-9]+(-[a-z0-9]+)*");
  return j.is_string() && RE2::FullMatch(j.get<std::string>(), kKebab);
}

}  // namespace

std::vector<base::Diagnostic> LintPlugin(const std::string& plugin_root) {
  std::vector<base::Diagnostic> findings;
  Sink out(&findings);
  const fs::path dir = fs::path(plugin_root) / ".claude-plugin";
  const std::string plugin_path = (dir / "plugin.json").string();
  const std::string market_path = (dir / "marketplace.json").string();
  std::error_code ec;

  std::string text;
  Json plugin;
  std::string plugin_name;
  if (std::optional<std::string> read = base::ReadFile(plugin_path); !read) {
    out.Add("plugin-manifest", plugin_path, 0, "cannot read plugin.json");
  } else {
    text = std::move(*read);
    plugin = Json::parse(text, nullptr, false);
    auto bad = [&](const std::string& key, const std::string& why) {
      out.Add("plugin-manifest", plugin_path, JsonKeyLine(text, key), why);
    };
    if (!plugin.is_object()) {
      out.Add("plugin-manifest", plugin_path, 1, "plugin.json must be a JSON object");
    } else {
      if (!IsKebab(plugin.value("name", Json()))) {
        bad("name", "name is required and must be kebab-case");
      } else {
        plugin_name = plugin["name"];
      }
      static const RE2 kSemver(R"([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?)");
      if (plugin.contains("version") &&
          !(plugin["version"].is_string() &&
            RE2::FullMatch(plugin["version"].get<std::string>(), kSemver))) {
        bad("version", "version must be a semantic version string (1.2.3)");
      }
      for (const char* key : {"description", "homepage", "repository", "license"}) {
        if (plugin.contains(key) && !plugin[key].is_string())
          bad(key, std::string(key) + " must be a string");
      }
      if (plugin.contains("author") &&
          !(plugin["author"].is_object() && plugin["author"].value("name", Json()).is_string())) {
        bad("author", "author must be an object with a string name");
      }
      if (plugin.contains("keywords")) {
        bool ok = plugin["keywords"].is_array();
        if (ok) {
          for (const Json& k : plugin["keywords"]) ok = ok && k.is_string();
        }
        if (!ok) bad("keywords", "keywords must be a list of strings");
      }
      const std::string skills = plugin.contains("skills") && plugin["skills"].is_string()
                                     ? plugin["skills"].get<std::string>()
                                     : "skills";
      if (plugin.contains("skills") && !plugin["skills"].is_string()) {
        bad("skills", "skills must be a relative path");
      } else if (!fs::is_directory(fs::path(plugin_root) / skills, ec)) {
        bad(plugin.contains("skills") ? "skills" : "name",
            "the plugin's skills folder '" + skills + "' does not exist");
      }
    }
  }

  std::optional<std::string> market_text = base::ReadFile(market_path);
  if (!market_text) {
    out.Add("marketplace-manifest", market_path, 0, "cannot read marketplace.json");
    return findings;
  }
  text = std::move(*market_text);
  const Json market = Json::parse(text, nullptr, false);
  auto bad = [&](const std::string& key, const std::string& why) {
    out.Add("marketplace-manifest", market_path, JsonKeyLine(text, key), why);
  };
  if (!market.is_object()) {
    out.Add("marketplace-manifest", market_path, 1, "marketplace.json must be a JSON object");
    return findings;
  }
  if (!IsKebab(market.value("name", Json())))
    bad("name", "name is required and must be kebab-case");
  const Json owner = market.value("owner", Json());
  if (!owner.is_object() || !owner.value("name", Json()).is_string()) {
    bad("owner", "owner is required: an object with a string name");
  }
  const Json plugins = market.value("plugins", Json());
  if (!plugins.is_array() || plugins.empty()) {
    bad("plugins", "plugins is required: a non-empty list of plugin entries");
    return findings;
  }
  bool lists_plugin = false;
  for (const Json& p : plugins) {
    if (!p.is_object() || !p.value("name", Json()).is_string()) {
      bad("plugins", "each plugin entry needs a string name");
      continue;
    }
    const std::string name = p["name"];
    lists_plugin = lists_plugin || name == plugin_name;
    const Json source = p.value("source", Json());
    if (source.is_string()) {
      const std::string src = source;
      const fs::path target = fs::path(plugin_root) / src;
      if (!(src.rfind("./", 0) == 0 || src == ".") || !fs::is_directory(target, ec)) {
        bad("source",
            "source '" + src + "' of " + name + " must be a relative folder (./...) that exists");
      }
    } else if (!source.is_object()) {
      bad("source",
          "plugin entry " + name + " needs a source (a relative path or a source object)");
    }
    if (p.contains("skills")) {
      bool ok = p["skills"].is_array();
      for (const Json& s : ok ? p["skills"] : Json::array()) {
        ok = ok && s.is_string() &&
             fs::is_regular_file(fs::path(plugin_root) / s.get<std::string>() / "SKILL.md", ec);
      }
      if (!ok) bad("skills", "skills of " + name + " must list skill folders that hold SKILL.md");
    }
  }
  if (!plugin_name.empty() && !lists_plugin) {
    bad("plugins", "no plugin entry is named '" + plugin_name + "' (the name in plugin.json)");
  }
  return findings;
}

namespace {

// The folder above `path`, spelled relative when `path` is ("skills/" -> ".", "." -> ".."), so
// that findings name files the way the caller named them (GitHub annotations need that).
fs::path Above(const fs::path& path) {
  fs::path above = (path / "..").lexically_normal();
  if (above.empty()) above = ".";
  return above;
}

}  // namespace

LintResult LintPath(const std::string& path_in, const LintOptions& options) {
  LintResult result;
  Sink out(&result.findings);
  std::error_code ec;
  fs::path path(path_in);
  if (path.filename() == "SKILL.md") path = path.parent_path();
  if (!fs::exists(path, ec)) {
    out.Add("no-skills", path_in, 0, "no such file or directory");
    return result;
  }
  std::string skills_root;
  std::vector<Skill> skills;
  std::vector<LoadProblem> problems;
  fs::path ledger;
  auto add = [&](std::vector<base::Diagnostic> f) {
    result.findings.insert(result.findings.end(), f.begin(), f.end());
  };
  if (IsSkillDir(path.string())) {
    SkillLoad load = LoadSkill(path.string());
    if (load.ok()) skills.push_back(std::move(load.skill));
    problems = load.problems;
    ledger = Above(path) / "claims.yaml";
  } else {
    fs::path root = path;
    if (fs::is_directory(path / ".claude-plugin", ec)) {
      add(LintPlugin(path.string()));
      root = path / "skills";
    } else {
      const fs::path parent = Above(path);
      if (fs::is_directory(parent / ".claude-plugin", ec)) add(LintPlugin(parent.string()));
    }
    Catalog catalog = LoadCatalog(root.string());
    skills = std::move(catalog.skills);
    problems = std::move(catalog.problems);
    ledger = root / "claims.yaml";
    if (skills.empty() && problems.empty()) {
      out.Add("no-skills", root.string(), 0, "no skill directory (one holding SKILL.md) here");
    }
  }
  for (const LoadProblem& p : problems) out.Add(p.rule.c_str(), p.file, p.line, p.message);
  for (const Skill& s : skills) add(LintSkill(s, options));
  if (!skills.empty()) add(LintClaims(ledger.string(), skills));
  result.skills = static_cast<int>(skills.size());
  std::sort(result.findings.begin(), result.findings.end(),
            [](const base::Diagnostic& a, const base::Diagnostic& b) {
              return std::tie(a.file, a.line, a.rule, a.message) <
                     std::tie(b.file, b.line, b.rule, b.message);
            });
  return result;
}

namespace {

std::string GithubEscape(const std::string& s, bool property) {
  std::string o;
  for (char c : s) {
    if (c == '%')
      o += "%25";
    else if (c == '\r')
      o += "%0D";
    else if (c == '\n')
      o += "%0A";
    else if (property && c == ':')
      o += "%3A";
    else if (property && c == ',')
      o += "%2C";
    else
      o += c;
  }
  return o;
}

const char* SeverityName(Severity s) { return s == E ? "error" : "warning"; }

}  // namespace

std::string FormatFindings(const LintResult& result, OutputFormat format) {
  std::ostringstream o;
  switch (format) {
    case OutputFormat::kJson: {
      Json findings = Json::array();
      for (const base::Diagnostic& f : result.findings) {
        findings.push_back({{"rule", f.rule},
                            {"severity", SeverityName(SeverityOf(f))},
                            {"file", f.file},
                            {"line", f.line},
                            {"message", f.message}});
      }
      o << Json{{"findings", findings},
                {"errors", result.errors()},
                {"warnings", result.warnings()},
                {"skills", result.skills}}
               .dump(2)
        << "\n";
      break;
    }
    case OutputFormat::kGithub:
      for (const base::Diagnostic& f : result.findings) {
        o << "::" << SeverityName(SeverityOf(f)) << " file=" << GithubEscape(f.file, true)
          << ",line=" << std::max(1, f.line) << ",title=" << GithubEscape(f.rule, true)
          << "::" << GithubEscape(f.message, false) << "\n";
      }
      break;
    case OutputFormat::kText:
      for (const base::Diagnostic& f : result.findings) {
        o << f.file << ":" << f.line << ": " << SeverityName(SeverityOf(f)) << ": [" << f.rule
          << "] " << f.message << "\n";
      }
      o << result.skills << " skill(s), " << result.errors() << " error(s), " << result.warnings()
        << " warning(s)\n";
      break;
  }
  return o.str();
}

}  // namespace slurm_rca::skills
