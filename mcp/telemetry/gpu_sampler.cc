#include "mcp/telemetry/gpu_sampler.h"

#include <httplib.h>
#include <re2/re2.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <utility>

namespace slurm_rca::mcp {

base::Result<DcgmHost> ParseDcgmHost(const std::string& spec) {
  static const RE2 kSpec(
      "(?:([A-Za-z0-9][A-Za-z0-9._-]{0,252})=)?([A-Za-z0-9][A-Za-z0-9._-]{0,252})(?::([0-9]{1,5}))?");
  std::string node, host, port;
  if (!RE2::FullMatch(spec, kSpec, &node, &host, &port)) {
    return base::Status::InvalidArgument(
        "dcgm host '" + spec +
        "' is not HOST, HOST:PORT or NODE=HOST[:PORT] with names matching "
        "[A-Za-z0-9][A-Za-z0-9._-]*");
  }
  int p = port.empty() ? 9400 : std::atoi(port.c_str());
  if (p < 1 || p > 65535) {
    return base::Status::InvalidArgument("dcgm host '" + spec + "': port out of range");
  }
  return DcgmHost{.node = node.empty() ? host : node, .host = host, .port = p};
}

GpuSampler::GpuSampler(Backend* backend, GpuSampleStore* store, GpuSamplerOptions options)
    : backend_(backend), store_(store), options_(std::move(options)) {
  if (!options_.clock) {
    options_.clock = [] {
      return static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count());
    };
  }
  if (!options_.fetch) {
    options_.fetch = [this](const DcgmHost& h) { return HttpFetch(h); };
  }
}

GpuSampler::~GpuSampler() { Stop(); }

DcgmFetch GpuSampler::HttpFetch(const DcgmHost& h) const {
  DcgmFetch f;
  httplib::Client client(h.host, h.port);
  client.set_connection_timeout(static_cast<time_t>(options_.dcgm_timeout), 0);
  client.set_read_timeout(static_cast<time_t>(options_.dcgm_timeout), 0);
  client.set_write_timeout(static_cast<time_t>(options_.dcgm_timeout), 0);
  client.set_follow_location(false);
  bool too_big = false;
  auto result = client.Get("/metrics", [&](const char* data, size_t n) {
    if (f.body.size() + n > options_.max_page_bytes) {
      too_big = true;
      return false;
    }
    f.body.append(data, n);
    return true;
  });
  if (too_big) {
    f.error = "page larger than " + std::to_string(options_.max_page_bytes) + " bytes";
    return f;
  }
  if (!result) {
    f.error = "scrape of http://" + h.host + ":" + std::to_string(h.port) +
              "/metrics failed: " + httplib::to_string(result.error());
    return f;
  }
  f.status = result->status;
  if (f.status != 200) {
    f.error = "HTTP " + std::to_string(f.status) + " from http://" + h.host + ":" +
              std::to_string(h.port) + "/metrics";
    return f;
  }
  f.ok = true;
  return f;
}

void GpuSampler::SampleOnce() {
  // The scrapes run in parallel (at most 16 at once), the nvidia-smi reads on this thread.
  std::vector<std::future<Observation>> pending;
  std::vector<Observation> done;
  for (const DcgmHost& h : options_.dcgm) {
    if (pending.size() >= 16) {
      done.push_back(pending.front().get());
      pending.erase(pending.begin());
    }
    pending.push_back(std::async(std::launch::async, [this, h] {
      const std::int64_t t = options_.clock();
      DcgmFetch f = options_.fetch(h);
      if (!f.ok) {
        return FailedObservation(h.node, t, "dcgm",
                                 f.error + " (no evidence: neither an idle nor a busy GPU)");
      }
      return ParseDcgmPage(h.node, t, f.body, options_.dcgm_max_age);
    }));
  }
  if (!options_.local_node.empty() && backend_ != nullptr) {
    const std::int64_t t = options_.clock();
    Evidence device = backend_->Read(GpuIdleDeviceArgv());
    Evidence processes = device.ok() ? backend_->Read(GpuIdleProcessArgv()) : Evidence{};
    // A cached read was taken earlier: file it at the time it was taken.
    const std::int64_t taken = t - static_cast<std::int64_t>(device.cache_age_seconds);
    store_->Add(ParseNvidiaSmiSample(options_.local_node, taken, device, processes));
  }
  for (auto& p : pending) done.push_back(p.get());
  for (Observation& o : done) store_->Add(std::move(o));
  ++cycles_;
}

void GpuSampler::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      lock.unlock();
      SampleOnce();
      lock.lock();
      cv_.wait_for(lock, std::chrono::seconds(options_.interval), [this] { return stop_; });
    }
  });
}

void GpuSampler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

nlohmann::json GpuSampler::Describe() const {
  nlohmann::json hosts = nlohmann::json::array();
  for (const DcgmHost& h : options_.dcgm) {
    hosts.push_back({{"node", h.node}, {"url", "http://" + h.host + ":" + std::to_string(h.port) +
                                                   "/metrics"}});
  }
  return {{"enabled", true},
          {"interval_seconds", options_.interval},
          {"nvidia_smi_node", options_.local_node.empty() ? nlohmann::json(nullptr)
                                                          : nlohmann::json(options_.local_node)},
          {"dcgm_hosts", hosts},
          {"cycles", cycles_.load()}};
}

}  // namespace slurm_rca::mcp
