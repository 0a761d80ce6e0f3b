// The runbooks (skills/, skills/catalog.h) as read-only MCP resources: the one place where the
// catalog meets the MCP server (slurm-mcp links it; mcp/ never includes skills/).
//
// Each skill is served as `skill://<name>/SKILL.md` (the whole file, text/markdown), and each of
// its references/*.md as `skill://<name>/<relative path>`, so that a relative link in SKILL.md
// resolves against the skill's URI. Contents are read once, when the server starts.
//
//   SkillResourceLoad load = LoadSkillResources("skills");
//   if (!load.error.empty()) return Usage(load.error);       // nothing usable there
//   for (const std::string& w : load.warnings) Warn(w);      // skills that did not load
//   options.resources = std::move(load.resources);
#ifndef SLURM_RCA_SKILLS_MCP_RESOURCES_H_
#define SLURM_RCA_SKILLS_MCP_RESOURCES_H_

#include <string>
#include <vector>

#include "mcp/protocol/server.h"
#include "skills/catalog.h"

namespace slurm_rca::skills {

// The resources of a loaded catalog, skills in catalog order, each SKILL.md before its
// references.
std::vector<mcp::Resource> SkillResources(const Catalog& catalog);

struct SkillResourceLoad {
  std::vector<mcp::Resource> resources;
  std::vector<std::string> warnings;  // one per skill that failed to load (it is not served)
  std::string error;                  // non-empty: the directory is missing or holds no skill
};

SkillResourceLoad LoadSkillResources(const std::string& skills_dir);

}  // namespace slurm_rca::skills

#endif  // SLURM_RCA_SKILLS_MCP_RESOURCES_H_
