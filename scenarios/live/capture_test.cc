// The committed captures of real Slurm output (fixtures/slurm-22.05/, made by `rca-bench
// cluster capture`) against the guard corpus. Fast and offline: no lab is started. A corpus read
// added without recapturing fails here.
#include "scenarios/live/capture.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "guard/corpus.h"

namespace slurm_rca::live {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = SLURM_RCA_SOURCE_DIR;
const fs::path kFixtures = kRoot / "fixtures/slurm-22.05";
constexpr std::string_view kVersion = "22.05.8";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

base::Result<CapturePlan> Plan(std::vector<guard::ArgvCase> extra = {}) {
  base::Result<std::vector<guard::ArgvCase>> load =
      guard::LoadArgvCases((kRoot / "guard/testdata").string());
  EXPECT_TRUE(load.ok()) << load.status().message();
  std::vector<guard::ArgvCase> cases = load.ok() ? *load : std::vector<guard::ArgvCase>{};
  cases.insert(cases.end(), extra.begin(), extra.end());
  return PlanCapture(cases, guard::Guard(guard::GuardOptions{.clusters = {"rca"}}));
}

nlohmann::json Manifest() {
  std::string text = Slurp(kFixtures / "manifest.json");
  EXPECT_FALSE(text.empty()) << "no " << (kFixtures / "manifest.json")
                             << ": run `rca-bench cluster capture`";
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// What disagrees between a plan and a manifest: a planned read without exactly one capture, or
// a capture no planned read asks for.
std::vector<std::string> Mismatches(const CapturePlan& plan, const nlohmann::json& manifest) {
  std::map<std::vector<std::string>, int> captured;
  for (const auto& r : manifest["reads"]) {
    captured[r["argv"].get<std::vector<std::string>>()]++;
  }
  std::vector<std::string> out;
  std::set<std::vector<std::string>> planned;
  for (const PlannedRead& r : plan.reads) {
    planned.insert(r.argv);
    int n = captured.count(r.argv) ? captured[r.argv] : 0;
    if (n != 1) {
      out.push_back(guard::FormatArgv(r.argv) + ": " + std::to_string(n) +
                    " captures (recapture with `rca-bench cluster capture`)");
    }
  }
  for (const auto& [argv, n] : captured) {
    if (!planned.count(argv)) out.push_back(guard::FormatArgv(argv) + ": captured, not in corpus");
  }
  return out;
}

TEST(CaptureFixtures, EveryAllowedReadOfTheCorpusHasExactlyOneCapture) {
  base::Result<CapturePlan> plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  nlohmann::json manifest = Manifest();
  ASSERT_TRUE(manifest.is_object() && manifest["reads"].is_array());
  for (const std::string& m : Mismatches(*plan, manifest)) ADD_FAILURE() << m;
}

TEST(CaptureFixtures, ANewCorpusReadWithoutACaptureIsCaught) {
  guard::ArgvCase added{.file = "new.txt", .line = 1, .argv = {"sinfo", "-p", "fresh"}};
  base::Result<CapturePlan> plan = Plan({added});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::vector<std::string> m = Mismatches(*plan, Manifest());
  ASSERT_EQ(m.size(), 2u);  // the read and its --json variant
  EXPECT_EQ(m[0].rfind("sinfo -p fresh: 0 captures", 0), 0u) << m[0];
}

TEST(CaptureFixtures, ThePlanHasJsonVariantsAndNoNvidiaSmi) {
  base::Result<CapturePlan> plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::set<std::string> programs_with_variants;
  for (const PlannedRead& r : plan->reads) {
    EXPECT_NE(r.argv[0], "nvidia-smi");
    if (r.origin == "json-variant") {
      programs_with_variants.insert(r.argv[0]);
      EXPECT_EQ(r.argv.back(), "--json");
    }
  }
  EXPECT_EQ(programs_with_variants, (std::set<std::string>{"sacct", "sinfo", "squeue"}));
  bool nvidia_excluded = false;
  for (const std::string& e : plan->excluded) nvidia_excluded |= e.rfind("nvidia-smi", 0) == 0;
  EXPECT_TRUE(nvidia_excluded);
}

TEST(CaptureFixtures, EachFileRecordsTheVersionAndItsArgvAndNoTemporaryPath) {
  nlohmann::json manifest = Manifest();
  ASSERT_TRUE(manifest.is_object());
  EXPECT_EQ(manifest["slurm_version"], kVersion);
  std::set<std::string> listed;
  for (const auto& r : manifest["reads"]) {
    std::string file = r["file"];
    listed.insert(file);
    auto argv = r["argv"].get<std::vector<std::string>>();
    EXPECT_EQ(file, "reads/" + CaptureFileName(argv));
    EXPECT_EQ(r["slurm_version"], kVersion) << file;
    std::string text = Slurp(kFixtures / file);
    ASSERT_FALSE(text.empty()) << file << " is missing";
    for (const char* temp : {"/tmp/", "\\/tmp\\/", "rca-capture-"}) {
      EXPECT_EQ(text.find(temp), std::string::npos) << file << " holds a temporary path";
    }
    base::Result<CaptureFile> f = ParseCaptureFile(text);
    ASSERT_TRUE(f.ok()) << file << ": " << f.status().message();
    EXPECT_EQ(f->slurm_version, kVersion) << file;
    auto parsed = guard::ParseArgvLine(f->argv_line);
    ASSERT_TRUE(parsed.ok()) << file << ": " << parsed.status().message();
    EXPECT_EQ(*parsed, argv) << file;
    EXPECT_EQ(f->outcome, r["outcome"]) << file;
    EXPECT_EQ(f->exit_code, r["exit_code"]) << file;
    EXPECT_EQ(f->stdout_text.size(), r["stdout_bytes"]) << file;
    EXPECT_EQ(f->stderr_text.size(), r["stderr_bytes"]) << file;
  }
  for (const auto& entry : fs::directory_iterator(kFixtures / "reads")) {
    std::string rel = "reads/" + entry.path().filename().string();
    EXPECT_TRUE(listed.count(rel)) << rel << " is not in manifest.json";
  }
  std::string readme = Slurp(kFixtures / "README.md");
  EXPECT_NE(readme.find("rca-bench cluster capture"), std::string::npos);
  EXPECT_EQ(readme.find("/tmp/"), std::string::npos);
}

TEST(CaptureFormat, RendersAndParsesBackExactly) {
  for (const auto& [out, err] :
       std::vector<std::pair<std::string, std::string>>{{"", ""},
                                                        {"a\nb\n", ""},
                                                        {"no newline", "err\n"},
                                                        {"\n\n", "x"},
                                                        {"--- stderr\n", "--- stdout\n"}}) {
    CaptureFile f{.slurm_version = "22.05.8",
                  .argv_line = "sinfo -o \"%N %t\"",
                  .exec_line = "",
                  .outcome = "exited",
                  .exit_code = 1,
                  .duration_ms = 7,
                  .stdout_text = out,
                  .stderr_text = err};
    base::Result<CaptureFile> back = ParseCaptureFile(RenderCaptureFile(f));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->stdout_text, out);
    EXPECT_EQ(back->stderr_text, err);
    EXPECT_EQ(back->argv_line, f.argv_line);
    EXPECT_EQ(back->exit_code, 1);
    EXPECT_EQ(back->duration_ms, 7);
  }
  base::Result<CaptureFile> bad = ParseCaptureFile("not a capture\n");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "no capture banner");
}

TEST(CaptureFormat, FileNamesAreStableSlugs) {
  std::string name = CaptureFileName({"squeue", "--noheader", "-o", "%i|%P"});
  EXPECT_EQ(name.rfind("squeue-noheader-o-i-P-", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("squeue-noheader-o-i-P-").size() + 6 + 4) << name;
  EXPECT_EQ(name, CaptureFileName({"squeue", "--noheader", "-o", "%i|%P"}));
  EXPECT_NE(name, CaptureFileName({"squeue", "--noheader", "-o", "%i %P"}));
  EXPECT_EQ(ReplaceAll("/tmp/x/etc and /tmp/x", "/tmp/x", "/LAB"), "/LAB/etc and /LAB");
}

}  // namespace
}  // namespace slurm_rca::live
