// skill-lint's tests: the broken-skill corpus (testdata/), read at run time, and unit tests of
// the figure finder, the surface cross-check and the output formats.
//
// Corpus: each testdata/<case>/ is linted and must produce exactly the rule named by its
// `expect` file (every finding has that rule id, at least one finding), or nothing for
// `rule: none`. `expect` lines: `rule: ID`, optional `profile: spec|claude-code` and
// `path: RELATIVE` (what to lint inside the case; default the case folder). Every rule of
// Rules() must have a case. Adding a case needs no recompile.
#include "skills/lint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "skills/mcp_surface.h"

namespace slurm_rca::skills {
namespace {

namespace fs = std::filesystem;

const fs::path kTestdata = fs::path(SLURM_RCA_SOURCE_DIR) / "skills" / "testdata";

std::map<std::string, std::string> ReadExpect(const fs::path& file) {
  std::map<std::string, std::string> kv;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    kv[line.substr(0, colon)] = value;
  }
  return kv;
}

std::vector<fs::path> Cases() {
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(kTestdata)) {
    if (e.is_directory()) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

TEST(Corpus, EveryCaseProducesExactlyItsRule) {
  const Surface surface = McpSurface();
  const std::vector<fs::path> cases = Cases();
  ASSERT_GE(cases.size(), Rules().size()) << "a case per rule, plus the clean one";
  for (const fs::path& c : cases) {
    SCOPED_TRACE(c.filename().string());
    ASSERT_TRUE(fs::exists(c / "expect")) << "every case needs an expect file";
    auto expect = ReadExpect(c / "expect");
    ASSERT_TRUE(expect.count("rule")) << "expect names no rule";
    const std::string rule = expect["rule"];
    if (rule != "none") {
      ASSERT_NE(FindRule(rule), nullptr) << "unknown rule id " << rule;
    }
    LintOptions options;
    options.surface = surface;
    options.profile = expect["profile"] == "claude-code" ? Profile::kClaudeCode : Profile::kSpec;
    const fs::path target = expect.count("path") ? c / expect["path"] : c;
    LintResult result = LintPath(target.string(), options);
    std::set<std::string> got;
    for (const Finding& f : result.findings) got.insert(f.rule);
    if (rule == "none") {
      EXPECT_TRUE(result.findings.empty()) << FormatFindings(result, OutputFormat::kText);
    } else {
      EXPECT_EQ(got, std::set<std::string>{rule}) << FormatFindings(result, OutputFormat::kText);
      for (const Finding& f : result.findings) {
        EXPECT_FALSE(f.file.empty());
        EXPECT_FALSE(f.message.empty());
      }
    }
  }
}

TEST(Corpus, EveryRuleHasACase) {
  std::set<std::string> covered;
  for (const fs::path& c : Cases()) covered.insert(ReadExpect(c / "expect")["rule"]);
  for (const Rule& r : Rules()) EXPECT_TRUE(covered.count(r.id)) << "no testdata case for " << r.id;
  EXPECT_TRUE(covered.count("none")) << "the corpus needs a clean case";
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
  r.findings.push_back({"name-charset", Severity::kError, "skills/a,b/SKILL.md", 2, "bad: 50%\nx"});
  r.findings.push_back({"body-lines", Severity::kWarning, "s/SKILL.md", 0, "long"});
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
