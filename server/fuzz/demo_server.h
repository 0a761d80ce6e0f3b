// The server the MCP fuzz targets talk to: slurm-mcp's tools on the replay back-end of the
// recorded demo bundle (fixtures/demo) and the shipped runbooks as resources, skills and prompts,
// built once per process by AssembleServer (server/surface.h), as `slurm-mcp serve --replay
// fixtures/demo --skills skills` builds it. Aborts when the bundle does not load: a fuzzer on a
// broken fixture would measure nothing.
#ifndef SLURM_RCA_SERVER_FUZZ_DEMO_SERVER_H_
#define SLURM_RCA_SERVER_FUZZ_DEMO_SERVER_H_

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "mcp/backend/replay_backend.h"
#include "mcp/protocol/server.h"
#include "server/surface.h"

namespace slurm_rca::server::fuzz {

inline mcp::Server& DemoServer() {
  static mcp::Server* server = [] {
    auto opened = mcp::ReplayBackend::Open(SLURM_RCA_SOURCE_DIR "/fixtures/demo");
    if (!opened.ok()) {
      std::fprintf(stderr, "cannot open fixtures/demo: %s\n", opened.status().message().c_str());
      std::abort();
    }
    static std::unique_ptr<mcp::ReplayBackend> backend = std::move(opened).value();
    ServerSurface surface;
    surface.tools.backend = backend.get();
    surface.skills_dir = SLURM_RCA_SOURCE_DIR "/skills";
    surface.instructions = "fuzzing";
    return new mcp::Server(AssembleServer(surface).options);
  }();
  return *server;
}

}  // namespace slurm_rca::server::fuzz

#endif  // SLURM_RCA_SERVER_FUZZ_DEMO_SERVER_H_
