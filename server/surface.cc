#include "server/surface.h"

#include <utility>

#include "skills/mcp_resources.h"

namespace slurm_rca::server {

AssembledServer AssembleServer(const ServerSurface& surface) {
  AssembledServer out;
  out.options.version = surface.version;
  out.options.instructions = surface.instructions;
  out.options.tools = mcp::BuildTools(surface.tools);
  if (surface.skills_dir.empty()) return out;
  skills::SkillResourceLoad runbooks = skills::LoadSkillResources(surface.skills_dir);
  out.skills_error = std::move(runbooks.error);
  out.skills_not_served = std::move(runbooks.warnings);
  out.options.resources = std::move(runbooks.resources);
  out.options.skills = std::move(runbooks.skills);
  out.options.prompts = std::move(runbooks.prompts);
  return out;
}

}  // namespace slurm_rca::server
