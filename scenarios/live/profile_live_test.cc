// The busy profile on a live lab (ctest label `live`; root, skipped otherwise). Two busy labs with
// the same seed (port bases 23300 and 24300, so that they share the Unix users): the queue shows
// the ordinary pending reasons, accounting the history of several users, sinfo -R the maintenance
// reason; a scenario job starts beside the background; the first lab's Down leaves the users the
// second still holds, the second's removes them; nothing is left running.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "scenarios/live/lab.h"
#include "scenarios/live/profile.h"

namespace slurm_rca::live {

using base::Status;

namespace {

// The lab's templates, from this source tree (main sets them in rca-bench: base::DataPaths).
const bool kLabTemplatesSet =
    (live::SetLabTemplates(std::string(SLURM_RCA_SOURCE_DIR) + "/scenarios/live/templates"), true);

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

constexpr std::uint64_t kSeed = 1;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool WaitUntil(seconds timeout, const std::function<bool()>& pred) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return pred();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Processes whose command line or working directory is under dir, or that run as one of uids.
std::vector<std::string> Leftovers(const std::string& dir, const std::set<uid_t>& uids) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = ReadFile(entry.path() / "cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    std::error_code cwd_ec;
    std::string cwd = fs::read_symlink(entry.path() / "cwd", cwd_ec).string();
    std::istringstream status(ReadFile(entry.path() / "status"));
    uid_t uid = 0;
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Uid:", 0) == 0) uid = static_cast<uid_t>(std::stoul(line.substr(4)));
    }
    if (cmdline.find(dir + "/") != std::string::npos || cwd.rfind(dir + "/", 0) == 0 ||
        cwd == dir || uids.count(uid)) {
      found.push_back(pid + " " + cmdline);
    }
  }
  return found;
}

// Leftovers that are still there after up to `patience`: a job's processes killed as the lab went
// down can take a moment to finish exiting (seen: two rcau-* processes with no command line
// right after Down, gone a second later), and only one that stays is left running.
std::vector<std::string> LeftoversAfter(const std::string& dir, const std::set<uid_t>& uids,
                                        std::chrono::seconds patience) {
  auto until = std::chrono::steady_clock::now() + patience;
  std::vector<std::string> found = Leftovers(dir, uids);
  while (!found.empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    found = Leftovers(dir, uids);
  }
  return found;
}

// The users a lab holds (created by it or by another lab), from DIR/run/busy.users.
std::vector<std::string> HeldUsers(const Lab& lab) {
  std::vector<std::string> users;
  std::istringstream in(ReadFile(lab.Path("run/busy.users")));
  for (std::string how, user; in >> how >> user;) {
    if (how == "held") users.push_back(user);
  }
  return users;
}

std::set<std::string> Column(const ToolResult& r) {
  std::set<std::string> values;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) values.insert(line);
  }
  return values;
}

TEST(BusyLab, ShowsAnOrdinaryDayLeavesRoomAndReleasesItsUsers) {
  if (::geteuid() != 0) GTEST_SKIP() << "the live lab needs root";
  const auto test_start = Clock::now();
  char dir_a[] = "/tmp/rca-busy-a-XXXXXX";
  char dir_b[] = "/tmp/rca-busy-b-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_a), nullptr);
  ASSERT_NE(::mkdtemp(dir_b), nullptr);
  Lab a(LabOptions{.dir = dir_a, .nodes = 4, .port_base = 23300, .profile = "busy", .seed = kSeed});
  Lab b(LabOptions{.dir = dir_b, .nodes = 4, .port_base = 24300, .profile = "busy", .seed = kSeed});
  struct Downs {
    Lab& a;
    Lab& b;
    ~Downs() {
      std::ostringstream ignored;
      a.Down(ignored);
      b.Down(ignored);
    }
  } downs{a, b};
  const BusyTrace trace = GenerateBusyTrace(kSeed, TraceOptions{});

  auto start = Clock::now();
  Status up = a.Up(std::cout);
  ASSERT_TRUE(up.ok()) << up.message();
  const auto handed_over = Clock::now();
  std::cout << "[busy] lab a up in " << Since(start) << " s\n";
  EXPECT_TRUE(a.WaitReady(seconds(5)).ok()) << "a busy lab is ready as it is";
  EXPECT_EQ(Lab(LabOptions{.dir = dir_a}).options().profile, "busy") << "lab.conf keeps it";

  // The queue: running jobs, and jobs pending for every ordinary reason of the trace.
  std::set<std::string> reasons;
  const std::set<std::string> wanted = {"Dependency", "JobHeldUser", "BeginTime"};
  bool all = WaitUntil(seconds(60), [&] {
    reasons = Column(a.Client({"squeue", "-h", "-t", "PD", "-o", "%r"}));
    bool waits = reasons.count("Priority") || reasons.count("Resources");
    return waits && std::all_of(wanted.begin(), wanted.end(),
                                [&](const std::string& r) { return reasons.count(r) > 0; });
  });
  std::string seen;
  for (const std::string& r : reasons) seen += " " + r;
  EXPECT_TRUE(all) << "pending reasons:" << seen;
  std::cout << "[busy] pending reasons after " << Since(handed_over) << " s:" << seen << "\n";
  std::set<std::string> running = Column(a.Client({"squeue", "-h", "-t", "R", "-o", "%u"}));
  EXPECT_GE(running.size(), 1u) << "background jobs run";

  // The maintenance drain, with its own reason.
  ToolResult drained = a.Client({"sinfo", "-h", "-R", "-o", "%N|%E"});
  EXPECT_NE(drained.out.find(trace.maintenance_node + "|" + trace.maintenance_reason),
            std::string::npos)
      << drained.out;

  // A scenario's job (root, rca-*, no --time) starts beside the background.
  ToolResult sub = a.Client({"sbatch", "--parsable", "-J", "rca-probe", "-p", "cpu",
                             "--chdir=" + a.Path("work"), "-o", "/dev/null", "--wrap", "sleep 30"});
  ASSERT_TRUE(sub.ok()) << sub.Summary();
  std::string id = sub.out.substr(0, sub.out.find_first_of(";\n"));
  auto submitted = Clock::now();
  bool started = WaitUntil(seconds(30), [&] {
    ToolResult q = a.Client({"squeue", "-h", "-j", id, "-o", "%T"});
    return q.out.rfind("RUNNING", 0) == 0;
  });
  EXPECT_TRUE(started) << "the scenario job did not start within 30 s: "
                       << a.Client({"squeue", "-h", "-j", id, "-o", "%T %r"}).out;
  std::cout << "[busy] a scenario job started after " << Since(submitted) << " s\n";
  a.Client({"scancel", id});

  // The second lab takes the same users.
  start = Clock::now();
  up = b.Up(std::cout);
  ASSERT_TRUE(up.ok()) << up.message();
  std::cout << "[busy] lab b up in " << Since(start) << " s\n";

  // Accounting: COMPLETED, FAILED and CANCELLED at once; TIMEOUT about 61 s after hand-over.
  std::set<std::string> states, owners;
  bool history = WaitUntil(seconds(120), [&] {
    ToolResult acct = a.Client({"sacct", "-a", "-X", "-n", "-P", "-o", "User,State"});
    states.clear();
    owners.clear();
    std::istringstream in(acct.out);
    for (std::string line; std::getline(in, line);) {
      size_t bar = line.find('|');
      if (bar == std::string::npos) continue;
      std::string user = line.substr(0, bar), state = line.substr(bar + 1);
      state = state.substr(0, state.find(' '));  // "CANCELLED by 994"
      states.insert(state);
      if (user.rfind("rcau-", 0) == 0) owners.insert(user);
    }
    return states.count("COMPLETED") && states.count("FAILED") && states.count("CANCELLED") &&
           states.count("TIMEOUT");
  });
  std::string all_states;
  for (const std::string& s : states) all_states += " " + s;
  EXPECT_TRUE(history) << "sacct states:" << all_states;
  EXPECT_GE(owners.size(), 2u) << "the history of several users";
  std::cout << "[busy] sacct" << all_states << " of " << owners.size() << " users, "
            << Since(handed_over) << " s after hand-over\n";

  // Reference counts: a's Down leaves what b holds; b's Down removes what the labs created.
  std::vector<std::string> users_a = HeldUsers(a), users_b = HeldUsers(b);
  EXPECT_EQ(users_a, users_b);
  std::map<std::string, uid_t> uid_of;
  for (const std::string& u : users_b) {
    if (const passwd* pw = ::getpwnam(u.c_str())) uid_of[u] = pw->pw_uid;
  }
  std::set<uid_t> uids;  // of the users released when b goes down (another lab's jobs may run)
  const std::string registry = a.options().user_registry;
  Status down = a.Down(std::cout);
  ASSERT_TRUE(down.ok()) << down.message();
  EXPECT_FALSE(fs::exists(dir_a));
  for (const std::string& p : LeftoversAfter(dir_a, {}, std::chrono::seconds(10))) {
    ADD_FAILURE() << "left running: " << p;
  }
  // The registry is the machine's: a lab outside this test (a recording, another test's busy
  // lab) may hold the same users, and then they must stay. Only this test's two labs are judged;
  // the others are printed.
  auto split = [&](const std::string& u) {
    std::vector<std::string> ours, others;
    for (const std::string& h : UserHolders(registry, u)) {
      (h == dir_a || h == dir_b ? ours : others).push_back(h);
    }
    for (const std::string& h : others) {
      std::cout << "[busy] " << u << " is also held by " << h << "\n";
    }
    return std::make_pair(ours, others);
  };
  for (const std::string& u : users_a) {
    EXPECT_NE(::getpwnam(u.c_str()), nullptr) << u << " was removed while lab b holds it";
    EXPECT_EQ(split(u).first, std::vector<std::string>{dir_b}) << u;
  }
  down = b.Down(std::cout);
  ASSERT_TRUE(down.ok()) << down.message();
  EXPECT_FALSE(fs::exists(dir_b));
  for (const std::string& u : users_b) {
    auto [ours, others] = split(u);
    EXPECT_TRUE(ours.empty()) << u << " is still held by this test's lab " << ours.front();
    if (others.empty()) {
      if (uid_of.count(u)) uids.insert(uid_of[u]);
      EXPECT_EQ(::getpwnam(u.c_str()), nullptr) << u << " is left behind";
      EXPECT_FALSE(fs::exists(registry + "/" + u)) << u << " is still in the registry";
    } else {
      EXPECT_NE(::getpwnam(u.c_str()), nullptr) << u << " was removed while another lab holds it";
    }
  }
  for (const std::string& p : LeftoversAfter(dir_b, uids, std::chrono::seconds(10))) {
    ADD_FAILURE() << "left running: " << p;
  }
  std::cout << "[busy] the busy lab test took " << Since(test_start) << " s\n";
}

}  // namespace
}  // namespace slurm_rca::live
