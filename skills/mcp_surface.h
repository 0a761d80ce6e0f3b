// slurm-mcp's real tool surface for skill-lint's cross-check, read from the mcp library: the
// tools BuildTools registers (without a back-end; nothing is run) and every topic of
// mcp::Topics() with its filter names. No table is copied, so a tool, topic or filter renamed in
// mcp/ makes every skill that still names the old one fail lint.
#ifndef SLURM_RCA_SKILLS_MCP_SURFACE_H_
#define SLURM_RCA_SKILLS_MCP_SURFACE_H_

#include "skills/lint.h"

namespace slurm_rca::skills {

Surface McpSurface();

}  // namespace slurm_rca::skills

#endif  // SLURM_RCA_SKILLS_MCP_SURFACE_H_
