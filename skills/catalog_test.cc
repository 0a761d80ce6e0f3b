#include "skills/catalog.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace slurm_rca::skills {
namespace {

namespace fs = std::filesystem;

const fs::path kSkills = fs::path(SLURM_RCA_SOURCE_DIR) / "skills";

TEST(Catalog, LoadsTheShippedRunbooks) {
  Catalog c = LoadCatalog(kSkills.string());
  EXPECT_TRUE(c.problems.empty()) << c.problems[0].ToString();
  ASSERT_GE(c.skills.size(), 11u);
  for (const Skill& s : c.skills) {
    EXPECT_EQ(s.name, s.dir_name);
    EXPECT_FALSE(s.description.empty());
    EXPECT_TRUE(s.meta.IsMap());
    EXPECT_GT(s.body_line, 3);
    EXPECT_EQ(s.text.substr(0, 4), "---\n");
    EXPECT_NE(s.body.find("## Steps"), std::string::npos);
  }
  auto it = std::find_if(c.skills.begin(), c.skills.end(),
                         [](const Skill& s) { return s.name == "gpu-node-drained"; });
  ASSERT_NE(it, c.skills.end());
  ASSERT_FALSE(it->references.empty());
  EXPECT_EQ(it->references[0].relative_path, "references/operator-handoff.md");
}

TEST(Catalog, TestDataIsNotASkill) {
  EXPECT_FALSE(IsSkillDir((kSkills / "testdata").string()));
  EXPECT_TRUE(IsSkillDir((kSkills / "queue-not-draining").string()));
}

TEST(Catalog, LoadProblemsAreValues) {
  SkillLoad l = LoadSkill((kSkills / "testdata" / "frontmatter-unclosed" / "broken").string());
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.problems[0].rule, "frontmatter-unclosed");
  l = LoadSkill((kSkills / "testdata" / "no-such-dir").string());
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.problems[0].rule, "missing-skill-md");
  EXPECT_NE(l.problems[0].ToString().find("missing-skill-md"), std::string::npos);
}

}  // namespace
}  // namespace slurm_rca::skills
