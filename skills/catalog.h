// The skill catalog: loads operator runbooks written as Agent Skills from disk.
//
// A skill is a directory holding SKILL.md: YAML frontmatter between two `---` lines, then a
// Markdown body; it may also hold references/*.md, loaded on demand by the agent. A skills root
// is a directory whose subdirectories are skills (this repository's skills/).
//
//   Catalog catalog = LoadCatalog("skills");
//   for (const LoadProblem& p : catalog.problems) std::cerr << p.ToString() << "\n";
//   for (const Skill& s : catalog.skills) Serve("skill://" + s.dir_name + "/SKILL.md", s.text);
//
// Loading refuses only what makes a file unreadable as a skill (no SKILL.md, no frontmatter, YAML
// that does not parse or is not a mapping); every other rule of the contract is skills/lint.h's.
// Nothing here throws: problems are values with a rule id, a file and a line. Not thread-safe to
// mutate; a loaded Catalog may be read from any thread.
#ifndef SLURM_RCA_SKILLS_CATALOG_H_
#define SLURM_RCA_SKILLS_CATALOG_H_

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "base/diagnostic.h"

namespace slurm_rca::skills {

// A problem found while loading. `rule` is a skill-lint rule id (skills/lint.h), `line` 1-based
// (0: the file as a whole).
using LoadProblem = base::Diagnostic;

// A file of a skill other than SKILL.md (references/*.md), with its path relative to the skill.
struct SkillFile {
  std::string relative_path;  // "references/operator-handoff.md"
  std::string path;           // as found on disk
  std::string text;
};

struct Skill {
  std::string dir;                    // the skill's directory, as given or found
  std::string dir_name;               // its last path component
  std::string path;                   // dir + "/SKILL.md"
  std::string text;                   // the whole SKILL.md
  std::string frontmatter;            // the YAML between the markers
  int frontmatter_line = 2;           // line of the first YAML line in SKILL.md
  YAML::Node meta;                    // the parsed frontmatter: always a mapping
  std::string body;                   // everything after the closing marker
  int body_line = 0;                  // line of the body's first line in SKILL.md
  std::string name;                   // frontmatter `name` when it is a string scalar, else ""
  std::string description;            // frontmatter `description` when a string scalar, else ""
  std::vector<SkillFile> references;  // references/*.md, sorted by path
};

struct SkillLoad {
  Skill skill;
  std::vector<LoadProblem> problems;  // non-empty: `skill` holds only dir, path and text
  bool ok() const { return problems.empty(); }
};

// Loads the skill in `dir`. Rule ids it may report: missing-skill-md, frontmatter-missing,
// frontmatter-unclosed, yaml-invalid, frontmatter-not-mapping.
SkillLoad LoadSkill(const std::string& dir);

struct Catalog {
  std::vector<Skill> skills;  // sorted by directory name
  std::vector<LoadProblem> problems;
};

// True when `dir` looks like a skill: it holds SKILL.md, or a references/ folder (a skill that
// lost its SKILL.md, reported as missing-skill-md rather than silently skipped).
bool IsSkillDir(const std::string& dir);

// Loads every subdirectory of `root` for which IsSkillDir holds. Other subdirectories (test data,
// build files) are not skills and are skipped. A root that cannot be read is one problem
// (rule no-skills).
Catalog LoadCatalog(const std::string& root);

}  // namespace slurm_rca::skills

#endif  // SLURM_RCA_SKILLS_CATALOG_H_
