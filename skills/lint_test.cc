// skill-lint's tests: the broken-skill corpus (testdata/), read at run time, and unit tests of
// the figure finder, the surface cross-check and the output formats.
//
// Corpus: each testdata/<case>/ is linted and must produce exactly the findings its `expect`
// file names (`# deny RULE`, one line per finding, or `# allow`: the one refusal-corpus format,
// testing/README.md), run by the one corpus runner. Settings: `# profile: spec|claude-code` and
// `# path: RELATIVE` (what to lint inside the case; default the case folder). Every rule of
// Rules() must have a case. Adding a case needs no recompile.
#include "skills/lint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "skills/mcp_surface.h"
#include "testing/corpus.h"

namespace slurm_rca::skills {
namespace {

namespace fs = std::filesystem;

const fs::path kTestdata = fs::path(SLURM_RCA_SOURCE_DIR) / "skills" / "testdata";

// Every case of testdata/ linted as its settings say; findings as diagnostics.
const base::CorpusReport& Corpus() {
  static const base::CorpusReport report = base::RunCorpus(
      {.path = kTestdata.string(),
       .layout = base::CorpusLayout::kDirectory,
       .settings = {"profile", "path"}},
      [](const base::CorpusCase& c) {
        const std::map<std::string, std::string>& settings = c.expect.settings;
        LintOptions options;
        options.surface = McpSurface();
        auto profile = settings.find("profile");
        if (profile != settings.end()) {
          EXPECT_TRUE(profile->second == "spec" || profile->second == "claude-code")
              << c.name << ": profile: spec or claude-code";
          if (profile->second == "claude-code") options.profile = Profile::kClaudeCode;
        }
        auto path = settings.find("path");
        const fs::path target =
            path == settings.end() ? fs::path(c.path) : c.path / fs::path(path->second);
        LintResult result = LintPath(target.string(), options);
        for (const base::Diagnostic& f : result.findings) {
          EXPECT_FALSE(f.file.empty());
          EXPECT_FALSE(f.message.empty());
        }
        return result.findings;
      });
  return report;
}

TEST(Corpus, EveryCaseProducesExactlyItsRule) {
  testing::ExpectCorpusPasses(Corpus());
  EXPECT_GE(Corpus().cases.size(), Rules().size()) << "a case per rule, plus the clean one";
}

TEST(Corpus, EveryRuleHasACase) {
  const std::set<std::string> covered = Corpus().Rules();
  for (const Rule& r : Rules()) EXPECT_TRUE(covered.count(r.id)) << "no testdata case for " << r.id;
  EXPECT_TRUE(Corpus().HasAllow()) << "the corpus needs a clean case";
}

TEST(Corpus, FindingsCarryTheLineOfTheProblem) {
  LintOptions options;
  options.surface = McpSurface();
  LintResult r = LintPath((kTestdata / "name-charset").string(), options);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].line, 2);  // `name:` is the first line after the opening ---
  r = LintPath((kTestdata / "unknown-topic").string(), options);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_GT(r.findings[0].line, 5);
}

std::vector<std::string> FigureTexts(const std::string& text) {
  std::vector<std::string> out;
  for (const Figure& f : FindFigures(text)) out.push_back(f.text);
  return out;
}

TEST(Figures, DigitsAndCardinalsButNotCodeUrlsHashesOrListMarkers) {
  EXPECT_EQ(FigureTexts("waits 300 s, then 1,235.6 min and 4.27x"),
            (std::vector<std::string>{"300", "1,235.6", "4.27"}));
  EXPECT_EQ(FigureTexts("eleven runbooks, tens of nodes, Ten"),
            (std::vector<std::string>{"eleven", "tens", "Ten"}));
  EXPECT_TRUE(FigureTexts("one node, tens, twice, first").empty());
  EXPECT_TRUE(FigureTexts("commit c02b52f and S01 and x86_64 and 1a2b").empty());
  EXPECT_TRUE(FigureTexts("`sdiag --reset 30` and <!-- 12 --> and ibstat(8)").empty());
  EXPECT_TRUE(FigureTexts("[doc](https://x.org/v2/page#L10) see https://a.b/3").empty());
  EXPECT_EQ(FigureTexts("1. first\n2. second 5\n"), (std::vector<std::string>{"5"}));
  EXPECT_EQ(FigureTexts("```\nsleep 9\n```\n"), (std::vector<std::string>{"9"}));
  const std::vector<Figure> f = FindFigures("a\nb 7\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].line, 2);
}

TEST(Surface, ReadFromTheMcpLibrary) {
  const Surface s = McpSurface();
  EXPECT_EQ(s.tools, (std::set<std::string>{"slurm_describe", "slurm_overview", "slurm_query"}));
  ASSERT_TRUE(s.topics.count("queue"));
  EXPECT_TRUE(s.topics.at("queue").count("state"));
  EXPECT_TRUE(s.topics.at("diagnostics").empty());
  EXPECT_TRUE(s.topics.count("logs"));
}

TEST(Format, GithubAnnotationsAndJson) {
  LintResult r;
  r.skills = 1;
  // Severity is the rule's: name-charset is an error, body-lines a warning.
  r.findings.push_back(
      {.file = "skills/a,b/SKILL.md", .line = 2, .rule = "name-charset", .message = "bad: 50%\nx"});
  r.findings.push_back({.file = "s/SKILL.md", .line = 0, .rule = "body-lines", .message = "long"});
  EXPECT_EQ(SeverityOf(r.findings[0]), Severity::kError);
  EXPECT_EQ(SeverityOf(r.findings[1]), Severity::kWarning);
  EXPECT_EQ(FormatFindings(r, OutputFormat::kGithub),
            "::error file=skills/a%2Cb/SKILL.md,line=2,title=name-charset::bad: 50%25%0Ax\n"
            "::warning file=s/SKILL.md,line=1,title=body-lines::long\n");
  const std::string json = FormatFindings(r, OutputFormat::kJson);
  EXPECT_NE(json.find("\"errors\": 1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"warnings\": 1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"rule\": \"name-charset\""), std::string::npos) << json;
  EXPECT_NE(FormatFindings(r, OutputFormat::kText)
                .find("skills/a,b/SKILL.md:2: error: [name-charset] bad: 50%"),
            std::string::npos);
}

}  // namespace
}  // namespace slurm_rca::skills
