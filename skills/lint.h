// skill-lint's library: checks operator runbooks (Agent Skills) against the Agent Skills
// specification, this project's runbook contract, the claims ledger and slurm-mcp's real tool
// surface, and checks the Claude Code plugin manifests that ship them.
//
//   LintOptions options{.profile = Profile::kSpec, .surface = McpSurface()};
//   LintResult result = LintPath("skills", options);
//   std::cout << FormatFindings(result, OutputFormat::kText);
//   return result.errors() > 0 ? 1 : 0;
//
// What a path may be (LintPath):
//   - a skill directory (holds SKILL.md or references/) or its SKILL.md: that skill, with the
//     ledger `claims.yaml` of the directory above it, if any;
//   - a plugin root (holds .claude-plugin/): its plugin.json and marketplace.json, and the skills
//     root `skills/` inside it;
//   - any other directory: a skills root; each subdirectory that looks like a skill is linted,
//     with the ledger `claims.yaml` beside them; when the directory above holds .claude-plugin/,
//     its manifests are checked too (so `skill-lint skills/` checks the whole plugin).
//
// Every finding has a rule id (Rules() lists them all, with severity and meaning), a file, a
// 1-based line (0: the file as a whole) and a message. Nothing throws; an unreadable file is a
// finding. Rules that depend on the profile: unknown-key (spec: the six specification keys;
// claude-code: those plus the keys Claude Code reads) and claude-code-value.
#ifndef SLURM_RCA_SKILLS_LINT_H_
#define SLURM_RCA_SKILLS_LINT_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/diagnostic.h"
#include "skills/catalog.h"

namespace slurm_rca::skills {

enum class Profile { kSpec, kClaudeCode };
enum class Severity { kError, kWarning };

struct Rule {
  const char* id;
  Severity severity;
  const char* meaning;
};

// Every rule, in a fixed order. A rule id not listed here is never reported.
const std::vector<Rule>& Rules();
const Rule* FindRule(std::string_view id);

// A finding is a base::Diagnostic: file, 1-based line (0: the file as a whole), rule id, message.
// Its severity is its rule's (Rules()), so it is looked up, not stored; an id that is not in
// Rules() (never reported) reads as an error.
Severity SeverityOf(const base::Diagnostic& finding);

// The tools, topics and filters an MCP server offers; skills may name only these. Built from the
// mcp library by McpSurface() (skills/mcp_surface.h); tests may build their own.
struct Surface {
  std::string server = "slurm-mcp";                     // allowed-tools prefix mcp__<server>__
  std::set<std::string> tools;                          // "slurm_query", ...
  std::map<std::string, std::set<std::string>> topics;  // topic -> its filter names
};

struct LintOptions {
  Profile profile = Profile::kSpec;
  Surface surface;
};

struct LintResult {
  std::vector<base::Diagnostic> findings;  // sorted by file, line, rule
  int skills = 0;                          // skills linted
  int errors() const;
  int warnings() const;
};

// Lints one path as described above. A path that does not exist is one no-skills finding.
LintResult LintPath(const std::string& path, const LintOptions& options);

// The parts LintPath is made of, for tests and other callers.
std::vector<base::Diagnostic> LintSkill(const Skill& skill, const LintOptions& options);
// Checks the ledger at `ledger_path` (which may not exist) against `skills`: the ledger's own
// rules, and that every figure of every document of every skill lies inside a claim.
std::vector<base::Diagnostic> LintClaims(const std::string& ledger_path,
                                         const std::vector<Skill>& skills);
// Checks plugin_root/.claude-plugin/{plugin.json,marketplace.json}.
std::vector<base::Diagnostic> LintPlugin(const std::string& plugin_root);

// A figure found in text: its byte offset and length, and its 1-based line.
struct Figure {
  size_t offset = 0;
  size_t length = 0;
  int line = 0;
  std::string text;
};
// The figures of a Markdown document: digit numbers (not part of a word or a hash) and spelled
// cardinals (two..ninety, hundred, thousand, million, billion, dozen, "tens of"), outside inline
// code, link targets, URLs, HTML comments, man-page section numbers and ordered-list markers.
std::vector<Figure> FindFigures(const std::string& text);

enum class OutputFormat { kText, kJson, kGithub };
// text: "file:line: error: [rule] message" lines and a summary line;
// json: {"findings": [{rule, severity, file, line, message}], "errors", "warnings", "skills"};
// github: "::error file=F,line=L,title=RULE::MESSAGE" workflow commands (warnings as ::warning).
std::string FormatFindings(const LintResult& result, OutputFormat format);

}  // namespace slurm_rca::skills

#endif  // SLURM_RCA_SKILLS_LINT_H_
