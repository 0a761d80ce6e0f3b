// slurm-mcp's answers at the size of real sites (issue #35): a read cut by the executor's cap is a
// lower bound for every topic of rows; group_by is exact against a count made from the raw
// output; pages of one read are its rows, in order, once; the overview stays under its bound and
// leaves no unavailable node out, at 4 and at 1,024 nodes. The large outputs are generated here
// in the format the 22.05 captures show (fixtures/slurm-22.05), seeded, with their true counts.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <iomanip>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mcp/backend/live_backend.h"
#include "mcp/test_temp_dir.h"
#include "mcp/topics/hostlist.h"
#include "mcp/topics/tools.h"
#include "mcp/topics/site_sample.h"
#include "mcp/topics/overview.h"
#include "mcp/topics/topics.h"

namespace slurm_rca::mcp {
namespace {

using site_sample::MakeSite;
using site_sample::Name;
using site_sample::Site;

const Topic& T(const std::string& name) { return *FindTopic(name); }

ParseOptions GroupBy(std::vector<std::string> columns) {
  ParseOptions o;
  o.group_by = std::move(columns);
  return o;
}

const Caps kAll{.max_rows = 1000000, .max_bytes = std::size_t{1} << 32};

TEST(GroupBy, QueueByStateAndReasonIsExactAgainstTheRawCount) {
  const Site site = MakeSite(1024, 50000, 1);
  const Parsed p = Parse(T("queue"), site.squeue, kAll, {}, GroupBy({"state", "reason"}));
  const auto raw = site_sample::RawQueueCount(site.squeue);
  ASSERT_EQ(p.groups.size(), raw.size());
  EXPECT_EQ(p.total_rows, 50000u);
  std::uint64_t jobs = 0;
  std::size_t previous = SIZE_MAX;
  for (const Json& g : p.groups) {
    const auto key = std::make_pair(g["state"].get<std::string>(), g["reason"].get<std::string>());
    ASSERT_TRUE(raw.count(key)) << g.dump();
    EXPECT_EQ(g["count"].get<std::size_t>(), raw.at(key)) << g.dump();
    EXPECT_LE(g["count"].get<std::size_t>(), previous) << "ordered by count";
    previous = g["count"].get<std::size_t>();
    jobs += g["jobs"].get<std::uint64_t>();
  }
  EXPECT_EQ(jobs, site.jobs) << "a pending array's row counts each of its tasks";
  // The running jobs' node lists group as None, what squeue's %r prints for them.
  EXPECT_EQ(raw.at({"RUNNING", "None"}), 2000u);
  EXPECT_FALSE(p.truncated);
  EXPECT_TRUE(p.rows.empty()) << "groups instead of rows";
}

TEST(GroupBy, NodesByStateAndReasonCountDistinctNodesWithTheirHostlist) {
  const Site site = MakeSite(1024, 0, 2);
  const Parsed p = Parse(T("nodes"), site.sinfo, kAll, {}, GroupBy({"state", "reason"}));
  EXPECT_EQ(p.total_rows, 2048u) << "a row per node per partition";
  std::size_t unavailable_groups = 0;
  for (const Json& g : p.groups) {
    const auto key = std::make_pair(g["state"].get<std::string>(), g["reason"].get<std::string>());
    EXPECT_EQ(g["count"].get<std::uint64_t>(), site.rows_by_state_reason.at(key));
    EXPECT_EQ(g["node_count"].get<std::uint64_t>() * 2, g["count"].get<std::uint64_t>())
        << "every node is in two partitions and counted once";
    auto it = site.unavailable.find(key);
    if (it == site.unavailable.end()) continue;
    ++unavailable_groups;
    EXPECT_EQ(g["hostlist"], CompressHostlist(it->second));
    EXPECT_EQ(g["node_count"].get<std::size_t>(), it->second.size());
  }
  EXPECT_EQ(unavailable_groups, site.unavailable.size());

  const Parsed by_state = Parse(T("nodes"), site.sinfo, kAll, {}, GroupBy({"state"}));
  std::uint64_t nodes = 0;
  for (const Json& g : by_state.groups) {
    nodes += g["node_count"].get<std::uint64_t>();
    EXPECT_EQ(g["cpus"].get<std::uint64_t>(), site.cpus_by_state.at(g["state"].get<std::string>()));
    if (g["state"] == "idle") EXPECT_GT(g["gpus"].get<std::uint64_t>(), 0u);
  }
  EXPECT_EQ(nodes, 1024u);
}

TEST(GroupBy, GroupsOverMaxRowsAreCountedAndSaySo) {
  const Site site = MakeSite(64, 3000, 3);
  const Parsed p = Parse(T("queue"), site.squeue, Caps{.max_rows = 3}, {}, GroupBy({"user"}));
  EXPECT_EQ(p.groups.size(), 3u);
  EXPECT_EQ(p.total_groups, 11u);
  EXPECT_TRUE(p.truncated);
  EXPECT_NE(TruncationNote(p).find("3 of 11 groups shown"), std::string::npos) << TruncationNote(p);
}

TEST(GroupBy, OnlyColumnsOfTopicsOfRows) {
  EXPECT_TRUE(CheckGroupBy(T("queue"), {"state", "reason"}).ok());
  EXPECT_TRUE(CheckGroupBy(T("jobs"), {"JobState"}).ok());
  for (const auto& bad : std::vector<std::vector<std::string>>{
           {}, {"state", "reason", "user"}, {"state", "state"}, {"nosuch"}}) {
    base::Status st = CheckGroupBy(T("queue"), bad);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("jobid, partition, user, state, elapsed, nodes, reason"),
              std::string::npos)
        << st.message();
  }
  EXPECT_FALSE(CheckGroupBy(T("config"), {"x"}).ok());
  EXPECT_FALSE(CheckGroupBy(T("logs"), {"message"}).ok());
}

// A line of every column of a topic of rows, as its format writes it.
std::string Line(const Topic& topic, int i) {
  std::string line;
  for (std::size_t c = 0; c < topic.columns.size(); ++c) {
    const std::string value = "v" + std::to_string(c) + "_" + std::to_string(i);
    if (topic.format == Format::kKeyValue) {
      line += (c ? " " : "") + topic.columns[c].name + "=" + value;
    } else {
      line += (c ? (topic.format == Format::kCsv ? "," : "|") : "") + value;
    }
  }
  return line + "\n";
}

TEST(CutRead, EveryTopicOfRowsAnswersALowerBoundAndNoPieceOfARow) {
  for (const Topic& topic : Topics()) {
    if (!Pageable(topic)) continue;
    SCOPED_TRACE(topic.name);
    std::string out;
    for (int i = 0; i < 300; ++i) out += Line(topic, i);
    for (std::size_t cap : {std::size_t{1}, out.size() / 3, out.size() / 2 + 7, out.size() - 1}) {
      ParseOptions o;
      o.output_cut = true;
      o.output_bytes = out.size() * 4;
      const std::string kept = out.substr(0, cap);
      const Parsed p = Parse(topic, kept, kAll, {}, o);
      // Only the complete lines are rows; the piece after the last newline is not one.
      const std::size_t complete = static_cast<std::size_t>(std::count(kept.begin(), kept.end(), '\n'));
      EXPECT_EQ(p.total_rows, complete) << "cut at " << cap;
      EXPECT_EQ(p.rows.size(), complete);
      if (complete > 0) {
        EXPECT_EQ(p.rows.back()[topic.columns.back().name],
                  "v" + std::to_string(topic.columns.size() - 1) + "_" + std::to_string(complete - 1));
      }
      EXPECT_TRUE(p.output_cut);
      EXPECT_TRUE(p.truncated);
      EXPECT_EQ(p.parse_error, "");
      const std::string note = TruncationNote(p);
      EXPECT_NE(note.find("output cut at " + std::to_string(cap) + " of " +
                          std::to_string(out.size() * 4) + " bytes"),
                std::string::npos)
          << note;
      EXPECT_NE(note.find("at least " + std::to_string(complete) + " rows"), std::string::npos)
          << note;
      // Grouped, the cut read's groups are lower bounds too: they count the same rows.
      ParseOptions g = o;
      g.group_by = {topic.columns.front().name};
      const Parsed grouped = Parse(topic, kept, kAll, {}, g);
      EXPECT_EQ(grouped.total_rows, complete);
      EXPECT_TRUE(grouped.truncated);
    }
    // The whole output, not cut: a total.
    const Parsed whole = Parse(topic, out, kAll);
    EXPECT_EQ(whole.total_rows, 300u);
    EXPECT_FALSE(whole.truncated);
    EXPECT_EQ(TruncationNote(whole), "");
  }
}

TEST(Paging, PagesOfOneReadAreItsRowsInOrderOnce) {
  const Site site = MakeSite(64, 1234, 4);
  const Parsed whole = Parse(T("queue"), site.squeue, kAll);
  std::vector<std::string> seen;
  std::size_t offset = 0;
  for (int pages = 0; pages < 100; ++pages) {
    ParseOptions o;
    o.offset = offset;
    const Parsed page = Parse(T("queue"), site.squeue, Caps{.max_rows = 100}, {}, o);
    EXPECT_EQ(page.total_rows, 1234u);
    EXPECT_EQ(page.offset, offset);
    for (const Json& row : page.rows) seen.push_back(row["jobid"].get<std::string>());
    offset += page.rows.size();
    if (!page.truncated) break;
    EXPECT_NE(TruncationNote(page).find(" of 1234 "), std::string::npos) << TruncationNote(page);
  }
  ASSERT_EQ(seen.size(), whole.rows.size());
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], whole.rows[i]["jobid"]);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size());
}

Evidence Ok(std::vector<std::string> argv, std::string out) {
  Evidence e;
  e.outcome = Evidence::Outcome::kOk;
  e.source = "live";
  e.evidence_time = "2026-12-05T05:00:00Z";
  e.argv = std::move(argv);
  e.exit_code = 0;
  e.out = std::move(out);
  return e;
}

std::string Sdiag() {
  return "Server thread count:  3\nAgent queue size:     0\nDBD Agent queue size: 0\n"
         "Jobs pending:   49000\nJobs running:   1000\nMain schedule statistics (microseconds):\n"
         "\tLast cycle:   417\n\tMax cycle:    1006\n\tMean cycle:   476\n"
         "Remote Procedure Call statistics by user\n"
         "\troot            (       0) count:185    ave_time:1237   total_time:228993\n"
         "\tslurm-mcp       (     999) count:9000   ave_time:300    total_time:2700000\n"
         "Pending RPC statistics\n\tNo pending RPCs\n";
}

std::vector<Evidence> SiteReads(const Site& site) {
  return {Ok(OverviewReads()[0].argv, site.rich_sinfo), Ok(OverviewReads()[1].argv, site.squeue),
          Ok(OverviewReads()[2].argv, Sdiag())};
}

std::size_t JsonBytes(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace).size(); }

TEST(Overview, StaysUnderItsBoundAndListsEveryUnavailableNode) {
  for (int nodes : {4, 64, 1024}) {
    SCOPED_TRACE(std::to_string(nodes) + " nodes");
    const Site site = MakeSite(nodes, nodes * 50, 5);
    const OverviewSummary s = SummarizeOverview(SiteReads(site), "live");
    EXPECT_LE(s.text.size(), kOverviewMaxBytes);
    EXPECT_LE(JsonBytes(s.structured), kOverviewMaxBytes);
    std::cout << "[overview] " << nodes << " nodes, " << nodes * 50 << " jobs: text "
              << s.text.size() << " bytes, structured " << JsonBytes(s.structured) << " bytes\n";
    // Every unavailable state and reason, each with all of its nodes, wherever they sit: the
    // last node of the list is drained (MakeSite).
    const Json& summary = s.structured["sections"][0]["summary"];
    EXPECT_EQ(summary["nodes"], nodes);
    EXPECT_EQ(summary["unavailable_groups"].get<std::size_t>(), site.unavailable.size());
    ASSERT_EQ(summary["unavailable"].size(), site.unavailable.size());
    for (const Json& u : summary["unavailable"]) {
      const auto key = std::make_pair(u["state"].get<std::string>(), u["reason"].get<std::string>());
      ASSERT_TRUE(site.unavailable.count(key)) << u.dump();
      EXPECT_EQ(u["nodes"].get<std::size_t>(), site.unavailable.at(key).size());
      EXPECT_EQ(u["hostlist"], CompressHostlist(site.unavailable.at(key)));
      EXPECT_NE(s.text.find(u["hostlist"].get<std::string>()), std::string::npos);
      if (key.first == "drained") EXPECT_TRUE(u.contains("since")) << u.dump();
    }
    // The last node of the list is drained: its group's hostlist is in the text.
    const std::string last = Name("node", nodes);
    bool found = false;
    for (const auto& [key, names] : site.unavailable) {
      if (std::find(names.begin(), names.end(), last) == names.end()) continue;
      found = true;
      EXPECT_NE(s.text.find(CompressHostlist(names)), std::string::npos) << s.text;
    }
    EXPECT_TRUE(found);
    EXPECT_EQ(s.text.rfind("slurm_overview (live): " + std::to_string(nodes) + " nodes", 0), 0u)
        << s.text;
    EXPECT_LT(s.text.find("ANOMALIES"), s.text.find("NODES")) << "anomalies first";
    const Json& queue = s.structured["sections"][1]["summary"];
    EXPECT_EQ(queue["jobs"].get<std::uint64_t>(), site.jobs);
    EXPECT_EQ(queue["rows"], nodes * 50);
    EXPECT_EQ(s.structured["sections"][2]["summary"]["top_rpc_users"][0]["user"], "slurm-mcp");
  }
}

TEST(Overview, ManyDistinctReasonsAreCountedNotLeftOutOrUnbounded) {
  // 1,024 nodes with up to 200 distinct drain reasons: more groups than the overview lists.
  const Site site = MakeSite(1024, 50000, 6, 200);
  const OverviewSummary s = SummarizeOverview(SiteReads(site), "live");
  EXPECT_LE(s.text.size(), kOverviewMaxBytes);
  EXPECT_LE(JsonBytes(s.structured), kOverviewMaxBytes);
  const Json& summary = s.structured["sections"][0]["summary"];
  ASSERT_GT(site.unavailable.size(), summary["unavailable"].size());
  EXPECT_EQ(summary["unavailable_groups"].get<std::size_t>(), site.unavailable.size());
  std::size_t unavailable = 0;
  for (const auto& [key, names] : site.unavailable) unavailable += names.size();
  EXPECT_EQ(summary["unavailable_nodes"].get<std::size_t>(), unavailable);
  // What is not listed is counted, with where to read it.
  std::size_t listed = 0;
  for (const Json& u : summary["unavailable"]) listed += u["nodes"].get<std::size_t>();
  const std::string more = "and " + std::to_string(site.unavailable.size() - summary["unavailable"].size()) +
                           " more unavailable state/reason groups (" +
                           std::to_string(unavailable - listed) + " nodes";
  EXPECT_NE(s.text.find(more), std::string::npos) << s.text;
  EXPECT_NE(s.text.find("group_by [state, reason]"), std::string::npos);
}

TEST(Overview, ACutOrFailedReadIsSaidFirst) {
  const Site site = MakeSite(64, 3000, 7);
  std::vector<Evidence> reads = SiteReads(site);
  reads[1].out.resize(reads[1].out.size() / 2);
  reads[1].out_truncated = true;
  reads[1].out_bytes = site.squeue.size();
  reads[2].outcome = Evidence::Outcome::kTimedOut;
  reads[2].cause = "sdiag did not answer in 20 s";
  const OverviewSummary s = SummarizeOverview(reads, "live");
  EXPECT_NE(s.text.find("NO EVIDENCE for diagnostics (timed_out): sdiag did not answer"),
            std::string::npos)
      << s.text;
  EXPECT_NE(s.text.find("queue: squeue's output was cut at"), std::string::npos) << s.text;
  EXPECT_NE(s.text.find("at least"), std::string::npos);
  const Json& queue = s.structured["sections"][1];
  EXPECT_EQ(queue["total_is_lower_bound"], true);
  EXPECT_EQ(queue["summary"]["jobs_is_lower_bound"], true);
  EXPECT_LT(queue["summary"]["rows"].get<std::size_t>(), 3000u);
  EXPECT_FALSE(s.structured["sections"][2].contains("summary")) << "no evidence, no figures";
}

TEST(Overview, ABundleWithoutTheRichReadStillListsEveryUnavailableNode) {
  const Site site = MakeSite(256, 100, 8);
  std::vector<Evidence> reads = SiteReads(site);
  reads[0] = Ok(DefaultArgv(T("nodes")), site.sinfo);  // the fallback: no times, no availability
  const OverviewSummary s = SummarizeOverview(reads, "replay");
  const Json& summary = s.structured["sections"][0]["summary"];
  EXPECT_EQ(summary["unavailable_groups"].get<std::size_t>(), site.unavailable.size());
  EXPECT_FALSE(summary.contains("partitions_not_up"));
  for (const Json& u : summary["unavailable"]) EXPECT_FALSE(u.contains("since"));
}

// Through the real live back-end and executor, with a squeue that prints a numbered queue of
// 1,000 jobs (a script in a trusted directory): a cursor holds while the read is cached and is
// refused once the cache let it go; a read past the executor's cap is a lower bound.
class LiveScaleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_tools::MakeTempDir("scale");
    ASSERT_FALSE(dir_.empty());
    const std::string script = dir_ + "/squeue";
    std::ofstream(script) << "#!/bin/sh\n"
                             "i=0; while [ $i -lt 1000 ]; do\n"
                             "  echo \"$((5000 + i))|cpu|alice|PENDING|0:00|1|(Priority)\"; i=$((i + 1))\n"
                             "done\n";
    ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  LiveOptions Options() {
    LiveOptions o;
    o.executor.trusted_dirs = {dir_};
    o.max_per_minute = 0;
    return o;
  }
  static ToolResult Query(std::vector<Tool>& tools, const Json& args) {
    class Quiet : public ToolContext {
     public:
      void Progress(double, std::optional<double>, const std::string&) override {}
      void Log(const std::string&, const Json&) override {}
      bool Cancelled() const override { return false; }
    } context;
    return tools[1].run(args, context).Fields();
  }
  std::string dir_;
};

TEST_F(LiveScaleTest, ACursorHoldsWhileTheReadIsCachedAndExpiresWithIt) {
  LiveOptions o = Options();
  o.cache_ttl_seconds = 3.0;  // room for a loaded machine between the first two calls
  LiveBackend live(o);
  std::vector<Tool> tools = BuildTools(SurfaceOptions{.backend = &live});
  const ToolResult first = Query(tools, {{"topic", "queue"}, {"max_rows", 200}});
  ASSERT_FALSE(first.is_error) << ResultText(first);
  const std::string cursor = (*first.structured)["next_cursor"].get<std::string>();
  const ToolResult second = Query(tools, {{"topic", "queue"}, {"max_rows", 200}, {"cursor", cursor}});
  ASSERT_FALSE(second.is_error) << ResultText(second);
  EXPECT_EQ((*second.structured)["cached"], true);
  EXPECT_EQ((*second.structured)["rows"][0]["jobid"], "5200");
  EXPECT_EQ(live.reads_started(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(3300));  // past the cache's TTL
  const ToolResult expired = Query(tools, {{"topic", "queue"}, {"max_rows", 200}, {"cursor", cursor}});
  EXPECT_TRUE(expired.is_error);
  EXPECT_NE(ResultText(expired).find("is no longer held"), std::string::npos) << ResultText(expired);
  EXPECT_EQ(live.reads_started(), 2u) << "the new read was made, and not mixed in";
}

TEST_F(LiveScaleTest, AReadPastTheExecutorsCapIsALowerBound) {
  LiveOptions o = Options();
  o.executor.max_output_bytes = 10000;  // 1,000 rows of 41 bytes: 243 whole ones kept
  LiveBackend live(o);
  std::vector<Tool> tools = BuildTools(SurfaceOptions{.backend = &live});
  const ToolResult r = Query(tools, {{"topic", "queue"}, {"group_by", {"state", "reason"}}});
  ASSERT_FALSE(r.is_error) << ResultText(r);
  const Json& s = *r.structured;
  EXPECT_EQ(s["total_is_lower_bound"], true);
  EXPECT_EQ(s["output_cut_at_bytes"], 10000);
  EXPECT_EQ(s["output_bytes"], 41000);
  EXPECT_EQ(s["total_rows"], 10000 / 41) << "the complete lines only";
  EXPECT_EQ(s["groups"][0]["count"], 10000 / 41);
  EXPECT_NE(ResultText(r).find("queue: at least 243 rows in 1 group by state,reason"), std::string::npos)
      << ResultText(r);
}

}  // namespace
}  // namespace slurm_rca::mcp
