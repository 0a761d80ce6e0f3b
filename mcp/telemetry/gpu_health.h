// gpu_health: are this host's GPUs persistently faulty? One node-wide nvidia-smi query, read
// the way an epilog GPU validator reads it, returned as a classification only.
//
// The read is one argv (GpuHealthArgv(): 20 fields, csv, no -i) run by a back-end through the
// guard. AssessGpuHealth turns the evidence into a report:
//
//   Evidence e = backend.Read(GpuHealthArgv());
//   GpuHealthReport r = AssessGpuHealth(e);
//   if (!r.evidence) return NoEvidence(r.failure);   // query failed: never a fault, never healthy
//   // r.report: {query, gpus[{index, uuid, ..., fields{name:{value,known,reason}}, findings}],
//   //            node_findings, malformed_rows, summary{worst_severity, would_drain, reason, ...}}
//
// Rules (shared/reference/telemetry-seeds.md §2):
//   - Every field is value-or-unknown: "[N/A]", "[Not Supported]", any "[...]", empty, not a
//     number, out of range -> unknown with the reason; never 0. A GPU with MIG enabled has its
//     memory fields unknown (whole-GPU memory does not describe its instances).
//   - A row with the wrong column count or an unparseable index or PCI bus id is malformed:
//     reported, never dropped or guessed.
//   - Checks per GPU with severities fatal / degraded / transient / unknown (the table in
//     gpu_health.cc); clock-event reasons decoded by name.
//   - nvidia-smi's documented hardware-fault exits 8, 10, 14, 15 (not timed out) are evidence: a
//     fatal node finding nvidia-smi-exit-N. Any other exit, a timeout (even with 15), a refusal,
//     a missing binary, output that is not CSV or lists no GPU: "query failed", no evidence.
//   - would_drain (worst severity >= degraded) and the reason string are a classification only:
//     nothing here drains, resumes or writes anything.
//
// Thread-safe: pure functions.
#ifndef SLURM_RCA_MCP_TELEMETRY_GPU_HEALTH_H_
#define SLURM_RCA_MCP_TELEMETRY_GPU_HEALTH_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mcp/evidence/evidence.h"

namespace slurm_rca::mcp {

// Site-policy thresholds (the seed's unvalidated defaults).
struct GpuHealthOptions {
  std::int64_t max_correctable_ecc = 1000;  // ecc-correctable: strictly greater; 0 disables
  std::int64_t max_temperature = 90;        // temperature: >= (degrees C); 0 disables
  double leaked_memory_fraction = 0.05;     // leaked-memory: used/total strictly greater
};

// The query fields, in order.
const std::vector<std::string>& GpuHealthFields();
// {"nvidia-smi", "--query-gpu=<fields>", "--format=csv,noheader,nounits"}.
std::vector<std::string> GpuHealthArgv();

struct GpuHealthReport {
  bool evidence = false;  // false: query failed (failure says why); report is still filled
  std::string failure;    // "query failed: nvidia-smi exited 9 (driver not loaded) ..."
  nlohmann::json report;  // valid against GpuHealthReportSchema()
  nlohmann::json rows;    // the report's gpus
};

GpuHealthReport AssessGpuHealth(const Evidence& e, const GpuHealthOptions& options = {});

// nvidia-smi's documented meaning of an exit status ("infoROM corrupted"); "undocumented" else.
std::string NvidiaSmiExitMeaning(int exit_code);
// True for 8, 10, 14, 15.
bool IsHardwareFaultExit(int exit_code);

// "hw_slowdown,hw_thermal_slowdown" for 0x48; ignored bits (gpu_idle, applications_clocks,
// sync_boost) are named too; unnamed bits as unknown_bits_0x....
std::vector<std::string> DecodeClockReasons(std::uint64_t mask);

nlohmann::json GpuHealthReportSchema();
nlohmann::json GpuHealthRowSchema();

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TELEMETRY_GPU_HEALTH_H_
