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

std::vector<CorpusCase> LoadAll() {
  base::Result<std::vector<CorpusCase>> load = LoadCorpus(kTestdata);
  EXPECT_TRUE(load.ok()) << load.status().message();
  return load.ok() ? *load : std::vector<CorpusCase>{};
}

Guard CorpusGuard() { return Guard(GuardOptions{.clusters = {"rca"}}); }

// Through the one corpus runner (testing/corpus.h): each line is a case, its argv checked by the
// guard; a denial is one diagnostic with the denial's rule.
TEST(CorpusTest, EveryCaseGetsItsVerdictAndRule) {
  const Guard guard = CorpusGuard();
  testing::CorpusReport report = testing::RunCorpus(
      {.dir = kTestdata, .layout = testing::Layout::kLines, .extension = ".txt"},
      [&guard](const testing::CorpusCase& c) -> std::vector<base::Diagnostic> {
        base::Result<std::vector<std::string>> argv = ParseArgvLine(c.input);
        if (!argv.ok()) {
          return {{.file = c.path, .line = c.line, .rule = "argv",
                   .message = argv.status().message()}};
        }
        Verdict v = guard.Check(*argv);
        if (v.ok()) return {};
        return {{.file = c.path, .line = c.line, .rule = std::string(RuleId(v.denial().rule)),
                 .message = v.denial().reason}};
      });
  testing::ExpectCorpusPasses(report);
  EXPECT_GE(report.cases.size(), 400u);
  // Legitimate reads are a real share of the corpus: refusing everything must fail this test.
  size_t allowed = std::count_if(report.cases.begin(), report.cases.end(),
                                 [](const testing::CaseResult& r) { return r.c.expect.allow; });
  EXPECT_GE(allowed, 100u);
  // The runner and the guard's own loader (slurm-guard corpus, the captures) see the same cases.
  EXPECT_EQ(report.cases.size(), LoadAll().size());
}

TEST(CorpusTest, EveryRuleIsExercised) {
  std::set<Rule> used;
  for (const CorpusCase& c : LoadAll()) {
    if (c.expected) used.insert(*c.expected);
  }
  for (Rule r : AllRules()) EXPECT_TRUE(used.count(r)) << "no corpus case for " << RuleId(r);
}

TEST(CorpusTest, SeedCorporaAreComplete) {
  std::map<std::string, int> per_file;
  for (const CorpusCase& c : LoadAll()) per_file[c.file]++;
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
  for (const CorpusCase& c : LoadAll()) {
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
  for (const CorpusCase& c : LoadAll()) {
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
  for (const CorpusCase& c : LoadAll()) {
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
  CorpusReport report = RunCorpus(CorpusGuard(), LoadAll());
  int cases = 0, denied = 0, allowed = 0;
  ASSERT_TRUE(RE2::PartialMatch(text.str(),
                                R"(guard corpus: (\d+) argv, (\d+) denied with the expected rule, (\d+) allowed)",
                                &cases, &denied, &allowed))
      << "README.md must quote the line `slurm-guard corpus` prints";
  EXPECT_EQ(static_cast<size_t>(cases), report.cases);
  EXPECT_EQ(static_cast<size_t>(denied), report.denied);
  EXPECT_EQ(static_cast<size_t>(allowed), report.allowed);
}

TEST(CorpusFormatTest, BadFilesAreClearErrors) {
  EXPECT_EQ(LoadCorpus("/nonexistent/corpus").status().message(),
            "/nonexistent/corpus: no such corpus file or directory");
  char dir[] = "/tmp/corpus_test_XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string file = std::string(dir) + "/bad.txt";
  std::ofstream(file) << "allow sinfo\nmaybe sinfo\n";
  base::Result<std::vector<CorpusCase>> load = LoadCorpus(file);
  EXPECT_FALSE(load.ok());
  EXPECT_NE(load.status().message().find("bad.txt:2:"), std::string::npos)
      << load.status().message();
  std::ofstream(file) << "deny no-such-rule sinfo\n";
  EXPECT_EQ(LoadCorpus(file).status().message(), file + ":1: unknown rule id 'no-such-rule'");
  std::remove(file.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace slurm_rca::guard
