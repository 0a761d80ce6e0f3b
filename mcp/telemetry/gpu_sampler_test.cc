// GpuSampler with a simulated clock: nvidia-smi reads from a fake back-end, and dcgm-exporter
// pages from a loopback HTTP server serving SYNTHETIC pages (test doubles, invented data in the
// documented exposition format, never a real dcgm-exporter).
#include "mcp/telemetry/gpu_sampler.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "guard/check.h"
#include "mcp/backend/live_backend.h"
#include "mcp/backend/replay_backend.h"
#include "mcp/topics/tools.h"

namespace slurm_rca::mcp {
namespace {

// Answers the two gpu_idle nvidia-smi queries from fixed text; counts reads.
class FakeSmi : public Backend {
 public:
  std::string Label() const override { return "live"; }
  Evidence Read(const std::vector<std::string>& argv) override {
    ++reads;
    Evidence e;
    e.source = "live";
    e.argv = argv;
    if (argv == GpuIdleDeviceArgv() && device_ok) {
      e.outcome = Evidence::Outcome::kOk;
      e.exit_code = 0;
      e.out = "0, GPU-0, 0, 0, 81559, 24.5, Disabled\n";
    } else if (argv == GpuIdleProcessArgv()) {
      e.outcome = Evidence::Outcome::kOk;
      e.exit_code = 0;
    } else {
      e.outcome = Evidence::Outcome::kTimedOut;
      e.cause = "timed out after 20 s";
    }
    return e;
  }
  Evidence ReadLog(const std::string&, int) override { return {}; }
  std::atomic<int> reads{0};
  bool device_ok = true;
};

TEST(GpuSamplerTest, HostSpecsAreAllowlistedNames) {
  base::Result<DcgmHost> h = ParseDcgmHost("gpu01");
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->node, "gpu01");
  EXPECT_EQ(h->host, "gpu01");
  EXPECT_EQ(h->port, 9400);
  h = ParseDcgmHost("gpu02=10.0.0.5:9500");
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->node, "gpu02");
  EXPECT_EQ(h->host, "10.0.0.5");
  EXPECT_EQ(h->port, 9500);
  for (const char* bad : {"bad/name", "-x", "a b", "h:0", "h:99999", "http://h:9400", "", "n=",
                          "h:9400/metrics"}) {
    EXPECT_FALSE(ParseDcgmHost(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseDcgmHost("h:0").status().message(), "dcgm host 'h:0': port out of range");
}

TEST(GpuSamplerTest, NvidiaSmiReadsGoThroughTheBackendAndFailuresAreHoles) {
  FakeSmi smi;
  GpuSampleStore store;
  std::int64_t now = 1'800'000'000;
  GpuSampler sampler(&smi, &store,
                     GpuSamplerOptions{.interval = 120, .local_node = "n01",
                                       .clock = [&] { return now; }});
  sampler.SampleOnce();
  now += 120;
  smi.device_ok = false;
  sampler.SampleOnce();  // the device query times out: the process query is not even asked
  auto snap = store.Snapshot();
  ASSERT_EQ(snap["n01"].size(), 2u);
  EXPECT_TRUE(snap["n01"][0].ok);
  EXPECT_EQ(snap["n01"][0].time, 1'800'000'000);
  ASSERT_EQ(snap["n01"][0].gpus.size(), 1u);
  EXPECT_EQ(*snap["n01"][0].gpus[0].pids, 0);
  EXPECT_FALSE(snap["n01"][1].ok);
  EXPECT_TRUE(snap["n01"][1].gpus.empty());
  EXPECT_NE(snap["n01"][1].failure.find("timed_out"), std::string::npos);
  EXPECT_EQ(smi.reads, 3);
  EXPECT_EQ(sampler.Describe()["cycles"], 2);
}

TEST(GpuSamplerTest, DcgmPagesFromLoopbackTestDoubles) {
  // The test double: node a answers a synthetic page, node b 503, node c a malformed page.
  httplib::Server server;
  std::atomic<int> hits{0};
  server.Get("/metrics", [&](const httplib::Request& req, httplib::Response& res) {
    ++hits;
    res.set_content(
        "# SYNTHETIC dcgm-exporter page (test double)\n"
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\"} 3\n"
        "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} 100\n"
        "DCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"GPU-a\"} 80000\n"
        "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\"} 40\n",
        "text/plain");
  });
  httplib::Server unavailable;
  unavailable.Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.status = 503;
    res.set_content("busy", "text/plain");
  });
  httplib::Server malformed;
  malformed.Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\" 3\n", "text/plain");
  });
  int p1 = server.bind_to_any_port("127.0.0.1");
  int p2 = unavailable.bind_to_any_port("127.0.0.1");
  int p3 = malformed.bind_to_any_port("127.0.0.1");
  std::thread t1([&] { server.listen_after_bind(); });
  std::thread t2([&] { unavailable.listen_after_bind(); });
  std::thread t3([&] { malformed.listen_after_bind(); });

  GpuSampleStore store;
  GpuSampler sampler(nullptr, &store,
                     GpuSamplerOptions{.interval = 120,
                                       .dcgm = {{"a", "127.0.0.1", p1},
                                                {"b", "127.0.0.1", p2},
                                                {"c", "127.0.0.1", p3},
                                                {"d", "127.0.0.1", 1}},  // nobody listening
                                       .dcgm_timeout = 2,
                                       .clock = [] { return std::int64_t{1'800'000'000}; }});
  sampler.SampleOnce();
  server.stop();
  unavailable.stop();
  malformed.stop();
  t1.join();
  t2.join();
  t3.join();
  auto snap = store.Snapshot();
  ASSERT_EQ(snap.size(), 4u);
  ASSERT_TRUE(snap["a"][0].ok) << snap["a"][0].failure;
  EXPECT_EQ(snap["a"][0].source, "dcgm");
  EXPECT_EQ(*snap["a"][0].gpus[0].util_pct, 3);
  for (const char* n : {"b", "c", "d"}) {
    EXPECT_FALSE(snap[n][0].ok) << n;
    EXPECT_TRUE(snap[n][0].gpus.empty()) << n;
    EXPECT_NE(snap[n][0].failure.find("no evidence"), std::string::npos) << n;
  }
  EXPECT_NE(snap["b"][0].failure.find("HTTP 503"), std::string::npos);
  EXPECT_EQ(hits, 1);  // one scrape per node per cycle
  EXPECT_EQ(sampler.Describe()["dcgm_hosts"].size(), 4u);
}

TEST(GpuSamplerTest, APageOverTheCapIsNotEvidence) {
  httplib::Server server;
  server.Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(4096, '#') + "\n", "text/plain");
  });
  int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  GpuSampleStore store;
  GpuSampler sampler(nullptr, &store,
                     GpuSamplerOptions{.dcgm = {{"a", "127.0.0.1", port}},
                                       .max_page_bytes = 1024});
  sampler.SampleOnce();
  server.stop();
  t.join();
  auto snap = store.Snapshot();
  ASSERT_EQ(snap["a"].size(), 1u);
  EXPECT_FALSE(snap["a"][0].ok);
  EXPECT_NE(snap["a"][0].failure.find("larger than"), std::string::npos);
}

TEST(GpuSamplerTest, StartAndStopRunCycles) {
  FakeSmi smi;
  GpuSampleStore store;
  GpuSampler sampler(&smi, &store, GpuSamplerOptions{.interval = 3600, .local_node = "n01"});
  sampler.Start();
  for (int i = 0; i < 200 && sampler.Describe()["cycles"] == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  sampler.Stop();  // returns at once although the interval is an hour
  EXPECT_EQ(sampler.Describe()["cycles"], 1);
  EXPECT_EQ(store.Snapshot()["n01"].size(), 1u);
}

// ---- the gpu_idle topic through slurm_query, on the TEST DOUBLES of mcp/testdata/gpu_idle ----

namespace fs = std::filesystem;

class NullContext : public ToolContext {
 public:
  void Progress(double, std::optional<double>, const std::string&) override {}
  void Log(const std::string&, const Json&) override {}
  bool Cancelled() const override { return false; }
};

ToolResult QueryGpuIdle(const SurfaceOptions& o) {
  NullContext context;
  for (const Tool& t : BuildTools(o)) {
    if (t.name == kQueryTool) return t.run(Json{{"topic", "gpu_idle"}}, context);
  }
  ADD_FAILURE() << "no slurm_query";
  return {};
}

// A trusted directory holding copies of the nvidia-smi and squeue test doubles.
class DoubleDir {
 public:
  DoubleDir() {
    dir_ = fs::temp_directory_path() / ("gpu_idle_test." + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const auto mode = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec;
    fs::permissions(dir_, mode);
    for (const char* p : {"nvidia-smi", "squeue"}) {
      fs::copy_file(fs::path(SLURM_RCA_SOURCE_DIR) / "mcp/testdata/gpu_idle" / p, dir_ / p);
      fs::permissions(dir_ / p, mode);
    }
  }
  ~DoubleDir() { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  void Remove(const std::string& name) { fs::remove(dir_ / name); }
  std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
};

TEST(GpuIdleToolTest, IdleJobJudgedFromSamplesThenAFailingNvidiaSmiIsAnOutage) {
  DoubleDir dir;
  const std::int64_t start = 1'800'000'000;
  std::string iso = UnixToIso(start);
  iso.pop_back();  // squeue prints no Z
  dir.Write("jobs.txt", "4242|" + iso + "|gpu-double|cpu=8,mem=64G,node=1,gres/gpu=2|train\n");
  dir.Write("device.csv",
            "0, GPU-0, 0, 0, 81559, 24.0, Disabled\n1, GPU-1, 0, 0, 81559, 25.0, Disabled\n");
  LiveOptions lo;
  lo.executor.trusted_dirs = {dir.path()};
  lo.executor.timeout = std::chrono::milliseconds(5000);
  lo.cache_ttl_seconds = 0;
  lo.max_per_minute = 0;
  LiveBackend live(lo);
  GpuSampleStore store;
  std::int64_t now = start + 16 * 60;
  GpuSampler sampler(&live, &store,
                     GpuSamplerOptions{.interval = 120, .local_node = "gpu-double",
                                       .clock = [&] { return now; }});
  SurfaceOptions o;
  o.backend = &live;
  o.gpu_samples = &store;
  o.gpu_sampling = [&] { return sampler.Describe(); };
  o.clock = [&] { return now; };
  for (; now <= start + 36 * 60; now += 120) sampler.SampleOnce();
  now -= 120;
  ToolResult r = QueryGpuIdle(o);
  ASSERT_FALSE(r.is_error) << ResultText(r);
  ASSERT_TRUE(r.structured.has_value());
  const Json& s = *r.structured;
  EXPECT_EQ(s["topic"], "gpu_idle");
  EXPECT_EQ(s["source"], "live");
  ASSERT_EQ(s["rows"].size(), 1u);
  EXPECT_EQ(s["rows"][0]["status"], "judged") << s.dump();
  EXPECT_EQ(s["rows"][0]["signature"], "idle");
  EXPECT_EQ(s["rows"][0]["evidence"]["nodes"][0]["observations"], 11);  // 16..36 min
  EXPECT_EQ(s["report"]["sampling"]["nvidia_smi_node"], "gpu-double");
  EXPECT_NE(ResultText(r).find("classification only, nothing was done"), std::string::npos);

  // nvidia-smi starts failing (exit 9): four cycles later the GPUs are unseen, not idle.
  dir.Write("device.exit", "9\n");
  for (int i = 0; i < 4; ++i) {
    now += 120;
    sampler.SampleOnce();
  }
  r = QueryGpuIdle(o);
  ASSERT_FALSE(r.is_error) << ResultText(r);
  const Json& row = (*r.structured)["rows"][0];
  EXPECT_EQ(row["status"], "stale_newest") << row.dump();
  EXPECT_FALSE(row.contains("signature"));
  EXPECT_EQ(row["evidence"]["nodes"][0]["failed_reads"], 4);
  EXPECT_EQ((*r.structured)["report"]["nodes"][0]["last_read_ok"], false);

  // The job read fails: no evidence at all, never a verdict.
  dir.Write("jobs.txt", "");
  dir.Remove("squeue");
  r = QueryGpuIdle(o);
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(ResultText(r).find("NO EVIDENCE"), std::string::npos) << ResultText(r);
}

TEST(GpuIdleGuardTest, EveryReadIsAllowedAndMutatingFlagsBesideThemAreRefused) {
  guard::Guard guard(guard::GuardOptions{});
  for (const auto& argv : {GpuIdleDeviceArgv(), GpuIdleProcessArgv(), RunningJobsArgv()}) {
    guard::Verdict v = guard.Check(argv);
    ASSERT_TRUE(v.ok()) << argv[1] << ": " << v.denial().ToString();
    EXPECT_EQ(v.approved().argv(), argv);
  }
  for (const auto& base : {GpuIdleDeviceArgv(), GpuIdleProcessArgv()}) {
    for (const std::vector<std::string>& extra :
         std::vector<std::vector<std::string>>{{"-r"}, {"-pm", "0"}, {"--compute-mode=0"},
                                               {"-caa"}, {"-pl", "100"}, {"-l", "120"}}) {
      std::vector<std::string> argv = base;
      argv.insert(argv.end(), extra.begin(), extra.end());
      EXPECT_FALSE(guard.Check(argv).ok()) << base[1] << " " << extra[0];
    }
  }
}

TEST(GpuIdleToolTest, SamplingOffOrReplayIsNoEvidence) {
  LiveBackend live(LiveOptions{});
  SurfaceOptions o;
  o.backend = &live;
  ToolResult r = QueryGpuIdle(o);
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(ResultText(r).find("NO EVIDENCE (unavailable, live"), std::string::npos)
      << ResultText(r);
  EXPECT_NE(ResultText(r).find("sampling is off"), std::string::npos) << ResultText(r);

  auto opened = ReplayBackend::Open(std::string(SLURM_RCA_SOURCE_DIR) + "/fixtures/demo");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  std::unique_ptr<ReplayBackend> replay = std::move(opened).value();
  o.backend = replay.get();
  r = QueryGpuIdle(o);
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(ResultText(r).find("NO EVIDENCE (unavailable, replay"), std::string::npos)
      << ResultText(r);
  EXPECT_NE(ResultText(r).find("not recorded in this bundle"), std::string::npos);
}

}  // namespace
}  // namespace slurm_rca::mcp
