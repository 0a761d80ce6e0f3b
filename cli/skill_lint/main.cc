// skill-lint: lints operator runbooks (Agent Skills), their claims ledger and the Claude Code
// plugin manifests. All logic is in skills/lint.h.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <optional>

#include "base/build_info.h"
#include "cli/parse.h"
#include "skills/lint.h"
#include "skills/mcp_surface.h"

namespace {

constexpr int kClean = 0;
constexpr int kFindings = 1;
constexpr int kUsage = 2;

}  // namespace

int main(int argc, char** argv) {
  using namespace slurm_rca::skills;
  CLI::App app{
      "skill-lint: checks Agent Skills (SKILL.md) against the Agent Skills specification, this "
      "project's runbook contract (description, sections, claims ledger, links) and slurm-mcp's "
      "tool surface, and checks .claude-plugin manifests.\n"
      "PATH: a skill folder, a skills root (its subfolders; claims.yaml beside them; the plugin "
      "above it if any) or a plugin root.\n"
      "Exit status: 0 clean, 1 findings (errors; warnings too with --strict), 2 usage."};
  app.set_version_flag("--version", slurm_rca::base::VersionLine("skill-lint"),
                       "Print the version and the git revision built from, and exit");
  std::string profile = "spec";
  std::string format = "text";
  bool strict = false;
  bool list_rules = false;
  std::vector<std::string> paths;
  app.add_option("--profile", profile,
                 "spec: the six specification keys; claude-code: also the "
                 "keys Claude Code reads")
      ->check(CLI::IsMember({"spec", "claude-code"}))
      ->capture_default_str();
  app.add_option("--format", format, "text, json, or github (workflow annotations)")
      ->check(CLI::IsMember({"text", "json", "github"}))
      ->capture_default_str();
  app.add_flag("--strict", strict, "Warnings fail the run too");
  app.add_flag("--list-rules", list_rules, "Print every rule id with its severity and meaning");
  app.add_option("paths", paths, "Skill folders, skills roots or plugin roots");
  if (std::optional<int> code = slurm_rca::cli::ParseOrExit(
          app, argc, argv, {.binary = "skill-lint", .exit_code = kUsage, .cli11_message = true})) {
    return *code;
  }
  if (list_rules) {
    for (const Rule& r : Rules()) {
      std::cout << r.id << "\t" << (r.severity == Severity::kError ? "error" : "warning") << "\t"
                << r.meaning << "\n";
    }
    return kClean;
  }
  if (paths.empty()) {
    std::cerr << "skill-lint: name at least one PATH (see skill-lint --help)\n";
    return kUsage;
  }
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) {
      std::cerr << "skill-lint: no such file or directory: " << p << "\n";
      return kUsage;
    }
  }
  LintOptions options;
  options.profile = profile == "spec" ? Profile::kSpec : Profile::kClaudeCode;
  options.surface = McpSurface();
  LintResult all;
  for (const std::string& p : paths) {
    LintResult r = LintPath(p, options);
    all.findings.insert(all.findings.end(), r.findings.begin(), r.findings.end());
    all.skills += r.skills;
  }
  const OutputFormat out = format == "json"     ? OutputFormat::kJson
                           : format == "github" ? OutputFormat::kGithub
                                                : OutputFormat::kText;
  std::cout << FormatFindings(all, out);
  if (out == OutputFormat::kGithub && all.findings.empty()) {
    std::cerr << "skill-lint: " << all.skills << " skill(s), no findings\n";
  }
  const bool fail = all.errors() > 0 || (strict && all.warnings() > 0);
  return fail ? kFindings : kClean;
}
