#include "skills/mcp_surface.h"

#include "mcp/topics/tools.h"
#include "mcp/topics/topics.h"

namespace slurm_rca::skills {

Surface McpSurface() {
  Surface surface;
  surface.server = "slurm-mcp";
  for (const mcp::Tool& tool : mcp::BuildTools(mcp::SurfaceOptions{})) {
    surface.tools.insert(tool.name);
  }
  for (const mcp::Topic& topic : mcp::Topics()) {
    std::set<std::string>& filters = surface.topics[topic.name];
    for (const mcp::Filter& f : topic.filters) filters.insert(f.name);
  }
  return surface;
}

}  // namespace slurm_rca::skills
