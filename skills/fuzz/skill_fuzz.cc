// libFuzzer target for SKILL.md frontmatter: the input is written as the SKILL.md of a skill
// directory (a temporary one per process), loaded by LoadSkill (skills/catalog.h) and, when it
// loads, linted by LintSkill against slurm-mcp's tool surface in both profiles. Aborts on:
//   - a load problem or lint finding whose rule is not in Rules(), whose severity is not its
//     rule's, with a negative line or an empty message;
//   - a loaded skill whose parts do not put the file back together (the opening '---' line, the
//     frontmatter, the closing line, the body), whose frontmatter is not a mapping, or whose name
//     is not the frontmatter's `name` scalar;
//   - an exception escaping the loader or the linter (libFuzzer reports it as a crash).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "skills/catalog.h"
#include "skills/lint.h"
#include "skills/mcp_surface.h"

namespace {

namespace fs = std::filesystem;
using namespace slurm_rca::skills;

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "SKILL INVARIANT: %s: %s\n", what, detail.c_str());
  std::abort();
}

void CheckRule(const slurm_rca::base::Diagnostic& d) {
  if (!FindRule(d.rule)) Fail("unknown rule", d.rule + ": " + d.message);
  if (d.line < 0 || d.message.empty()) Fail("malformed finding", d.rule);
}

struct SkillDir {
  fs::path dir;
  SkillDir() {
    dir = fs::temp_directory_path() / ("skill_fuzz." + std::to_string(getpid())) / "fuzz-skill";
    fs::create_directories(dir);
  }
  ~SkillDir() { fs::remove_all(dir.parent_path()); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static SkillDir* skill_dir = new SkillDir();
  static const Surface surface = McpSurface();
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::ofstream(skill_dir->dir / "SKILL.md", std::ios::binary | std::ios::trunc) << text;

  SkillLoad load = LoadSkill(skill_dir->dir.string());
  for (const LoadProblem& p : load.problems) {
    CheckRule(p);
    if (SeverityOf(p) != Severity::kError) Fail("a load problem that is not an error", p.rule);
  }
  if (!load.ok()) return 0;
  const Skill& s = load.skill;
  if (s.text != text) Fail("text", s.path);
  const std::size_t first = text.find('\n') + 1;  // the opening line, end of line included
  const std::size_t closing = first + s.frontmatter.size();
  if (text.compare(first, s.frontmatter.size(), s.frontmatter) != 0 ||
      text.compare(closing, 3, "---") != 0 ||
      text.compare(text.size() - s.body.size(), s.body.size(), s.body) != 0 ||
      !s.meta.IsMap()) {
    Fail("the parts do not make the file", text);
  }
  const YAML::Node name = s.meta["name"];
  if (s.name != (name && name.IsScalar() ? name.Scalar() : "")) Fail("name", s.name);

  for (Profile profile : {Profile::kSpec, Profile::kClaudeCode}) {
    for (const slurm_rca::base::Diagnostic& f :
         LintSkill(s, LintOptions{.profile = profile, .surface = surface})) {
      CheckRule(f);
    }
  }
  return 0;
}
