#include "guard/corpus.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "guard/oracle.h"
#include "testing/corpus.h"

namespace slurm_rca::guard {
namespace {

const std::string kTestdata = std::string(SLURM_RCA_SOURCE_DIR) + "/guard/testdata";

std::vector<ArgvCase> LoadAll() {
  base::Result<std::vector<ArgvCase>> load = LoadArgvCases(kTestdata);
  EXPECT_TRUE(load.ok()) << load.status().message();
  return load.ok() ? *load : std::vector<ArgvCase>{};
}

Guard CorpusGuard() { return Guard(GuardOptions{.clusters = {"rca"}}); }

// Through the one corpus runner (base/corpus.h): each line is a case, its argv checked by the
// guard; a denial is one diagnostic with the denial's rule.
TEST(CorpusTest, EveryCaseGetsItsVerdictAndRule) {
  const Guard guard = CorpusGuard();
  base::CorpusReport report = base::RunCorpus(
      ArgvCorpus(kTestdata), [&guard](const base::CorpusCase& c) { return CheckCase(guard, c); });
  testing::ExpectCorpusPasses(report);
  EXPECT_GE(report.cases.size(), 400u);
  // Legitimate reads are a real share of the corpus: refusing everything must fail this test.
  size_t allowed = std::count_if(report.cases.begin(), report.cases.end(),
                                 [](const base::CaseResult& r) { return r.c.expect.allow; });
  EXPECT_GE(allowed, 100u);
  // The runner and the guard's own loader (slurm-guard corpus, the captures) see the same cases.
  EXPECT_EQ(report.cases.size(), LoadAll().size());
}

const std::string kOwnJobs = kTestdata + "/own_jobs";

// The own-jobs view's corpus, checked as the caller alice (GuardOptions::own_user).
TEST(CorpusTest, OwnJobsCasesGetTheirVerdictAndRule) {
  const Guard guard(GuardOptions{.clusters = {"rca"}, .own_user = "alice"});
  base::CorpusReport report = base::RunCorpus(
      ArgvCorpus(kOwnJobs), [&guard](const base::CorpusCase& c) { return CheckCase(guard, c); });
  testing::ExpectCorpusPasses(report);
  EXPECT_GE(report.cases.size(), 60u);
  // Every case the own-jobs view refuses for itself is one the plain allowlist approves: the
  // refusal is the view's, not an argv the allowlist would have stopped anyway.
  const Guard plain = CorpusGuard();
  base::Result<std::vector<ArgvCase>> cases = LoadArgvCases(kOwnJobs);
  ASSERT_TRUE(cases.ok()) << cases.status().message();
  for (const ArgvCase& c : *cases) {
    if (c.expected == Rule::kOwnJobsFilter || c.expected == Rule::kOwnJobsUnfilterable) {
      EXPECT_TRUE(plain.Check(c.argv).ok()) << FormatArgv(c.argv);
    }
  }
}

// A name outside the guard's grammar refuses every argv, sinfo included.
TEST(CorpusTest, AnOwnUserOutsideTheNameGrammarRefusesEverything) {
  for (const char* bad : {"", "-alice", "al ice", "alice,bob", "../x"}) {
    const Guard guard(GuardOptions{.own_user = bad});
    Verdict v = guard.Check({"sinfo"});
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(v.denial().rule, Rule::kOwnJobsFilter);
  }
}

TEST(CorpusTest, EveryRuleIsExercised) {
  std::set<Rule> used;
  std::vector<ArgvCase> all = LoadAll();
  base::Result<std::vector<ArgvCase>> own = LoadArgvCases(kOwnJobs);
  ASSERT_TRUE(own.ok()) << own.status().message();
  all.insert(all.end(), own->begin(), own->end());
  for (const ArgvCase& c : all) {
    if (c.expected) used.insert(*c.expected);
  }
  for (Rule r : AllRules()) EXPECT_TRUE(used.count(r)) << "no corpus case for " << RuleId(r);
}

TEST(CorpusTest, SeedCorporaAreComplete) {
  std::map<std::string, int> per_file;
  for (const ArgvCase& c : LoadAll()) per_file[c.file]++;
  EXPECT_EQ(per_file["seed_a5.txt"], 70);  // reference A.5: 23 + 16 + 10 + 11 + 10
  EXPECT_EQ(per_file["seed_b8.txt"], 40);  // reference B.8: 7 reads + 25 + 8 writes
}

// Independent of the policy tables: the words and options the issue names.
TEST(CorpusTest, EveryPrefixOfEveryRefusedWordAndOptionIsCovered) {
  const std::map<std::string, std::vector<std::string>> words = {
      {"scontrol",
       {"update", "create", "delete", "reconfigure", "shutdown", "takeover", "setdebug",
        "setdebugflags", "schedloglevel", "fsdampeningfactor", "reboot", "reboot_nodes",
        "cancel_reboot", "requeue", "requeuehold", "hold", "uhold", "release", "suspend",
        "resume", "top", "notify", "power", "token", "write"}},
      {"sacctmgr",
       {"add", "create", "modify", "update", "delete", "remove", "archive", "load", "clear",
        "rollup", "reconfigure", "shutdown", "dump"}},
  };
  std::set<std::vector<std::string>> denied_argv;
  std::set<std::string> denied_tokens;  // any token of a denied argv, for the options
  for (const ArgvCase& c : LoadAll()) {
    if (!c.expected) continue;
    denied_argv.insert(c.argv);
    for (const std::string& a : c.argv) denied_tokens.insert(a.substr(0, a.find('=')));
  }
  for (const auto& [program, list] : words) {
    for (const std::string& w : list) {
      for (size_t n = 1; n <= w.size(); ++n) {
        EXPECT_TRUE(denied_argv.count({program, w.substr(0, n)}))
            << "missing: " << program << " " << w.substr(0, n);
      }
    }
  }
  for (const std::string opt : {"--reset", "--file", "--batch-script", "--env-vars"}) {
    for (size_t n = 3; n <= opt.size(); ++n) {
      EXPECT_TRUE(denied_tokens.count(opt.substr(0, n))) << "missing: " << opt.substr(0, n);
    }
  }
  for (const std::string opt : {"-f", "-r", "-B", "-i"}) EXPECT_TRUE(denied_tokens.count(opt));
}

TEST(CorpusTest, EveryMutatingNvidiaSmiFlagAndSubcommandIsCovered) {
  std::set<std::string> denied;
  for (const ArgvCase& c : LoadAll()) {
    if (c.expected && !c.argv.empty() && c.argv[0] == "nvidia-smi") {
      for (const std::string& a : c.argv) denied.insert(a);
    }
  }
  for (const std::string f :
       {"-pm", "-e", "-p", "-c", "-r", "-vm", "-lgc", "-rgc", "-lmc", "-rmc", "-ac", "-rac",
        "-pl", "-am", "-caa", "-mig", "-gtt", "-t", "-f", "-l", "-lms", "--gpu-reset",
        "--persistence-mode", "--power-limit", "--multi-instance-gpu", "mig", "drain", "clocks",
        "compute-policy", "boost-slider", "conf-compute", "vgpu", "daemon", "dmon", "pmon",
        "replay"}) {
    EXPECT_TRUE(denied.count(f)) << "missing nvidia-smi " << f;
  }
}

TEST(CorpusTest, TheIndependentOracleAgreesWithEveryVerdict) {
  for (const ArgvCase& c : LoadAll()) {
    std::optional<std::string> harm = oracle::Violation(c.argv);
    if (!c.expected) {
      EXPECT_FALSE(harm.has_value()) << c.file << ":" << c.line << " allowed but the oracle says "
                                     << *harm;
    }
  }
}

TEST(CorpusTest, ReadmeStatesTheCorpusSizeCountedFromTheCorpus) {
  std::ifstream in(std::string(SLURM_RCA_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in) << "README.md missing";
  std::stringstream text;
  text << in.rdbuf();
  base::Result<base::CorpusReport> report = CheckCorpus(CorpusGuard(), {kTestdata});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->failed(), 0u);
  const std::string summary = CorpusSummary(*report);
  const char* kLine =
      R"(guard corpus: (\d+) argv, (\d+) denied with the expected rule, (\d+) allowed)";
  int cases = 0, denied = 0, allowed = 0;
  ASSERT_TRUE(RE2::PartialMatch(text.str(), kLine, &cases, &denied, &allowed))
      << "README.md must quote the line `slurm-guard corpus` prints";
  EXPECT_EQ(static_cast<size_t>(cases), report->cases.size());
  EXPECT_EQ(static_cast<size_t>(denied + allowed), report->cases.size());
  EXPECT_EQ(static_cast<size_t>(allowed),
            static_cast<size_t>(
                std::count_if(report->cases.begin(), report->cases.end(),
                              [](const base::CaseResult& r) { return r.c.expect.allow; })));
  EXPECT_EQ(summary, "guard corpus: " + std::to_string(cases) + " argv, " + std::to_string(denied) +
                         " denied with the expected rule, " + std::to_string(allowed) +
                         " allowed as expected, 0 mismatches\n");
}

// What `slurm-guard corpus` prints for a failing case: where, the argv, what was expected, what
// the guard said; and a case the guard cannot read is a load error naming file and line.
TEST(CorpusFormatTest, MismatchesAreOneLineEach) {
  char dir[] = "/tmp/corpus_test_XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string file = std::string(dir) + "/wrong.txt";
  std::ofstream(file) << "allow sinfo -N\ndeny mutating-word sinfo\nallow sdiag --reset\n"
                         "deny file-option scontrol update\n";
  base::Result<base::CorpusReport> report = CheckCorpus(CorpusGuard(), {file});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->failed(), 3u);
  const std::string summary = CorpusSummary(*report);
  for (const std::string line :
       {"MISMATCH wrong.txt:2: sinfo: expected DENIED mutating-word, got ALLOWED\n",
        "MISMATCH wrong.txt:3: sdiag --reset: expected ALLOWED, got DENIED mutating-option: ",
        "MISMATCH wrong.txt:4: scontrol update: expected DENIED file-option, got DENIED "
        "mutating-word: ",
        "guard corpus: 4 argv, 0 denied with the expected rule, 1 allowed as expected, 3 "
        "mismatches\n"}) {
    EXPECT_NE(summary.find(line), std::string::npos) << line << "\nnot in\n" << summary;
  }
  std::ofstream(file) << "allow sinfo\nallow squeue -u 'unterminated\n";
  EXPECT_EQ(CheckCorpus(CorpusGuard(), {file}).status().message().find(file + ":2: "), 0u);
  std::remove(file.c_str());
  rmdir(dir);
}

TEST(CorpusFormatTest, BadFilesAreClearErrors) {
  EXPECT_EQ(LoadArgvCases("/nonexistent/corpus").status().message(),
            "/nonexistent/corpus: no such corpus file or directory");
  char dir[] = "/tmp/corpus_test_XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string file = std::string(dir) + "/bad.txt";
  std::ofstream(file) << "allow sinfo\nmaybe sinfo\n";
  base::Result<std::vector<ArgvCase>> load = LoadArgvCases(file);
  EXPECT_FALSE(load.ok());
  EXPECT_NE(load.status().message().find("bad.txt:2:"), std::string::npos)
      << load.status().message();
  std::ofstream(file) << "deny no-such-rule sinfo\n";
  EXPECT_EQ(LoadArgvCases(file).status().message(), file + ":1: unknown rule id 'no-such-rule'");
  EXPECT_EQ(CheckCorpus(CorpusGuard(), {file}).status().message(),
            file + ":1: unknown rule id 'no-such-rule'");
  std::ofstream(file) << "# only a comment\n";
  EXPECT_EQ(LoadArgvCases(file).status().message(),
            file + ": no case (no corpus line in any *.txt file)");
  std::remove(file.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace slurm_rca::guard
