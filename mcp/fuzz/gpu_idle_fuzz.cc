// libFuzzer target for gpu_idle's readers (mcp/telemetry/gpu_idle.h), the parsers #9 asks to fuzz
// that the topics target does not reach: ParseNvidiaSmiSample (the device and the compute-apps
// query), ParseDcgmPage (a dcgm-exporter page), ParseRunningJobs (squeue's running jobs, with their
// hostlists and TRES) and the judgement over what they parsed. Input: byte 0 picks the reader; the
// rest is split at byte 0x01 into parts:
//   0: device CSV, apps CSV    -> ParseNvidiaSmiSample for n01 (and with a failed apps read)
//   1: page                    -> ParseDcgmPage for n01
//   2: squeue rows, device CSV -> ParseRunningJobs, then JudgeGpuIdle over ten samples of n01
// Aborts on: a failed observation that carries GPUs or no failure; an ok one without GPUs; a
// known value that is not finite or out of its range (utilisation 0-100, memory and power >= 0,
// PIDs >= 0); a GPU index < 0; a job without an id, with a negative GPU count, or an id seen
// twice; a report that does not serialise strictly, or whose jobs are not the parsed jobs.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "mcp/telemetry/gpu_idle.h"

namespace {

using namespace slurm_rca::mcp;
using Json = nlohmann::json;

constexpr std::int64_t kNow = 1764547200;  // 2025-12-01T00:00:00Z

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "GPU_IDLE INVARIANT: %s: %s\n", what, detail.c_str());
  std::abort();
}

Evidence Ok(std::string out) {
  Evidence e;
  e.outcome = Evidence::Outcome::kOk;
  e.exit_code = 0;
  e.out = std::move(out);
  return e;
}

Evidence FailedRead() {
  Evidence e;
  e.outcome = Evidence::Outcome::kFailed;
  e.exit_code = 9;
  e.cause = "nvidia-smi failed";
  return e;
}

void CheckValue(const std::optional<double>& v, double lo, double hi, const char* name) {
  if (!v) return;
  if (!std::isfinite(*v) || *v < lo || *v > hi) Fail(name, std::to_string(*v));
}

void CheckObservation(const Observation& o) {
  if (!o.ok) {
    if (!o.gpus.empty()) Fail("failed observation with GPUs", o.failure);
    if (o.failure.empty()) Fail("failed observation without a failure", o.node);
    return;
  }
  if (o.gpus.empty()) Fail("ok observation without GPUs", o.note);
  for (const GpuSample& g : o.gpus) {
    if (g.index < 0) Fail("negative GPU index", std::to_string(g.index));
    CheckValue(g.util_pct, 0, 100, "utilisation out of 0-100");
    CheckValue(g.mem_used_mib, 0, HUGE_VAL, "memory used");
    CheckValue(g.mem_total_mib, 0, HUGE_VAL, "memory total");
    CheckValue(g.power_w, 0, HUGE_VAL, "power");
    if (g.pids && *g.pids < 0) Fail("negative PID count", std::to_string(*g.pids));
  }
}

std::vector<std::string> Parts(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> parts(1);
  for (std::size_t i = 1; i < size; ++i) {
    if (data[i] == 0x01) {
      parts.emplace_back();
    } else {
      parts.back() += static_cast<char>(data[i]);
    }
  }
  while (parts.size() < 2) parts.emplace_back();
  return parts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::vector<std::string> parts = Parts(data, size);
  switch (data[0] % 3) {
    case 0: {
      CheckObservation(ParseNvidiaSmiSample("n01", kNow, Ok(parts[0]), Ok(parts[1])));
      Observation no_apps = ParseNvidiaSmiSample("n01", kNow, Ok(parts[0]), FailedRead());
      CheckObservation(no_apps);
      for (const GpuSample& g : no_apps.gpus) {
        if (g.pids) Fail("PIDs known although the apps read failed", std::to_string(*g.pids));
      }
      break;
    }
    case 1:
      CheckObservation(ParseDcgmPage("n01", kNow, parts[0]));
      break;
    case 2: {
      std::vector<std::string> rejected;
      std::vector<RunningJob> jobs = ParseRunningJobs(parts[0], &rejected);
      std::set<std::string> ids;
      for (const RunningJob& j : jobs) {
        if (j.job_id.empty()) Fail("job without an id", j.name);
        if (j.gpus < 0) Fail("negative GPU count", j.job_id);
        if (!ids.insert(j.job_id).second) Fail("job id twice", j.job_id);
      }
      GpuSampleStore store(16);
      for (int i = 0; i < 10; ++i) {
        Observation o = ParseNvidiaSmiSample("n01", kNow - 1800 + 120 * i, Ok(parts[1]), Ok(""));
        CheckObservation(o);
        store.Add(std::move(o));
      }
      Json report = JudgeGpuIdle(jobs, store.Snapshot(), kNow);
      std::string dumped;
      try {
        dumped = report.dump();
      } catch (const Json::exception& e) {
        Fail("report does not serialise strictly", e.what());
      }
      if (!report.contains("jobs") || !report["jobs"].is_array()) Fail("no jobs array", dumped);
      std::set<std::string> judged;
      for (const Json& j : report["jobs"]) {
        if (!j.contains("job_id") || !j["job_id"].is_string()) Fail("job without job_id", dumped);
        judged.insert(j["job_id"].get<std::string>());
      }
      if (judged != ids) Fail("judged jobs are not the parsed jobs", dumped);
      break;
    }
  }
  return 0;
}
