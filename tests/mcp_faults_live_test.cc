// The real slurm-mcp binary, serving a live lab over stdio, under six real faults of the control
// plane (ctest label `live`, #9): slurmctld stopped, munge stopped, the accounting database
// frozen, slurmdbd killed, a slurmd killed, StateSaveLocation unwritable. One lab (port base
// 23800) and one slurm-mcp child serve all six; each fault is healed before the next.
//
// For each fault every topic of slurm_query (the enum of tools/list) and slurm_overview is
// called, each within a wall-clock bound of its limit (the server's read timeout; three reads for
// the overview) plus slack, and each answer must be data or a labelled no-evidence result:
//   - a topic whose read needs the faulted daemon is NO EVIDENCE (failed, timed_out, ...) with a
//     cause, never an "ok" (above all not an ok with zero rows);
//   - every other topic is as it was on the healthy lab: ok with rows (or text) where it had
//     them, labelled no evidence where there is nothing to read on this host (fabric here);
//   - the fault shows as data where it should: a killed slurmd's node is not responding in the
//     nodes topic; with StateSaveLocation unwritable sbatch fails (reads still work).
// After each fault the child is alive and answers; at the end nothing the test started (the
// lab's daemons by PID, the child by PID, any process whose command line or working directory
// is under the lab's directory) is left running.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "mcp/topics/topics.h"
#include "scenarios/live/faults.h"
#include "scenarios/live/lab.h"
#include "scenarios/live/mcp_child.h"
#include "scenarios/live/runner.h"
#include "tests/live_release.h"
#include "tests/live_workload.h"

#ifndef SLURM_MCP_BINARY
#define SLURM_MCP_BINARY ""
#endif

namespace slurm_rca {
namespace {

// The lab's templates, from this source tree (main sets them in rca-bench: base::DataPaths).
const bool kLabTemplatesSet =
    (live::SetLabTemplates(std::string(SLURM_RCA_SOURCE_DIR) + "/scenarios/live/templates"), true);

namespace fs = std::filesystem;
using mcp::Json;
using Clock = std::chrono::steady_clock;

// Below Linux's ephemeral range (32768-60999), so that no client's local port can hold a lab port.
constexpr int kPortBase = 23800;
constexpr double kReadTimeout = 5;  // slurm-mcp --timeout: the limit of one read
constexpr double kSlack = 3;        // process start, parsing, a loaded 2-core machine
constexpr int kCallers = 4;         // slurm-mcp's stdio workers: calls at once, never queued

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The daemons a topic's read needs, by the program it runs (Slurm 22.05): controller clients
// need slurmctld, sacct needs slurmdbd and its database, every Slurm client needs munge.
std::set<std::string> Needs(const std::string& topic) {
  const mcp::Topic* t = mcp::FindTopic(topic);
  if (t == nullptr || t->source != mcp::Source::kCommand) return {};
  const std::string& program = t->argv.at(0);
  static const std::set<std::string> ctld = {"squeue", "sinfo", "sprio", "sshare", "sdiag",
                                             "scontrol"};
  if (ctld.count(program)) return {"slurmctld", "munged"};
  if (program == "sacct") return {"slurmdbd", "mariadbd", "munged"};
  return {};
}

struct Fault {
  std::string name;
  live::FaultTarget target;
  std::string breaks;  // the daemon it takes away; "" when no topic's read needs it
};

// One answer, classified.
struct Answer {
  std::string topic;
  double seconds = 0;
  bool transport_ok = false;  // a JSON-RPC result came back in time
  std::string transport_error;
  bool ok = false;            // data
  std::string outcome;        // "ok", or the NO EVIDENCE outcome (failed, timed_out, ...)
  std::size_t rows = 0;
  bool has_text = false;
  std::string text;
  Json structured;
};

Answer Classify(const std::string& topic, const base::Result<mcp::ToolCallResult>& r,
                double seconds) {
  Answer a{.topic = topic, .seconds = seconds};
  if (!r.ok()) {
    a.transport_error = r.status().ToString();
    return a;
  }
  a.transport_ok = true;
  a.text = r->Text();
  if (r->is_error) {
    // "NO EVIDENCE (<outcome>, live, <time>): <cause>"
    const std::string prefix = "NO EVIDENCE (";
    if (a.text.rfind(prefix, 0) == 0) {
      a.outcome = a.text.substr(prefix.size(), a.text.find(',') - prefix.size());
    }
    return a;
  }
  if (!r->structured) return a;
  const Json& s = *r->structured;
  a.outcome = s.value("outcome", "");
  a.ok = a.outcome == "ok";
  if (s.contains("rows")) a.rows = s["rows"].size();
  a.has_text = !s.value("text", "").empty();
  a.structured = s;
  return a;
}

bool IsNoEvidence(const Answer& a) {
  static const std::set<std::string> labelled = {"failed", "timed_out", "refused", "unavailable"};
  return labelled.count(a.outcome) && a.text.find("This is not an empty result") !=
                                          std::string::npos;
}

class Harness {
 public:
  Harness(live::McpChild& child, std::vector<std::string> topics)
      : child_(child), topics_(std::move(topics)) {}

  Answer Query(const std::string& topic) {
    auto start = Clock::now();
    auto r = child_.client().CallTool(
        "slurm_query", {{"topic", topic}}, nullptr,
        std::chrono::milliseconds(static_cast<long>((kReadTimeout + kSlack + 5) * 1000)));
    return Classify(topic, r, Since(start));
  }

  // Every topic, kCallers at a time (never more than the server's stdio workers, so no call
  // waits in its queue and each call's time is its own).
  std::vector<Answer> AllTopics() {
    std::vector<Answer> answers(topics_.size());
    std::vector<std::thread> callers;
    for (int c = 0; c < kCallers; ++c) {
      callers.emplace_back([&, c] {
        for (std::size_t i = c; i < topics_.size(); i += kCallers) answers[i] = Query(topics_[i]);
      });
    }
    for (auto& t : callers) t.join();
    return answers;
  }

  // slurm_overview: its sections, each data or no evidence; *seconds, how long the call took.
  base::Result<Json> Overview(double* seconds) {
    auto start = Clock::now();
    auto r = child_.client().CallTool(
        "slurm_overview", Json::object(), nullptr,
        std::chrono::milliseconds(static_cast<long>((3 * kReadTimeout + kSlack + 5) * 1000)));
    *seconds = Since(start);
    if (!r.ok()) return base::Status::Error(r.status().ToString());
    if (r->is_error || !r->structured) {
      return base::Status::Error("overview is a tool error: " + r->Text());
    }
    return (*r->structured)["sections"];
  }

 private:
  live::McpChild& child_;
  std::vector<std::string> topics_;
};

// Processes whose command line or working directory is under dir (daemons take their config
// from there, batch jobs run in DIR/work).
std::vector<std::string> ProcessesUnder(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    std::error_code cwd_ec;
    std::string cwd = fs::read_symlink(entry.path() / "cwd", cwd_ec).string();
    if (cmdline.find(dir + "/") != std::string::npos || cwd.rfind(dir + "/", 0) == 0 ||
        cwd == dir) {
      found.push_back(pid + " " + cmdline);
    }
  }
  return found;
}

TEST(McpFaultsLive, EveryTopicIsDataOrLabelledNoEvidenceUnderSixFaults) {
  if (::geteuid() != 0) GTEST_SKIP() << "the live lab needs root";
  if (base::Status s = testing_live::ReleaseReady(); !s.ok()) GTEST_SKIP() << s.message();
  const std::string binary = SLURM_MCP_BINARY;
  ASSERT_TRUE(fs::exists(binary)) << binary;
  const auto test_start = Clock::now();
  char dir[] = "/tmp/rca-mcpfaults-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  live::Lab lab(live::LabOptions{.dir = dir, .nodes = 4, .port_base = kPortBase,
                                 .slurm_prefix = testing_live::SlurmPrefix()});
  std::vector<live::ProcessId> started;  // every daemon and child this test started
  auto track = [&] {
    for (const std::string& name : lab.DaemonNames()) {
      if (auto id = lab.DaemonId(name)) {
        bool known = false;
        for (const auto& s : started) {
          known = known || (s.pid == id->pid && s.start_time == id->start_time);
        }
        if (!known) started.push_back(*id);
      }
    }
  };
  struct Down {
    live::Lab& lab;
    ~Down() { lab.Down(std::cout); }
  } down{lab};
  {
    base::Status up = lab.Up(std::cout);
    ASSERT_TRUE(up.ok()) << up.message();
  }
  track();
  std::cout << "[faults] bring-up done at +" << Since(test_start) << " s\n";

  // A workload that gives every topic rows (tests/live_workload.h).
  ASSERT_TRUE(testing_live::StartTopicWorkload(lab));

  // The real server, as rca-bench runs it against a lab (scenarios/live/runner.h).
  auto started_child = live::McpChild::Start(
      binary, live::LiveServeArgs(lab, "node2", kReadTimeout), lab.Path("log/slurm-mcp.stderr"));
  ASSERT_TRUE(started_child.ok()) << started_child.status().message();
  std::unique_ptr<live::McpChild> child = std::move(started_child).value();
  const live::ProcessId server = child->pid();
  started.push_back(server);
  {
    // Its start-up read of MessageTimeout (mcp/backend/live_flags.h): the lab's 10 s is at or
    // above this --timeout, which is kept, with a warning that down and hung will look alike.
    // The read runs beside the server, bounded by the read timeout: its line is waited for.
    const std::string warning =
        "slurm-mcp: the controller's MessageTimeout is 10 s, at or above --timeout 5 s: a "
        "controller that is down and one that is hung will both read as timed out";
    std::string said;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < give_up) {
      std::ifstream err(lab.Path("log/slurm-mcp.stderr"));
      std::stringstream text;
      text << err.rdbuf();
      said = text.str();
      if (said.find(warning) != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    EXPECT_NE(said.find(warning), std::string::npos) << said;
  }

  // The topics, from the server itself.
  auto listed = child->client().ListTools();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::vector<std::string> topics;
  for (const Json& tool : listed.value()) {
    if (tool.value("name", "") != "slurm_query") continue;
    for (const Json& t : tool["inputSchema"]["properties"]["topic"]["enum"]) {
      topics.push_back(t.get<std::string>());
    }
  }
  ASSERT_EQ(topics.size(), mcp::Topics().size()) << "tools/list and mcp::Topics() disagree";
  Harness h(*child, topics);

  // The healthy lab (accounting may need a few seconds). Every topic that reads Slurm is data; a
  // topic with nothing to read on this host (fabric: no InfiniBand; a sampler that is off) is a
  // labelled no-evidence result, and must stay one under every fault.
  std::map<std::string, Answer> healthy;
  for (int attempt = 0; attempt < 20; ++attempt) {
    healthy.clear();
    for (Answer& a : h.AllTopics()) healthy[a.topic] = std::move(a);
    if (healthy["accounting"].rows > 0) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  for (const auto& [topic, a] : healthy) {
    SCOPED_TRACE("healthy " + topic);
    std::cout << "[faults] healthy " << topic << ": " << a.outcome << ", " << a.rows << " rows"
              << (a.has_text ? ", text" : "") << "\n";
    EXPECT_TRUE(a.ok || IsNoEvidence(a)) << a.text.substr(0, 400);
    if (!Needs(topic).empty()) {
      EXPECT_TRUE(a.ok) << a.text.substr(0, 400);
    }
  }
  EXPECT_GT(healthy["accounting"].rows, 0u);
  EXPECT_GT(healthy["queue"].rows, 0u);
  EXPECT_GT(healthy["nodes"].rows, 0u);

  // Least disruptive first: munge last, since nodes go DOWN without it.
  const std::vector<Fault> faults = {
      {"db-freeze", {}, "mariadbd"},
      {"dbd-kill", {}, "slurmdbd"},
      {"statesave-readonly", {}, ""},
      {"slurmd-kill", live::FaultTarget{.node = "node1"}, ""},
      {"ctld-stop", {}, "slurmctld"},
      {"munge-stop", {}, "munged"},
  };
  for (const Fault& f : faults) {
    SCOPED_TRACE(f.name);
    auto fault_start = Clock::now();
    live::FaultOutcome injected = live::InjectFault(lab, f.name, f.target);
    ASSERT_TRUE(injected.status.ok()) << injected.status.message();
    std::cout << "[faults] " << f.name << ": " << injected.message << "\n";
    if (f.name == "slurmd-kill") {
      // Read once the controller has noticed (not responding after about 12 s, see the catalogue).
      bool noticed = false;
      for (int i = 0; i < 120 && !noticed; ++i) {
        std::string state = lab.Client({"sinfo", "-h", "-n", "node1", "-o", "%T"}).out;
        noticed = state.find('*') != std::string::npos || state.rfind("down", 0) == 0;
        if (!noticed) std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
      EXPECT_TRUE(noticed) << "node1 never showed as not responding";
      std::cout << "[faults]   node1 not responding after " << Since(fault_start) << " s\n";
    }
    if (f.name == "statesave-readonly") {
      // The fault is real: a submission fails (slurmctld cannot write the job's script).
      live::ToolResult sbatch = lab.Client({"sbatch", "--chdir=" + lab.Path("work"), "--wrap", "true"});
      EXPECT_FALSE(sbatch.ok()) << "sbatch succeeded with StateSaveLocation unwritable";
      std::cout << "[faults]   sbatch: " << sbatch.Summary() << "\n";
    }
    if (f.name == "ctld-stop") {
      // What a client alone does without a controller (the catalogue's effect).
      live::ToolResult squeue = lab.Client({"squeue"}, std::chrono::seconds(30));
      std::cout << "[faults]   squeue alone: "
                << (squeue.timed_out ? "no answer" : squeue.Summary()) << " after "
                << squeue.seconds << " s\n";
    }

    for (const Answer& a : h.AllTopics()) {
      SCOPED_TRACE(a.topic);
      std::cout << "[faults]   " << a.topic << " " << a.outcome << " in " << a.seconds << " s"
                << (a.ok ? ", " + std::to_string(a.rows) + " rows" : "") << "\n";
      ASSERT_TRUE(a.transport_ok) << "no answer in time: " << a.transport_error;
      EXPECT_LE(a.seconds, kReadTimeout + kSlack);
      const Answer& before = healthy[a.topic];
      bool broken = !f.breaks.empty() && Needs(a.topic).count(f.breaks);
      if (broken) {
        EXPECT_TRUE(IsNoEvidence(a)) << "the fault takes away what this read needs, yet: "
                                     << a.text.substr(0, 400);
        EXPECT_FALSE(a.ok);
        if (f.name == "ctld-stop" && a.outcome == "timed_out") {
          // Killed before MessageTimeout: the cause says that this may be no hang at all.
          EXPECT_NE(a.text.find("a controller that is down (connection refused) and one that is "
                                "hung look the same"),
                    std::string::npos)
              << a.text.substr(0, 600);
        }
        std::size_t colon = a.text.find("): ");
        std::cout << "[faults]     " << a.text.substr(colon + 3, a.text.find('\n') - colon - 3)
                  << "\n";
      } else if (!before.ok) {
        EXPECT_TRUE(IsNoEvidence(a)) << a.text.substr(0, 400);
      } else {
        EXPECT_TRUE(a.ok) << a.text.substr(0, 400);
        if (before.rows > 0) {
          EXPECT_GT(a.rows, 0u) << "it had rows before the fault";
        }
        if (before.has_text) {
          EXPECT_TRUE(a.has_text) << "it had text before the fault";
        }
      }
      if (f.name == "slurmd-kill" && a.topic == "nodes" && a.ok) {
        // The fault is data too: node1 is shown not responding (or down).
        bool seen = false;
        for (const Json& row : a.structured["rows"]) {
          std::string state = row.value("state", "");
          if (row.value("node", "") == "node1") {
            seen = seen || state.find('*') != std::string::npos || state.rfind("down", 0) == 0;
          }
        }
        EXPECT_TRUE(seen) << a.structured["rows"].dump();
      }
    }
    double overview_s = 0;
    base::Result<Json> overview = h.Overview(&overview_s);
    std::cout << "[faults]   overview in " << overview_s << " s\n";
    ASSERT_TRUE(overview.ok()) << overview.status().message();
    Json sections = *overview;
    EXPECT_LE(overview_s, 3 * kReadTimeout + kSlack);
    ASSERT_EQ(sections.size(), 3u);
    for (const Json& s : sections) {
      std::string topic = s.value("topic", "");
      SCOPED_TRACE("overview " + topic);
      bool broken = !f.breaks.empty() && Needs(topic).count(f.breaks);
      std::string outcome = s.value("outcome", "");
      if (broken) {
        EXPECT_NE(outcome, "ok") << s.dump().substr(0, 400);
        EXPECT_FALSE(s.value("cause", "").empty()) << s.dump().substr(0, 400);
        EXPECT_FALSE(s.contains("summary")) << "no evidence carries no figures";
      } else {
        EXPECT_EQ(outcome, "ok") << s.dump().substr(0, 400);
        EXPECT_FALSE(s.value("summary", Json::object()).empty()) << s.dump().substr(0, 400);
      }
    }

    live::FaultOutcome healed = live::HealFault(lab, f.name, f.target);
    ASSERT_TRUE(healed.status.ok()) << healed.status.message();
    track();
    EXPECT_TRUE(live::IsAlive(server)) << "slurm-mcp died during " << f.name;
    // The server still answers, and with the fault healed the controller's sections are data.
    overview = h.Overview(&overview_s);
    ASSERT_TRUE(overview.ok()) << overview.status().message();
    sections = *overview;
    EXPECT_EQ(sections[0].value("outcome", ""), "ok") << sections[0].dump().substr(0, 400);
    std::cout << "[faults] " << f.name << " done in " << Since(fault_start) << " s ("
              << healed.message << ")\n";
  }
  EXPECT_TRUE(live::HealFault(lab, "gpu-fake", live::FaultTarget{.node = "node2"}).status.ok());
  EXPECT_TRUE(live::ActiveFaults(lab).empty());

  child.reset();
  EXPECT_TRUE(lab.Down(std::cout).ok());
  live::ReapChildren();
  for (const live::ProcessId& id : started) {
    EXPECT_FALSE(live::IsAlive(id)) << "still running: pid " << id.pid;
  }
  for (const std::string& p : ProcessesUnder(dir)) ADD_FAILURE() << "left running: " << p;
  std::cout << "[faults] " << started.size() << " processes started and stopped; wall "
            << Since(test_start) << " s\n";
}

}  // namespace
}  // namespace slurm_rca
