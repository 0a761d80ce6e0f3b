// guard_bench: how fast the guard checks and the executor runs, beside the machine's limits.
//
//   build/bin/guard_bench [--seconds S] [--runs N]
//
// Prints checks per second over the whole corpus (guard/testdata), runs per second of
// /usr/bin/true through the executor (as an allowlisted name in a private trusted directory),
// and the machine's bare posix_spawn+waitpid rate of /usr/bin/true as the limit to compare with.
#include <CLI/CLI.hpp>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "guard/check.h"
#include "guard/corpus.h"
#include "guard/run.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace slurm_rca::guard;
  CLI::App app{"guard_bench: guard checks/s, executor runs/s, and the fork+exec limit"};
  double seconds = 2.0;
  int runs = 2000;
  std::string corpus = std::string(SLURM_RCA_SOURCE_DIR) + "/guard/testdata";
  app.add_option("--seconds", seconds, "Time spent on the check benchmark")
      ->check(CLI::Range(0.1, 600.0))->capture_default_str();
  app.add_option("--runs", runs, "Processes started per spawn benchmark")
      ->check(CLI::Range(10, 1000000))->capture_default_str();
  app.add_option("--corpus", corpus, "Corpus file or directory")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "guard_bench: %s (see guard_bench --help)\n", e.what());
    return 2;
  }

  auto load = LoadArgvCases(corpus);
  if (!load.ok()) {
    std::fprintf(stderr, "guard_bench: %s\n", load.status().message().c_str());
    return 2;
  }
  Guard guard(GuardOptions{.clusters = {"rca"}});
  {
    // Other work on the machine skews every figure below.
    std::ifstream loadavg("/proc/loadavg");
    std::string one, five, fifteen;
    loadavg >> one >> five >> fifteen;
    std::printf("guard_bench: load average %s %s %s at the start\n", one.c_str(), five.c_str(),
                fifteen.c_str());
  }

  // 1. Checks per second over the corpus, allowed and denied alike.
  std::size_t checks = 0, allowed = 0;
  auto start = Clock::now();
  while (Seconds(start) < seconds) {
    for (const ArgvCase& c : *load) {
      allowed += guard.Check(c.argv).ok();
      ++checks;
    }
  }
  double check_s = Seconds(start);
  std::printf("guard check:      %10.0f checks/s  (%zu argv of the corpus, %zu checks in %.2f s, "
              "%.2f us/check)\n",
              checks / check_s, load->size(), checks, check_s, 1e6 * check_s / checks);

  // 2. Runs per second through the executor: "sinfo" is a symlink to /usr/bin/true.
  char dir[] = "/tmp/guard_bench_XXXXXX";
  if (!mkdtemp(dir)) {
    std::perror("mkdtemp");
    return 1;
  }
  chmod(dir, 0755);
  std::string link = std::string(dir) + "/sinfo";
  if (symlink("/usr/bin/true", link.c_str()) != 0) {
    std::perror("symlink");
    return 1;
  }
  ExecutorOptions options;
  options.trusted_dirs = {dir};
  Executor executor(options);
  Verdict v = guard.Check({"sinfo"});
  int failed = 0;
  start = Clock::now();
  for (int i = 0; i < runs; ++i) failed += !executor.Run(v.approved()).ok();
  double exec_s = Seconds(start);
  unlink(link.c_str());
  rmdir(dir);

  // 3. The limit: bare posix_spawn + waitpid of the same binary.
  char* const true_argv[] = {const_cast<char*>("true"), nullptr};
  start = Clock::now();
  for (int i = 0; i < runs; ++i) {
    pid_t pid;
    if (posix_spawn(&pid, "/usr/bin/true", nullptr, nullptr, true_argv, environ) == 0) {
      int status;
      waitpid(pid, &status, 0);
    }
  }
  double spawn_s = Seconds(start);

  double exec_rate = runs / exec_s, spawn_rate = runs / spawn_s;
  std::printf("executor run:     %10.0f runs/s    (%d runs of /usr/bin/true, %d failed, %.0f us/run)\n",
              exec_rate, runs, failed, 1e6 * exec_s / runs);
  std::printf("fork+exec limit:  %10.0f spawns/s  (posix_spawn+waitpid, %.0f us/spawn)\n",
              spawn_rate, 1e6 * spawn_s / runs);
  std::printf("executor / limit: %10.2f            (1.00 would be no overhead)\n",
              exec_rate / spawn_rate);
  return failed == 0 ? 0 : 1;
}
