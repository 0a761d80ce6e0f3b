// The server the MCP fuzz targets talk to: slurm-mcp's tools on the replay back-end of the
// recorded demo bundle (fixtures/demo) and the shipped runbooks as resources, skills and prompts, built once per
// process, as `slurm-mcp serve --replay fixtures/demo --skills skills` builds it. Aborts when the
// bundle does not load: a fuzzer on a broken fixture would measure nothing.
#ifndef SLURM_RCA_MCP_FUZZ_DEMO_SERVER_H_
#define SLURM_RCA_MCP_FUZZ_DEMO_SERVER_H_

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "mcp/backend/replay_backend.h"
#include "mcp/protocol/server.h"
#include "mcp/topics/tools.h"
#include "skills/mcp_resources.h"

namespace slurm_rca::mcp::fuzz {

inline Server& DemoServer() {
  static Server* server = [] {
    auto opened = ReplayBackend::Open(SLURM_RCA_SOURCE_DIR "/fixtures/demo");
    if (!opened.ok()) {
      std::fprintf(stderr, "cannot open fixtures/demo: %s\n", opened.status().message().c_str());
      std::abort();
    }
    static std::unique_ptr<ReplayBackend> backend = std::move(opened).value();
    SurfaceOptions surface;
    surface.backend = backend.get();
    ServerOptions options;
    options.instructions = "fuzzing";
    options.tools = BuildTools(surface);
    skills::SkillResourceLoad runbooks = skills::LoadSkillResources(SLURM_RCA_SOURCE_DIR "/skills");
    options.resources = std::move(runbooks.resources);
    options.skills = std::move(runbooks.skills);
    options.prompts = std::move(runbooks.prompts);
    return new Server(std::move(options));
  }();
  return *server;
}

}  // namespace slurm_rca::mcp::fuzz

#endif  // SLURM_RCA_MCP_FUZZ_DEMO_SERVER_H_
