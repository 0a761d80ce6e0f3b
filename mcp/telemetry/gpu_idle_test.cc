// gpu_idle's judgement with a simulated clock, its nvidia-smi and dcgm-exporter readers on
// synthetic inputs (TEST DOUBLES: invented data in the documented layouts, never a real GPU,
// nvidia-smi or dcgm-exporter), and the rule that a failed read is never an idle or busy GPU.
#include "mcp/telemetry/gpu_idle.h"

#include <gtest/gtest.h>

namespace slurm_rca::mcp {
namespace {

using Json = nlohmann::json;

constexpr std::int64_t kStart = 1'800'000'000;  // the job's start, unix seconds
constexpr std::int64_t kMin = 60;

Evidence Ok(std::string out) {
  Evidence e;
  e.outcome = Evidence::Outcome::kOk;
  e.exit_code = 0;
  e.out = std::move(out);
  return e;
}

Evidence Failed(int code, std::string cause) {
  Evidence e;
  e.outcome = Evidence::Outcome::kFailed;
  e.exit_code = code;
  e.cause = std::move(cause);
  return e;
}

// One synthetic nvidia-smi observation of node n01 with two GPUs at `util` %, `mem` MiB of
// 81559, `power` W and `pids` processes on gpu0.
Observation Smi(std::int64_t t, int util, int mem = 0, double power = 24.0, int pids = 0) {
  std::string rows;
  for (int i = 0; i < 2; ++i) {
    rows += std::to_string(i) + ", GPU-" + std::to_string(i) + ", " + std::to_string(util) +
            ", " + std::to_string(mem) + ", 81559, " + std::to_string(power) + ", Disabled\n";
  }
  std::string procs;
  for (int p = 0; p < pids; ++p) procs += "GPU-0, " + std::to_string(4000 + p) + "\n";
  return ParseNvidiaSmiSample("n01", t, Ok(rows), Ok(procs));
}

RunningJob Job(std::string id = "1008", int gpus = 2, std::vector<std::string> nodes = {"n01"}) {
  RunningJob j;
  j.job_id = std::move(id);
  j.start = kStart;
  j.nodes = std::move(nodes);
  j.gpus = gpus;
  return j;
}

// Observations every 2 minutes from `from` to `to` (inclusive), made by `make`.
template <typename F>
void Every2m(GpuSampleStore& store, std::int64_t from, std::int64_t to, F make) {
  for (std::int64_t t = from; t <= to; t += 2 * kMin) store.Add(make(t));
}

Json JudgeOne(const GpuSampleStore& store, std::int64_t now, RunningJob job = Job()) {
  Json r = JudgeGpuIdle({job}, store.Snapshot(), now);
  EXPECT_EQ(r["jobs"].size(), 1u);
  return r["jobs"][0];
}

TEST(GpuIdleTest, DefaultsAreCoherent) {
  EXPECT_TRUE(ValidateGpuIdleOptions({}).ok());
  GpuIdleOptions bad;
  bad.max_sample_gap = bad.window;
  EXPECT_EQ(ValidateGpuIdleOptions(bad).message(), "need 0 < interval < max_sample_gap < window");
  bad = {};
  bad.min_samples = 11;  // 11 x 2 min > 20 min
  EXPECT_EQ(ValidateGpuIdleOptions(bad).message(),
            "need 1 <= min_samples and min_samples * interval <= window");
}

TEST(GpuIdleTest, WarmupIsNotJudgedAndItsSamplesAreNotEvidence) {
  GpuSampleStore store;
  // Idle from the first second; at start + 14 min the job is still in warm-up.
  Every2m(store, kStart, kStart + 14 * kMin, [](std::int64_t t) { return Smi(t, 0); });
  Json j = JudgeOne(store, kStart + 14 * kMin);
  EXPECT_EQ(j["status"], "in_warmup") << j.dump();
  // At start + 20 min: the warm-up samples do not count, so 5 min of evidence is too little.
  Every2m(store, kStart + 16 * kMin, kStart + 20 * kMin, [](std::int64_t t) { return Smi(t, 0); });
  j = JudgeOne(store, kStart + 20 * kMin);
  EXPECT_EQ(j["status"], "window_not_covered") << j.dump();
  EXPECT_EQ(j["evidence"]["nodes"][0]["first"], UnixToIso(kStart + 16 * kMin));
}

TEST(GpuIdleTest, TheWindowMustBeCoveredThenIdleIsJudged) {
  GpuSampleStore store;
  // Warm-up ends at 15 min; earliest verdict: warmup + window - max_gap = 32 min.
  Every2m(store, kStart + 16 * kMin, kStart + 30 * kMin, [](std::int64_t t) { return Smi(t, 0); });
  EXPECT_EQ(JudgeOne(store, kStart + 30 * kMin)["status"], "window_not_covered");
  Every2m(store, kStart + 32 * kMin, kStart + 34 * kMin, [](std::int64_t t) { return Smi(t, 0); });
  Json j = JudgeOne(store, kStart + 34 * kMin);
  ASSERT_EQ(j["status"], "judged") << j.dump();
  EXPECT_EQ(j["signature"], "idle");
  EXPECT_EQ(j["stage_if_enforced"], "alert");
  EXPECT_EQ(j["classification_only"], true);
  // The evidence window is shown: the last 20 minutes, but never before the end of warm-up.
  EXPECT_EQ(j["evidence"]["window_start"], UnixToIso(kStart + 15 * kMin));
  EXPECT_EQ(j["evidence"]["nodes"][0]["first"], UnixToIso(kStart + 16 * kMin));
  EXPECT_EQ(j["evidence"]["nodes"][0]["last"], UnixToIso(kStart + 34 * kMin));
  EXPECT_EQ(j["evidence"]["nodes"][0]["observations"], 10);
  EXPECT_EQ(j["figures"]["gpus_covered"], 2);
  EXPECT_EQ(j["breach_since"], UnixToIso(kStart + 16 * kMin));
  // Later, only the last 20 minutes are used.
  Every2m(store, kStart + 36 * kMin, kStart + 40 * kMin, [](std::int64_t t) { return Smi(t, 0); });
  j = JudgeOne(store, kStart + 40 * kMin);
  EXPECT_EQ(j["evidence"]["window_start"], UnixToIso(kStart + 20 * kMin));
  EXPECT_EQ(j["evidence"]["nodes"][0]["first"], UnixToIso(kStart + 20 * kMin));
  EXPECT_EQ(j["evidence"]["nodes"][0]["observations"], 11);
  // An hour of breach reaches the drain stage the seed would use (classification only).
  Every2m(store, kStart + 42 * kMin, kStart + 80 * kMin, [](std::int64_t t) { return Smi(t, 0); });
  j = JudgeOne(store, kStart + 80 * kMin);
  EXPECT_EQ(j["stage_if_enforced"], "drain") << j.dump();
  EXPECT_NEAR(j["gpu_hours_in_breach"].get<double>(), 2 * 64.0 / 60, 1e-9);
}

TEST(GpuIdleTest, PeakNotMeanOneBusySampleClears) {
  GpuSampleStore store;
  Every2m(store, kStart + 16 * kMin, kStart + 40 * kMin,
          [](std::int64_t t) { return Smi(t, t == kStart + 30 * kMin ? 95 : 0); });
  Json j = JudgeOne(store, kStart + 40 * kMin);
  ASSERT_EQ(j["status"], "judged") << j.dump();
  EXPECT_TRUE(j["signature"].is_null());
  EXPECT_LT(j["figures"]["mean_util_pct"].get<double>(), 15);
  EXPECT_EQ(j["figures"]["peak_util_pct"], 95);
}

TEST(GpuIdleTest, AGapResetsHistoryAndTheLadderRestarts) {
  GpuSampleStore store;
  Every2m(store, kStart + 16 * kMin, kStart + 60 * kMin, [](std::int64_t t) { return Smi(t, 0); });
  ASSERT_EQ(JudgeOne(store, kStart + 60 * kMin)["signature"], "idle");
  // One failed cycle at 62 min leaves a 4-minute hole (> max_sample_gap 3 min).
  store.Add(FailedObservation("n01", kStart + 62 * kMin, "nvidia-smi", "timed_out"));
  Every2m(store, kStart + 64 * kMin, kStart + 70 * kMin, [](std::int64_t t) { return Smi(t, 0); });
  Json j = JudgeOne(store, kStart + 70 * kMin);
  EXPECT_EQ(j["status"], "gap_exceeded") << j.dump();
  EXPECT_EQ(j["evidence"]["nodes"][0]["failed_reads"], 1);
  EXPECT_EQ(j["evidence"]["nodes"][0]["largest_gap_seconds"], 4 * kMin);
  // Once a whole window after the hole is covered, the breach is judged again, and its dwell
  // starts after the hole, not before it.
  Every2m(store, kStart + 72 * kMin, kStart + 84 * kMin, [](std::int64_t t) { return Smi(t, 0); });
  j = JudgeOne(store, kStart + 84 * kMin);
  ASSERT_EQ(j["status"], "judged") << j.dump();
  EXPECT_EQ(j["breach_since"], UnixToIso(kStart + 64 * kMin));
}

TEST(GpuIdleTest, AStaleNewestSampleIsAnOutageNotIdleness) {
  GpuSampleStore store;
  Every2m(store, kStart + 16 * kMin, kStart + 40 * kMin, [](std::int64_t t) { return Smi(t, 0); });
  // Every read after 40 min fails: the GPUs are not idle, they are unseen.
  for (std::int64_t t = kStart + 42 * kMin; t <= kStart + 50 * kMin; t += 2 * kMin) {
    store.Add(FailedObservation("n01", t, "nvidia-smi", "device query failed (exit 9)"));
  }
  Json j = JudgeOne(store, kStart + 50 * kMin);
  EXPECT_EQ(j["status"], "stale_newest") << j.dump();
  EXPECT_FALSE(j.contains("signature"));
  EXPECT_EQ(j["evidence"]["nodes"][0]["failed_reads"], 5);
}

TEST(GpuIdleTest, AMissingOrFailedReadIsNeverAnIdleOrBusyGpu) {
  // The reads themselves: a failed device query is a failed observation with no GPU in it.
  Observation o = ParseNvidiaSmiSample("n01", kStart, Failed(9, "driver not loaded"), Ok(""));
  EXPECT_FALSE(o.ok);
  EXPECT_TRUE(o.gpus.empty());
  EXPECT_NE(o.failure.find("no evidence"), std::string::npos);
  Evidence timed_out;
  timed_out.outcome = Evidence::Outcome::kTimedOut;
  EXPECT_FALSE(ParseNvidiaSmiSample("n01", kStart, timed_out, Ok("")).ok);
  EXPECT_FALSE(ParseNvidiaSmiSample("n01", kStart, Ok(""), Ok("")).ok);  // lists no GPU
  // A node whose every read failed: no samples, never judged.
  GpuSampleStore store;
  for (std::int64_t t = kStart + 16 * kMin; t <= kStart + 60 * kMin; t += 2 * kMin) {
    store.Add(FailedObservation("n01", t, "nvidia-smi", "refused"));
  }
  Json j = JudgeOne(store, kStart + 60 * kMin);
  EXPECT_EQ(j["status"], "no_samples") << j.dump();
  EXPECT_FALSE(j.contains("signature"));
  // A node never sampled at all: the same.
  EXPECT_EQ(JudgeOne(GpuSampleStore(), kStart + 60 * kMin)["status"], "no_samples");
  // A failed process query makes PIDs unknown: the GPUs may be unused but never "idle".
  GpuSampleStore store2;
  Every2m(store2, kStart + 16 * kMin, kStart + 40 * kMin, [](std::int64_t t) {
    return ParseNvidiaSmiSample("n01", t, Ok("0, GPU-0, 0, 0, 81559, 24, Disabled\n"),
                                Failed(2, "invalid argument"));
  });
  j = JudgeOne(store2, kStart + 40 * kMin, Job("1008", 1));
  ASSERT_EQ(j["status"], "judged") << j.dump();
  EXPECT_EQ(j["signature"], "unknown");
  EXPECT_EQ(j["figures"]["pids_known"], false);
}

TEST(GpuIdleTest, UnknownValuesAreNeverJudged) {
  for (const char* v : {"[N/A]", "N/A", "[Not Supported]", "[Unknown Error]",
                        "[Insufficient Permissions]", "", "abc", "NaN", "-1", "101"}) {
    Observation o = ParseNvidiaSmiSample(
        "n01", kStart, Ok(std::string("0, GPU-0, ") + v + ", 0, 81559, 24, Disabled\n"), Ok(""));
    ASSERT_TRUE(o.ok) << v;
    EXPECT_FALSE(o.gpus[0].util_pct.has_value()) << v;
    EXPECT_FALSE(o.gpus[0].Judgeable()) << v;
  }
  Observation zero =
      ParseNvidiaSmiSample("n01", kStart, Ok("0, GPU-0, 0, 0, 81559, 0, [N/A]\n"), Ok(""));
  ASSERT_TRUE(zero.gpus[0].util_pct.has_value());  // a real 0 is a known zero
  EXPECT_EQ(*zero.gpus[0].util_pct, 0);
  EXPECT_TRUE(zero.gpus[0].Judgeable());  // MIG [N/A]: a GPU without MIG
  EXPECT_FALSE(ParseNvidiaSmiSample("n01", kStart, Ok("0, GPU-0, 0, 0, 81559, 24, Enabled\n"),
                                    Ok(""))
                   .gpus[0]
                   .Judgeable());
  // A row with the wrong column count fails the whole read.
  EXPECT_FALSE(ParseNvidiaSmiSample("n01", kStart,
                                    Ok("0, GPU-0, 0, 0, 81559, 24, Disabled\n1, GPU-1, 0\n"),
                                    Ok(""))
                   .ok);
  // One unreadable GPU blocks the job.
  GpuSampleStore store;
  Every2m(store, kStart + 16 * kMin, kStart + 40 * kMin, [](std::int64_t t) {
    return ParseNvidiaSmiSample("n01", t,
                                Ok("0, GPU-0, 0, 0, 81559, 24, Disabled\n"
                                   "1, GPU-1, [N/A], 0, 81559, 24, Disabled\n"),
                                Ok(""));
  });
  Json j = JudgeOne(store, kStart + 40 * kMin);
  EXPECT_EQ(j["status"], "unjudgeable_gpu") << j.dump();
}

TEST(GpuIdleTest, SignaturesNeedPositiveEvidence) {
  auto judge = [](int util, int mem, double power, int pids) {
    GpuSampleStore store;
    Every2m(store, kStart + 16 * kMin, kStart + 40 * kMin,
            [&](std::int64_t t) { return Smi(t, util, mem, power, pids); });
    return JudgeOne(store, kStart + 40 * kMin);
  };
  EXPECT_EQ(judge(0, 0, 24, 0)["signature"], "idle");
  EXPECT_EQ(judge(0, 60000, 88, 2)["signature"], "hung");
  EXPECT_EQ(judge(7, 66000, 130, 1)["signature"], "starved");
  EXPECT_EQ(judge(0, 0, 90, 0)["signature"], "unknown");  // power too high for idle
  EXPECT_EQ(judge(0, 0, 24, 1)["signature"], "unknown");  // a process, no memory
}

TEST(GpuIdleTest, CoverageRules) {
  GpuSampleStore store;
  Every2m(store, kStart + 16 * kMin, kStart + 40 * kMin, [](std::int64_t t) { return Smi(t, 0); });
  // Shared node: two GPU jobs on n01 -> neither is judged.
  Json r = JudgeGpuIdle({Job("1"), Job("2", 1)}, store.Snapshot(), kStart + 40 * kMin);
  EXPECT_EQ(r["jobs"][0]["status"], "shared_node");
  EXPECT_EQ(r["jobs"][1]["status"], "shared_node");
  // A CPU job beside it does not make it shared.
  r = JudgeGpuIdle({Job("1"), Job("2", 0)}, store.Snapshot(), kStart + 40 * kMin);
  EXPECT_EQ(r["jobs"][0]["status"], "judged");
  EXPECT_EQ(r["jobs"][1]["status"], "no_gpus");
  // More GPUs allocated than sampled.
  EXPECT_EQ(JudgeOne(store, kStart + 40 * kMin, Job("1", 4))["status"],
            "fewer_gpus_than_allocated");
  // A node of the job without samples.
  EXPECT_EQ(JudgeOne(store, kStart + 40 * kMin, Job("1", 2, {"n01", "n02"}))["status"],
            "partial_nodes");
  // Unknown start time.
  RunningJob no_start = Job();
  no_start.start.reset();
  EXPECT_EQ(JudgeOne(store, kStart + 40 * kMin, no_start)["status"], "start_unknown");
  // A requeued job (new start time) has no history: its old samples are warm-up or older.
  RunningJob requeued = Job();
  requeued.start = kStart + 39 * kMin;
  EXPECT_EQ(JudgeOne(store, kStart + 40 * kMin, requeued)["status"], "in_warmup");
  // Too few observations (samples every 4 minutes would also be gaps; use 3-minute cycles with
  // a stricter min_samples).
  GpuSampleStore sparse;
  for (std::int64_t t = kStart + 16 * kMin; t <= kStart + 40 * kMin; t += 3 * kMin) {
    sparse.Add(Smi(t, 0));
  }
  Json j = JudgeGpuIdle({Job()}, sparse.Snapshot(), kStart + 40 * kMin)["jobs"][0];
  EXPECT_EQ(j["status"], "insufficient_observations") << j.dump();
}

TEST(GpuIdleTest, TheStoreIsBounded) {
  GpuSampleStore store(4);
  for (int i = 0; i < 10; ++i) store.Add(Smi(kStart + i, 0));
  auto snap = store.Snapshot();
  ASSERT_EQ(snap["n01"].size(), 4u);
  EXPECT_EQ(snap["n01"].front().time, kStart + 6);
}

// ---- synthetic dcgm-exporter pages (TEST DOUBLES, invented in the documented exposition) ----

std::string Page(const std::string& body) {
  return "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
         "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" +
         body;
}

TEST(GpuIdleDcgmTest, BasicPageTakesTheMaximumActivity) {
  Observation o = ParseDcgmPage(
      "n01", kStart,
      Page("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"n01\"} 97\n"
           "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-a\"} 0.91\n"
           "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} 69000\n"
           "DCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"GPU-a\"} 11000\n"
           "DCGM_FI_DEV_FB_RESERVED{gpu=\"0\",UUID=\"GPU-a\"} 500\n"
           "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\"} 612.5\n"));
  ASSERT_TRUE(o.ok) << o.failure;
  ASSERT_EQ(o.gpus.size(), 1u);
  EXPECT_EQ(*o.gpus[0].util_pct, 97);
  EXPECT_EQ(*o.gpus[0].mem_total_mib, 80500);
  EXPECT_EQ(*o.gpus[0].power_w, 612.5);
  EXPECT_FALSE(o.gpus[0].pids.has_value());  // DCGM has no process data
  // Profiling metrics only: ratios x 100.
  o = ParseDcgmPage("n01", kStart,
                    "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\"} 0.42\n"
                    "DCGM_FI_PROF_SM_ACTIVE{gpu=\"0\"} 0.05\n"
                    "DCGM_FI_DEV_FB_USED{gpu=\"0\"} 1\nDCGM_FI_DEV_FB_FREE{gpu=\"0\"} 9\n");
  ASSERT_TRUE(o.ok);
  EXPECT_NEAR(*o.gpus[0].util_pct, 42, 1e-9);
}

TEST(GpuIdleDcgmTest, BadValuesAreUnknownBadPagesFail) {
  Observation o = ParseDcgmPage("n01", kStart,
                                "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 150\n"
                                "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"} +Inf\n"
                                "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\"} NaN\n"
                                "DCGM_FI_DEV_FB_USED{gpu=\"3\"} -5\n"
                                "DCGM_FI_DEV_GPU_UTIL{gpu=\"4\",GPU_I_ID=\"1\"} 3\n");
  ASSERT_TRUE(o.ok) << o.failure;
  for (const GpuSample& g : o.gpus) EXPECT_FALSE(g.Judgeable()) << g.index;
  EXPECT_FALSE(o.gpus[2].util_pct.has_value());
  EXPECT_TRUE(o.gpus[4].mig);
  // Clones per hpc_job that agree are one value; clones that disagree are unknown.
  o = ParseDcgmPage("n01", kStart,
                    "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",hpc_job=\"4242\"} 5\n"
                    "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",hpc_job=\"4243\"} 5\n"
                    "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",hpc_job=\"1\"} 0\n"
                    "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",hpc_job=\"2\"} 88\n");
  ASSERT_TRUE(o.ok);
  EXPECT_EQ(*o.gpus[0].util_pct, 5);
  EXPECT_EQ(o.gpus[0].hpc_jobs, (std::vector<std::string>{"4242", "4243"}));
  EXPECT_FALSE(o.gpus[1].util_pct.has_value());
  // Stale series timestamps (10 min old, max_age 2 min) are unknown.
  o = ParseDcgmPage("n01", kStart,
                    "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 0 " + std::to_string((kStart - 600) * 1000) +
                        "\n");
  ASSERT_TRUE(o.ok);
  EXPECT_FALSE(o.gpus[0].util_pct.has_value());
  // Whole-page failures.
  EXPECT_FALSE(ParseDcgmPage("n01", kStart, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\" 5\n").ok);
  EXPECT_FALSE(ParseDcgmPage("n01", kStart, "DCGM_FI_DEV_GPU_UTIL{UUID=\"x\"} 5\n").ok);
  EXPECT_FALSE(ParseDcgmPage("n01", kStart, "DCGM_FI_DEV_GPU_UTIL{gpu=\"-1\"} 5\n").ok);
  EXPECT_FALSE(ParseDcgmPage("n01", kStart, "# only comments\n").ok);
}

TEST(GpuIdleDcgmTest, DcgmEvidenceIsNeverIdleOrHung) {
  GpuSampleStore store;
  Every2m(store, kStart + 16 * kMin, kStart + 40 * kMin, [](std::int64_t t) {
    return ParseDcgmPage("n01", t,
                         "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",hpc_job=\"1008\"} 0\n"
                         "DCGM_FI_DEV_FB_USED{gpu=\"0\",hpc_job=\"1008\"} 0\n"
                         "DCGM_FI_DEV_FB_FREE{gpu=\"0\",hpc_job=\"1008\"} 81000\n"
                         "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",hpc_job=\"1008\"} 20\n");
  });
  Json j = JudgeOne(store, kStart + 40 * kMin, Job("1008", 1));
  ASSERT_EQ(j["status"], "judged") << j.dump();
  EXPECT_EQ(j["signature"], "unknown");
  // The hpc_job label names another job: not judged.
  EXPECT_EQ(JudgeOne(store, kStart + 40 * kMin, Job("77", 1))["status"], "attribution_conflict");
}

TEST(GpuIdleJobsTest, SqueueRowsHostlistsAndTres) {
  std::vector<std::string> rejected;
  auto jobs = ParseRunningJobs(
      "1008|2026-11-30T10:00:00|gpu[01-02]|cpu=8,mem=64G,node=2,billing=8,gres/gpu=4|train|x\n"
      "1009_3|Unknown|n7|cpu=1,gres/gpu:a100=2,gres/gpu:h100=1|arr\n"
      "bad id|2026-11-30T10:00:00|n1|cpu=1|x\n"
      "1010|2026-11-30T10:00:00|n[1-|cpu=1|x\n",
      &rejected);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].nodes, (std::vector<std::string>{"gpu01", "gpu02"}));
  EXPECT_EQ(jobs[0].gpus, 4);
  EXPECT_EQ(jobs[0].name, "train|x");
  EXPECT_EQ(*jobs[0].start, 1'796'032'800);
  EXPECT_FALSE(jobs[1].start.has_value());
  EXPECT_EQ(jobs[1].gpus, 3);
  EXPECT_EQ(rejected.size(), 2u);
  EXPECT_EQ(*ExpandHostlist("rack[1-2]-gpu[01-02]"),
            (std::vector<std::string>{"rack1-gpu01", "rack1-gpu02", "rack2-gpu01",
                                      "rack2-gpu02"}));
  EXPECT_EQ(*ExpandHostlist("gpu[01-02].cluster,n9"),
            (std::vector<std::string>{"gpu01.cluster", "gpu02.cluster", "n9"}));
  EXPECT_TRUE(ExpandHostlist("(null)")->empty());
  EXPECT_EQ(GpuCountFromTres("cpu=1,gres/gpumem=10G,gres/gpuutil=5"), 0);
  EXPECT_EQ(GpuCountFromTres("gres/gpu=2,gres/gpu:a100=2"), 2);
}

TEST(GpuIdleSchemaTest, BytesThatAreNotUtf8StillSerialise) {
  RunningJob j = Job();
  j.name = "bad \xff\xfe name";
  Json r = JudgeGpuIdle({j}, {}, kStart + 40 * kMin);
  EXPECT_NO_THROW(r.dump());
  EXPECT_EQ(r["jobs"][0]["name"], "bad \xef\xbf\xbd\xef\xbf\xbd name");
}

TEST(GpuIdleSchemaTest, ReportsCarryTheirRequiredFields) {
  GpuSampleStore store;
  Every2m(store, kStart + 16 * kMin, kStart + 40 * kMin, [](std::int64_t t) { return Smi(t, 0); });
  Json r = JudgeGpuIdle({Job()}, store.Snapshot(), kStart + 40 * kMin);
  Json schema = GpuIdleReportSchema();
  for (const Json& key : schema["required"]) EXPECT_TRUE(r.contains(key.get<std::string>()));
  // Held by name: a range-for over GpuIdleJobSchema()["required"] would iterate a member of a
  // temporary already destroyed (ASan: heap-use-after-free).
  const Json job_schema = GpuIdleJobSchema();
  for (const Json& key : job_schema["required"]) {
    EXPECT_TRUE(r["jobs"][0].contains(key.get<std::string>())) << key;
  }
  for (const auto& [key, v] : r["jobs"][0].items()) {
    EXPECT_TRUE(job_schema["properties"].contains(key)) << key;
  }
}

}  // namespace
}  // namespace slurm_rca::mcp
