#include "scenarios/live/record.h"

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "mcp/backend/bundle_pack.h"
#include "mcp/backend/live_backend.h"
#include "mcp/topics/topics.h"
#include "scenarios/live/capture.h"
#include "scenarios/live/faults.h"
#include "scenarios/measure.h"

namespace slurm_rca::live {

using base::Status;

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// Reads every topic once through the back-end and writes the snapshot's streams.
Json Snapshot(mcp::Backend& backend, const std::string& lab_dir, const fs::path& out,
              double offset, const std::string& comment, std::ostream& progress) {
  Json reads = Json::array();
  std::string dir = "reads/" + std::to_string(static_cast<int>(offset));
  std::string taken_at = NowIso();
  // Each topic bare, and with each of its argv filters alone at its documented example, so that
  // a replayed query with a filter has evidence too: the scenario recorder's plan.
  for (const scenarios::PlannedRead& p : scenarios::RecorderPlan()) {
    const mcp::Topic& topic = *p.topic;
    const std::vector<std::string>& argv = p.argv;
    mcp::Evidence e = topic.source == mcp::Source::kDaemonLog
                          ? backend.ReadLog(argv[1], mcp::kLogTailLines)
                          : backend.Read(argv);
    std::string name = CaptureFileName(argv);
    name = name.substr(0, name.rfind('.'));
    std::string out_file = dir + "/" + name + ".out";
    std::string err_file = dir + "/" + name + ".err";
    WriteText(out / out_file, ReplaceAll(e.out, lab_dir, kLabPlaceholder));
    WriteText(out / err_file, ReplaceAll(e.err, lab_dir, kLabPlaceholder));
    Json r = {{"argv", argv},
              {"exit_code", e.outcome == mcp::Evidence::Outcome::kOk ? 0 : e.exit_code},
              {"outcome", mcp::OutcomeName(e.outcome)},
              {"duration_ms", static_cast<long>(e.seconds * 1000)},
              {"timed_out", e.outcome == mcp::Evidence::Outcome::kTimedOut},
              {"stdout_file", out_file},
              {"stderr_file", err_file},
              {"cause", e.ok() ? "" : ReplaceAll(e.cause, lab_dir, kLabPlaceholder)},
              {"topic", topic.name}};
    if (e.out_truncated) r["stdout_truncated"] = true;
    if (e.outcome == mcp::Evidence::Outcome::kTimedOut) r["exit_code"] = -1;
    progress << "  +" << offset << " s " << topic.name
             << (argv == mcp::DefaultArgv(topic) ? "" : " (filtered)") << ": "
             << mcp::OutcomeName(e.outcome) << "\n";
    reads.push_back(std::move(r));
  }
  return {{"offset_seconds", offset}, {"taken_at", taken_at}, {"comment", comment},
          {"reads", reads}};
}

}  // namespace

Status RecordDemoBundle(const RecordOptions& options, std::ostream& progress) {
  fs::path final_out =
      options.out_dir.empty() ? fs::path(options.fixtures) / "demo" : fs::path(options.out_dir);
  // Written as a directory beside the bundle, then packed into one file renamed into place
  // (WritePack), so that a reader never sees a half-written bundle.
  fs::path out = final_out.string() + ".recording";
  {
    std::error_code ec;
    fs::remove_all(out, ec);
  }
  bool known = false;
  for (const FaultInfo& f : FaultCatalog()) known = known || f.name == options.fault;
  if (!known) return Status::Error("unknown fault '" + options.fault + "'");
  char tmpl[] = "/tmp/rca-record-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return Status::Error("mkdtemp failed");
  const bool large = options.profile == "large";
  Lab lab(LabOptions{.dir = tmpl, .nodes = options.nodes, .port_base = options.port_base,
                     .slurm_prefix = options.slurm_prefix, .profile = options.profile,
                     .seed = options.seed, .large_history = options.large_history});
  struct Down {
    Lab& lab;
    std::ostream& progress;
    ~Down() { lab.Down(progress); }
  } down{lab, progress};
  if (Status s = lab.Up(progress); !s.ok()) return s;
  // A known state: one job done, one running (a large lab has its own, every CPU taken).
  std::string work = lab.Path("work");
  // (node4 is the busy profile's maintenance node: there, the job runs on node2.)
  const std::string train_node = options.profile == "busy" ? "node2" : "node4";
  if (!large) {
    lab.Client({"sbatch", "--chdir=" + work, "-J", "done", "--wrap", "true"});
    lab.Client({"sbatch", "--chdir=" + work, "-J", "train", "-w", train_node, "--wrap",
                "sleep 600"});
    std::this_thread::sleep_for(std::chrono::seconds(3));
  }

  mcp::LiveOptions live;
  live.executor.trusted_dirs = {"/usr/bin", "/usr/sbin"};
  live.executor.slurm_conf = lab.SlurmConf();
  const double timeout_s =
      large ? options.large_read_timeout_seconds : options.read_timeout_seconds;
  live.executor.timeout = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  live.clusters = {"rca"};
  live.cache_ttl_seconds = 0;
  live.max_per_minute = 0;
  live.log_files = {{"slurmctld", lab.Path("log/slurmctld.log")},
                    {"slurmdbd", lab.Path("log/slurmdbd.log")},
                    {"slurmd", lab.Path("log/slurmd-node1.log")}};
  mcp::LiveBackend backend(live);
  std::string recorded_at = NowIso();
  std::string version = lab.SlurmVersion();

  std::error_code ec;
  Json snapshots = Json::array();
  snapshots.push_back(Snapshot(backend, lab.options().dir, out, 0, "healthy", progress));
  FaultTarget target;
  target.node = options.node;
  FaultOutcome injected = InjectFault(lab, options.fault, target);
  if (!injected.status.ok()) return injected.status;
  std::this_thread::sleep_for(std::chrono::seconds(10));
  snapshots.push_back(Snapshot(backend, lab.options().dir, out, 10,
                               options.fault + " injected 10 s before: " + injected.message,
                               progress));
  FaultOutcome healed = HealFault(lab, options.fault, target);
  if (!healed.status.ok()) return healed.status;
  std::this_thread::sleep_for(std::chrono::seconds(5));
  snapshots.push_back(Snapshot(backend, lab.options().dir, out, 30,
                               options.fault + " healed 5 s before", progress));
  if (!large) lab.Client({"scancel", "-n", "train"});
  const std::string what =
      large ? "A large lab of " + std::to_string(options.nodes) +
                  " nodes (scenarios/live/large_profile.h, seed " + std::to_string(options.seed) +
                  ", its own queue and history)"
            : std::string("A ") + std::to_string(options.nodes) +
                  "-node lab: job 'done' completed, job 'train' running on " + train_node;

  Json manifest = {{"format", "slurm-rca-evidence/1"},
                   {"slurm_version", version},
                   {"scenario", "demo-" + options.fault},
                   {"recorded_at", recorded_at},
                   {"generator", "rca-bench cluster record (scenarios/live/record.cc)"},
                   {"comment", what + "; the fault " + options.fault + " (node " + options.node +
                                   ") injected after offset 0 and healed after offset 10. Lab "
                                   "paths are replaced by /LAB."},
                   {"snapshots", snapshots}};
  if (!WriteText(out / "manifest.json", manifest.dump(2) + "\n")) {
    return Status::Error("cannot write " + (out / "manifest.json").string());
  }
  // One file: the pack final_out.evidence.gz (mcp/backend/bundle_pack.h); a directory of the
  // older layout at final_out is removed once the pack is in place.
  base::Result<mcp::BundleFiles> files = mcp::ReadBundleDirectory(out.string());
  if (!files.ok()) return files.status();
  const std::string pack = final_out.string() + mcp::kBundlePackSuffix;
  if (Status st = mcp::WritePack(*files, pack); !st.ok()) return st;
  fs::remove_all(out, ec);
  if (fs::is_directory(final_out, ec)) fs::remove_all(final_out, ec);
  progress << "recorded " << pack << " (" << snapshots.size() << " snapshots)\n";
  return {};
}

}  // namespace slurm_rca::live
