#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>

#include "base/argv_line.h"
#include "base/diagnostic.h"
#include "base/file.h"
#include "base/status.h"
#include "base/strings.h"
#include "base/time.h"
#include "base/yaml.h"

namespace slurm_rca::base {
namespace {

TEST(Diagnostic, NamesFileLineRuleAndMessage) {
  EXPECT_EQ((Diagnostic{"s.yaml", 12, "signal-outcome", "bad"}).ToString(),
            "s.yaml:12: signal-outcome: bad");
  EXPECT_EQ((Diagnostic{.file = "a.jsonl", .line = 3, .message = "no answer"}).ToString(),
            "a.jsonl:3: no answer");
}

TEST(ArgvLine, ParsesQuotesAndEscapes) {
  auto argv = ParseArgvLine(R"(a 'b c' "d\"e" "\0\x41\e" f\ g "")");
  ASSERT_TRUE(argv.ok()) << argv.status().message();
  EXPECT_EQ(*argv, (std::vector<std::string>{"a", "b c", "d\"e", std::string("\0A\x1b", 3),
                                             "f g", ""}));
  EXPECT_EQ(ParseArgvLine(R"(a "unterminated)").status().message(), "unterminated \"");
  EXPECT_EQ(ParseArgvLine(R"(a 'unterminated)").status().message(), "unterminated '");
  EXPECT_EQ(ParseArgvLine(R"(a \q)").status().message(), "unknown escape \\q");
  EXPECT_EQ(ParseArgvLine(R"(a "\x4")").status().message(), "\\x needs two hex digits");
  EXPECT_EQ(ParseArgvLine("a \\").status().message(), "a backslash ends the line");
}

TEST(ArgvLine, FormatArgvReadsBack) {
  std::vector<std::string> argv = {"sinfo", "a b", std::string("x\0y", 3), "q\"", "", "%N|%T"};
  auto back = ParseArgvLine(FormatArgv(argv));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, argv);
}

TEST(Strings, TrimLowerSplit) {
  EXPECT_EQ(Trim("  gpu \t\r\n"), "gpu");
  EXPECT_EQ(Trim("\n x \n", kBlanks), "\n x \n");
  EXPECT_EQ(Trim(" \t x\t ", kBlanks), "x");
  EXPECT_EQ(Trim("   "), "");
  EXPECT_EQ(Trim(std::string_view("v\0\n", 3), std::string_view(" \n\0", 3)), "v");
  EXPECT_EQ(Lower("NoDe1"), "node1");
  EXPECT_EQ(SplitFields("a,,b", ',').size(), 3u);
  EXPECT_EQ(SplitFields("", ',').size(), 1u);
  EXPECT_EQ(SplitFields("a|b", '|')[1], "b");
}

TEST(Status, KindsMessagesAndTheRpcPayload) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().ToString(), "OK");
  EXPECT_EQ(Status::Error("slurmctld did not answer").ToString(), "slurmctld did not answer");
  EXPECT_EQ(Status::Error("x").code(), Status::Code::kFailed);
  EXPECT_EQ(Status::MalformedReply("choices[0] is missing").ToString(),
            "malformed reply: choices[0] is missing");
  EXPECT_EQ(Status::DeadlineExceeded("30 s").ToString(), "deadline exceeded: 30 s");
  Status rpc = Status::RpcError(-32602, "unknown tool", R"({"tool":"x"})");
  EXPECT_FALSE(rpc.ok());
  EXPECT_EQ(rpc.code(), Status::Code::kRpcError);
  EXPECT_EQ(rpc.rpc_code(), -32602);
  EXPECT_EQ(rpc.payload(), R"({"tool":"x"})");
  EXPECT_EQ(rpc.ToString(), "error -32602: unknown tool");
  EXPECT_EQ(Status::IoError("m").rpc_code(), 0);
}

TEST(Result, AValueOrWhyNotAndNeverAnOkStatusWithoutAValue) {
  Result<int> v(7);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 7);
  Result<int> e(Status::IoError("gone"));
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().ToString(), "io error: gone");
  Result<int> wrong{Status()};
  EXPECT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), Status::Code::kInvalidArgument);
}

TEST(Time, IsoUtc) {
  EXPECT_EQ(IsoUtcFromUnix(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(IsoUtcFromUnix(1764676800), "2025-12-02T12:00:00Z");
  auto t = std::chrono::system_clock::time_point(std::chrono::milliseconds(1764676800123));
  EXPECT_EQ(IsoUtc(t, true), "2025-12-02T12:00:00.123Z");
  EXPECT_EQ(IsoUtc(t), "2025-12-02T12:00:00Z");
  EXPECT_EQ(IsoUtcNow().size(), 20u);
  // Year 25 (a fuzzer's squeue line): no overflow converting to the clock's nanoseconds.
  std::string y25 = IsoUtcFromUnix(-61349364000);
  EXPECT_NE(y25.find("-11-30T22:00:00Z"), std::string::npos) << y25;
}

TEST(File, ReadWriteAndAbsence) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("base-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "f").string();
  EXPECT_EQ(ReadFile(path), std::nullopt);  // absent is nullopt, not ""
  ASSERT_TRUE(WriteFile(path, std::string("a\0b", 3)));
  EXPECT_EQ(ReadFile(path), std::string("a\0b", 3));
  ASSERT_TRUE(WriteFile(path, ""));
  EXPECT_EQ(ReadFile(path), "");  // empty is "", not nullopt
  EXPECT_EQ(ReadFile(dir.string()), std::nullopt);
  EXPECT_FALSE(WriteFile((dir / "no" / "such").string(), "x"));
  fs::remove_all(dir);
}

TEST(YamlReader, StrictAndLined) {
  std::vector<Diagnostic> found;
  YamlReader r("f.yaml", &found);
  EXPECT_FALSE(r.Load("a: [1, 2\nb: 3\n").has_value());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, kRuleYamlSyntax);
  found.clear();
  std::optional<YAML::Node> doc = r.Load("id: x\nid: y\nn: '3'\nm: 3\nextra: 1\n");
  ASSERT_TRUE(doc.has_value());
  bool complete = true;
  EXPECT_TRUE(r.Keys(*doc, {"id", "n", "m", "title"}, {}, "the doc", 1, &complete));
  EXPECT_FALSE(complete);
  std::set<std::string> rules;
  for (const Diagnostic& d : found) rules.insert(d.rule);
  EXPECT_EQ(rules, (std::set<std::string>{kRuleDuplicateKey, kRuleUnknownKey, kRuleMissingKey}));
  found.clear();
  EXPECT_EQ(r.Int((*doc)["m"], "m", 1), 3);
  EXPECT_EQ(r.Int((*doc)["n"], "n", 1), std::nullopt);  // quoted: a string, not a number
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].ToString(), "f.yaml:3: wrong-type: n must be an integer");
  EXPECT_EQ(r.Str((*doc)["absent"], "absent", 7), std::nullopt);
  EXPECT_EQ(found.back().line, 7);  // no line of its own: the caller's
  EXPECT_FALSE(r.Guarded([&] { (*doc)["m"].as<std::vector<int>>(); }));
  EXPECT_EQ(found.back().rule, kRuleYamlSyntax);
}

}  // namespace
}  // namespace slurm_rca::base
