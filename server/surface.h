// server: what slurm-mcp serves, assembled in one place: the three tools over a back-end
// (mcp/topics/tools.h) and the runbooks (skills/mcp_resources.h) as resources, Skills-extension
// entries and prompts, in one mcp::ServerOptions. `slurm-mcp serve` and the fuzz targets' demo
// server (server/fuzz/demo_server.h) both build their Server from it; this is the one module
// that sees both mcp/ and skills/, so that nothing under mcp/ includes skills/.
//
//   ServerSurface surface;
//   surface.tools.backend = backend.get();          // not owned; must outlive the server
//   surface.skills_dir = "/usr/share/slurm-rca/skills";
//   AssembledServer assembled = AssembleServer(surface);
//   if (!assembled.skills_error.empty()) Warn(assembled.skills_error);    // none served
//   for (const std::string& w : assembled.skills_not_served) Warn(w);
//   mcp::Server server(std::move(assembled.options));
//
// Refuses nothing: a runbook directory that is missing or holds no skill serves no runbooks and
// says why in skills_error; whether that is fatal is the caller's choice.
#ifndef SLURM_RCA_SERVER_SURFACE_H_
#define SLURM_RCA_SERVER_SURFACE_H_

#include <string>
#include <vector>

#include "mcp/protocol/server.h"
#include "mcp/topics/tools.h"

namespace slurm_rca::server {

struct ServerSurface {
  // The tools' back-end, caps, audit, telemetry and metrics (not owned; see SurfaceOptions).
  mcp::SurfaceOptions tools;
  // The runbooks served; "" serves none.
  std::string skills_dir;
  // ServerOptions' version and instructions; the rest of ServerOptions keeps its defaults.
  std::string version = mcp::ServerOptions{}.version;
  std::string instructions;
};

struct AssembledServer {
  mcp::ServerOptions options;
  // Why no runbook is served ("" when they are, or none were asked for).
  std::string skills_error;
  // One line per skill that failed to load (it is not served).
  std::vector<std::string> skills_not_served;
};

AssembledServer AssembleServer(const ServerSurface& surface);

}  // namespace slurm_rca::server

#endif  // SLURM_RCA_SERVER_SURFACE_H_
