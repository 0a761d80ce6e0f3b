#include "scenarios/live/capture.h"

#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "base/time.h"
#include "base/file.h"
#include "base/strings.h"
#include "guard/run.h"

namespace slurm_rca::live {

using base::Status;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::seconds;


// Options that only change how a text listing is laid out; the --json variant drops them.
const std::map<std::string, std::set<std::string>> kLayoutOptions = {
    {"sinfo", {"-o", "--format", "-O", "--Format", "-h", "--noheader", "-l", "--long"}},
    {"squeue", {"-o", "--format", "-O", "--Format", "-h", "--noheader", "-l", "--long"}},
    {"sacct",
     {"-o", "--format", "-n", "--noheader", "-p", "--parsable", "-P", "--parsable2", "--delimiter",
      "-l", "--long", "-b", "--brief", "-T", "--truncate"}},
};
// Options that make a read something else (help, version, structured already): no variant.
const std::set<std::string> kNoVariant = {"--json",  "--yaml", "--help",
                                          "--usage", "-V",     "--version"};
const std::set<std::string> kNoSacctVariant = {"-e", "--helpformat"};

std::uint64_t Fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}


bool WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

std::string Trim(const std::string& s) { return std::string(base::Trim(s)); }

std::string UtcNow() { return base::IsoUtcNow(); }

bool WaitUntil(seconds timeout, const std::function<bool()>& pred) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return pred();
}

// The stream as stored: with a line break added when it lacks one (the header's byte counts
// say where it ends).
std::string Terminated(const std::string& s) {
  return s.empty() || s.back() == '\n' ? s : s + "\n";
}

// ---- The known state -------------------------------------------------------------------------

// One job of the known state, as set up; ids are chosen (FirstJobId plus `scontrol
// reconfigure`) so that the job ids the guard corpus names are real jobs.
struct StateJob {
  int id;
  std::string name;
  std::string account;
  std::string what;                 // for the README
  std::vector<std::string> sbatch;  // options after --parsable --chdir -J -A
};

const std::vector<StateJob>& StateJobs() {
  static const std::vector<StateJob> jobs = {
      {1001,
       "capture-ok",
       "research",
       "COMPLETED, exit 0:0, on node1",
       {"-w", "node1", "-t", "5", "--wrap", "echo capture-ok"}},
      {1008,
       "capture-fail",
       "ops",
       "FAILED, exit 1:0 (`--wrap false`), on node1",
       {"-w", "node1", "-t", "5", "--wrap", "false"}},
      {1009,
       "capture-cancel",
       "research",
       "CANCELLED by root (scancel) while running on node3",
       {"-w", "node3", "-t", "10", "--wrap", "sleep 600"}},
      {1234,
       "train",
       "research",
       "RUNNING on node4 (--exclusive), with step 1234.0 (`srun sleep 3600`) and the batch step",
       {"-w", "node4", "--exclusive", "-t", "60", "--wrap", "srun sleep 3600"}},
      {1235,
       "capture-held",
       "ops",
       "PENDING, reason JobHeldUser (submitted with --hold)",
       {"--hold", "-t", "5", "--wrap", "sleep 60"}},
      {1236,
       "capture-wait",
       "research",
       "PENDING, reason Resources (asks for node4, which job 1234 holds exclusively)",
       {"-w", "node4", "-t", "5", "--wrap", "sleep 60"}},
  };
  return jobs;
}

// What the first capture of 22.05.8 showed, checked by hand against its files; written into
// the README because parsers depend on it. Re-check it when recapturing another version.
constexpr std::string_view kObserved =
    "## What 22.05.8 does that parsers must expect\n\n"
    "Checked by hand against these files when they were first captured:\n\n"
    "- `squeue --json` and `sinfo --json` ignore every filter (`-u`, `-p`, `-t`, `-A`, `-q`, "
    "`-R`, `--me`, `--jobs`, `--steps`, `-n`, `-N`, `-s`, ...): each prints every job, or every "
    "node and partition, with exit 0. `sacct --json` applies its filters. A JSON topic parser "
    "must filter by itself.\n"
    "- `squeue -u alice` with no Unix user alice prints `squeue: error: Invalid user: alice` on "
    "stderr and exits 0 with no jobs (its --json form prints every job beside the same error); "
    "sacct and sprio exit 1 for the same user. Exit 0 does not mean the filter held.\n"
    "- `squeue --jobs=1008` prints only its header although slurmctld still holds the failed job "
    "1008 (the --json form lists it); `sacct -j 1008` has it.\n"
    "- `--json` exists on squeue, sinfo and sacct only: sdiag, sshare and scontrol answer "
    "`unrecognized option '--json'`; `--yaml=v0.0.38` and `--json=v0.0.39` (data parser "
    "versions, Slurm 23.02 on) are refused.\n"
    "- sinfo has no `-F`/`--future` and sacctmgr no `ping` in 22.05, though the guard allows "
    "them.\n"
    "- sprio needs priority/multifactor (the lab runs it); with priority/basic it exits 1 with a three-line "
    "message on stderr.\n"
    "- `scontrol show slurmd` asks the slurmd on this host's default port; the lab's slurmd "
    "listen elsewhere, so it is `Connection refused` here.\n"
    "- Names that do not exist: `scontrol show node c1` and `scontrol show partition debug` "
    "exit 1 (`Node c1 not found`); `squeue -w c[1-4]` exits 1 (`Invalid node name c1`); "
    "`sinfo -n c[1-4]` exits 0 with only a header.\n";

constexpr std::string_view kDrainNode = "node2";
constexpr std::string_view kDrainReason = "capture: disk bad";
constexpr std::string_view kReservation = "maint_window";

Status Fail(const std::string& what, const ToolResult& r) {
  return Status::Error(what + ": " + r.Summary());
}

// Sets FirstJobId in the lab's slurm.conf and reconfigures: slurmctld moves its job id
// sequence up to it.
Status SetFirstJobId(const Lab& lab, int id) {
  std::istringstream in(base::ReadFile(lab.SlurmConf()).value_or(""));
  std::string conf, line;
  while (std::getline(in, line)) {
    if (line.rfind("FirstJobId=", 0) != 0) conf += line + "\n";
  }
  conf += "FirstJobId=" + std::to_string(id) + "\n";
  if (!WriteFile(lab.SlurmConf(), conf)) return Status::Error("cannot write " + lab.SlurmConf());
  ToolResult r = lab.Client({"scontrol", "reconfigure"}, seconds(30));
  if (!r.ok()) return Fail("scontrol reconfigure", r);
  bool seen = WaitUntil(seconds(30), [&] {
    ToolResult c = lab.Client({"scontrol", "show", "config"});
    std::istringstream lines(c.out);
    std::string l;
    while (std::getline(lines, l)) {
      if (l.rfind("FirstJobId", 0) == 0 && Trim(l.substr(l.find('=') + 1)) == std::to_string(id)) {
        return true;
      }
    }
    return false;
  });
  return seen ? Status() : Status::Error("slurmctld did not take FirstJobId=" + std::to_string(id));
}

Status Submit(const Lab& lab, const StateJob& job) {
  std::vector<std::string> argv = {
      "sbatch", "--parsable", "--chdir=" + lab.Path("work"), "-J", job.name, "-A", job.account};
  argv.insert(argv.end(), job.sbatch.begin(), job.sbatch.end());
  ToolResult r = lab.Client(argv, seconds(30));
  if (!r.ok()) return Fail("sbatch " + job.name, r);
  std::string id = r.out.substr(0, r.out.find_first_of(";\n"));
  if (id != std::to_string(job.id)) {
    return Status::Error("sbatch " + job.name + " got job id " + id + ", expected " +
                         std::to_string(job.id) + " (FirstJobId did not move the sequence)");
  }
  return {};
}

std::string JobField(const Lab& lab, int id, const std::string& format, bool steps = false) {
  std::vector<std::string> argv = {"squeue", "-h", "-j", std::to_string(id), "-o", format};
  if (steps) argv.insert(argv.begin() + 1, "-s");
  return Trim(lab.Client(argv).out);
}

Status SetUpKnownState(const Lab& lab, std::ostream& progress) {
  std::error_code ec;
  fs::create_directories(lab.Path("work"), ec);
  if (ec) return Status::Error("cannot create " + lab.Path("work") + ": " + ec.message());
  // Accounting-only user: there is no Unix user alice here, as on a login node that lacks one.
  ToolResult alice = lab.Client(
      {"sacctmgr", "-i", "add", "user", "alice", "Account=research", "DefaultAccount=research"},
      seconds(30));
  if (!alice.ok()) return Fail("sacctmgr add user alice", alice);

  const std::map<int, int> first_ids = {{1001, 1001}, {1008, 1008}, {1234, 1234}};
  for (const StateJob& job : StateJobs()) {
    if (auto f = first_ids.find(job.id); f != first_ids.end()) {
      if (Status s = SetFirstJobId(lab, f->second); !s.ok()) return s;
    }
    if (Status s = Submit(lab, job); !s.ok()) return s;
    progress << "  job " << job.id << " " << job.name << " submitted\n";
    if (job.id == 1009) {
      if (!WaitUntil(seconds(60), [&] { return JobField(lab, 1009, "%T") == "RUNNING"; })) {
        return Status::Error("job 1009 did not start");
      }
      ToolResult r = lab.Client({"scancel", "1009"});
      if (!r.ok()) return Fail("scancel 1009", r);
    }
    if (job.id == 1234) {
      bool step = WaitUntil(seconds(60), [&] {
        return JobField(lab, 1234, "%i", /*steps=*/true).find("1234.0") != std::string::npos;
      });
      if (!step) return Status::Error("step 1234.0 did not start");
    }
  }
  ToolResult drain = lab.Client({"scontrol", "update", "NodeName=" + std::string(kDrainNode),
                                 "State=DRAIN", "Reason=" + std::string(kDrainReason)});
  if (!drain.ok()) return Fail("scontrol update (drain)", drain);
  ToolResult resv = lab.Client(
      {"scontrol", "create", "reservation", "ReservationName=" + std::string(kReservation),
       "StartTime=now+1day", "Duration=02:00:00", "Nodes=node3", "Users=root", "Flags=MAINT"});
  if (!resv.ok()) return Fail("scontrol create reservation", resv);

  // Finished jobs must be in accounting before the reads.
  std::string sacct;
  bool recorded = WaitUntil(seconds(90), [&] {
    ToolResult r = lab.Client(
        {"sacct", "-a", "-X", "-n", "-P", "-j", "1001,1008,1009,1234", "-o", "JobID,State"});
    sacct = r.out;
    return sacct.find("1001|COMPLETED") != std::string::npos &&
           sacct.find("1008|FAILED") != std::string::npos &&
           sacct.find("1009|CANCELLED") != std::string::npos &&
           sacct.find("1234|RUNNING") != std::string::npos;
  });
  if (!recorded) return Status::Error("sacct does not show the known state: " + sacct);
  bool reasons = WaitUntil(seconds(45), [&] {
    return JobField(lab, 1235, "%r") == "JobHeldUser" && JobField(lab, 1236, "%r") == "Resources";
  });
  if (!reasons) {
    progress << "  note: pending reasons are " << JobField(lab, 1235, "%r") << " and "
             << JobField(lab, 1236, "%r") << "\n";
  }
  ToolResult drained = lab.Client({"sinfo", "-h", "-n", std::string(kDrainNode), "-o", "%T"});
  if (Trim(drained.out) != "drained") {
    return Status::Error(std::string(kDrainNode) + " is " + Trim(drained.out) + ", not drained");
  }
  return {};
}

// The lab's directory as kLabPlaceholder, also where JSON output escapes '/' as "\/".
std::string Substituted(const std::string& text, const std::string& lab_dir) {
  std::string escaped_placeholder = ReplaceAll(std::string(kLabPlaceholder), "/", "\\/");
  return ReplaceAll(ReplaceAll(text, lab_dir, kLabPlaceholder), ReplaceAll(lab_dir, "/", "\\/"),
                    escaped_placeholder);
}

// What the harness saw just before the reads, for the README.
std::string ObservedState(const Lab& lab) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> views = {
      {"sinfo -N -o \"%N %9P %T %E\"", {"sinfo", "-N", "-o", "%N %9P %T %E"}},
      {"squeue -o \"%i %j %a %T %r %N\"", {"squeue", "-o", "%i %j %a %T %r %N"}},
      {"squeue -s -o \"%i %j %N\"", {"squeue", "-s", "-o", "%i %j %N"}},
      {"sacct -a -o JobID,JobName,Account,State,ExitCode,NodeList",
       {"sacct", "-a", "-o", "JobID,JobName,Account,State,ExitCode,NodeList"}},
      {"scontrol show reservation", {"scontrol", "show", "reservation"}},
  };
  std::string out;
  for (const auto& [label, argv] : views) {
    ToolResult r = lab.Client(argv);
    out += "$ " + label + "\n" + Substituted(Terminated(r.out + r.err), lab.options().dir) + "\n";
  }
  return out;
}

// Lab::Down stops the daemons, but a running job's slurmstepd has its own session and would
// outlive them: the jobs end first.
void CancelJobs(const Lab& lab, std::ostream& progress) {
  lab.Client({"scancel", "--user=root"});
  bool gone = WaitUntil(seconds(30), [&] {
    ToolResult r = lab.Client({"squeue", "-h", "-o", "%i"});
    return r.ok() && Trim(r.out).empty();
  });
  if (!gone) progress << "  note: jobs were still listed 30 s after scancel\n";
}

// ---- Output ---------------------------------------------------------------------------------

struct Captured {
  PlannedRead read;
  CaptureFile file;
  std::string file_name;
  std::vector<std::string> exec_argv;
};

std::string Readme(const std::vector<Captured>& captured, const CapturePlan& plan,
                   const std::string& version, const std::string& when, double took,
                   const std::string& observed, const CaptureOptions& options) {
  std::ostringstream r;
  r << "# fixtures/" << fs::path(options.out_dir).filename().string() << "/\n\n"
    << "What real Slurm " << version
    << " prints for every read the guard allows: the test data the MCP topic parsers are tested "
       "against. Generated by `rca-bench cluster capture` (scenarios/live/capture.cc); do not "
       "edit by hand. Captured "
    << when << " in " << static_cast<int>(took) << " s.\n\n"
    << "- `reads/*.txt`: one file per argv (" << captured.size()
    << "), named from a slug of the argv and 6 hex digits of a hash of it.\n"
    << "- `manifest.json`: every file with its argv, origin, outcome, exit code, sizes and the "
       "Slurm version.\n\n"
    << "## What is captured\n\n"
    << "Every distinct `allow` argv of `guard/testdata/*.txt`, run through `guard::Guard` "
       "(clusters: rca) and `guard::Executor` (trusted dirs: the release's bin, a fresh "
       "environment with SLURM_CONF pointing at the lab). Then, for each corpus read of `squeue`, "
       "`sinfo` and `sacct` (the clients that have `--json` since 22.05), its `--json` variant: the "
       "read less its text-layout options (-o/-O/--format/--Format, -h/-n/--noheader, -l/--long, "
       "and for sacct -p/-P/--parsable*/--delimiter/-b/-T), plus `--json`; reads that already "
       "ask for --json/--yaml, or for --help/--usage/--version/--helpformat, get none. "
       "Captures of `--json` on clients or with arguments that this release lacks are kept: they "
       "record the real error, which parsers must handle.\n\n"
    << "Not captured:\n\n"
    << "- `nvidia-smi` reads: there is no real nvidia-smi in the lab (its GPUs are device nodes "
       "aliasing /dev/null), so there is nothing true to record.\n";
  for (const std::string& e : plan.excluded) {
    if (e.rfind("nvidia-smi", 0) != 0) r << "- " << e << "\n";
  }
  r << "\nThe corpus also names things this lab does not have (nodes c1, c[1-4], node[01-04], "
       "gpu[001-008]; partition debug; a Unix user alice): those captures hold Slurm's real "
       "answer to a name that does not exist.\n\n"
    << "## The known state\n\n"
    << "A private lab (`scenarios/live/`, " << options.nodes << " nodes, cluster rca, port base "
    << options.port_base
    << ", its own directory under /tmp), set up with mutating clients by the harness before any "
       "read:\n\n"
    << "- Nodes node1..node4, 2 CPUs and 1000 MB each; node1 and node2 have Gres=gpu:2 (device "
       "nodes aliasing /dev/null). Partitions cpu (default, all nodes) and gpu (node1, node2). "
       "PriorityType is priority/multifactor (fairshare weighted highest), so sprio shows the pending jobs' factors.\n"
    << "- Accounts research and ops; users root (research, ops), nobody (ops) and alice "
       "(research; accounting only, no Unix user).\n"
    << "- Jobs, all submitted by root with `--chdir=/LAB/work` (FirstJobId was moved with "
       "`scontrol reconfigure` so that ids the corpus names are real; it ends at 1234):\n";
  for (const StateJob& job : StateJobs()) {
    r << "  - " << job.id << " `" << job.name << "` (account " << job.account << "): " << job.what
      << "\n";
  }
  r << "- " << kDrainNode << " drained with reason \"" << kDrainReason << "\".\n"
    << "- Reservation " << kReservation
    << " on node3, Flags=MAINT, Users=root, starting one day after the capture, for 2 hours.\n"
    << "- The reads start once sacct shows 1001 COMPLETED, 1008 FAILED, 1009 CANCELLED and "
       "1234 RUNNING, and take well under MinJobAge (300 s): slurmctld still holds the finished "
       "jobs during the reads.\n\n"
    << "As the harness saw it just before the reads:\n\n```\n"
    << observed << "```\n\n"
    << "## File format\n\n"
    << "```\n"
    << kCaptureBanner << "\n"
    << "# slurm-version: " << version << "             from `sinfo --version` at capture time\n"
    << "# argv: sacctmgr show qos             guard/corpus.h FormatArgv; ParseArgvLine reads it\n"
    << "# exec: sacctmgr --readonly show qos  only when what ran differs (the guard's injection)\n"
    << "# outcome: exited  exit: 0  duration_ms: 12\n"
    << "# bytes: stdout 1234  stderr 0\n"
    << "# lab-state: see ../README.md\n"
    << "--- stdout\n...\n--- stderr\n...\n```\n\n"
    << "The byte counts are of each stream as stored; a line break is added after a stream that "
       "does not end with one, so the counts say exactly where it ends "
       "(`slurm_rca::live::ParseCaptureFile`). The lab's temporary directory is replaced by `"
    << kLabPlaceholder
    << "` everywhere (stdout, stderr and the state above), so nothing depends on its name. "
       "Times, dates and durations are those of the capture.\n\n";
  std::vector<const Captured*> failed;
  for (const Captured& c : captured) {
    if (c.file.outcome != "exited" || c.file.exit_code != 0) failed.push_back(&c);
  }
  r << "## Reads that did not exit 0 (" << failed.size() << " of " << captured.size() << ")\n\n"
    << "Kept on purpose: they are what " << version << " says, and parsers must handle them.\n\n"
    << "| argv | outcome | first line of stderr (or stdout) |\n| --- | --- | --- |\n";
  for (const Captured* c : failed) {
    std::string first = c->file.stderr_text.substr(0, c->file.stderr_text.find('\n'));
    if (first.empty()) first = c->file.stdout_text.substr(0, c->file.stdout_text.find('\n'));
    first = ReplaceAll(ReplaceAll(first, "|", "\\|"), "`", "'");
    std::string argv = ReplaceAll(c->file.argv_line, "|", "\\|");
    r << "| `" << argv << "` | " << c->file.outcome << " " << c->file.exit_code << " | " << first
      << " |\n";
  }
  if (version.rfind("22.05.", 0) == 0) {
    r << "\n" << kObserved;
  } else {
    r << "\n## What " << version << " does that parsers must expect\n\n"
      << "Not written by hand for this release: its differences from 22.05 are in the "
         "project README (\"Slurm releases\") and in the parser tests that read these files.\n";
  }
  std::string slurm_flag =
      options.slurm_prefix.empty() ? "" : " --slurm ~/.cache/slurm-rca/slurm-" + version;
  r << "\n## Regenerate\n\n"
    << "As root, on a machine with the Debian packages of scripts/deps.sh and ports base+6, +17, "
       "+19 and +201..+204 free (base "
    << CaptureOptions{}.port_base << " unless --port-base says, not the default lab's 16800):\n\n"
    << "```\n"
    << (options.slurm_prefix.empty()
            ? ""
            : "scripts/build-slurm.sh ../shared/slurm/slurm-" +
                  ReplaceAll(version, ".", "-") + "-1.tar.gz\n")
    << "cmake --build build -j2 && build/bin/rca-bench cluster capture" << slurm_flag
    << "\n```\n\n"
    << "It brings up its own lab (not the default one), writes here, and always tears the lab "
       "down. `capture_test` (ctest) fails when a corpus read has no capture, or a capture no "
       "corpus read: add a read to guard/testdata, then recapture.\n";
  return r.str();
}

Status WriteFixtures(const std::string& out_dir, const std::vector<Captured>& captured,
                     const CapturePlan& plan, const std::string& version, const std::string& when,
                     double took, const std::string& observed, const CaptureOptions& options) {
  std::error_code ec;
  fs::path reads = fs::path(out_dir) / "reads";
  fs::create_directories(reads, ec);
  if (ec) return Status::Error("cannot create " + reads.string() + ": " + ec.message());
  // Stale captures go: the directory holds exactly this capture.
  for (const auto& entry : fs::directory_iterator(reads)) {
    if (entry.path().extension() == ".txt") fs::remove(entry.path(), ec);
  }
  nlohmann::json manifest = {{"generator", "rca-bench cluster capture (scenarios/live/capture.cc)"},
                             {"slurm_version", version},
                             {"captured_at", when},
                             {"capture_seconds", static_cast<int>(took)},
                             {"lab_dir_placeholder", std::string(kLabPlaceholder)},
                             {"excluded", plan.excluded},
                             {"reads", nlohmann::json::array()}};
  for (const Captured& c : captured) {
    if (!WriteFile(reads / c.file_name, RenderCaptureFile(c.file))) {
      return Status::Error("cannot write " + (reads / c.file_name).string());
    }
    nlohmann::json j = {{"file", "reads/" + c.file_name},
                        {"argv", c.read.argv},
                        {"argv_line", c.file.argv_line},
                        {"origin", c.read.origin},
                        {"outcome", c.file.outcome},
                        {"exit_code", c.file.exit_code},
                        {"stdout_bytes", c.file.stdout_text.size()},
                        {"stderr_bytes", c.file.stderr_text.size()},
                        {"duration_ms", c.file.duration_ms},
                        {"slurm_version", c.file.slurm_version}};
    if (c.exec_argv != c.read.argv) j["exec_argv"] = c.exec_argv;
    if (!c.read.corpus_files.empty()) j["corpus_files"] = c.read.corpus_files;
    if (!c.read.base.empty()) j["base"] = c.read.base;
    manifest["reads"].push_back(std::move(j));
  }
  if (!WriteFile(fs::path(out_dir) / "manifest.json", manifest.dump(2) + "\n")) {
    return Status::Error("cannot write " + out_dir + "/manifest.json");
  }
  if (!WriteFile(fs::path(out_dir) / "README.md",
                 Readme(captured, plan, version, when, took, observed, options))) {
    return Status::Error("cannot write " + out_dir + "/README.md");
  }
  return {};
}

// Brings the lab up, sets the state, runs the reads. The caller tears the lab down.
Status CaptureInLab(Lab& lab, const CapturePlan& plan, std::ostream& progress,
                    std::vector<Captured>& captured, std::string& version, std::string& observed) {
  if (Status s = lab.Up(progress); !s.ok()) return s;
  progress << "setting up the known state\n";
  if (Status s = SetUpKnownState(lab, progress); !s.ok()) {
    return Status::Error("known state: " + s.message());
  }
  version = lab.SlurmVersion();
  if (version.empty()) return Status::Error("cannot read the Slurm version (sinfo --version)");
  observed = ObservedState(lab);

  guard::Guard guard(guard::GuardOptions{.clusters = {lab.options().cluster}});
  guard::Executor executor(guard::ExecutorOptions{.trusted_dirs = lab.SlurmDirs(),
                                                  .timeout = seconds(30),
                                                  .max_output_bytes = 16u << 20,
                                                  .slurm_conf = lab.SlurmConf()});
  progress << "capturing " << plan.reads.size() << " reads (Slurm " << version << ")\n";
  for (size_t i = 0; i < plan.reads.size(); ++i) {
    const PlannedRead& read = plan.reads[i];
    guard::Verdict verdict = guard.Check(read.argv);
    if (!verdict.ok()) {
      return Status::Error(guard::FormatArgv(read.argv) + ": " + verdict.denial().ToString());
    }
    guard::RunResult r = executor.Run(verdict.approved());
    if (r.outcome == guard::Outcome::kNotInstalled || r.outcome == guard::Outcome::kUntrusted ||
        r.outcome == guard::Outcome::kSpawnFailed) {
      return Status::Error(guard::FormatArgv(read.argv) + ": " + r.error);
    }
    if (r.stdout_truncated || r.stderr_truncated) {
      return Status::Error(guard::FormatArgv(read.argv) + ": output over 16 MiB");
    }
    Captured c;
    c.read = read;
    c.exec_argv = r.argv;
    c.file_name = CaptureFileName(read.argv);
    c.file.slurm_version = version;
    c.file.argv_line = guard::FormatArgv(read.argv);
    if (r.argv != read.argv) c.file.exec_line = guard::FormatArgv(r.argv);
    c.file.outcome = guard::OutcomeName(r.outcome);
    c.file.exit_code = r.exit_code;
    c.file.duration_ms = static_cast<long>(r.duration.count());
    c.file.stdout_text = Substituted(r.stdout_data, lab.options().dir);
    c.file.stderr_text = Substituted(r.stderr_data, lab.options().dir);
    progress << "  [" << i + 1 << "/" << plan.reads.size() << "] " << c.file.outcome << " "
             << c.file.exit_code << "  " << c.file.argv_line << "\n";
    captured.push_back(std::move(c));
  }
  return {};
}

}  // namespace

std::string NowIso() { return base::IsoUtcNow(); }

bool WriteText(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

std::string ReplaceAll(std::string text, std::string_view from, std::string_view to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

std::string CaptureFileName(const std::vector<std::string>& argv) {
  std::string slug;
  for (const std::string& word : argv) {
    for (unsigned char c : word) {
      bool keep = std::isalnum(c) || c == '.' || c == '_';
      if (keep) {
        slug += static_cast<char>(c);
      } else if (!slug.empty() && slug.back() != '-') {
        slug += '-';
      }
    }
    if (!slug.empty() && slug.back() != '-') slug += '-';
  }
  if (slug.size() > 80) slug.resize(80);
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  char hash[8];
  std::snprintf(hash, sizeof hash, "%06llx",
                static_cast<unsigned long long>(Fnv1a(guard::FormatArgv(argv)) & 0xffffff));
  return slug + "-" + hash + ".txt";
}

base::Result<CapturePlan> PlanCapture(const std::vector<guard::ArgvCase>& cases,
                                      const guard::Guard& guard) {
  CapturePlan plan;
  std::map<std::string, size_t> index;  // FormatArgv -> plan.reads position
  std::set<std::string> excluded_seen;
  std::vector<guard::Approved> approved;
  for (const guard::ArgvCase& c : cases) {
    if (c.expected || c.argv.empty()) continue;
    std::string key = guard::FormatArgv(c.argv);
    std::string file = fs::path(c.file).filename().string();
    if (c.argv[0] == "nvidia-smi") {
      if (excluded_seen.insert(key).second) {
        plan.excluded.push_back(key + ": no real nvidia-smi in the lab");
      }
      continue;
    }
    if (auto it = index.find(key); it != index.end()) {
      auto& files = plan.reads[it->second].corpus_files;
      if (std::find(files.begin(), files.end(), file) == files.end()) files.push_back(file);
      continue;
    }
    guard::Verdict v = guard.Check(c.argv);
    if (!v.ok()) {
      return Status::InvalidArgument(
          c.file + ":" + std::to_string(c.line) + ": " + key +
          " is an allow case the guard refuses: " + v.denial().ToString());
    }
    index[key] = plan.reads.size();
    plan.reads.push_back(PlannedRead{.argv = c.argv, .origin = "corpus", .corpus_files = {file}});
    approved.push_back(v.approved());
  }
  for (const guard::Approved& a : approved) {
    auto layout = kLayoutOptions.find(a.program());
    if (layout == kLayoutOptions.end()) continue;
    std::vector<guard::Token> tokens;
    bool skip = false;
    for (const guard::Token& t : a.tokens()) {
      if (t.kind == guard::Token::Kind::kPositional || t.kind == guard::Token::Kind::kProgram) {
        tokens.push_back(t);
        continue;
      }
      skip = skip || kNoVariant.count(t.spelling) > 0 ||
             (a.program() == "sacct" && kNoSacctVariant.count(t.spelling) > 0);
      if (!layout->second.count(t.spelling)) tokens.push_back(t);
    }
    if (skip) continue;
    std::vector<std::string> argv = guard::Render(tokens);
    argv.push_back("--json");
    std::string key = guard::FormatArgv(argv);
    if (index.count(key)) continue;
    guard::Verdict v = guard.Check(argv);
    if (!v.ok()) {
      if (excluded_seen.insert(key).second) {
        plan.excluded.push_back(key + ": " + v.denial().ToString());
      }
      continue;
    }
    index[key] = plan.reads.size();
    plan.reads.push_back(PlannedRead{.argv = argv, .origin = "json-variant", .base = a.argv()});
  }
  return plan;
}

std::string RenderCaptureFile(const CaptureFile& f) {
  std::string out = std::string(kCaptureBanner) + "\n";
  out += "# slurm-version: " + f.slurm_version + "\n";
  out += "# argv: " + f.argv_line + "\n";
  if (!f.exec_line.empty()) out += "# exec: " + f.exec_line + "\n";
  out += "# outcome: " + f.outcome + "  exit: " + std::to_string(f.exit_code) +
         "  duration_ms: " + std::to_string(f.duration_ms) + "\n";
  out += "# bytes: stdout " + std::to_string(f.stdout_text.size()) + "  stderr " +
         std::to_string(f.stderr_text.size()) + "\n";
  out += "# lab-state: see ../README.md\n";
  out += "--- stdout\n" + Terminated(f.stdout_text);
  out += "--- stderr\n" + Terminated(f.stderr_text);
  return out;
}

base::Result<CaptureFile> ParseCaptureFile(std::string_view text) {
  auto fail = [](std::string why) -> base::Result<CaptureFile> {
    return base::Status::InvalidArgument(std::move(why));
  };
  CaptureFile f;
  size_t pos = 0;
  auto next_line = [&](std::string_view& line) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) return false;
    line = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
  };
  std::string_view line;
  if (!next_line(line) || line != kCaptureBanner) return fail("no capture banner");
  long long out_bytes = -1, err_bytes = -1;
  bool have_outcome = false;
  while (true) {
    if (!next_line(line)) return fail("no '--- stdout' line");
    if (line == "--- stdout") break;
    if (line.rfind("# ", 0) != 0) return fail("a header line without '# ': " + std::string(line));
    std::string_view body = line.substr(2);
    size_t colon = body.find(": ");
    if (colon == std::string_view::npos) return fail("a header line without ': '");
    std::string key(body.substr(0, colon));
    std::string value(body.substr(colon + 2));
    if (key == "slurm-version") {
      f.slurm_version = value;
    } else if (key == "argv") {
      f.argv_line = value;
    } else if (key == "exec") {
      f.exec_line = value;
    } else if (key == "outcome") {
      char outcome[32];
      int exit_code = 0;
      long duration = 0;
      if (std::sscanf(value.c_str(), "%31s exit: %d duration_ms: %ld", outcome, &exit_code,
                      &duration) != 3) {
        return fail("bad outcome line: " + value);
      }
      f.outcome = outcome;
      f.exit_code = exit_code;
      f.duration_ms = duration;
      have_outcome = true;
    } else if (key == "bytes") {
      if (std::sscanf(value.c_str(), "stdout %lld stderr %lld", &out_bytes, &err_bytes) != 2) {
        return fail("bad bytes line: " + value);
      }
    }
  }
  if (f.slurm_version.empty() || f.argv_line.empty() || !have_outcome || out_bytes < 0 ||
      err_bytes < 0) {
    return fail("the header lacks slurm-version, argv, outcome or bytes");
  }
  auto take = [&](long long n, std::string& into) {
    if (pos + static_cast<size_t>(n) > text.size()) return false;
    into = std::string(text.substr(pos, n));
    pos += n;
    if (n > 0 && into.back() != '\n') {
      if (pos >= text.size() || text[pos] != '\n') return false;
      ++pos;
    }
    return true;
  };
  if (!take(out_bytes, f.stdout_text)) return fail("stdout is shorter than its byte count");
  if (!next_line(line) || line != "--- stderr") return fail("no '--- stderr' line after stdout");
  if (!take(err_bytes, f.stderr_text)) return fail("stderr is shorter than its byte count");
  if (pos != text.size()) return fail("bytes after stderr");
  return f;
}

Status CaptureReads(const CaptureOptions& options, std::ostream& progress) {
  auto start = Clock::now();
  const std::string& source = options.source;
  std::string corpus = options.corpus.empty() ? source + "/guard/testdata" : options.corpus;
  base::Result<std::vector<guard::ArgvCase>> cases = guard::LoadArgvCases(corpus);
  if (!cases.ok()) return Status::Error("corpus: " + cases.status().message());
  base::Result<CapturePlan> planned =
      PlanCapture(*cases, guard::Guard(guard::GuardOptions{.clusters = {"rca"}}));
  if (!planned.ok()) return Status::Error("corpus: " + planned.status().message());
  const CapturePlan& plan = *planned;
  std::set<std::string> names;
  for (const PlannedRead& r : plan.reads) {
    if (!names.insert(CaptureFileName(r.argv)).second) {
      return Status::Error("two reads map to the file " + CaptureFileName(r.argv));
    }
  }

  std::string dir = options.lab_dir;
  bool made_dir = false;
  if (dir.empty()) {
    char tmpl[] = "/tmp/rca-capture-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return Status::Error("cannot create a directory under /tmp");
    dir = tmpl;
    made_dir = true;
  }
  Lab lab(LabOptions{.dir = dir, .nodes = options.nodes, .port_base = options.port_base,
                     .slurm_prefix = options.slurm_prefix});
  std::vector<Captured> captured;
  std::string version, observed;
  Status body = CaptureInLab(lab, plan, progress, captured, version, observed);
  // Always torn down, whatever failed above.
  if (lab.exists()) CancelJobs(lab, progress);
  Status down = lab.Down(progress);
  std::error_code ec;
  if (made_dir && down.ok() && fs::exists(dir)) fs::remove_all(dir, ec);
  if (!body.ok()) {
    return Status::Error(body.message() + (down.ok() ? "" : "; and teardown: " + down.message()));
  }
  if (!down.ok()) return Status::Error("teardown: " + down.message());

  double took = std::chrono::duration<double>(Clock::now() - start).count();
  // fixtures/slurm-MAJOR.MINOR of the release that answered (22.05.8 -> slurm-22.05).
  std::string out_dir = options.out_dir;
  if (out_dir.empty()) {
    std::string release = version.substr(0, version.find('.', version.find('.') + 1));
    out_dir = source + "/fixtures/slurm-" + release;
  }
  CaptureOptions written = options;
  written.out_dir = out_dir;
  if (Status s = WriteFixtures(out_dir, captured, plan, version, UtcNow(), took, observed, written);
      !s.ok()) {
    return s;
  }
  int failed = 0;
  for (const Captured& c : captured)
    failed += (c.file.outcome != "exited" || c.file.exit_code != 0);
  progress << "captured " << captured.size() << " reads (" << failed << " did not exit 0) in "
           << static_cast<int>(took) << " s into " << out_dir << "\n";
  return {};
}

}  // namespace slurm_rca::live
