#include "guard/run.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "guard/check.h"
#include "guard/policy.h"

namespace slurm_rca::guard {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// One fake `sinfo` for every behaviour, chosen by the partition value: `sinfo -p <behaviour>`.
constexpr char kFakeSinfo[] = R"(#!/bin/sh
case "$2" in
  ok) echo ok ;;
  echo) printf '%s\n' "$@" ;;
  hang) echo partial; exec sleep 300 ;;
  hangkids) sleep 300 & echo $! > "$(dirname "$0")/child.pid"; wait ;;
  straggler) sleep 300 & echo $! > "$(dirname "$0")/child.pid"; echo done ;;
  escape) pidfile="$(dirname "$0")/child.pid"
          setsid sh -c 'echo $$ > "$1"; exec sleep 300' sh "$pidfile" &
          while [ ! -s "$pidfile" ]; do sleep 0.01; done; echo done ;;
  flood) exec head -c 1073741824 /dev/zero ;;
  streams) head -c 100000 /dev/zero; head -c 200000 /dev/zero >&2 ;;
  env) tr '\0' '\n' < /proc/$$/environ ;;
  stdin) exec cat ;;
  exit3) echo "sinfo: error: slurm_load_partitions: Unable to contact slurm controller" >&2; exit 3 ;;
  selfkill) kill -TERM $$; sleep 5 ;;
  session) cat /proc/$$/stat ;;
  cwd) pwd ;;
  *) echo "unknown behaviour $2" >&2; exit 99 ;;
esac
)";

// A fake that leaves a trace if it ever runs: for programs that must not be spawned.
constexpr char kMarkerScript[] = "#!/bin/sh\ntouch \"$(dirname \"$0\")/ran\"\necho ran\n";

std::string MakeTempDir(mode_t mode = 0755) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "slurm-rca-run-XXXXXX").string();
  char* dir = ::mkdtemp(tmpl.data());
  if (dir == nullptr) {
    ADD_FAILURE() << "mkdtemp: " << std::strerror(errno);
    return "";
  }
  ::chmod(dir, mode);
  return std::filesystem::canonical(dir).string();  // Run() reports resolved paths
}

void WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    ASSERT_TRUE(f.good()) << path;
  }
  ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// "pid (comm) S ppid pgrp session ..." -> the fields after the command name.
std::optional<std::vector<std::string>> StatFields(const std::string& stat) {
  std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(stat.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  if (fields.size() < 4) return std::nullopt;
  return fields;
}

// Gone or a zombie: either way it no longer runs (our PID 1 may not reap orphans).
bool IsDead(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return true;
  auto fields = StatFields(stat);
  return fields && ((*fields)[0] == "Z" || (*fields)[0] == "X");
}

bool BecomesDead(pid_t pid, milliseconds within = milliseconds(2000)) {
  auto until = Clock::now() + within;
  while (!IsDead(pid)) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

int OpenFdCount() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n;
}

// Processes whose parent is this test process, zombies included.
std::vector<pid_t> ChildrenOfSelf() {
  std::vector<pid_t> out;
  const std::string self = std::to_string(::getpid());
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    auto fields = StatFields(ReadFile(std::string("/proc/") + e->d_name + "/stat"));
    if (fields && (*fields)[1] == self) out.push_back(std::atoi(e->d_name));
  }
  ::closedir(d);
  return out;
}

// libuv opens a process-wide pipe on its first loop; fd counts are compared after that.
class LibuvWarmUp : public ::testing::Environment {
 public:
  void SetUp() override {
    uv_loop_t loop;
    ASSERT_EQ(uv_loop_init(&loop), 0);
    ASSERT_EQ(uv_loop_close(&loop), 0);
  }
};
const ::testing::Environment* const kLibuvWarmUp =
    ::testing::AddGlobalTestEnvironment(new LibuvWarmUp);

long MaxRssKiB() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = NewDir();
    ASSERT_FALSE(dir_.empty());
  }

  void TearDown() override {
    // A pid written by a fake belongs to a process this test started; make sure it is gone.
    for (const std::string& d : dirs_) {
      std::string pid_text = ReadFile(d + "/child.pid");
      if (pid_t pid = std::atoi(pid_text.c_str()); pid > 1) {
        if (!IsDead(pid)) ::kill(pid, SIGKILL);
      }
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
    EXPECT_TRUE(ChildrenOfSelf().empty()) << "a child of the test process was left behind";
  }

  std::string NewDir(mode_t mode = 0755) {
    std::string d = MakeTempDir(mode);
    if (!d.empty()) dirs_.push_back(d);
    return d;
  }

  std::string InstallSinfo(const std::string& dir = "") {
    std::string path = (dir.empty() ? dir_ : dir) + "/sinfo";
    WriteFile(path, kFakeSinfo, 0755);
    return path;
  }

  ExecutorOptions Options(milliseconds timeout = milliseconds(10000)) {
    ExecutorOptions o;
    o.trusted_dirs = {dir_};
    o.timeout = timeout;
    return o;
  }

  // Runs argv through the guard, then the executor.
  RunResult RunArgv(const Executor& executor, const std::vector<std::string>& argv) {
    Verdict v = guard_.Check(argv);
    if (!v.ok()) {
      ADD_FAILURE() << v.denial().ToString();
      RunResult denied;
      denied.error = v.denial().ToString();
      return denied;
    }
    return executor.Run(v.approved());
  }

  RunResult RunSinfo(const Executor& executor, const std::string& behaviour) {
    return RunArgv(executor, {"sinfo", "-p", behaviour});
  }

  pid_t ReadChildPid(const std::string& dir = "") {
    std::string text = ReadFile((dir.empty() ? dir_ : dir) + "/child.pid");
    return std::atoi(text.c_str());
  }

  Guard guard_;
  std::string dir_;
  std::vector<std::string> dirs_;
};

const Resolution* FindResolution(const Executor& e, const std::string& program) {
  for (const Resolution& r : e.resolutions()) {
    if (r.program == program) return &r;
  }
  return nullptr;
}

TEST_F(RunTest, OkRunReportsOutputAndResolvedBinary) {
  InstallSinfo();
  Executor executor(Options());
  RunResult r = RunArgv(executor, {"sinfo", "-p", "echo"});
  EXPECT_EQ(r.outcome, Outcome::kExited) << r.error;
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.binary, dir_ + "/sinfo");
  EXPECT_EQ(r.argv, (std::vector<std::string>{"sinfo", "-p", "echo"}));
  EXPECT_EQ(r.stdout_data, "-p\necho\n");
  EXPECT_EQ(r.stdout_bytes, 8u);
  EXPECT_FALSE(r.stdout_truncated);
  EXPECT_EQ(r.stderr_data, "");
  EXPECT_EQ(r.stderr_bytes, 0u);
  EXPECT_TRUE(r.error.empty()) << r.error;
}

TEST_F(RunTest, HangIsKilledWithItsChildrenAtTheTimeout) {
  InstallSinfo();
  const milliseconds timeout(300);
  Executor executor(Options(timeout));
  const int fds_before = OpenFdCount();
  RunResult r = RunSinfo(executor, "hangkids");
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error;
  EXPECT_TRUE(r.timed_out());
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("timed out after 300 ms"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("a hang is itself evidence"), std::string::npos) << r.error;
  EXPECT_GE(r.duration, timeout);
  EXPECT_LT(r.duration, timeout + milliseconds(2000));
  pid_t child = ReadChildPid();
  ASSERT_GT(child, 1) << "the fake did not record its child";
  EXPECT_TRUE(BecomesDead(child)) << "the hang's child " << child << " survived the timeout";
  EXPECT_EQ(OpenFdCount(), fds_before);
}

TEST_F(RunTest, TimeoutKeepsPartialOutput) {
  InstallSinfo();
  Executor executor(Options(milliseconds(300)));
  RunResult r = RunSinfo(executor, "hang");
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error;
  EXPECT_EQ(r.stdout_data, "partial\n");
  EXPECT_EQ(r.stdout_bytes, 8u);
}

TEST_F(RunTest, ARunsOwnTimeoutReplacesTheOptions) {
  InstallSinfo();
  Executor executor(Options(milliseconds(10000)));
  Verdict v = guard_.Check({"sinfo", "-p", "hang"});
  ASSERT_TRUE(v.ok()) << v.denial().ToString();
  RunResult r = executor.Run(v.approved(), milliseconds(300));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error;
  EXPECT_NE(r.error.find("timed out after 300 ms"), std::string::npos) << r.error;
  EXPECT_LT(r.duration, milliseconds(5000));
}

TEST_F(RunTest, StragglersAreKilledWhenTheProgramExits) {
  // The leader exits at once while a background child holds stdout open for 300 s: the group
  // kill at exit closes the pipe, so the run ends promptly instead of at the timeout.
  InstallSinfo();
  Executor executor(Options(milliseconds(10000)));
  RunResult r = RunSinfo(executor, "straggler");
  EXPECT_EQ(r.outcome, Outcome::kExited) << r.error;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data, "done\n");
  EXPECT_LT(r.duration, milliseconds(2000));
  pid_t child = ReadChildPid();
  ASSERT_GT(child, 1);
  EXPECT_TRUE(BecomesDead(child)) << "straggler " << child << " survived its leader";
}

TEST_F(RunTest, DescendantThatLeavesTheGroupCannotHoldTheRunOpen) {
  // setsid puts the descendant out of reach of the group kill; its pipe is abandoned at the
  // timeout and the run reports a timeout rather than hanging.
  InstallSinfo();
  const milliseconds timeout(500);
  Executor executor(Options(timeout));
  const int fds_before = OpenFdCount();
  RunResult r = RunSinfo(executor, "escape");
  EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error;
  EXPECT_NE(r.error.find("kept its output open"), std::string::npos) << r.error;
  EXPECT_EQ(r.stdout_data, "done\n");
  EXPECT_GE(r.duration, timeout);
  EXPECT_LT(r.duration, timeout + milliseconds(2000));
  EXPECT_EQ(OpenFdCount(), fds_before);
  // TearDown kills the escaped sleep by its recorded pid.
}

TEST_F(RunTest, GibibyteOfOutputIsCappedWhileReading) {
  InstallSinfo();
  ExecutorOptions o = Options(milliseconds(120000));
  o.max_output_bytes = 64 * 1024;
  Executor executor(o);
  const long rss_before = MaxRssKiB();
  RunResult r = RunSinfo(executor, "flood");
  const long rss_growth_kib = MaxRssKiB() - rss_before;
  EXPECT_EQ(r.outcome, Outcome::kExited) << r.error;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data.size(), 64u * 1024u);
  EXPECT_EQ(r.stdout_bytes, 1073741824u);
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_FALSE(r.stderr_truncated);
  EXPECT_LT(rss_growth_kib, 64 * 1024) << "max RSS grew by " << rss_growth_kib << " KiB";
  std::cout << "[ measure  ] 1 GiB through the cap in " << r.duration.count()
            << " ms, max RSS growth " << rss_growth_kib << " KiB\n";
}

TEST_F(RunTest, StreamsAreCappedIndependently) {
  InstallSinfo();
  ExecutorOptions o = Options();
  o.max_output_bytes = 64 * 1024;
  Executor executor(o);
  RunResult r = RunSinfo(executor, "streams");
  EXPECT_EQ(r.outcome, Outcome::kExited) << r.error;
  EXPECT_EQ(r.stdout_data, std::string(64 * 1024, '\0'));
  EXPECT_EQ(r.stdout_bytes, 100000u);
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_EQ(r.stderr_data.size(), 64u * 1024u);
  EXPECT_EQ(r.stderr_bytes, 200000u);
  EXPECT_TRUE(r.stderr_truncated);
}

TEST_F(RunTest, OutputExactlyAtTheCapIsNotTruncated) {
  InstallSinfo();
  ExecutorOptions o = Options();
  o.max_output_bytes = 8;  // "-p\necho\n"
  Executor executor(o);
  RunResult r = RunSinfo(executor, "echo");
  EXPECT_EQ(r.stdout_data, "-p\necho\n");
  EXPECT_FALSE(r.stdout_truncated);
}

TEST_F(RunTest, MissingBinaryIsNotInstalledAndNeverSpawns) {
  InstallSinfo();
  // An sdiag outside the trusted directories leaves a trace if anything runs it.
  std::string elsewhere = NewDir();
  WriteFile(elsewhere + "/sdiag", kMarkerScript, 0755);
  std::string second = NewDir();
  ExecutorOptions o = Options();
  o.trusted_dirs = {dir_, second};
  Executor executor(o);

  const Resolution* res = FindResolution(executor, "sdiag");
  ASSERT_NE(res, nullptr);
  EXPECT_EQ(res->problem, Outcome::kNotInstalled);
  EXPECT_TRUE(res->path.empty());

  RunResult r = RunArgv(executor, {"sdiag"});
  EXPECT_EQ(r.outcome, Outcome::kNotInstalled);
  EXPECT_EQ(r.error, "sdiag is not installed in the trusted directories " + dir_ + ":" + second);
  EXPECT_TRUE(r.binary.empty());
  EXPECT_EQ(r.stdout_bytes, 0u);
  EXPECT_EQ(r.duration, milliseconds(0));
  EXPECT_FALSE(std::filesystem::exists(elsewhere + "/ran"));
}

TEST_F(RunTest, PathIsIgnored) {
  std::string on_path = NewDir();
  WriteFile(on_path + "/sinfo", kMarkerScript, 0755);
  const char* old = std::getenv("PATH");
  std::string saved = old ? old : "";
  ::setenv("PATH", (on_path + ":" + saved).c_str(), 1);
  Executor executor(Options());  // dir_ holds no sinfo
  RunResult r = RunSinfo(executor, "ok");
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_EQ(r.outcome, Outcome::kNotInstalled) << r.error;
  EXPECT_NE(r.error.find("sinfo is not installed"), std::string::npos) << r.error;
  EXPECT_FALSE(std::filesystem::exists(on_path + "/ran"));
}

TEST_F(RunTest, RelativeTrustedDirIsIgnoredAndReported) {
  // bin/sinfo exists relative to the working directory, yet a relative trusted dir is ignored.
  std::string cwd = NewDir();
  ASSERT_EQ(::mkdir((cwd + "/bin").c_str(), 0755), 0);
  WriteFile(cwd + "/bin/sinfo", kMarkerScript, 0755);
  std::string saved = std::filesystem::current_path().string();
  std::filesystem::current_path(cwd);
  ExecutorOptions o = Options();
  o.trusted_dirs = {"bin", dir_};
  Executor executor(o);
  std::filesystem::current_path(saved);

  RunResult r = RunSinfo(executor, "ok");
  EXPECT_EQ(r.outcome, Outcome::kNotInstalled) << r.error;
  EXPECT_NE(r.error.find("trusted directories " + dir_), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("\"bin\""), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("must be absolute"), std::string::npos) << r.error;
  EXPECT_FALSE(std::filesystem::exists(cwd + "/bin/ran"));
}

TEST_F(RunTest, TrustedDirsAreSearchedInOrder) {
  std::string first = NewDir();
  std::string second = NewDir();
  WriteFile(first + "/sinfo", "#!/bin/sh\necho first\n", 0755);
  WriteFile(second + "/sinfo", "#!/bin/sh\necho second\n", 0755);
  ExecutorOptions o = Options();
  o.trusted_dirs = {dir_, first, second};  // dir_ has no sinfo
  Executor executor(o);
  RunResult r = RunSinfo(executor, "ok");
  EXPECT_EQ(r.stdout_data, "first\n") << r.error;
  EXPECT_EQ(r.binary, first + "/sinfo");
}

TEST_F(RunTest, UnusableEntryInAnEarlierDirIsNotSkipped) {
  std::string first = NewDir();
  WriteFile(first + "/sinfo", kMarkerScript, 0777);
  InstallSinfo();
  ExecutorOptions o = Options();
  o.trusted_dirs = {first, dir_};
  Executor executor(o);
  RunResult r = RunSinfo(executor, "ok");
  EXPECT_EQ(r.outcome, Outcome::kUntrusted) << r.error;
  EXPECT_FALSE(std::filesystem::exists(first + "/ran"));
}

struct UntrustedCase {
  const char* name;
  mode_t file_mode;
  mode_t dir_mode;
  const char* error_part;
};

void PrintTo(const UntrustedCase& c, std::ostream* os) { *os << c.name; }

class UntrustedTest : public RunTest, public ::testing::WithParamInterface<UntrustedCase> {};

TEST_P(UntrustedTest, IsRefusedWithoutSpawning) {
  const UntrustedCase& c = GetParam();
  WriteFile(dir_ + "/sinfo", kMarkerScript, c.file_mode);
  ASSERT_EQ(::chmod(dir_.c_str(), c.dir_mode), 0);
  Executor executor(Options());
  const Resolution* res = FindResolution(executor, "sinfo");
  ASSERT_NE(res, nullptr);
  EXPECT_EQ(res->problem, Outcome::kUntrusted);
  EXPECT_TRUE(res->path.empty());
  RunResult r = RunSinfo(executor, "ok");
  EXPECT_EQ(r.outcome, Outcome::kUntrusted) << r.error;
  EXPECT_EQ(r.error, res->error);
  EXPECT_NE(r.error.find(c.error_part), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(dir_ + "/sinfo"), std::string::npos) << r.error;
  EXPECT_TRUE(r.binary.empty());
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/ran"));
}

INSTANTIATE_TEST_SUITE_P(
    Modes, UntrustedTest,
    ::testing::Values(UntrustedCase{"GroupWritableBinary", 0775, 0755, "group- or other-writable"},
                      UntrustedCase{"OtherWritableBinary", 0757, 0755, "group- or other-writable"},
                      UntrustedCase{"GroupWritableDir", 0755, 0775, "is in directory"},
                      UntrustedCase{"WorldWritableStickyDir", 0755, 01777, "is in directory"},
                      UntrustedCase{"NotExecutable", 0644, 0755, "not executable"}),
    [](const ::testing::TestParamInfo<UntrustedCase>& info) { return info.param.name; });

TEST_F(RunTest, SymlinkIntoWorldWritableDirIsUntrusted) {
  std::string open_dir = NewDir(0777);
  WriteFile(open_dir + "/sinfo", kMarkerScript, 0755);
  ASSERT_EQ(::symlink((open_dir + "/sinfo").c_str(), (dir_ + "/sinfo").c_str()), 0);
  Executor executor(Options());
  RunResult r = RunSinfo(executor, "ok");
  EXPECT_EQ(r.outcome, Outcome::kUntrusted) << r.error;
  EXPECT_NE(r.error.find("resolves to " + open_dir + "/sinfo"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("is in directory " + open_dir), std::string::npos) << r.error;
  EXPECT_FALSE(std::filesystem::exists(open_dir + "/ran"));
}

TEST_F(RunTest, NonRegularFileIsUntrusted) {
  ASSERT_EQ(::mkdir((dir_ + "/sinfo").c_str(), 0755), 0);
  Executor executor(Options());
  RunResult r = RunSinfo(executor, "ok");
  EXPECT_EQ(r.outcome, Outcome::kUntrusted) << r.error;
  EXPECT_NE(r.error.find("not a regular file"), std::string::npos) << r.error;
}

TEST_F(RunTest, FileWithoutElfOrShebangIsUntrusted) {
  // glibc's execvp would hand such a file to /bin/sh; it is refused instead.
  WriteFile(dir_ + "/sinfo", "touch \"$(dirname \"$0\")/ran\"\n", 0755);
  Executor executor(Options());
  RunResult r = RunSinfo(executor, "ok");
  EXPECT_EQ(r.outcome, Outcome::kUntrusted) << r.error;
  EXPECT_NE(r.error.find("neither an ELF binary nor a #! script"), std::string::npos) << r.error;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/ran"));
}

TEST_F(RunTest, DanglingSymlinkIsNotInstalled) {
  ASSERT_EQ(::symlink((dir_ + "/nowhere").c_str(), (dir_ + "/sinfo").c_str()), 0);
  Executor executor(Options());
  RunResult r = RunSinfo(executor, "ok");
  EXPECT_EQ(r.outcome, Outcome::kNotInstalled) << r.error;
  EXPECT_NE(r.error.find("leads nowhere"), std::string::npos) << r.error;
}

TEST_F(RunTest, ResolutionsCoverTheAllowlistInOrder) {
  InstallSinfo();
  Executor executor(Options());
  const std::vector<std::string>& names = AllowedProgramNames();
  ASSERT_EQ(executor.resolutions().size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const Resolution& r = executor.resolutions()[i];
    EXPECT_EQ(r.program, names[i]);
    if (r.program == "sinfo") {
      EXPECT_EQ(r.problem, Outcome::kExited) << r.error;
      EXPECT_EQ(r.path, dir_ + "/sinfo");
      EXPECT_TRUE(r.error.empty());
    } else {
      EXPECT_EQ(r.problem, Outcome::kNotInstalled);
      EXPECT_EQ(r.error, r.program + " is not installed in the trusted directories " + dir_);
    }
  }
}

std::map<std::string, std::string> ParseEnv(const std::string& text) {
  std::map<std::string, std::string> env;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::size_t eq = line.find('=');
    env[line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 1);
  }
  return env;
}

TEST_F(RunTest, ChildSeesOnlyTheFreshEnvironment) {
  InstallSinfo();
  ::setenv("SLURM_RCA_SECRET", "x", 1);
  ::setenv("SLURM_CONF", "/inherited/slurm.conf", 1);
  Executor executor(Options());
  RunResult r = RunSinfo(executor, "env");
  ::unsetenv("SLURM_RCA_SECRET");
  ::unsetenv("SLURM_CONF");
  ASSERT_TRUE(r.ok()) << r.error << r.stderr_data;
  std::map<std::string, std::string> expected = {
      {"PATH", "/usr/bin:/bin"}, {"LANG", "C"}, {"LC_ALL", "C"}, {"TZ", "UTC"}};
  EXPECT_EQ(ParseEnv(r.stdout_data), expected) << r.stdout_data;
}

TEST_F(RunTest, SlurmConfIsPassedOnlyWhenConfigured) {
  InstallSinfo();
  ::setenv("SLURM_RCA_SECRET", "x", 1);
  ExecutorOptions o = Options();
  o.slurm_conf = "/etc/slurm-rca/slurm.conf";
  Executor executor(o);
  RunResult r = RunSinfo(executor, "env");
  ::unsetenv("SLURM_RCA_SECRET");
  ASSERT_TRUE(r.ok()) << r.error << r.stderr_data;
  std::map<std::string, std::string> expected = {{"PATH", "/usr/bin:/bin"},
                                                 {"LANG", "C"},
                                                 {"LC_ALL", "C"},
                                                 {"TZ", "UTC"},
                                                 {"SLURM_CONF", "/etc/slurm-rca/slurm.conf"}};
  EXPECT_EQ(ParseEnv(r.stdout_data), expected) << r.stdout_data;
}

TEST_F(RunTest, ChildReadsEofOnStdin) {
  // Make our own stdin a pipe that never ends: a child that inherited it would block in cat.
  InstallSinfo();
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  int saved_stdin = ::fcntl(0, F_DUPFD_CLOEXEC, 3);  // -1 if our stdin was closed
  ASSERT_EQ(::dup2(fds[0], 0), 0);
  ASSERT_EQ(::write(fds[1], "secret\n", 7), 7);
  Executor executor(Options(milliseconds(5000)));
  RunResult r = RunSinfo(executor, "stdin");
  if (saved_stdin >= 0) {
    ::dup2(saved_stdin, 0);
    ::close(saved_stdin);
  } else {
    ::close(0);
  }
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_EQ(r.outcome, Outcome::kExited) << r.error;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data, "");
  EXPECT_EQ(r.stdout_bytes, 0u);
  EXPECT_LT(r.duration, milliseconds(2000));
}

TEST_F(RunTest, ChildLeadsItsOwnSessionAndProcessGroup) {
  InstallSinfo();
  Executor executor(Options());
  RunResult r = RunSinfo(executor, "session");
  ASSERT_TRUE(r.ok()) << r.error << r.stderr_data;
  std::string pid = r.stdout_data.substr(0, r.stdout_data.find(' '));
  auto fields = StatFields(r.stdout_data);
  ASSERT_TRUE(fields.has_value()) << r.stdout_data;
  EXPECT_EQ((*fields)[1], std::to_string(::getpid()));  // ppid
  EXPECT_EQ((*fields)[2], pid);                         // pgrp
  EXPECT_EQ((*fields)[3], pid);                         // session
}

TEST_F(RunTest, ChildRunsInTheRootDirectory) {
  InstallSinfo();
  Executor executor(Options());
  RunResult r = RunSinfo(executor, "cwd");
  EXPECT_EQ(r.stdout_data, "/\n") << r.error;
}

TEST_F(RunTest, ExitCodeAndStderrAreReported) {
  InstallSinfo();
  Executor executor(Options());
  RunResult r = RunSinfo(executor, "exit3");
  EXPECT_EQ(r.outcome, Outcome::kExited) << r.error;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  const std::string expected =
      "sinfo: error: slurm_load_partitions: Unable to contact slurm controller\n";
  EXPECT_EQ(r.stderr_data, expected);
  EXPECT_EQ(r.stderr_bytes, expected.size());
  EXPECT_EQ(r.stdout_data, "");
}

TEST_F(RunTest, SelfSignalIsReportedAsSignaled) {
  InstallSinfo();
  Executor executor(Options());
  RunResult r = RunSinfo(executor, "selfkill");
  EXPECT_EQ(r.outcome, Outcome::kSignaled) << r.error;
  EXPECT_EQ(r.term_signal, SIGTERM);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(r.duration, milliseconds(2000));
}

TEST_F(RunTest, SpawnFailureIsReportedWithoutLeaks) {
  // A #! line naming a missing interpreter passes resolution; execve then fails with ENOENT.
  WriteFile(dir_ + "/sinfo", "#!/nonexistent/interpreter\n", 0755);
  Executor executor(Options());
  const int fds_before = OpenFdCount();
  RunResult r = RunSinfo(executor, "ok");
  EXPECT_EQ(r.outcome, Outcome::kSpawnFailed) << r.error;
  EXPECT_NE(r.error.find("cannot start " + dir_ + "/sinfo"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("ENOENT"), std::string::npos) << r.error;
  EXPECT_EQ(r.binary, dir_ + "/sinfo");
  EXPECT_EQ(OpenFdCount(), fds_before);
}

TEST_F(RunTest, ThousandRunsLeaveNoZombiesAndNoFds) {
  ASSERT_EQ(::symlink("/usr/bin/true", (dir_ + "/sinfo").c_str()), 0);
  Executor executor(Options());
  const Resolution* res = FindResolution(executor, "sinfo");
  ASSERT_NE(res, nullptr);
  ASSERT_EQ(res->problem, Outcome::kExited) << res->error;
  EXPECT_EQ(res->path, std::filesystem::canonical("/usr/bin/true").string());

  Verdict v = guard_.Check({"sinfo", "--noheader"});
  ASSERT_TRUE(v.ok()) << v.denial().ToString();
  ASSERT_TRUE(executor.Run(v.approved()).ok());  // libuv's process-wide state is set up once
  const int fds_before = OpenFdCount();
  int failures = 0;
  auto start = Clock::now();
  for (int i = 0; i < 1000; ++i) {
    RunResult r = executor.Run(v.approved());
    if (!r.ok()) {
      if (++failures <= 3)
        ADD_FAILURE() << "run " << i << ": " << OutcomeName(r.outcome) << " " << r.error;
    }
  }
  auto elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(OpenFdCount(), fds_before);
  EXPECT_EQ(ChildrenOfSelf(), std::vector<pid_t>{});
  std::cout << "[ measure  ] 1000 runs in " << elapsed.count() << " ms\n";
}

TEST_F(RunTest, AnExitWhoseSigchldNeverArrivesIsStillAnExitNotATimeout) {
  // The only thread blocks SIGCHLD, so libuv never hears of the exit: the run must ask the
  // kernel at the deadline instead of killing a child that is already gone and calling it a
  // hang. (ThreadSanitizer's deferred signals did this once in CI; this makes it certain.)
  ASSERT_EQ(::symlink("/usr/bin/false", (dir_ + "/sinfo").c_str()), 0);
  const milliseconds timeout(400);
  Executor executor(Options(timeout));
  Verdict v = guard_.Check({"sinfo", "--noheader"});
  ASSERT_TRUE(v.ok()) << v.denial().ToString();
  sigset_t chld, old;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &chld, &old), 0);
  const int fds_before = OpenFdCount();
  RunResult r = executor.Run(v.approved());
  const int fds_after = OpenFdCount();
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, &old, nullptr), 0);
  EXPECT_EQ(r.outcome, Outcome::kExited) << OutcomeName(r.outcome) << " " << r.error;
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.error, "");
  EXPECT_GE(r.duration, timeout);  // it was the deadline's question that found the exit
  EXPECT_EQ(fds_after, fds_before);
  EXPECT_EQ(ChildrenOfSelf(), std::vector<pid_t>{});
  // With SIGCHLD open again the pending one arrives; the next run still works.
  RunResult again = executor.Run(v.approved());
  EXPECT_EQ(again.outcome, Outcome::kExited) << again.error;
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_LT(again.duration, timeout);
}

TEST_F(RunTest, ConcurrentRunsFromFourThreads) {
  InstallSinfo();
  Executor executor(Options(milliseconds(20000)));
  Verdict v = guard_.Check({"sinfo", "-p", "ok"});
  ASSERT_TRUE(v.ok()) << v.denial().ToString();
  const Approved& approved = v.approved();
  const int fds_before = OpenFdCount();
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  std::vector<std::string> first_error(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        RunResult r = executor.Run(approved);
        if (r.ok() && r.stdout_data == "ok\n") {
          ++ok;
        } else if (first_error[t].empty()) {
          first_error[t] = std::string(OutcomeName(r.outcome)) + " " + r.error + " " +
                           r.stdout_data + r.stderr_data;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), 200) << first_error[0] << first_error[1] << first_error[2] << first_error[3];
  EXPECT_EQ(OpenFdCount(), fds_before);
}

TEST_F(RunTest, ConcurrentTimeoutsDoNotDisturbOtherRuns) {
  InstallSinfo();
  Executor slow(Options(milliseconds(300)));
  Executor fast(Options(milliseconds(20000)));
  std::vector<RunResult> hangs(2);
  std::thread a([&] { hangs[0] = RunSinfo(slow, "hang"); });
  std::thread b([&] { hangs[1] = RunSinfo(slow, "hang"); });
  int ok = 0;
  for (int i = 0; i < 20; ++i) ok += RunSinfo(fast, "ok").ok() ? 1 : 0;
  a.join();
  b.join();
  EXPECT_EQ(ok, 20);
  for (const RunResult& r : hangs) EXPECT_EQ(r.outcome, Outcome::kTimedOut) << r.error;
}

TEST(OutcomeNameTest, NamesEveryOutcome) {
  EXPECT_STREQ(OutcomeName(Outcome::kExited), "exited");
  EXPECT_STREQ(OutcomeName(Outcome::kSignaled), "signaled");
  EXPECT_STREQ(OutcomeName(Outcome::kTimedOut), "timed_out");
  EXPECT_STREQ(OutcomeName(Outcome::kNotInstalled), "not_installed");
  EXPECT_STREQ(OutcomeName(Outcome::kUntrusted), "untrusted");
  EXPECT_STREQ(OutcomeName(Outcome::kSpawnFailed), "spawn_failed");
}

}  // namespace
}  // namespace slurm_rca::guard
