// The runbooks (skills/, skills/catalog.h) as read-only MCP resources: the one place where the
// catalog meets the MCP server (server/surface.h assembles them beside the tools; mcp/ never
// includes skills/).
//
// Each skill is served as `skill://<name>/SKILL.md` (the whole file, text/markdown), and each of
// its references/*.md as `skill://<name>/<relative path>`, so that a relative link in SKILL.md
// resolves against the skill's URI. Contents are read once, when the server starts.
//
// The same runbooks, two more ways:
//   skills   entries of the Skills extension (skills/list, skills/get, 2026-07-28 era): each
//            skill's frontmatter as JSON and every file of it with its SHA-256 digest and size,
//            which a host checks against what resources/read returns;
//   prompts  one prompt per runbook, named as the skill, with a required `symptom` argument: a
//            host shows it as a slash command, and prompts/get returns the runbook with the
//            symptom as one user message (both eras).
//
//   SkillResourceLoad load = LoadSkillResources("skills");
//   if (!load.error.empty()) return Usage(load.error);       // nothing usable there
//   for (const std::string& w : load.warnings) Warn(w);      // skills that did not load
//   options.resources = std::move(load.resources);
//   options.skills = std::move(load.skills);
//   options.prompts = std::move(load.prompts);
#ifndef SLURM_RCA_SKILLS_MCP_RESOURCES_H_
#define SLURM_RCA_SKILLS_MCP_RESOURCES_H_

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "mcp/protocol/server.h"
#include "skills/catalog.h"

namespace slurm_rca::skills {

// The resources of a loaded catalog, skills in catalog order, each SKILL.md before its
// references.
std::vector<mcp::Resource> SkillResources(const Catalog& catalog);

// The Skills extension's entries of a loaded catalog, in catalog order; every file of an entry
// is one of SkillResources' resources, digested over the same text.
std::vector<mcp::SkillEntry> SkillEntries(const Catalog& catalog);

// One prompt per skill (see above).
std::vector<mcp::Prompt> SkillPrompts(const Catalog& catalog);

// YAML as JSON with the YAML 1.2 core schema's typing of plain scalars (null, true/false,
// integers, floats; everything else, and every quoted scalar, a string), as a host that parses
// SKILL.md's frontmatter itself gets it. Floats that JSON cannot hold (.inf, .nan) stay strings.
mcp::Json YamlToJson(const YAML::Node& node);

// "sha256:" and the 64 lower-case hex digits of SHA-256 over `bytes`.
std::string Sha256Digest(const std::string& bytes);

struct SkillResourceLoad {
  std::vector<mcp::Resource> resources;
  std::vector<mcp::SkillEntry> skills;
  std::vector<mcp::Prompt> prompts;
  std::vector<std::string> warnings;  // one per skill that failed to load (it is not served)
  std::string error;                  // non-empty: the directory is missing or holds no skill
};

SkillResourceLoad LoadSkillResources(const std::string& skills_dir);

}  // namespace slurm_rca::skills

#endif  // SLURM_RCA_SKILLS_MCP_RESOURCES_H_
