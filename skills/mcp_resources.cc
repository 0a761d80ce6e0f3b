#include "skills/mcp_resources.h"

#include <filesystem>
#include <sstream>

namespace slurm_rca::skills {

namespace {

// The first "# " heading of the body, or "".
std::string Heading(const std::string& body) {
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0) return line.substr(2);
  }
  return "";
}

}  // namespace

std::vector<mcp::Resource> SkillResources(const Catalog& catalog) {
  std::vector<mcp::Resource> out;
  for (const Skill& s : catalog.skills) {
    const std::string name = s.name.empty() ? s.dir_name : s.name;
    out.push_back(mcp::Resource{.uri = "skill://" + name + "/SKILL.md",
                           .name = name,
                           .title = Heading(s.body),
                           .description = s.description,
                           .text = s.text});
    for (const SkillFile& f : s.references) {
      out.push_back(mcp::Resource{.uri = "skill://" + name + "/" + f.relative_path,
                             .name = name + "/" + f.relative_path,
                             .title = Heading(f.text),
                             .description = "Reference of the " + name + " runbook",
                             .text = f.text});
    }
  }
  return out;
}

SkillResourceLoad LoadSkillResources(const std::string& skills_dir) {
  SkillResourceLoad load;
  std::error_code ec;
  if (!std::filesystem::is_directory(skills_dir, ec)) {
    load.error = "no skills directory " + skills_dir;
    return load;
  }
  Catalog catalog = LoadCatalog(skills_dir);
  for (const LoadProblem& p : catalog.problems) load.warnings.push_back(p.ToString());
  if (catalog.skills.empty()) {
    load.error = "no skill (a folder holding SKILL.md) in " + skills_dir;
    return load;
  }
  load.resources = SkillResources(catalog);
  return load;
}

}  // namespace slurm_rca::skills
