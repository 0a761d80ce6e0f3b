// mcp_bench's report: one table of every row, issue #20's targets beside the measured figures,
// and the raw repetitions as JSON.
//
//   PrintTable(figures, rows, Nproc());
//   PrintTargets(figures[0], reference_or_null, rows);
//   base::Status s = WriteJson("reps.json", header, figures);
//
// A cell is the median of the repetitions, with [min-max] for the rate; VmHWM is the highest of
// them. A figure that was not measured says so, and a ratio is printed only when both of its
// sides were measured in this run.
#ifndef SLURM_RCA_BENCH_MCP_REPORT_H_
#define SLURM_RCA_BENCH_MCP_REPORT_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "bench/mcp_rows.h"
#include "mcp/protocol/jsonrpc.h"

namespace slurm_rca::bench {

void PrintTable(const std::vector<ServerFigures>& figures, const std::vector<RowSpec>& rows,
                int cores);

// The targets on slurm-mcp (`ours`); the throughput ratios need `reference`, null when it was not
// measured ("not measured" is printed then).
void PrintTargets(const ServerFigures& ours, const ServerFigures* reference,
                  const std::vector<RowSpec>& rows);

// What a variant of the same binary costs per call (`what`: an access token checked on every
// request, slurm-mcp --auth-issuer; TLS, --tls-cert): for each HTTP row both measured, the server
// CPU per call of `other` less `plain`'s, and the rates side by side.
void PrintCostAgainst(const ServerFigures& plain, const ServerFigures& other,
                      const std::vector<RowSpec>& rows, const std::string& what);

// `header` (the machine, the options) with every repetition of every row and server.
base::Status WriteJson(const std::string& path, mcp::Json header,
                       const std::vector<ServerFigures>& figures);

}  // namespace slurm_rca::bench

#endif  // SLURM_RCA_BENCH_MCP_REPORT_H_
