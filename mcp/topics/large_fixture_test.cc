// slurm-mcp's answers on what real Slurm printed on the 1,024-node large lab (issue #35):
// fixtures/large-1024 holds the raw outputs of the queue, nodes and accounting topics and of the
// overview's own reads, gzipped, recorded by bench/large_lab.sh (scale_bench --save-dir) with
// node700 drained and partition debug DOWN (its README says when and how). scale_test checks the
// same properties on generated outputs of any size; this checks them on Slurm's own text:
// group_by is exact against a count made here from the raw lines, a cut read is a lower bound
// that drops the piece of a line, pages of one read are its rows once, and the overview stays
// under its bound and names the drained node and the partition that is not up.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mcp/topics/hostlist.h"
#include "mcp/topics/overview.h"
#include "mcp/topics/site_sample.h"
#include "mcp/topics/topics.h"

namespace slurm_rca::mcp {
namespace {

const std::string kDir = std::string(SLURM_RCA_SOURCE_DIR) + "/fixtures/large-1024/";
const Caps kAll{.max_rows = 1000000, .max_bytes = std::size_t{1} << 32};

const Topic& T(const std::string& name) { return *FindTopic(name); }

// The whole of a gzipped file; "" with a failure when it cannot be read.
std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    ADD_FAILURE() << "cannot open " << path;
    return "";
  }
  std::string out;
  char buffer[1 << 16];
  for (int n; (n = gzread(f, buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  int error = Z_OK;
  const char* message = gzerror(f, &error);
  if (error != Z_OK && error != Z_STREAM_END) ADD_FAILURE() << path << ": " << message;
  gzclose(f);
  return out;
}

struct Recorded {
  std::vector<std::string> argv;
  std::string out;
};

// NAME.argv (JSON) and NAME.out.gz of the fixture.
const Recorded& Load(const std::string& name) {
  static std::map<std::string, Recorded> loaded;
  auto it = loaded.find(name);
  if (it != loaded.end()) return it->second;
  Recorded r;
  std::ifstream argv(kDir + name + ".argv");
  std::stringstream text;
  text << argv.rdbuf();
  r.argv = Json::parse(text.str()).get<std::vector<std::string>>();
  r.out = Gunzip(kDir + name + ".out.gz");
  return loaded.emplace(name, std::move(r)).first->second;
}

std::vector<std::string> Lines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, '|');) f.push_back(field);
  return f;
}

ParseOptions GroupBy(std::vector<std::string> columns) {
  ParseOptions o;
  o.group_by = std::move(columns);
  return o;
}

TEST(LargeFixture, EachReadIsWhatItsTopicReadsAndIsSiteSized) {
  // When a topic's argv changes, these outputs no longer answer it: record them again
  // (bench/large_lab.sh on a large lab; fixtures/large-1024/README.md).
  for (const std::string name : {"queue", "nodes", "accounting"}) {
    EXPECT_EQ(Load(name).argv, DefaultArgv(T(name))) << name;
  }
  for (const OverviewRead& r : OverviewReads()) {
    if (r.topic != "queue") {
      EXPECT_EQ(Load("overview-" + r.topic).argv, r.argv) << r.topic;
    }
  }
  std::set<std::string> nodes;
  for (const std::string& line : Lines(Load("nodes").out)) nodes.insert(Fields(line).at(0));
  EXPECT_EQ(nodes.size(), 1024u);
  // Array tasks pending as one record each are one row: the queue's rows are records.
  EXPECT_GE(Lines(Load("queue").out).size(), 1000u);
  EXPECT_GE(Lines(Load("accounting").out).size(), 50000u);
}

TEST(LargeFixture, QueueGroupedByStateAndReasonIsExactAgainstTheRawLines) {
  const std::string& out = Load("queue").out;
  const Parsed p = Parse(T("queue"), out, kAll, {}, GroupBy({"state", "reason"}));
  const auto raw = site_sample::RawQueueCount(out);
  EXPECT_EQ(p.total_rows, Lines(out).size());
  EXPECT_FALSE(p.output_cut);
  ASSERT_EQ(p.groups.size(), raw.size());
  std::size_t previous = SIZE_MAX, sum = 0;
  for (const Json& g : p.groups) {
    const auto key = std::make_pair(g["state"].get<std::string>(), g["reason"].get<std::string>());
    ASSERT_TRUE(raw.count(key)) << g.dump();
    EXPECT_EQ(g["count"].get<std::size_t>(), raw.at(key)) << g.dump();
    EXPECT_LE(g["count"].get<std::size_t>(), previous) << "ordered by count";
    previous = g["count"].get<std::size_t>();
    sum += previous;
  }
  EXPECT_EQ(sum, p.total_rows);
  // The large profile's reasons are all there (large_profile.h), each a group.
  std::set<std::string> reasons;
  for (const auto& [key, n] : raw) reasons.insert(key.second);
  for (const char* want : {"Priority", "Resources", "AssocGrpJobsLimit", "QOSMaxJobsPerUserLimit",
                           "Dependency", "JobHeldUser", "BeginTime", "Reservation",
                           "PartitionDown"}) {
    EXPECT_TRUE(reasons.count(want)) << want;
  }
}

TEST(LargeFixture, AccountingGroupedByStateAndUserIsExactAgainstTheRawLines) {
  const std::string& out = Load("accounting").out;
  std::map<std::pair<std::string, std::string>, std::size_t> raw;
  for (const std::string& line : Lines(out)) {
    const std::vector<std::string> f = Fields(line);
    ASSERT_GE(f.size(), 8u) << line;
    ++raw[{f[3], f[2]}];  // JobID|Account|User|State|...
  }
  const Parsed p = Parse(T("accounting"), out, kAll, {}, GroupBy({"state", "user"}));
  EXPECT_EQ(p.total_rows, Lines(out).size());
  ASSERT_EQ(p.groups.size(), raw.size());
  for (const Json& g : p.groups) {
    const auto key = std::make_pair(g["state"].get<std::string>(), g["user"].get<std::string>());
    ASSERT_TRUE(raw.count(key)) << g.dump();
    EXPECT_EQ(g["count"].get<std::size_t>(), raw.at(key)) << g.dump();
  }
}

TEST(LargeFixture, NodesGroupedByStateAndReasonCountDistinctNodesWithTheirHostlist) {
  const std::string& out = Load("nodes").out;
  // node|partition|state|cpus|gres|reason, a row per node per partition.
  std::map<std::pair<std::string, std::string>, std::set<std::string>> raw;
  for (const std::string& line : Lines(out)) {
    const std::vector<std::string> f = Fields(line);
    ASSERT_GE(f.size(), 6u) << line;
    raw[{f[2], f[5]}].insert(f[0]);
  }
  const Parsed p = Parse(T("nodes"), out, kAll, {}, GroupBy({"state", "reason"}));
  ASSERT_EQ(p.groups.size(), raw.size());
  bool drained = false;
  for (const Json& g : p.groups) {
    const auto key = std::make_pair(g["state"].get<std::string>(), g["reason"].get<std::string>());
    ASSERT_TRUE(raw.count(key)) << g.dump();
    const std::set<std::string>& names = raw.at(key);
    EXPECT_EQ(g["node_count"].get<std::size_t>(), names.size()) << g.dump();
    if (g.contains("hostlist")) {
      EXPECT_EQ(g["hostlist"],
                CompressHostlist(std::vector<std::string>(names.begin(), names.end())));
    }
    // node700 was drained while it ran a job: Slurm says draining.
    if (key.first.rfind("drain", 0) == 0) {
      drained = true;
      EXPECT_EQ(g["hostlist"], "node700") << g.dump();
      EXPECT_EQ(key.second, "large_lab.sh: health check failed") << g.dump();
    }
  }
  EXPECT_TRUE(drained) << "the fixture was recorded with node700 drained";
}

TEST(LargeFixture, EveryCutOfARealReadIsALowerBoundWithoutAPieceOfARow) {
  for (const std::string name : {"queue", "nodes", "accounting"}) {
    const std::string& out = Load(name).out;
    const std::size_t total = Lines(out).size();
    for (std::size_t cap : {out.size() / 7, out.size() / 3 + 1, out.size() / 2 + 7,
                            out.size() - 1}) {
      SCOPED_TRACE(name + " cut at " + std::to_string(cap));
      const std::string kept = out.substr(0, cap);
      ParseOptions o;
      o.output_cut = true;
      o.output_bytes = out.size();
      const Parsed p = Parse(T(name), kept, Caps{}, {}, o);
      const auto complete =
          static_cast<std::size_t>(std::count(kept.begin(), kept.end(), '\n'));
      EXPECT_EQ(p.total_rows, complete);
      EXPECT_LT(p.total_rows, total);
      EXPECT_TRUE(p.truncated);
      EXPECT_EQ(p.parse_error, "") << "no piece of a line is parsed";
      const std::string note = TruncationNote(p);
      EXPECT_NE(note.find("at least " + std::to_string(complete) + " rows"), std::string::npos)
          << note;
      EXPECT_NE(note.find(" of " + std::to_string(out.size()) + " bytes"), std::string::npos)
          << note;
    }
  }
}

TEST(LargeFixture, PagesOfTheRealQueueAreItsRowsInOrderOnce) {
  const std::string& out = Load("queue").out;
  const Parsed whole = Parse(T("queue"), out, kAll);
  std::vector<std::string> seen;
  for (std::size_t offset = 0;;) {
    ParseOptions o;
    o.offset = offset;
    const Parsed page = Parse(T("queue"), out, Caps{}, {}, o);
    ASSERT_EQ(page.total_rows, whole.total_rows);
    for (const Json& row : page.rows) seen.push_back(row["jobid"].get<std::string>());
    offset += page.rows.size();
    if (!page.truncated || page.rows.empty()) break;
  }
  ASSERT_EQ(seen.size(), whole.rows.size());
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], whole.rows[i]["jobid"]) << i;
}

TEST(LargeFixture, TheOverviewOfTheRealLabIsBoundedAndNamesEveryAnomaly) {
  std::vector<Evidence> reads;
  for (const OverviewRead& r : OverviewReads()) {
    const Recorded& rec = Load(r.topic == "queue" ? "queue" : "overview-" + r.topic);
    Evidence e;
    e.outcome = Evidence::Outcome::kOk;
    e.source = "live";
    e.evidence_time = "2026-12-05T09:00:00Z";
    e.argv = rec.argv;
    e.exit_code = 0;
    e.out = rec.out;
    reads.push_back(std::move(e));
  }
  const OverviewSummary s = SummarizeOverview(reads, "live");
  std::cout << s.text << "\n";
  EXPECT_LE(s.text.size(), kOverviewMaxBytes);
  EXPECT_LE(s.structured.dump().size(), kOverviewMaxBytes);
  EXPECT_EQ(s.text.rfind("slurm_overview (live): 1024 nodes", 0), 0u) << s.text;
  const std::size_t anomalies = s.text.find("ANOMALIES");
  ASSERT_NE(anomalies, std::string::npos) << s.text;
  // node700 sorts far past the 200th row of sinfo -N: it is named, with its reason, first.
  const std::size_t drained = s.text.find("node700");
  ASSERT_NE(drained, std::string::npos) << s.text;
  EXPECT_LT(drained, s.text.find("NODES")) << "among the anomalies";
  EXPECT_NE(s.text.find("large_lab.sh: health check failed"), std::string::npos) << s.text;
  const std::size_t partition = s.text.find("debug");
  ASSERT_NE(partition, std::string::npos) << s.text;
  EXPECT_LT(partition, s.text.find("NODES")) << "the partition not up is an anomaly";
  // Nine reasons: eight listed, the ninth (Resources, 3 jobs) counted, never dropped.
  EXPECT_NE(s.text.find("Reservation 10 (and 1 more, 3 in all)"), std::string::npos) << s.text;
}

}  // namespace
}  // namespace slurm_rca::mcp
