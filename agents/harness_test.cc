// harness_test: what rca-bench run records of a run's spend, against FakeModelServer (a test
// double; no real model): the price file's refusals, tokens and cost per task run and in the
// header, the model the server says it ran, and caps that stop the run between task runs; workers
// (jobs) with a back-end each, sharing one EndpointLimiter, write what one worker writes; the
// journal keeps finished task runs, refuses another run's directory, drops a line cut by a kill.
#include "agents/harness.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/llm/fake_model_server.h"
#include "agents/prices.h"

namespace slurm_rca::agents {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

constexpr char kPricesFile[] = "prices.yaml";

std::string PriceError(const std::string& text, const std::string& model = "m",
                       const std::string& kind = "openai") {
  base::Result<PriceTable> t = PriceTable::Parse(text, kPricesFile);
  if (!t.ok()) return t.status().message();
  base::Result<ModelPrice> p = t->For(model, kind);
  return p.ok() ? "" : p.status().message();
}

TEST(Prices, BadPriceFilesAreClearErrors) {
  EXPECT_EQ(PriceError("m: {input: 2, output: 8, cached_input: 0.5}"), "");
  // JSON is YAML too.
  EXPECT_EQ(PriceError(R"({"m": {"input": 2, "output": 8, "cached_input": 0.5}})"), "");
  std::string e = PriceError("other: {input: 2, output: 8, cached_input: 0.5}");
  EXPECT_NE(e.find("model 'm' has no prices in the price file prices.yaml (it names other)"),
            std::string::npos)
      << e;
  e = PriceError("m: {input: -2, output: 8, cached_input: 0.5}");
  EXPECT_NE(e.find("price file prices.yaml: model 'm': input must be a non-negative number"),
            std::string::npos)
      << e;
  e = PriceError("m: {input: 2, output: cheap, cached_input: 0.5}");
  EXPECT_NE(e.find("output must be a non-negative number (USD per million tokens), got 'cheap'"),
            std::string::npos)
      << e;
  e = PriceError("m: {input: \"2\", output: 8, cached_input: 0.5}");  // a string, not a number
  EXPECT_NE(e.find("input must be a non-negative number"), std::string::npos) << e;
  e = PriceError("m: {input: .nan, output: 8, cached_input: 0.5}");
  EXPECT_NE(e.find("input must be a non-negative number"), std::string::npos) << e;
  e = PriceError("m: {input: 2, output: 8}");
  EXPECT_NE(e.find("missing key 'cached_input'"), std::string::npos) << e;
  e = PriceError("m: {input: 2, output: 8, cached_input: 1, per: token}");
  EXPECT_NE(e.find("unknown key 'per'"), std::string::npos) << e;
  e = PriceError("[1, 2]");
  EXPECT_NE(e.find("expected a mapping of model name"), std::string::npos) << e;
  e = PriceError("m: {input: [");
  EXPECT_NE(e.find("price file prices.yaml: not YAML or JSON"), std::string::npos) << e;
  e = PriceError("m: {input: 3, output: 15, cached_input: 0.3}", "m", "anthropic");
  EXPECT_NE(e.find("has no cache_write price"), std::string::npos) << e;
  EXPECT_EQ(PriceError("m: {input: 3, output: 15, cached_input: 0.3, cache_write: 3.75}", "m",
                       "anthropic"),
            "");
  base::Result<PriceTable> missing = PriceTable::Load("/nonexistent/prices.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot read the price file /nonexistent/prices.yaml"),
            std::string::npos);
}

TEST(Prices, CostPricesCachedAndWrittenTokensApart) {
  ModelPrice p{3, 15, 0.3, 3.75};
  Usage u;
  u.input_tokens = 10000;  // 2000 uncached, 6000 read from the cache, 2000 written to it
  u.cached_input_tokens = 6000;
  u.cache_creation_input_tokens = 2000;
  u.output_tokens = 1000;
  EXPECT_NEAR(Cost(p, u), (2000 * 3 + 6000 * 0.3 + 2000 * 3.75 + 1000 * 15) / 1e6, 1e-15);
}

class RunSpendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok());
    dir_ = fs::temp_directory_path() / ("harness_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    BackendConfig c;
    c.kind = "openai";
    c.base_url = server_.base_url() + "/v1";
    c.model = "asked-model";
    c.api_key_env = "SLURM_RCA_HARNESS_TEST_NO_KEY";  // a local server needs none
    auto b = MakeBackend(c, [](const std::string&) { return std::nullopt; });
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    backend_ = std::move(b).value();
    // Each task run: one turn, 1000 prompt tokens of which 800 cached, 50 out, then a submit.
    for (int i = 0; i < 3; ++i) {
      server_.Enqueue(
          {200,
           FakeModelServer::OpenAiReply(
               "", {{"c1", "submit_diagnosis", {{"root_cause", "db.mysql"}, {"confidence", 0.5}}}},
               1000, 50, 800)});
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunOptions Options() {
    RunOptions o;
    o.config.name = "T";
    o.config.hash = "h";
    o.config.tools = "none";
    o.config.budget.max_turns = 3;
    o.model = backend_.get();
    o.model_name = "asked-model";
    for (int i = 1; i <= 3; ++i) {
      o.tasks.push_back({"S0" + std::to_string(i), "T-" + std::to_string(i), "jobs pend"});
    }
    o.out_dir = dir_.string();
    o.fingerprint = "sha256:0";
    o.date = "2026-12-06";
    return o;
  }
  std::vector<Json> Lines(const fs::path& p) {
    std::vector<Json> out;
    std::ifstream in(p);
    std::string line;
    while (std::getline(in, line)) out.push_back(Json::parse(line));
    return out;
  }

  // Another back-end of the same endpoint (one per worker), sharing `limiter`.
  std::unique_ptr<Backend> NewBackend(std::shared_ptr<EndpointLimiter> limiter) {
    BackendConfig c;
    c.kind = "openai";
    c.base_url = server_.base_url() + "/v1";
    c.model = "asked-model";
    c.limiter = std::move(limiter);
    auto b = MakeBackend(c, [](const std::string&) { return std::nullopt; });
    return b.ok() ? std::move(b).value() : nullptr;
  }
  void EnqueueSubmits(int n) {
    for (int i = 0; i < n; ++i) {
      server_.Enqueue(
          {200,
           FakeModelServer::OpenAiReply(
               "", {{"c1", "submit_diagnosis", {{"root_cause", "db.mysql"}, {"confidence", 0.5}}}},
               1000, 50, 800)});
    }
  }
  // A submission without its date and wall times, which differ between two runs of the same work.
  std::vector<Json> Comparable(const fs::path& p) {
    std::vector<Json> lines = Lines(p);
    if (!lines.empty()) {
      lines[0].erase("date");
      lines[0]["usage"].erase("wall_s");
    }
    return lines;
  }

  FakeModelServer server_;
  fs::path dir_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(RunSpendTest, HeaderAndTranscriptsRecordTokensCostAndTheServedModel) {
  RunOptions o = Options();
  o.price = ModelPrice{2, 8, 0.5, std::nullopt};
  o.prices_file = "p.yaml";
  RunSummary s = RunSuite(o);
  EXPECT_EQ(s.runs, 3);
  EXPECT_EQ(s.stopped, "");
  ASSERT_EQ(s.submissions.size(), 1u);
  std::vector<Json> lines = Lines(s.submissions[0]);
  ASSERT_EQ(lines.size(), 4u);
  const Json& h = lines[0];
  EXPECT_EQ(h["model"], "asked-model");
  EXPECT_EQ(h["models_served"], Json::array({"fake"}));
  EXPECT_EQ(h["temperature"], 0.0);
  EXPECT_EQ(h["seed"], "not sent");
  EXPECT_EQ(h["usage"]["input_tokens"], 3000);
  EXPECT_EQ(h["usage"]["cached_input_tokens"], 2400);
  EXPECT_EQ(h["usage"]["output_tokens"], 150);
  EXPECT_EQ(h["usage"]["model_turns"], 3);
  EXPECT_EQ(h["usage"]["tool_calls"], 3);
  EXPECT_EQ(h["usage"]["task_runs"], 3);
  // Per task run: 200 uncached x 2 + 800 cached x 0.5 + 50 out x 8 = 1200 per million.
  EXPECT_NEAR(h["cost_usd"].get<double>(), 3 * 1200 / 1e6, 1e-12);
  EXPECT_EQ(h["prices_file"], "p.yaml");
  EXPECT_FALSE(h.contains("stopped"));
  std::vector<Json> t = Lines(dir_ / "T-asked-model-r1.transcripts" / "T-1.jsonl");
  ASSERT_FALSE(t.empty());
  const Json& last = t.back();
  EXPECT_EQ(last["event"], "task_usage");
  EXPECT_EQ(last["input_tokens"], 1000);
  EXPECT_EQ(last["cached_input_tokens"], 800);
  EXPECT_EQ(last["model_turns"], 1);
  EXPECT_NEAR(last["cost_usd"].get<double>(), 1200 / 1e6, 1e-12);
  EXPECT_GE(last["wall_s"].get<double>(), 0);
}

TEST_F(RunSpendTest, WithoutPricesCostIsAbsentNotZero) {
  RunSummary s = RunSuite(Options());
  Json h = Lines(s.submissions[0])[0];
  EXPECT_FALSE(h.contains("cost_usd"));
  EXPECT_FALSE(s.spend.cost_usd);
  EXPECT_EQ(h["usage"]["input_tokens"], 3000);
}

TEST_F(RunSpendTest, TokenCapStopsBetweenTaskRuns) {
  RunOptions o = Options();
  o.cap.max_tokens_total = 2000;  // 1050 a task run: reached after the second
  RunSummary s = RunSuite(o);
  EXPECT_EQ(s.runs, 2);
  EXPECT_EQ(s.stopped, "--max-tokens-total 2000 reached: 2100 tokens spent");
  std::vector<Json> lines = Lines(s.submissions[0]);
  ASSERT_EQ(lines.size(), 3u);  // the header and two answers
  EXPECT_EQ(lines[0]["stopped"], s.stopped);
  EXPECT_EQ(lines[0]["usage"]["task_runs"], 2);
  EXPECT_EQ(server_.pending(), 1u);  // the third task run never asked the model
}

TEST_F(RunSpendTest, CostCapCountsWhatEarlierConfigurationsSpent) {
  RunOptions o = Options();
  o.price = ModelPrice{2, 8, 0.5, std::nullopt};
  o.cap.max_cost_usd = 0.003;
  o.spent_before.cost_usd = 0.0015;  // one task run at 0.0012 reaches 0.0027; two, 0.0039
  RunSummary s = RunSuite(o);
  EXPECT_EQ(s.runs, 2);
  EXPECT_EQ(s.stopped, "--max-cost 0.003 USD reached: 0.0039 USD spent");
  EXPECT_NEAR(*s.spend.cost_usd, 0.0024, 1e-12);
}

TEST_F(RunSpendTest, FourWorkersWriteWhatOneWrites) {
  EnqueueSubmits(9);  // 3 from SetUp: 6 task runs each for one worker, then for four
  RunOptions o = Options();
  o.repeats = 2;
  o.price = ModelPrice{2, 8, 0.5, std::nullopt};
  o.out_dir = (dir_ / "one").string();
  RunSummary one = RunSuite(o);
  ASSERT_EQ(one.runs, 6);
  auto limiter = std::make_shared<EndpointLimiter>(EndpointLimits{100, 0, std::chrono::seconds(60)});
  std::vector<std::unique_ptr<Backend>> workers;
  for (int w = 0; w < 4; ++w) workers.push_back(NewBackend(limiter));
  o.model = workers[0].get();
  for (int w = 1; w < 4; ++w) o.extra_models.push_back(workers[w].get());
  o.jobs = 4;
  o.out_dir = (dir_ / "four").string();
  int most_in_flight = 0;
  o.progress = [&](const RunProgress& p) { most_in_flight = std::max(most_in_flight, p.in_flight); };
  RunSummary four = RunSuite(o);
  EXPECT_EQ(four.runs, 6);
  EXPECT_GE(most_in_flight, 1);
  EXPECT_LE(most_in_flight, 4);
  EXPECT_EQ(limiter->stats().granted, 6);  // every request went through the shared limiter
  ASSERT_EQ(four.submissions.size(), 2u);
  for (const char* stem : {"T-asked-model-r1.jsonl", "T-asked-model-r2.jsonl"}) {
    EXPECT_EQ(Comparable(dir_ / "one" / stem), Comparable(dir_ / "four" / stem)) << stem;
  }
  EXPECT_EQ(server_.pending(), 0u);
}

TEST_F(RunSpendTest, ACapStopsNewTaskRunsAndLetsRunningOnesFinish) {
  // A slow model of its own: both workers start a task run at 0 tokens spent, before either ends.
  FakeModelServer slow;
  ASSERT_TRUE(slow.ok());
  for (int i = 0; i < 3; ++i) {
    slow.Enqueue({200,
                  FakeModelServer::OpenAiReply(
                      "", {{"c1", "submit_diagnosis", {{"root_cause", "db.mysql"}, {"confidence", 0.5}}}},
                      1000, 50, 800),
                  {},
                  0.3});
  }
  BackendConfig c;
  c.kind = "openai";
  c.base_url = slow.base_url() + "/v1";
  c.model = "asked-model";
  c.limiter = std::make_shared<EndpointLimiter>(EndpointLimits{});
  auto none = [](const std::string&) { return std::optional<std::string>(); };
  auto first = MakeBackend(c, none), second = MakeBackend(c, none);
  ASSERT_TRUE(first.ok() && second.ok());
  RunOptions o = Options();
  o.model = first->get();
  o.extra_models = {second->get()};
  o.jobs = 2;
  // 1050 a task run: the first to end passes the cap while the other still runs, which ends.
  o.cap.max_tokens_total = 1000;
  RunSummary s = RunSuite(o);
  EXPECT_EQ(s.runs, 2);
  EXPECT_EQ(s.stopped, "--max-tokens-total 1000 reached: 1050 tokens spent");
  EXPECT_EQ(s.spend.usage.total(), 2100);
  EXPECT_EQ(slow.pending(), 1u);
  std::vector<Json> lines = Lines(s.submissions[0]);
  ASSERT_EQ(lines.size(), 3u);  // both running task runs finished and were written
  EXPECT_EQ(lines[0]["stopped"], s.stopped);
}

Json Identity(const std::string& model) {
  return {{"suite_fingerprint", "sha256:0"}, {"model", model}, {"configurations", {"T"}}};
}

TEST_F(RunSpendTest, TheJournalKeepsWhatACapStoppedAndTheResumeFinishesIt) {
  EnqueueSubmits(3);  // 3 task runs uninterrupted, then 2 + 1
  RunOptions o = Options();
  o.out_dir = (dir_ / "whole").string();
  ASSERT_EQ(RunSuite(o).runs, 3);
  fs::create_directories(dir_ / "parts");
  const std::string path = (dir_ / "parts" / "run.journal").string();
  o.out_dir = (dir_ / "parts").string();
  {
    auto j = RunJournal::Open(path, Identity("asked-model"), false);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    o.journal = j->get();
    o.cap.max_tokens_total = 2000;
    RunSummary s = RunSuite(o);
    EXPECT_EQ(s.runs, 2);
    EXPECT_FALSE(s.stopped.empty());
  }
  auto j = RunJournal::Open(path, Identity("asked-model"), false);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)->loaded(), 2u);
  o.journal = j->get();
  o.cap.max_tokens_total = 4000;
  RunSummary s = RunSuite(o);
  EXPECT_EQ(s.kept, 2);
  EXPECT_EQ(s.runs, 1);
  EXPECT_EQ(s.stopped, "");
  EXPECT_EQ(s.spend.usage.total(), 3150);  // kept and made alike
  EXPECT_EQ(Comparable(dir_ / "whole" / "T-asked-model-r1.jsonl"),
            Comparable(dir_ / "parts" / "T-asked-model-r1.jsonl"));
  EXPECT_EQ(server_.pending(), 0u);
}

TEST(RunJournal, RefusesAnotherRunDropsACutLineAndHoldsTheDirectory) {
  fs::path dir = fs::temp_directory_path() / ("run_journal_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "run.journal").string();
  {
    auto j = RunJournal::Open(path, Identity("m1"), false);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    // A second process (here: a second open) may not use the directory at the same time.
    auto busy = RunJournal::Open(path, Identity("m1"), false);
    ASSERT_FALSE(busy.ok());
    EXPECT_NE(busy.status().message().find("another rca-bench run is writing"), std::string::npos);
    ASSERT_TRUE((*j)->Append({"T", "h", 1, "T-1", {{"scenario_id", "T-1"}}, Json::object(), 0}).ok());
  }
  {  // a kill in the middle of a line
    std::ofstream out(path, std::ios::app);
    out << R"({"configuration":"T","repeat":1,"task_id":"T-2","ans)";
  }
  auto j = RunJournal::Open(path, Identity("m1"), false);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)->loaded(), 1u);
  ASSERT_NE((*j)->Find("T", 1, "T-1"), nullptr);
  EXPECT_EQ((*j)->Find("T", 1, "T-1")->answer["scenario_id"], "T-1");
  EXPECT_EQ((*j)->Find("T", 1, "T-2"), nullptr);
  ASSERT_TRUE((*j)->Append({"T", "h", 1, "T-2", {{"scenario_id", "T-2"}}, Json::object(), 0}).ok());
  j->reset();
  auto again = RunJournal::Open(path, Identity("m1"), false);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->loaded(), 2u);  // the cut line is gone, the next one whole
  again->reset();
  auto other = RunJournal::Open(path, Identity("m2"), false);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), base::Status::Code::kInvalidArgument);
  EXPECT_NE(other.status().message().find("written by a run with another model (\"m1\" there, "
                                          "\"m2\" now)"),
            std::string::npos)
      << other.status().message();
  auto fresh = RunJournal::Open(path, Identity("m2"), true);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ((*fresh)->loaded(), 0u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace slurm_rca::agents
