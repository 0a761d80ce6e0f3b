// scale_bench: what slurm-mcp's answers cost as the cluster grows (issue #35).
//
//   build/bin/scale_bench [--reps N]                       generated outputs only
//   build/bin/scale_bench --slurm-conf DIR/etc/slurm.conf  and a running lab's real reads
//
// Generated part (mcp/topics/site_sample.h: the 22.05 format, seeded; not a lab): at 64, 256 and
// 1,024 nodes and 1k, 10k and 50k jobs, slurm-mcp's own CPU to parse squeue's output into the
// page it answers and into groups by state and reason (per row), the answers' bytes, and the
// overview's time and bytes. Medians of --reps, measured in this process with CLOCK_PROCESS_
// CPUTIME (the generator's own cost is outside the timed part).
//
// Live part (--slurm-conf; the lab of `rca-bench cluster up --profile large`, or any cluster the
// guard may read): per topic, the Slurm read's wall time and bytes, slurm-mcp's parse and group
// CPU per row, and its answer's bytes; squeue's text against squeue --json on the same queue;
// the overview's wall time and size; and whether `group_by state,reason` is exact against a
// count made here from the raw squeue text. Peak RSS is this process's (VmHWM), which holds the
// bench's own copies of the outputs too: an upper bound on what the server would hold.
// --save-dir DIR writes each live read's argv (NAME.argv, JSON) and output (NAME.out) there, to
// keep what a large lab printed (bench/large_lab.sh saves under OUT_DIR/raw).
#include <CLI/CLI.hpp>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mcp/backend/live_backend.h"
#include "mcp/topics/overview.h"
#include "mcp/topics/site_sample.h"
#include "mcp/topics/tools.h"
#include "mcp/topics/topics.h"

namespace {

using namespace slurm_rca::mcp;

double CpuSeconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The median CPU seconds of `reps` runs of fn.
double MedianCpu(int reps, const std::function<void()>& fn) {
  std::vector<double> runs;
  for (int i = 0; i < reps; ++i) {
    const double start = CpuSeconds();
    fn();
    runs.push_back(CpuSeconds() - start);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

double VmHwmMib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

std::size_t Bytes(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace).size();
}

void Generated(int reps) {
  std::printf("## Generated outputs (22.05 format, seeded; not a lab), median of %d\n\n", reps);
  std::printf("| nodes | jobs | squeue bytes | parse to a 200-row page: us (ns/row) | group_by "
              "state,reason: us (ns/row) | groups | answer bytes (page / groups) | overview: ms, "
              "text / structured bytes |\n|---|---|---|---|---|---|---|---|\n");
  const Topic& queue = *FindTopic("queue");
  for (const auto& [nodes, jobs] : std::vector<std::pair<int, int>>{
           {64, 1000}, {256, 10000}, {1024, 10000}, {1024, 50000}}) {
    const site_sample::Site site = site_sample::MakeSite(nodes, jobs, 1);
    Parsed page, grouped;
    const double page_s = MedianCpu(reps, [&] { page = Parse(queue, site.squeue, Caps{}); });
    ParseOptions by;
    by.group_by = {"state", "reason"};
    const double group_s =
        MedianCpu(reps, [&] { grouped = Parse(queue, site.squeue, Caps{}, {}, by); });
    std::vector<Evidence> reads(3);
    const std::vector<std::string> outputs = {site.rich_sinfo, site.squeue,
                                              "Server thread count: 3\nAgent queue size: 0\n"};
    for (std::size_t i = 0; i < 3; ++i) {
      reads[i].outcome = Evidence::Outcome::kOk;
      reads[i].source = "generated";
      reads[i].argv = OverviewReads()[i].argv;
      reads[i].out = outputs[i];
    }
    OverviewSummary overview;
    const double overview_s =
        MedianCpu(reps, [&] { overview = SummarizeOverview(reads, "generated"); });
    std::printf("| %d | %d | %zu | %.0f (%.0f) | %.0f (%.0f) | %zu | %zu / %zu | %.1f, %zu / %zu |\n",
                nodes, jobs, site.squeue.size(), page_s * 1e6, page_s * 1e9 / jobs,
                group_s * 1e6, group_s * 1e9 / jobs, grouped.groups.size(), Bytes(page.rows),
                Bytes(grouped.groups), overview_s * 1e3, overview.text.size(),
                Bytes(overview.structured));
  }
  std::printf("\nVmHWM of this process so far: %.1f MiB (holds the generated outputs too)\n\n",
              VmHwmMib());
}

// Writes a read's argv and output under dir (nothing when dir is empty); false when it cannot.
bool Save(const std::string& dir, const std::string& name, const Evidence& e) {
  if (dir.empty()) return true;
  std::ofstream argv(dir + "/" + name + ".argv");
  argv << Json(e.argv).dump() << "\n";
  std::ofstream out(dir + "/" + name + ".out", std::ios::binary);
  out << e.out;
  return argv.good() && out.good();
}

class NoContext : public ToolContext {
 public:
  void Progress(double, std::optional<double>, const std::string&) override {}
  void Log(const std::string&, const Json&) override {}
  bool Cancelled() const override { return false; }
};

int Live(const std::string& slurm_conf, const std::string& clusters, int reps,
         const std::string& save_dir) {
  LiveOptions o;
  o.executor.slurm_conf = slurm_conf;
  o.executor.timeout = std::chrono::seconds(120);
  o.executor.max_output_bytes = std::size_t{256} << 20;  // the bench sees whole outputs
  o.clusters = {clusters};
  o.cache_ttl_seconds = 0;
  o.max_per_minute = 0;
  LiveBackend backend(o);
  std::printf("## Live reads (SLURM_CONF=%s), median of %d\n\n", slurm_conf.c_str(), reps);
  std::printf("| topic | Slurm read: s (wall) | bytes | rows | slurm-mcp parse, 200-row page: "
              "ns/row CPU | group_by: ns/row CPU | answer bytes (page / groups) |\n"
              "|---|---|---|---|---|---|---|\n");
  std::string squeue_text;
  for (const auto& [name, group] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"queue", {"state", "reason"}}, {"nodes", {"state", "reason"}},
           {"accounting", {"state", "user"}}}) {
    const Topic& topic = *FindTopic(name);
    std::vector<double> walls;
    Evidence e;
    for (int i = 0; i < reps; ++i) {
      const double start = WallSeconds();
      e = backend.Read(DefaultArgv(topic));
      walls.push_back(WallSeconds() - start);
    }
    std::sort(walls.begin(), walls.end());
    if (!e.ok()) {
      std::printf("| %s | NO EVIDENCE (%s): %s | | | | | |\n", name.c_str(), OutcomeName(e.outcome),
                  e.cause.c_str());
      continue;
    }
    if (name == "queue") squeue_text = e.out;
    if (!Save(save_dir, name, e)) {
      std::fprintf(stderr, "scale_bench: cannot write %s/%s.*\n", save_dir.c_str(), name.c_str());
      return 1;
    }
    Parsed page, grouped;
    const double page_s = MedianCpu(reps, [&] { page = Parse(topic, e.out, Caps{}); });
    ParseOptions by;
    by.group_by = group;
    const double group_s = MedianCpu(reps, [&] { grouped = Parse(topic, e.out, Caps{}, {}, by); });
    const double rows = static_cast<double>(std::max<std::size_t>(page.total_rows, 1));
    std::printf("| %s | %.3f | %zu%s | %zu | %.0f | %.0f | %zu / %zu |\n", name.c_str(),
                walls[walls.size() / 2], e.out.size(), e.out_truncated ? " (cut)" : "",
                page.total_rows, page_s * 1e9 / rows, group_s * 1e9 / rows, Bytes(page.rows),
                Bytes(grouped.groups));
  }
  // squeue's text against its --json on the same queue (one read each, back to back).
  if (!squeue_text.empty()) {
    double start = WallSeconds();
    Evidence text = backend.Read({"squeue", "--noheader", "-o", "%i|%P|%u|%T|%M|%D|%R"});
    const double text_s = WallSeconds() - start;
    start = WallSeconds();
    Evidence json = backend.Read({"squeue", "--json"});
    const double json_s = WallSeconds() - start;
    std::printf("\nsqueue text: %.3f s, %zu bytes; squeue --json: %s %.3f s, %zu bytes (%.1fx the "
                "text's time)\n",
                text_s, text.out.size(), json.ok() ? "" : "NO EVIDENCE", json_s, json.out.size(),
                text_s > 0 ? json_s / text_s : 0.0);
    // group_by state,reason against the raw count.
    const auto raw = site_sample::RawQueueCount(squeue_text);
    ParseOptions by;
    by.group_by = {"state", "reason"};
    const Parsed grouped = Parse(*FindTopic("queue"), squeue_text,
                                 Caps{.max_rows = 1u << 30, .max_bytes = std::size_t{1} << 40}, {},
                                 by);
    bool exact = grouped.groups.size() == raw.size();
    for (const Json& g : grouped.groups) {
      auto it = raw.find({g["state"].get<std::string>(), g["reason"].get<std::string>()});
      exact = exact && it != raw.end() && it->second == g["count"].get<std::size_t>();
    }
    std::printf("queue group_by state,reason: %zu groups over %zu rows, %s against the raw count\n",
                grouped.groups.size(), grouped.total_rows, exact ? "exact" : "NOT EXACT");
  }
  // The overview's own reads, saved as they are (the queue's is the queue topic's).
  if (!save_dir.empty()) {
    for (const OverviewRead& r : OverviewReads()) {
      if (r.topic == "queue") continue;
      if (!Save(save_dir, "overview-" + r.topic, backend.Read(r.argv))) {
        std::fprintf(stderr, "scale_bench: cannot write under %s\n", save_dir.c_str());
        return 1;
      }
    }
  }
  // The overview through the tool, as an agent calls it.
  LiveOptions served = o;
  served.executor.max_output_bytes = kLiveMaxOutputBytes;
  LiveBackend server_backend(served);
  std::vector<Tool> tools = BuildTools(SurfaceOptions{.backend = &server_backend});
  NoContext context;
  std::vector<double> walls;
  ToolResult overview;
  for (int i = 0; i < reps; ++i) {
    const double start = WallSeconds();
    overview = tools[0].run(Json::object(), context).Fields();
    walls.push_back(WallSeconds() - start);
  }
  std::sort(walls.begin(), walls.end());
  const std::string text = ResultText(overview);
  std::printf("\nslurm_overview: %.3f s (wall, median), text %zu bytes, structured %zu bytes "
              "(bound %zu)\n\n%s\n",
              walls[walls.size() / 2], text.size(), overview.structured ? Bytes(*overview.structured) : 0,
              kOverviewMaxBytes, text.c_str());
  std::printf("VmHWM of this process: %.1f MiB (holds the bench's copies of whole outputs too)\n",
              VmHwmMib());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"scale_bench: slurm-mcp's parse, group and overview cost as the cluster grows"};
  int reps = 5;
  std::string slurm_conf, clusters = "rca", save_dir;
  app.add_option("--reps", reps, "Repetitions of each measurement (the median is printed)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--slurm-conf", slurm_conf,
                 "Also read a running cluster (SLURM_CONF), e.g. a lab of rca-bench cluster up");
  app.add_option("--clusters", clusters, "Cluster name -M may name")->capture_default_str();
  app.add_option("--save-dir", save_dir,
                 "With --slurm-conf: write each live read's argv and output here (NAME.argv, "
                 "NAME.out)")
      ->check(CLI::ExistingDirectory);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "scale_bench: %s (see scale_bench --help)\n", e.what());
    return 2;
  }
  Generated(reps);
  if (!slurm_conf.empty()) return Live(slurm_conf, clusters, reps, save_dir);
  return 0;
}
