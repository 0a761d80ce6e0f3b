// The tool surface on the recorded demo bundle (fixtures/demo: healthy at offset 0, the
// accounting database frozen at offset 10, healed at 30).
#include "mcp/topics/tools.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <set>

#include "base/argv_line.h"
#include "mcp/backend/replay_backend.h"
#include "mcp/backend/replay_derive.h"

namespace slurm_rca::mcp {
namespace {

class NullContext : public ToolContext {
 public:
  void Progress(double p, std::optional<double>, const std::string&) override {
    progress.push_back(p);
  }
  void Log(const std::string&, const Json&) override {}
  bool Cancelled() const override { return false; }
  std::vector<double> progress;
};

class ToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = ReplayBackend::Open(std::string(SLURM_RCA_SOURCE_DIR) + "/fixtures/demo");
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    backend_ = std::move(opened).value();
    SurfaceOptions o;
    o.backend = backend_.get();
    o.audit = [this](const Json& j) { audit_.push_back(j); };
    tools_ = BuildTools(o);
  }

  // The result as the tool returns it: it may share its answer (ToolResult::shared).
  ToolResult Run(const std::string& name, const Json& args) {
    for (const Tool& t : tools_) {
      if (t.name == name) return t.run(args, context_);
    }
    ADD_FAILURE() << "no tool " << name;
    return {};
  }
  // The answer's fields, copied out of a shared one.
  ToolResult Call(const std::string& name, const Json& args) { return Run(name, args).Fields(); }

  static std::string Text(const ToolResult& r) { return ResultText(r); }

  std::unique_ptr<ReplayBackend> backend_;
  std::vector<Tool> tools_;
  std::vector<Json> audit_;
  NullContext context_;
};

TEST_F(ToolsTest, ThreeReadOnlyToolsWithStrictSchemas) {
  ASSERT_EQ(tools_.size(), 3u);
  EXPECT_EQ(tools_[0].name, "slurm_overview");
  EXPECT_EQ(tools_[1].name, "slurm_query");
  EXPECT_EQ(tools_[2].name, "slurm_describe");
  for (const Tool& t : tools_) {
    EXPECT_TRUE(RE2::FullMatch(t.name, "[a-zA-Z0-9_-]{1,64}")) << t.name;
    EXPECT_FALSE(t.description.empty());
    EXPECT_EQ(t.input_schema["type"], "object");
    EXPECT_EQ(t.input_schema["additionalProperties"], false) << t.name;
    EXPECT_TRUE(t.output_schema.is_object()) << t.name;
    EXPECT_EQ(t.annotations["readOnlyHint"], true);
    EXPECT_EQ(t.annotations["destructiveHint"], false);
    EXPECT_EQ(t.annotations["idempotentHint"], true);
    EXPECT_EQ(t.annotations["openWorldHint"], false);
    Json d = t.Describe();
    EXPECT_EQ(d["name"], t.name);
    EXPECT_TRUE(d.contains("inputSchema"));
  }
  EXPECT_EQ(tools_[1].input_schema["properties"]["topic"]["enum"].size(), Topics().size());
}

TEST_F(ToolsTest, FixtureToolsOnlyWhenAsked) {
  SurfaceOptions o;
  o.backend = backend_.get();
  o.conformance_fixtures = true;
  std::vector<Tool> with = BuildTools(o);
  ASSERT_EQ(with.size(), 8u);
  EXPECT_EQ(with[3].name, "test_simple_text");
  EXPECT_EQ(with[7].name, "test_logging_tool");  // the 2026-07-28 suite's name for with_logging
}

TEST_F(ToolsTest, OverviewReadsNodesQueueAndDiagnosticsInOrder) {
  ToolResult r = Call("slurm_overview", Json::object());
  ASSERT_FALSE(r.is_error) << Text(r);
  ASSERT_TRUE(r.structured.has_value());
  const Json& s = *r.structured;
  EXPECT_EQ(s["source"], "replay");
  ASSERT_EQ(s["sections"].size(), 3u);
  EXPECT_EQ(s["sections"][0]["topic"], "nodes");
  EXPECT_EQ(s["sections"][1]["topic"], "queue");
  EXPECT_EQ(s["sections"][2]["topic"], "diagnostics");
  // A summary, not rows: the demo bundle's 4 nodes in 6 rows (cpu and gpu partitions), all
  // serving; its queue of one running job.
  EXPECT_FALSE(s["sections"][0].contains("rows"));
  const Json& nodes = s["sections"][0]["summary"];
  EXPECT_EQ(nodes["nodes"], 4);
  EXPECT_EQ(nodes["rows"], 6);
  EXPECT_EQ(nodes["unavailable_groups"], 0);
  // The bundle predates the overview's own sinfo read: the nodes topic's argv answered instead.
  EXPECT_EQ(s["sections"][0]["argv"], DefaultArgv(*FindTopic("nodes")));
  EXPECT_EQ(s["sections"][1]["summary"]["jobs"], 1);
  EXPECT_TRUE(s["sections"][2]["summary"].contains("server_thread_count"));
  EXPECT_EQ(s["anomalies"], Json::array());
  EXPECT_NE(Text(r).find("ANOMALIES: none seen"), std::string::npos) << Text(r);
  EXPECT_EQ(context_.progress, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(audit_.size(), 3u);
}

TEST_F(ToolsTest, QueryParsesRowsAndLabelsTheEvidence) {
  ToolResult r = Call("slurm_query", {{"topic", "queue"}});
  ASSERT_FALSE(r.is_error) << Text(r);
  const Json& s = *r.structured;
  EXPECT_EQ(s["source"], "replay");
  EXPECT_EQ(s["outcome"], "ok");
  EXPECT_FALSE(s["evidence_time"].get<std::string>().empty());
  ASSERT_EQ(s["rows"].size(), 1u);
  EXPECT_EQ(s["rows"][0]["state"], "RUNNING");
  // structuredContent has exactly the properties the output schema allows, and its required ones.
  const Json& schema = tools_[1].output_schema;
  for (const auto& [key, value] : s.items()) {
    EXPECT_TRUE(schema["properties"].contains(key)) << key;
  }
  for (const Json& key : schema["required"]) EXPECT_TRUE(s.contains(key.get<std::string>())) << key;
  ASSERT_EQ(audit_.size(), 1u);
  EXPECT_EQ(audit_[0]["tool"], "slurm_query");
  EXPECT_EQ(audit_[0]["topic"], "queue");
  EXPECT_EQ(audit_[0]["outcome"], "ok");
}

TEST_F(ToolsTest, AFrozenDatabaseIsNoEvidenceNeverAnEmptyTable) {
  backend_->SetOffset(10);
  ToolResult acct = Call("slurm_query", {{"topic", "accounting"}});
  EXPECT_TRUE(acct.is_error);
  EXPECT_FALSE(acct.structured.has_value()) << "errors never carry structuredContent";
  EXPECT_NE(Text(acct).find("NO EVIDENCE (timed_out"), std::string::npos) << Text(acct);
  EXPECT_NE(Text(acct).find("not an empty result"), std::string::npos);
  ToolResult nodes = Call("slurm_query", {{"topic", "nodes"}});
  EXPECT_FALSE(nodes.is_error) << Text(nodes);
  backend_->SetOffset(30);
  EXPECT_FALSE(Call("slurm_query", {{"topic", "accounting"}}).is_error);
}

TEST_F(ToolsTest, BadArgumentsAreToolErrorsAModelCanActOn) {
  struct Case {
    Json args;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {Json::object(), "needs a topic"},
           {{{"topic", "frobnicate"}}, "unknown topic 'frobnicate'; topics: queue"},
           {{{"topic", "queue"}, {"filters", {{"user", "; rm -rf /"}}}}, "refused"},
           {{{"topic", "queue"}, {"filters", {{"colour", "red"}}}}, "colour"},
           {{{"topic", "queue"}, {"filters", {{"user", 3}}}}, "must be a string"},
           {{{"topic", "queue"}, {"max_rows", 0}}, "max_rows"},
           {{{"topic", "queue"}, {"shell", "true"}}, "unknown argument 'shell'"}}) {
    ToolResult r = Call("slurm_query", c.args);
    EXPECT_TRUE(r.is_error) << c.args.dump();
    EXPECT_FALSE(r.structured.has_value());
    EXPECT_NE(Text(r).find(c.says), std::string::npos) << c.args.dump() << ": " << Text(r);
  }
  EXPECT_TRUE(audit_.empty()) << "refused arguments read nothing";
}

TEST_F(ToolsTest, QueryFiltersBecomeArgvAndAnUnrecordedReadIsUnavailable) {
  ToolResult r = Call("slurm_query", {{"topic", "queue"}, {"filters", {{"state", "RUNNING"}}}});
  EXPECT_TRUE(r.is_error) << "the bundle did not record this argv";
  EXPECT_NE(Text(r).find("NO EVIDENCE (unavailable"), std::string::npos) << Text(r);
  EXPECT_NE(Text(r).find("-t RUNNING"), std::string::npos) << Text(r);
}

// An unrecorded user filter is derived from the snapshot's whole queue, and the answer says so
// in its provenance, its schema and its header.
TEST_F(ToolsTest, AnUnrecordedUserFilterIsDerivedAndSaysSo) {
  ToolResult r = Call("slurm_query", {{"topic", "queue"}, {"filters", {{"user", "root"}}}});
  ASSERT_FALSE(r.is_error) << Text(r);
  const Json& s = *r.structured;
  const Topic& queue = *FindTopic("queue");
  EXPECT_EQ(s["derived_from"], DefaultArgv(queue));
  EXPECT_NE(s["derivation"].get<std::string>().find("user (%u) is root"), std::string::npos)
      << s["derivation"];
  ASSERT_EQ(s["rows"].size(), 1u);
  EXPECT_EQ(s["rows"][0]["user"], "root");
  EXPECT_EQ(s["snapshot"], "r3") << "a derived read pages as its snapshot's";
  const Json& schema = tools_[1].output_schema;
  for (const auto& [key, value] : s.items()) {
    EXPECT_TRUE(schema["properties"].contains(key)) << key;
  }
  EXPECT_NE(Text(r).find(", derived] queue: 1 rows"), std::string::npos) << Text(r);
  // A recorded read is not marked.
  ToolResult whole = Call("slurm_query", {{"topic", "queue"}});
  ASSERT_FALSE(whole.is_error) << Text(whole);
  EXPECT_FALSE(whole.structured->contains("derived_from"));
  EXPECT_EQ(Text(whole).find(", derived]"), std::string::npos) << Text(whole);
}

// The argv the topics build for each filter the replay derives is one it can derive, from the
// argv the recorder reads whole (DefaultArgv); every other filter is not.
TEST(ReplayDerivableTest, TheTopicsArgvOfEachDerivedFilterIsDerivable) {
  struct Case {
    std::string topic;
    Filters filters;
    bool derivable;
  };
  for (const Case& c : std::vector<Case>{
           {"nodes", {{"node", "node700"}}, true},
           {"nodes", {{"partition", "gpu,cpu"}}, true},
           {"nodes", {{"partition", "gpu"}, {"node", "node[1-4]"}}, true},
           {"nodes", {{"state", "drained"}}, false},
           {"nodes", {{"state", "drained"}, {"node", "node1"}}, false},
           {"queue", {{"user", "alice,bob"}}, true},
           {"queue", {{"partition", "gpu"}}, false},
           {"queue", {{"state", "PENDING"}}, false},
           {"queue", {{"account", "research"}}, false},
           {"queue", {{"node", "node1"}}, false},
           {"accounting", {{"user", "alice"}}, false},
       }) {
    const Topic& topic = *FindTopic(c.topic);
    base::Result<std::vector<std::string>> argv = BuildArgv(topic, c.filters);
    ASSERT_TRUE(argv.ok()) << argv.status().message();
    std::optional<DerivableRead> d = ParseDerivable(*argv);
    EXPECT_EQ(d.has_value(), c.derivable) << ::testing::PrintToString(*argv);
    if (d) {
      EXPECT_EQ(d->whole, DefaultArgv(topic)) << c.topic;
    }
  }
}

TEST_F(ToolsTest, MaxRowsTruncatesWithAHint) {
  ToolResult r = Call("slurm_query", {{"topic", "nodes"}, {"max_rows", 2}});
  ASSERT_FALSE(r.is_error) << Text(r);
  EXPECT_EQ((*r.structured)["rows"].size(), 2u);
  EXPECT_EQ((*r.structured)["total_rows"], 6);
  EXPECT_EQ((*r.structured)["truncated"], true);
  EXPECT_NE(Text(r).find("truncated"), std::string::npos);
}

TEST_F(ToolsTest, DescribeReadsNothing) {
  ToolResult r = Call("slurm_describe", {{"topic", "accounting"}});
  ASSERT_FALSE(r.is_error) << Text(r);
  EXPECT_EQ((*r.structured)["name"], "accounting");
  EXPECT_GT((*r.structured)["detail"].get<std::string>().size(), 120u);
  EXPECT_TRUE(audit_.empty());
  EXPECT_TRUE(Call("slurm_describe", {{"topic", "nope"}}).is_error);
}

TEST_F(ToolsTest, LogsAreFilteredWithAPattern) {
  ToolResult r =
      Call("slurm_query", {{"topic", "logs"}, {"filters", {{"pattern", "(?i)registering"}}}});
  ASSERT_FALSE(r.is_error) << Text(r);
  EXPECT_GE((*r.structured)["rows"].size(), 1u);
  for (const Json& row : (*r.structured)["rows"]) {
    EXPECT_TRUE(RE2::PartialMatch(row["message"].get<std::string>(), "(?i)registering"));
  }
}

// Serves the demo's reads and counts them. With a version it says that its evidence cannot
// change, as the replay back-end does; without one it is like the live back-end.
class CountingBackend : public Backend {
 public:
  explicit CountingBackend(Backend& recorded) : recorded_(recorded) {}
  std::string Label() const override { return recorded_.Label(); }
  Evidence Read(const std::vector<std::string>& argv) override {
    ++reads;
    return recorded_.Read(argv);
  }
  Evidence ReadLog(const std::string& daemon, int lines) override {
    ++reads;
    return recorded_.ReadLog(daemon, lines);
  }
  std::optional<std::int64_t> EvidenceVersion() const override { return version; }

  std::optional<std::int64_t> version;
  int reads = 0;

 private:
  Backend& recorded_;
};

std::string Answer(const ToolResult& result) {
  const ToolResult& r = result.Fields();
  return Serialize(r.content) + (r.structured ? Serialize(*r.structured) : "");
}

TEST_F(ToolsTest, ALiveBackEndIsReadOnEveryCall) {
  CountingBackend live(*backend_);
  SurfaceOptions o;
  o.backend = &live;
  o.audit = [this](const Json& j) { audit_.push_back(j); };
  tools_ = BuildTools(o);
  const std::string first = Answer(Call("slurm_query", {{"topic", "nodes"}}));
  EXPECT_EQ(Answer(Call("slurm_query", {{"topic", "nodes"}})), first);
  EXPECT_EQ(Call("slurm_query", {{"topic", "nodes"}}).serialized, nullptr)
      << "a live answer is serialized by the server, once";
  EXPECT_EQ(live.reads, 3) << "no version: never an answer from the cache";
  EXPECT_EQ(audit_.size(), 3u);
}

TEST_F(ToolsTest, UnchangingEvidenceIsReadOncePerVersionAndEveryCallIsAudited) {
  CountingBackend replayed(*backend_);
  replayed.version = 2;
  SurfaceOptions o;
  o.backend = &replayed;
  o.audit = [this](const Json& j) { audit_.push_back(j); };
  tools_ = BuildTools(o);
  const ToolResult first = Call("slurm_query", {{"topic", "nodes"}});
  ASSERT_FALSE(first.is_error) << Text(first);
  ASSERT_NE(first.serialized, nullptr) << "a reused answer is serialized once, when kept";
  EXPECT_EQ(*first.serialized, SerializeToolResult(first));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Answer(Call("slurm_query", {{"topic", "nodes"}})), Answer(first));
  EXPECT_EQ(replayed.reads, 1);
  ASSERT_EQ(audit_.size(), 4u) << "a reused answer is still a call: audited each time";
  EXPECT_EQ(audit_[3]["outcome"], "ok");
  EXPECT_EQ(audit_[3]["topic"], "nodes");

  // Other rows or filters are another answer.
  EXPECT_EQ((*Call("slurm_query", {{"topic", "nodes"}, {"max_rows", 2}}).structured)["rows"].size(), 2u);
  EXPECT_EQ(replayed.reads, 2);
  EXPECT_EQ((*Call("slurm_query", {{"topic", "nodes"}}).structured)["rows"].size(), 6u);
  EXPECT_EQ(replayed.reads, 2);

  // An answer without evidence is the same every time too, and audited as such.
  // (A state filter: an unrecorded node filter would be derived from the whole read.)
  EXPECT_TRUE(Call("slurm_query", {{"topic", "nodes"}, {"filters", {{"state", "down"}}}}).is_error);
  EXPECT_TRUE(Call("slurm_query", {{"topic", "nodes"}, {"filters", {{"state", "down"}}}}).is_error);
  EXPECT_EQ(replayed.reads, 3);
  EXPECT_EQ(audit_.back()["outcome"], "unavailable");

  // Another version: read again.
  replayed.version = 4;
  EXPECT_EQ(Answer(Call("slurm_query", {{"topic", "nodes"}})), Answer(first));
  EXPECT_EQ(replayed.reads, 4);
}

TEST_F(ToolsTest, AReusedAnswerIsSharedNotCopied) {
  CountingBackend replayed(*backend_);
  replayed.version = 2;
  SurfaceOptions o;
  o.backend = &replayed;
  o.audit = [this](const Json& j) { audit_.push_back(j); };
  tools_ = BuildTools(o);
  const ToolResult first = Run("slurm_query", {{"topic", "nodes"}});
  const ToolResult second = Run("slurm_query", {{"topic", "nodes"}});
  ASSERT_NE(first.shared, nullptr) << "the answer kept is shared from the first call on";
  EXPECT_EQ(second.shared, first.shared) << "the same answer, not a copy of it";
  EXPECT_EQ(&second.Fields(), first.shared.get());
  EXPECT_TRUE(second.content.empty()) << "a result sharing its answer holds none of its own";
  EXPECT_FALSE(second.structured.has_value());
  EXPECT_EQ(second.serialized, nullptr);
  ASSERT_NE(second.Fields().serialized, nullptr);
  EXPECT_EQ(*second.Fields().serialized, SerializeToolResult(second));
  EXPECT_EQ(replayed.reads, 1);
  EXPECT_EQ(audit_.size(), 2u) << "each call is audited";

  replayed.version = 4;  // another snapshot: another answer, read again
  const ToolResult third = Run("slurm_query", {{"topic", "nodes"}});
  ASSERT_NE(third.shared, nullptr);
  EXPECT_NE(third.shared, first.shared);
  EXPECT_EQ(replayed.reads, 2);
  EXPECT_EQ(Run("slurm_query", {{"topic", "nodes"}}).shared, third.shared);

  replayed.version = std::nullopt;  // live: held by each result, never shared
  const ToolResult live = Run("slurm_query", {{"topic", "nodes"}});
  EXPECT_EQ(live.shared, nullptr);
  EXPECT_EQ(Answer(live), Answer(first));
  EXPECT_EQ(audit_.size(), 5u);
}

// A context whose caller cancels once `after` progress notifications were sent.
class CancellingContext : public NullContext {
 public:
  explicit CancellingContext(std::size_t after) : after_(after) {}
  bool Cancelled() const override { return progress.size() >= after_; }

 private:
  std::size_t after_;
};

TEST_F(ToolsTest, AReplayedOverviewIsBuiltOncePerVersionAndEveryCallAuditsEachSection) {
  CountingBackend replayed(*backend_);
  replayed.version = 2;
  SurfaceOptions o;
  o.backend = &replayed;
  o.audit = [this](const Json& j) { audit_.push_back(j); };
  tools_ = BuildTools(o);
  const ToolResult first = Run("slurm_overview", Json::object());
  const ToolResult second = Run("slurm_overview", Json::object());
  ASSERT_FALSE(first.Fields().is_error) << Text(first);
  ASSERT_NE(first.shared, nullptr);
  EXPECT_EQ(second.shared, first.shared) << "one answer, shared by both calls";
  ASSERT_NE(second.Fields().serialized, nullptr);
  EXPECT_EQ(*second.Fields().serialized, SerializeToolResult(second));
  // Four reads: the bundle predates the overview's own sinfo read (unavailable), so the nodes
  // topic's is read instead.
  EXPECT_EQ(replayed.reads, 4) << "three sections, read once";
  EXPECT_EQ(context_.progress, (std::vector<double>{1, 2, 3, 1, 2, 3}))
      << "a reused overview still reports each section";
  ASSERT_EQ(audit_.size(), 6u) << "and audits each section on every call";
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(audit_[i]["tool"], "slurm_overview");
    EXPECT_EQ(audit_[i]["topic"],
              (std::vector<std::string>{"nodes", "queue", "diagnostics"})[i % 3]);
  }

  replayed.version = 4;  // another snapshot: read again, another answer
  const ToolResult third = Run("slurm_overview", Json::object());
  EXPECT_EQ(replayed.reads, 8);
  ASSERT_NE(third.shared, nullptr);
  EXPECT_NE(third.shared, first.shared);
  EXPECT_EQ(Answer(third), Answer(first));

  replayed.version = std::nullopt;  // live: read on every call, never kept
  EXPECT_EQ(Run("slurm_overview", Json::object()).shared, nullptr);
  EXPECT_EQ(replayed.reads, 12);
}

TEST_F(ToolsTest, ACancelledOverviewIsNotKept) {
  CountingBackend replayed(*backend_);
  replayed.version = 2;
  SurfaceOptions o;
  o.backend = &replayed;
  tools_ = BuildTools(o);
  CancellingContext cancelled_after_one(1);
  const ToolResult cut = tools_[0].run(Json::object(), cancelled_after_one);
  EXPECT_EQ(replayed.reads, 2);  // the overview's sinfo (not recorded), then the topic's
  EXPECT_EQ(cut.shared, nullptr) << "an overview cut short is not the overview";
  EXPECT_EQ((*cut.Fields().structured)["sections"].size(), 1u);
  const ToolResult whole = Run("slurm_overview", Json::object());
  EXPECT_EQ(replayed.reads, 6);
  ASSERT_NE(whole.shared, nullptr);
  EXPECT_EQ((*whole.Fields().structured)["sections"].size(), 3u);
}

// A live-like back-end with a large queue: each read is numbered as the live back-end numbers the
// processes it starts (Evidence::read_id); `cut_at` > 0 cuts the output as the executor's cap
// does.
class QueueBackend : public Backend {
 public:
  std::string Label() const override { return "live"; }
  Evidence Read(const std::vector<std::string>& argv) override {
    Evidence e;
    e.outcome = Evidence::Outcome::kOk;
    e.source = "live";
    e.evidence_time = "2026-12-05T05:00:0" + std::to_string(read_id % 10) + "Z";
    e.argv = argv;
    e.exit_code = 0;
    e.read_id = read_id;
    for (int i = 0; i < jobs; ++i) {
      e.out += std::to_string(1000 + i) + "|" + (i % 2 ? "cpu" : "gpu") + "|user" +
               std::to_string(i % 3) + "|PENDING|0:00|1|" + (i % 5 ? "(Priority)" : "(Resources)") +
               "\n";
    }
    e.out_bytes = e.out.size();
    if (cut_at > 0 && e.out.size() > cut_at) {
      e.out.resize(cut_at);
      e.out_truncated = true;
    }
    return e;
  }
  Evidence ReadLog(const std::string&, int) override { return {}; }

  std::uint64_t read_id = 1;
  int jobs = 450;
  std::size_t cut_at = 0;
};

class ScaleToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SurfaceOptions o;
    o.backend = &backend_;
    tools_ = BuildTools(o);
  }
  ToolResult Query(const Json& args) {
    NullContext context;
    return tools_[1].run(args, context).Fields();
  }
  QueueBackend backend_;
  std::vector<Tool> tools_;
};

TEST_F(ScaleToolsTest, ACursorPagesOneReadAndAnExpiredOneIsAnError) {
  ToolResult first = Query({{"topic", "queue"}});
  ASSERT_FALSE(first.is_error) << ResultText(first);
  const Json& s = *first.structured;
  EXPECT_EQ(s["rows"].size(), 200u);
  EXPECT_EQ(s["snapshot"], "r1");
  ASSERT_TRUE(s.contains("next_cursor")) << s.dump().substr(0, 300);
  ToolResult second = Query({{"topic", "queue"}, {"cursor", s["next_cursor"]}});
  ASSERT_FALSE(second.is_error) << ResultText(second);
  EXPECT_EQ((*second.structured)["offset"], 200);
  EXPECT_EQ((*second.structured)["rows"][0]["jobid"], "1200");
  ToolResult third = Query({{"topic", "queue"}, {"cursor", (*second.structured)["next_cursor"]}});
  EXPECT_EQ((*third.structured)["rows"].size(), 50u);
  EXPECT_EQ((*third.structured)["rows"][49]["jobid"], "1449");
  EXPECT_FALSE(third.structured->contains("next_cursor")) << "the last page";

  // The read is gone (a new one, r2): the cursor is refused, never answered with r2's rows.
  backend_.read_id = 2;
  ToolResult expired = Query({{"topic", "queue"}, {"cursor", s["next_cursor"]}});
  ASSERT_TRUE(expired.is_error);
  EXPECT_NE(ResultText(expired).find("the snapshot this cursor pages (r1) is no longer held: the "
                                     "read now is r2"),
            std::string::npos)
      << ResultText(expired);
  EXPECT_NE(ResultText(expired).find("page again from the start"), std::string::npos);

  // A cursor names its query: other filters, group_by or a made-up cursor are refused.
  ToolResult other = Query({{"topic", "queue"}, {"filters", {{"user", "user1"}}},
                            {"cursor", s["next_cursor"]}});
  EXPECT_TRUE(other.is_error);
  EXPECT_NE(ResultText(other).find("pages another query"), std::string::npos);
  EXPECT_TRUE(Query({{"topic", "queue"}, {"cursor", "r1.5"}}).is_error);
  EXPECT_TRUE(Query({{"topic", "queue"}, {"group_by", {"state"}}, {"cursor", s["next_cursor"]}}).is_error);
  EXPECT_TRUE(Query({{"topic", "config"}, {"cursor", s["next_cursor"]}}).is_error);
}

TEST_F(ScaleToolsTest, GroupByAnswersCountsPerGroup) {
  ToolResult r = Query({{"topic", "queue"}, {"group_by", {"state", "reason"}}});
  ASSERT_FALSE(r.is_error) << ResultText(r);
  const Json& s = *r.structured;
  EXPECT_EQ(s["group_by"], Json::array({"state", "reason"}));
  ASSERT_EQ(s["groups"].size(), 2u);
  EXPECT_EQ(s["groups"][0], (Json{{"state", "PENDING"}, {"reason", "Priority"}, {"count", 360}, {"jobs", 360}, {"nodes", 360}}));
  EXPECT_EQ(s["groups"][1]["count"], 90);
  EXPECT_EQ(s["total_groups"], 2);
  EXPECT_EQ(s["total_rows"], 450);
  EXPECT_TRUE(s["rows"].empty());
  EXPECT_NE(ResultText(r).find("queue: 450 rows in 2 groups by state,reason"), std::string::npos)
      << ResultText(r);
  // A comma-separated string is read as the list; bad columns name the topic's columns.
  EXPECT_EQ((*Query({{"topic", "queue"}, {"group_by", "user, partition"}}).structured)["total_groups"], 6);
  ToolResult bad = Query({{"topic", "queue"}, {"group_by", {"nosuch"}}});
  EXPECT_TRUE(bad.is_error);
  EXPECT_NE(ResultText(bad).find("its columns: jobid, partition"), std::string::npos) << ResultText(bad);
  EXPECT_TRUE(Query({{"topic", "queue"}, {"group_by", 3}}).is_error);
}

TEST_F(ScaleToolsTest, ACutReadIsAnsweredAsALowerBoundNeverATotal) {
  backend_.jobs = 4000;
  backend_.cut_at = 50000;  // the executor's cap, smaller here
  ToolResult r = Query({{"topic", "queue"}});
  ASSERT_FALSE(r.is_error) << ResultText(r);
  const Json& s = *r.structured;
  EXPECT_EQ(s["total_is_lower_bound"], true);
  EXPECT_EQ(s["output_cut_at_bytes"], 50000);
  EXPECT_GT(s["output_bytes"].get<std::size_t>(), 50000u);
  EXPECT_LT(s["total_rows"].get<std::size_t>(), 4000u);
  EXPECT_EQ(s["truncated"], true);
  const std::string text = ResultText(r);
  EXPECT_NE(text.find("queue: at least " + s["total_rows"].dump() + " rows"), std::string::npos) << text.substr(0, 400);
  EXPECT_NE(text.find("output cut at 50000 of " + s["output_bytes"].dump() + " bytes"),
            std::string::npos);
  // Grouped, the same: every count is a lower bound, and the answer says so.
  ToolResult g = Query({{"topic", "queue"}, {"group_by", {"reason"}}});
  EXPECT_EQ((*g.structured)["total_is_lower_bound"], true);
  EXPECT_NE(ResultText(g).find("at least"), std::string::npos);
  // Every key of the answer is one the output schema allows.
  const Json& schema = tools_[1].output_schema;
  for (const Json* answer : std::vector<const Json*>{&s, &*g.structured}) {
    for (const auto& item : answer->items()) {
      EXPECT_TRUE(schema["properties"].contains(item.key())) << item.key();
    }
  }
}

TEST_F(ToolsTest, AReplayedAnswerFollowsTheOffset) {
  // Each answer is cached at its snapshot; SetOffset gives the other snapshot's, both ways.
  for (int round = 0; round < 2; ++round) {
    backend_->SetOffset(10);
    EXPECT_TRUE(Call("slurm_query", {{"topic", "accounting"}}).is_error);
    EXPECT_TRUE(Call("slurm_query", {{"topic", "accounting"}}).is_error);
    backend_->SetOffset(30);
    EXPECT_FALSE(Call("slurm_query", {{"topic", "accounting"}}).is_error);
    EXPECT_FALSE(Call("slurm_query", {{"topic", "accounting"}}).is_error);
  }
  // The answer shared at one snapshot is not the other's.
  backend_->SetOffset(10);
  const ToolResult frozen = Run("slurm_query", {{"topic", "accounting"}});
  backend_->SetOffset(30);
  const ToolResult healed = Run("slurm_query", {{"topic", "accounting"}});
  ASSERT_NE(frozen.shared, nullptr);
  ASSERT_NE(healed.shared, nullptr);
  EXPECT_NE(frozen.shared, healed.shared);
  EXPECT_NE(Answer(frozen), Answer(healed));
  // The overview too: its diagnostics and queue sections are the snapshot's.
  backend_->SetOffset(10);
  const ToolResult overview_frozen = Run("slurm_overview", Json::object());
  backend_->SetOffset(30);
  const ToolResult overview_healed = Run("slurm_overview", Json::object());
  ASSERT_NE(overview_frozen.shared, nullptr);
  EXPECT_NE(overview_frozen.shared, overview_healed.shared);
  EXPECT_EQ(Run("slurm_overview", Json::object()).shared, overview_healed.shared);
}

// A context whose caller is set, as the HTTP transport sets it from an OAuth token.
class CallerContext : public NullContext {
 public:
  explicit CallerContext(Caller c) : c_(std::move(c)) {}
  Caller caller() const override { return c_; }

 private:
  Caller c_;
};

// Answers every read with the demo's evidence, and keeps each argv that reached it.
class RecordingBackend : public CountingBackend {
 public:
  using CountingBackend::CountingBackend;
  Evidence Read(const std::vector<std::string>& argv) override {
    argvs.push_back(argv);
    return CountingBackend::Read(argv);
  }
  Evidence ReadFabric() override {
    argvs.push_back({"files", "fabric"});
    return CountingBackend::ReadFabric();
  }
  std::vector<std::vector<std::string>> argvs;
};

class ScopeTest : public ToolsTest {
 protected:
  ToolResult CallAs(const Caller& caller, const std::string& name, const Json& args) {
    return RunAs(caller, name, args).Fields();
  }
  // The result as the tool gave it: `shared` is the kept answer it reused, if any.
  ToolResult RunAs(const Caller& caller, const std::string& name, const Json& args) {
    CallerContext context(caller);
    for (const Tool& t : tools_) {
      if (t.name == name) return t.run(args, context);
    }
    ADD_FAILURE() << "no tool " << name;
    return {};
  }
  void Build(Backend* backend) {
    SurfaceOptions o;
    o.backend = backend;
    o.audit = [this](const Json& j) { audit_.push_back(j); };
    o.scopes = ScopeNames{};
    tools_ = BuildTools(o);
  }
  const Caller alice_own_{"sub-alice", "alice", {"slurm:read:own"}};
};

// An own-jobs caller reads every topic; what reaches the back-end is narrowed to its user, and
// what cannot be narrowed never reaches it.
TEST_F(ScopeTest, AnOwnJobsCallerReadsOnlyItsOwnJobs) {
  RecordingBackend recorded(*backend_);
  Build(&recorded);
  std::map<std::string, std::string> text;
  text["overview"] = Text(CallAs(alice_own_, "slurm_overview", Json::object()));
  for (const Topic& t : Topics()) {
    text[t.name] = Text(CallAs(alice_own_, "slurm_query", {{"topic", t.name}}));
  }
  // The job-level topics were read, narrowed, not refused: each program reached the back-end.
  std::set<std::string> programs;
  for (const std::vector<std::string>& argv : recorded.argvs) programs.insert(argv[0]);
  for (const char* p : {"squeue", "sacct", "sprio", "sshare", "sinfo", "nvidia-smi"}) {
    EXPECT_TRUE(programs.count(p)) << p;
  }
  for (const std::vector<std::string>& argv : recorded.argvs) {
    const std::string& p = argv[0];
    const std::string shown = base::FormatArgv(argv);
    if (p == "squeue" || p == "sprio" || p == "sacct") {
      EXPECT_EQ(std::count(argv.begin(), argv.end(), "--user=alice"), 1) << shown;
    } else if (p == "sshare") {
      EXPECT_EQ(std::count(argv.begin(), argv.end(), "--users=alice"), 1) << shown;
    } else {
      EXPECT_TRUE(p == "sinfo" || p == "scontrol" || p == "nvidia-smi") << shown;
    }
    EXPECT_EQ(std::count(argv.begin(), argv.end(), "-a"), 0) << shown;
    EXPECT_NE(p, "sdiag") << shown;
    EXPECT_FALSE(p == "scontrol" && std::count(argv.begin(), argv.end(), "job")) << shown;
    EXPECT_NE(p, "files") << shown;
  }
  EXPECT_NE(text["jobs"].find("own-jobs-unfilterable"), std::string::npos) << text["jobs"];
  EXPECT_NE(text["diagnostics"].find("own-jobs-unfilterable"), std::string::npos);
  EXPECT_NE(text["logs"].find("scope:"), std::string::npos) << text["logs"];
  EXPECT_NE(text["fabric"].find("scope:"), std::string::npos) << text["fabric"];
  EXPECT_NE(text["queue"].find("VIEW: the own jobs of Slurm user alice"), std::string::npos);
  EXPECT_NE(text["overview"].find("VIEW: the own jobs of Slurm user alice"), std::string::npos);
  // Every audit record names the principal and the user, never a token.
  ASSERT_FALSE(audit_.empty());
  for (const Json& a : audit_) {
    EXPECT_EQ(a["principal"], "sub-alice") << a.dump();
    EXPECT_EQ(a["user"], "alice") << a.dump();
  }
}

TEST_F(ScopeTest, AnOwnJobsCallerNamingAnotherUserIsRefusedAndNothingIsRead) {
  RecordingBackend recorded(*backend_);
  Build(&recorded);
  for (const char* who : {"bob", "alice,bob"}) {
    ToolResult r = CallAs(alice_own_, "slurm_query",
                          {{"topic", "queue"}, {"filters", {{"user", who}}}});
    EXPECT_TRUE(r.is_error);
    EXPECT_NE(Text(r).find("DENIED own-jobs-filter"), std::string::npos) << Text(r);
  }
  EXPECT_TRUE(recorded.argvs.empty());
  // Its own name as the filter is its own jobs.
  CallAs(alice_own_, "slurm_query", {{"topic", "queue"}, {"filters", {{"user", "alice"}}}});
  ASSERT_EQ(recorded.argvs.size(), 1u);
  EXPECT_EQ(recorded.argvs[0].back(), "alice");
}

TEST_F(ScopeTest, ATokenWithoutAReadScopeOrAUserIsRefused) {
  RecordingBackend recorded(*backend_);
  Build(&recorded);
  for (const Caller& c : {Caller{"svc", "svc", {}}, Caller{"svc", "svc", {"slurm:logs"}},
                          Caller{"nouser", "", {"slurm:read:own"}}}) {
    ToolResult r = CallAs(c, "slurm_query", {{"topic", "nodes"}});
    EXPECT_TRUE(r.is_error);
    EXPECT_NE(Text(r).find("REFUSED (scope)"), std::string::npos) << Text(r);
    EXPECT_TRUE(CallAs(c, "slurm_overview", Json::object()).is_error);
  }
  EXPECT_TRUE(recorded.argvs.empty());
  EXPECT_EQ(recorded.reads, 0);
}

// slurm:read is the service account's view, but the logs topic is its own scope; and an answer
// the answer cache holds for the widest view never reaches a narrower one.
TEST_F(ScopeTest, LogsNeedTheirOwnScopeEvenThroughTheAnswerCache) {
  Build(backend_.get());
  const Caller ops{"ops", "", {"slurm:read", "slurm:logs"}};
  const Caller reader{"reader", "", {"slurm:read"}};
  const Json logs = {{"topic", "logs"}, {"filters", {{"pattern", "(?i)registering"}}}};
  for (int i = 0; i < 2; ++i) {
    ToolResult wide = CallAs(ops, "slurm_query", logs);
    EXPECT_FALSE(wide.is_error) << Text(wide);
    ToolResult narrow = CallAs(reader, "slurm_query", logs);
    EXPECT_TRUE(narrow.is_error);
    EXPECT_NE(Text(narrow).find("scope:"), std::string::npos) << Text(narrow);
  }
  ToolResult nodes = CallAs(reader, "slurm_query", {{"topic", "nodes"}});
  EXPECT_FALSE(nodes.is_error) << Text(nodes);
  EXPECT_EQ(Text(nodes).find("VIEW:"), std::string::npos);
  // Every other topic reads the same with or without slurm:logs: one kept answer serves both.
  const ToolResult kept = RunAs(reader, "slurm_query", {{"topic", "nodes"}});
  ASSERT_NE(kept.shared, nullptr);
  EXPECT_EQ(RunAs(ops, "slurm_query", {{"topic", "nodes"}}).shared, kept.shared);
  EXPECT_EQ(RunAs(reader, "slurm_query", {{"topic", "nodes"}}).shared, kept.shared);
  // An own-jobs caller's answers are never kept, nor a log's.
  EXPECT_EQ(RunAs(alice_own_, "slurm_query", {{"topic", "nodes"}}).shared, nullptr);
  EXPECT_EQ(RunAs(ops, "slurm_query", logs).shared, nullptr);
}

TEST(NarrowToUserTest, AddsTheFilterDropsTheWideningAndLeavesTheRest) {
  using V = std::vector<std::string>;
  EXPECT_EQ(NarrowToUser({"squeue", "--noheader"}, "alice"), (V{"squeue", "--noheader", "--user=alice"}));
  EXPECT_EQ(NarrowToUser({"sacct", "-a", "-X"}, "alice"), (V{"sacct", "-X", "--user=alice"}));
  EXPECT_EQ(NarrowToUser({"sshare", "-a", "-P"}, "alice"), (V{"sshare", "-P", "--users=alice"}));
  EXPECT_EQ(NarrowToUser({"sprio", "-u", "bob"}, "alice"), (V{"sprio", "-u", "bob"}))
      << "a user named is the guard's to judge";
  EXPECT_EQ(NarrowToUser({"scontrol", "show", "job"}, "alice"), (V{"scontrol", "show", "job"}));
  EXPECT_EQ(NarrowToUser({}, "alice"), V{});
}

}  // namespace
}  // namespace slurm_rca::mcp
