// transcript_times_test: time to hypothesis comes from the harness's transcripts (ticket to first
// valid submit), a transcript that disagrees with the submission gives no time, and the
// leaderboard page escapes what submissions say and names nothing to load.
#include "grader/transcript_times.h"

#include <gtest/gtest.h>

#include "grader/leaderboard.h"
#include "grader/score.h"

namespace slurm_rca::grader {
namespace {

TEST(Transcripts, TimeIsFromTheTicketToTheFirstValidSubmitAnswerIsTheLast) {
  base::Result<std::optional<HarnessTime>> t = ReadTranscript(
      "{\"t\": 0, \"event\": \"start\"}\n"
      "{\"t\": 0.5, \"event\": \"ticket\", \"text\": \"x\"}\n"
      "{\"t\": 2, \"event\": \"submit\", \"valid\": false, \"error\": \"not a component\"}\n"
      "{\"t\": 9.75, \"event\": \"submit\", \"valid\": true, \"answer\": {\"root_cause\": "
      "\"db.mysql\"}}\n"
      "{\"t\": 20, \"event\": \"submit\", \"valid\": true, \"answer\": {\"root_cause\": "
      "\"unknown\"}}\n",
      "a.jsonl");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_TRUE(*t);
  EXPECT_DOUBLE_EQ((*t)->seconds, 9.25);
  EXPECT_EQ((*t)->root_cause, "unknown");  // the last commitment is the answer; the first, the time
}

TEST(Transcripts, NoTicketOrNotJsonIsAProblemAndBudgetOutIsNoSubmit) {
  auto problem = [](const std::string& text, const std::string& file) {
    base::Result<std::optional<HarnessTime>> t = ReadTranscript(text, file);
    EXPECT_FALSE(t.ok()) << file;
    return t.ok() ? std::string() : t.status().message();
  };
  EXPECT_NE(problem("{\"t\": 1, \"event\": \"end\"}\n", "a.jsonl").find("no ticket"),
            std::string::npos);
  EXPECT_EQ(
      problem("{\"t\": 0, \"event\": \"ticket\"}\nnot json\n", "b.jsonl").rfind("b.jsonl:2:", 0),
      0u);
  // Read, but no valid submit: the budget ran out.
  auto unanswered = [](const std::string& text, const std::string& file) {
    base::Result<std::optional<HarnessTime>> t = ReadTranscript(text, file);
    EXPECT_TRUE(t.ok()) << t.status().message();
    return t.ok() && !*t;
  };
  EXPECT_TRUE(
      unanswered("{\"t\": 0, \"event\": \"ticket\"}\n{\"t\": 900, \"event\": "
                 "\"end\", \"reason\": \"budget:wall\"}\n",
                 "c.jsonl"));
  // valid must be the boolean true, not a truthy value (and a string there is not an error).
  EXPECT_TRUE(
      unanswered("{\"t\": 0, \"event\": \"ticket\"}\n{\"t\": 1, \"event\": "
                 "\"submit\", \"valid\": \"yes\"}\n",
                 "d.jsonl"));
  EXPECT_NE(problem("{\"t\": 1, \"event\": \"submit\", \"valid\": true, \"answer\": "
                    "{\"root_cause\": \"db.mysql\"}}\n",
                    "e.jsonl")
                .find("before any ticket"),
            std::string::npos);
}

TEST(Transcripts, ScoreUsesOnlyTimesWhoseAnswerAgrees) {
  scenarios::Scenario a, b, c;
  a.id = "A1";
  b.id = "B1";
  c.id = "C1";
  for (scenarios::Scenario* s : {&a, &b, &c}) {
    s->status = "runnable";
    s->family = "f";
    s->difficulty = "single_layer";
    s->scoring = {{"db.mysql", 1.0}};
  }
  std::vector<scenarios::Scenario> suite = {a, b, c};
  Submission sub;
  sub.answers = {{"A1", "db.mysql", 1}, {"B1", "db.mysql", 1}, {"C1", "db.mysql", 1}};
  HarnessTimes times;
  times.by_scenario["A1"] = {4, "db.mysql", "A1.jsonl"};
  times.by_scenario["B1"] = {1, "slurm.config", "B1.jsonl"};  // committed something else
  Report r = Score(sub, suite, &times);
  ASSERT_EQ(r.harness_times_s.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.harness_time_median_s, 4);
  ASSERT_EQ(r.harness_problems.size(), 2u);
  EXPECT_NE(r.harness_problems[0].find("committed slurm.config"), std::string::npos);
  EXPECT_NE(r.harness_problems[1].find("C1: no transcript"), std::string::npos);
  Report none = Score(sub, suite);
  EXPECT_FALSE(none.harness_time_median_s);
  EXPECT_NE(RenderReport(sub, none).find("time to hyp.   unmeasured"), std::string::npos);
}

TEST(Transcripts, BytesReadAreTheToolResultsBeforeTheFirstValidSubmit) {
  base::Result<std::optional<HarnessTime>> t = ReadTranscript(
      "{\"t\": 0, \"event\": \"ticket\", \"text\": \"x\"}\n"
      "{\"t\": 1, \"event\": \"tool_result\", \"id\": \"1\", \"bytes\": 1500}\n"
      "{\"t\": 2, \"event\": \"tool_result\", \"id\": \"2\", \"bytes\": 98000}\n"
      "{\"t\": 3, \"event\": \"submit\", \"valid\": false, \"error\": \"no\"}\n"
      "{\"t\": 4, \"event\": \"tool_result\", \"id\": \"3\", \"bytes\": 7}\n"
      "{\"t\": 5, \"event\": \"submit\", \"valid\": true, \"answer\": {\"root_cause\": "
      "\"node.health_check\"}}\n"
      "{\"t\": 6, \"event\": \"tool_result\", \"id\": \"4\", \"bytes\": 1000000}\n",
      "a.jsonl");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_TRUE(*t);
  EXPECT_EQ((*t)->bytes_read, 1500u + 98000u + 7u);  // the read after the answer is not counted
  EXPECT_EQ((*t)->tool_results, 3);
  // A tool_result whose size is not a count is a problem, never a zero.
  base::Result<std::optional<HarnessTime>> bad = ReadTranscript(
      "{\"t\": 0, \"event\": \"ticket\"}\n{\"t\": 1, \"event\": \"tool_result\", \"bytes\": -4}\n",
      "b.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("b.jsonl:2: a tool_result without"), std::string::npos);

  // The score's median over the answers whose transcript agrees, in the text, JSON and leaderboard.
  scenarios::Scenario a, b;
  a.id = "A1";
  b.id = "B1";
  for (scenarios::Scenario* s : {&a, &b}) {
    s->status = "runnable";
    s->family = "f";
    s->difficulty = "single_layer";
    s->scoring = {{"db.mysql", 1.0}};
  }
  Submission sub;
  sub.answers = {{"A1", "db.mysql", 1}, {"B1", "db.mysql", 1}};
  HarnessTimes times;
  times.by_scenario["A1"] = {4, "db.mysql", "A1.jsonl", 1000, 2};
  times.by_scenario["B1"] = {6, "db.mysql", "B1.jsonl", 3000, 5};
  Report r = Score(sub, {a, b}, &times);
  ASSERT_TRUE(r.harness_bytes_median);
  EXPECT_DOUBLE_EQ(*r.harness_bytes_median, 2000);
  EXPECT_DOUBLE_EQ(*r.harness_tool_results_median, 3.5);
  EXPECT_NE(RenderReport(sub, r).find("read to hyp.   2000 bytes median in 3.5 tool results"),
            std::string::npos)
      << RenderReport(sub, r);
  EXPECT_EQ(ReportJson(sub, r)["time_to_hypothesis"]["median_bytes_read"], 2000);
}

TEST(Transcripts, MedianOfEvenAndOdd) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
}

TEST(LeaderboardPage, EscapesSubmissionTextAndNamesNothingToLoad) {
  Leaderboard lb;
  lb.fingerprint = "sha256:0";
  lb.floor_name = "always-abstain";
  lb.floor_depth = 0.25;
  lb.families = {"gpu"};
  Row r;
  r.configuration = "<script>alert(1)</script>";
  r.model = "m\"><img src=x>";
  r.runs = 1;
  r.depth_mean = 0.5;
  r.depth_by_family["gpu"] = 0.5;
  lb.rows.push_back(r);
  std::string html = LeaderboardHtml(lb);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(html.find("id=\"floor-line\""), std::string::npos);
  EXPECT_NE(html.find(">0.50</text>"), std::string::npos);  // the heat map cell's value
}

}  // namespace
}  // namespace slurm_rca::grader
