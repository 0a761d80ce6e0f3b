// The corpus runner on small corpora written here: every layout finds its cases, a case whose
// expectation is wrong is reported as failing (the runner's self-test), and cases that cannot be
// read are errors, never skipped.
#include "base/corpus.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "base/file.h"

namespace slurm_rca::base {
namespace {

namespace fs = std::filesystem;

class CorpusRunner : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "corpus_runner_XXXXXX").string();
    ASSERT_TRUE(mkdtemp(t.data()));
    dir_ = t;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    fs::create_directories((dir_ / name).parent_path());
    ASSERT_TRUE(WriteFile((dir_ / name).string(), text));
  }
  fs::path dir_;
};

// A stand-in module: each input line "RULE LINE message" is one diagnostic.
std::vector<Diagnostic> FromLines(const std::string& text, const std::string& file) {
  std::vector<Diagnostic> out;
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string line(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (line.empty() || line[0] == '#') continue;
    size_t a = line.find(' '), b = line.find(' ', a + 1);
    out.push_back({.file = file,
                   .line = std::stoi(line.substr(a + 1, b - a - 1)),
                   .rule = line.substr(0, a),
                   .message = line.substr(b + 1)});
  }
  return out;
}

CorpusAdapter ReadInput() {
  return [](const CorpusCase& c) { return FromLines(ReadFile(c.path).value_or(""), c.path); };
}

TEST_F(CorpusRunner, HeaderCasesPassAndAWrongExpectationFails) {
  Write("a-right.yaml",
        "# deny chain-start at 3\n# why: the runner's happy path\nchain-start 3 x\n");
  Write("b-wrong-rule.yaml", "# deny chain-order\nchain-start 3 x\n");
  Write("c-wrong-line.yaml", "# deny chain-start at 4\nchain-start 3 x\n");
  Write("d-missing-one.yaml", "# deny a\n# deny a\na 2 x\n");
  Write("e-allow-but-denied.yaml", "# allow\na 2 x\n");
  Write("f-clean.yaml", "# allow\n");
  Write("ignored.txt", "not a case: another extension\n");
  CorpusReport r = RunCorpus({.path = dir_.string(), .extension = ".yaml"}, ReadInput());
  ASSERT_EQ(r.cases.size(), 6u);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.cases[0].c.name, "a-right.yaml");
  EXPECT_FALSE(r.cases[0].mismatch);
  EXPECT_FALSE(r.cases[5].mismatch);
  for (int i : {1, 2, 3, 4}) EXPECT_TRUE(r.cases[i].mismatch) << r.cases[i].c.name;
  EXPECT_EQ(r.failed(), 4u);
  EXPECT_FALSE(r.ok());
  std::vector<std::string> f = r.Failures();
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].find("b-wrong-rule.yaml ("), 0u) << f[0];
  EXPECT_NE(f[0].find("expected deny chain-order"), std::string::npos) << f[0];
  EXPECT_NE(f[0].find("produced, not expected: "), std::string::npos) << f[0];
  EXPECT_NE(f[0].find(":3: chain-start: x"), std::string::npos) << f[0];
  EXPECT_NE(f[3].find("expected allow"), std::string::npos) << f[3];
  EXPECT_EQ(r.Rules(), (std::set<std::string>{"a", "chain-start", "chain-order"}));
  EXPECT_TRUE(r.HasAllow());
}

TEST_F(CorpusRunner, UnreadableCasesAreErrorsNotSkips) {
  Write("good.yaml", "# deny a\na 1 x\n");
  Write("no-header.yaml", "a 1 x\n");
  Write("bad-header.yaml", "# deny a at zero\na 1 x\n");
  CorpusReport r = RunCorpus({.path = dir_.string(), .extension = ".yaml"}, ReadInput());
  EXPECT_EQ(r.cases.size(), 1u);
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_NE(r.errors[0].find("bad-header.yaml:1: 'at' needs a line number"), std::string::npos)
      << r.errors[0];
  EXPECT_NE(r.errors[1].find("no-header.yaml: no '# deny"), std::string::npos) << r.errors[1];
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.Failures().size(), 2u);
  // No case at all fails too, and a missing folder says so.
  CorpusReport empty = RunCorpus({.path = dir_.string(), .extension = ".none"}, ReadInput());
  EXPECT_FALSE(empty.ok());
  EXPECT_EQ(empty.Failures(), std::vector<std::string>{"the corpus has no case"});
  CorpusReport missing =
      RunCorpus({.path = (dir_ / "nope").string(), .extension = ".x"}, ReadInput());
  ASSERT_EQ(missing.errors.size(), 1u);
  EXPECT_NE(missing.errors[0].find("no such corpus file or directory"), std::string::npos);
}

TEST_F(CorpusRunner, SidecarsAndTheirStrays) {
  Write("one.jsonl", "a 2 confidence 1.5 is outside [0, 1]\n");
  Write("one.expect", "# deny at 2 'is outside [0, 1]'\n");
  Write("two.jsonl", "a 2 x\n");
  Write("two.expect", "# deny at 3 'x'\n");  // wrong line
  Write("three.jsonl", "a 1 x\n");           // no sidecar
  Write("stray.expect", "# allow\n");        // no input
  Write("bad.jsonl", "");
  Write("bad.expect", "# allow\nallow\n");  // a sidecar holds only '#' lines
  CorpusReport r =
      RunCorpus({.path = dir_.string(), .layout = CorpusLayout::kSidecar, .extension = ".jsonl"},
                ReadInput());
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].c.name, "one.jsonl");
  EXPECT_FALSE(r.cases[0].mismatch);
  EXPECT_TRUE(r.cases[1].mismatch);
  ASSERT_EQ(r.errors.size(), 3u);
  std::string all;
  for (const std::string& e : r.errors) all += e + "\n";
  EXPECT_NE(all.find("bad.expect:2: a sidecar holds only '#' lines"), std::string::npos) << all;
  EXPECT_NE(all.find("three.expect: cannot be read"), std::string::npos) << all;
  EXPECT_NE(all.find("stray.expect: no stray.jsonl beside it"), std::string::npos) << all;
}

TEST_F(CorpusRunner, DirectoryCasesReadTheirSettings) {
  Write("case-a/expect", "# deny r\n# profile: claude-code\n");
  Write("case-a/input", "r 1 x\n");
  Write("case-b/expect", "# allow\n# profil: spec\n");  // a misspelt setting
  Write("case-b/input", "");
  std::vector<std::string> profiles;
  CorpusReport r = RunCorpus(
      {.path = dir_.string(), .layout = CorpusLayout::kDirectory, .settings = {"profile"}},
      [&](const CorpusCase& c) {
        auto it = c.expect.settings.find("profile");
        profiles.push_back(it == c.expect.settings.end() ? "" : it->second);
        return FromLines(*ReadFile(c.path + "/input"), c.path);
      });
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_FALSE(r.cases[0].mismatch);
  EXPECT_EQ(profiles, std::vector<std::string>{"claude-code"});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("case-b/expect:2: unknown setting 'profil'"), std::string::npos);
}

TEST_F(CorpusRunner, LineCasesEachGetTheirInput) {
  Write("a.txt",
        "# a comment\n\nallow sinfo -N\ndeny mutating-word scontrol update\n"
        "deny file-word scontrol write\n");
  Write("b.txt", "perhaps sinfo\n");
  CorpusReport r =
      RunCorpus({.path = dir_.string(), .layout = CorpusLayout::kLines, .extension = ".txt"},
                [](const CorpusCase& c) -> std::vector<Diagnostic> {
                  if (c.input.find("update") != std::string::npos) {
                    return {{.file = c.path, .rule = "mutating-word", .message = "no"}};
                  }
                  if (c.input.find("write") != std::string::npos) {
                    return {{.file = c.path, .rule = "mutating-word", .message = "wrong rule"}};
                  }
                  return {};
                });
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[0].c.name, "a.txt:3");
  EXPECT_EQ(r.cases[0].c.input, "sinfo -N");
  EXPECT_EQ(r.cases[0].c.line, 3);
  EXPECT_FALSE(r.cases[0].mismatch);
  EXPECT_FALSE(r.cases[1].mismatch);
  EXPECT_TRUE(r.cases[2].mismatch);  // expected file-word, got mutating-word
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("b.txt:1: a case starts with 'allow'"), std::string::npos);
}

// slurm-guard corpus names files as well as folders, and knows its rule ids: a deny naming
// another is an error of the run (it names file and line), not a failing case.
TEST_F(CorpusRunner, ALineCorpusMayBeOneFileAndKnowItsRules) {
  Write("a.txt", "allow sinfo\ndeny mutating-word scontrol update\ndeny no-such-rule sinfo\n");
  Write("b.txt", "allow squeue\n");
  LoadedCorpus one = LoadCorpus({.path = (dir_ / "a.txt").string(),
                                 .layout = CorpusLayout::kLines,
                                 .extension = ".txt",
                                 .rules = {"mutating-word"}});
  ASSERT_EQ(one.cases.size(), 2u);
  EXPECT_EQ(one.cases[1].name, "a.txt:2") << "a case of b.txt was read";
  ASSERT_EQ(one.errors.size(), 1u);
  EXPECT_EQ(one.errors[0], (dir_ / "a.txt").string() + ":3: unknown rule id 'no-such-rule'");
  // Without a rule list any rule id is a rule; the folder holds both files.
  LoadedCorpus all =
      LoadCorpus({.path = dir_.string(), .layout = CorpusLayout::kLines, .extension = ".txt"});
  EXPECT_EQ(all.cases.size(), 4u);
  EXPECT_TRUE(all.errors.empty());
  // A header file naming an unknown rule is an error too.
  Write("h.yaml", "# deny typo-rule\nx\n");
  LoadedCorpus header = LoadCorpus({.path = dir_.string(), .extension = ".yaml", .rules = {"a"}});
  EXPECT_TRUE(header.cases.empty());
  ASSERT_EQ(header.errors.size(), 1u);
  EXPECT_NE(header.errors[0].find("h.yaml: unknown rule id 'typo-rule'"), std::string::npos);
}

}  // namespace
}  // namespace slurm_rca::base
