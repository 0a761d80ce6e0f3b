// GpuSampler: the periodic reads behind the gpu_idle topic. Every `interval` seconds it reads the
// GPUs of this host with nvidia-smi through the back-end (so through the guard, its cache, rate
// budget and concurrency bound) and/or scrapes the dcgm-exporter /metrics page of each host on an
// explicit allowlist, and adds one Observation per node to a GpuSampleStore. A failed read is
// stored as a failed observation: a hole in the evidence, never an idle or busy GPU.
//
//   GpuSampleStore store;
//   GpuSampler sampler(&backend, &store, GpuSamplerOptions{.interval = 120, .local_node = "gpu01",
//                                                          .dcgm = {{"gpu02", "gpu02", 9400}}});
//   sampler.Start();   // a thread; Stop() (or the destructor) ends it
//   sampler.SampleOnce();  // one cycle now, on the caller's thread (tests)
//
// Off unless the operator sets an interval: sampling starts processes and HTTP requests on a
// schedule, which a read-only server must not do unasked. It refuses host names that are not
// ^[A-Za-z0-9][A-Za-z0-9._-]*$, fetches only http://HOST:PORT/metrics of configured hosts, caps a
// page at 16 MiB and each scrape at dcgm_timeout seconds. It never writes to a GPU or to Slurm.
//
// Thread-safety: Start/Stop from one thread; SampleOnce and Describe may be called at any time.
#ifndef SLURM_RCA_MCP_TELEMETRY_GPU_SAMPLER_H_
#define SLURM_RCA_MCP_TELEMETRY_GPU_SAMPLER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "mcp/evidence/evidence.h"
#include "mcp/telemetry/gpu_idle.h"

namespace slurm_rca::mcp {

// One allowlisted dcgm-exporter: the Slurm node it reports on, and where to fetch its page.
struct DcgmHost {
  std::string node;
  std::string host;
  int port = 9400;
};

// Parses "HOST", "HOST:PORT" or "NODE=HOST[:PORT]" (node defaults to the host). An invalid
// argument saying why the spec is refused (a name outside the safe pattern, a bad port).
base::Result<DcgmHost> ParseDcgmHost(const std::string& spec);

// What one scrape returned.
struct DcgmFetch {
  bool ok = false;     // an HTTP 200 with a body within the cap
  int status = 0;      // HTTP status, 0 when none
  std::string body;
  std::string error;   // why not ok
};

struct GpuSamplerOptions {
  std::int64_t interval = 120;  // seconds between cycles
  std::string local_node;       // the node name nvidia-smi samples are filed under; "": none
  std::vector<DcgmHost> dcgm;   // the allowlist of dcgm-exporters to scrape
  std::int64_t dcgm_timeout = 5;
  std::int64_t dcgm_max_age = 120;
  std::size_t max_page_bytes = 16 << 20;
  // Unix seconds now; default the system clock. Tests inject a simulated one.
  std::function<std::int64_t()> clock;
  // Fetches http://host:port/metrics; default cpp-httplib with the timeout and page cap.
  std::function<DcgmFetch(const DcgmHost&)> fetch;
};

class GpuSampler {
 public:
  // backend (for nvidia-smi) may be null when local_node is empty; both must outlive this.
  GpuSampler(Backend* backend, GpuSampleStore* store, GpuSamplerOptions options);
  ~GpuSampler();

  void SampleOnce();
  void Start();
  void Stop();

  // {"enabled": true, "interval_seconds", "nvidia_smi_node", "dcgm_hosts": [...], "cycles"}.
  nlohmann::json Describe() const;

 private:
  DcgmFetch HttpFetch(const DcgmHost& h) const;

  Backend* backend_;
  GpuSampleStore* store_;
  GpuSamplerOptions options_;
  std::atomic<std::uint64_t> cycles_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TELEMETRY_GPU_SAMPLER_H_
