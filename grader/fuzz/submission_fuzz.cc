// libFuzzer target for the grader's readers of agent output: the input is a submission (JSON
// Lines or one JSON array) parsed against the shipped suite, with "@FINGERPRINT@" replaced by the
// suite's fingerprint as in grader/testdata/broken, so that seeds reach the answers. The same
// text is also read as a transcript (grader/transcript_times.h). Aborts on:
//   - a submission returned together with problems, or neither; a problem without a message;
//   - an answer for a scenario outside the suite, or a confidence outside [0, 1];
//   - a score of a parsed submission that does not add up (answered + missing != scenarios,
//     correct > answered, depth outside [0, 1]) or whose JSON report does not serialise;
//   - a transcript refused without a problem;
//   - an exception escaping any of them (libFuzzer reports it as a crash).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "grader/score.h"
#include "grader/transcript_times.h"
#include "scenarios/validate.h"

namespace {

namespace sc = slurm_rca::scenarios;
using namespace slurm_rca::grader;

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "SUBMISSION INVARIANT: %s: %s\n", what, detail.c_str());
  std::abort();
}

const sc::Suite& ShippedSuite() {
  static const sc::Suite* suite = [] {
    auto* s = new sc::Suite(sc::LoadSuite(sc::ScenarioPaths(SLURM_RCA_SOURCE_DIR "/scenarios")));
    if (!s->problems.empty()) Fail("the shipped suite does not load", s->problems[0].ToString());
    return s;
  }();
  return *suite;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const sc::Suite& suite = ShippedSuite();
  static const std::string fingerprint = SuiteFingerprint(suite.scenarios);
  std::string text(reinterpret_cast<const char*>(data), size);
  const std::string marker = "@FINGERPRINT@";
  for (std::size_t at; (at = text.find(marker)) != std::string::npos;) {
    text.replace(at, marker.size(), fingerprint);
  }

  ParsedSubmission p = ParseSubmission(text, "fuzz.jsonl", suite.scenarios);
  if (p.submission.has_value() == !p.problems.empty()) Fail("submission and problems", text);
  for (const SubmissionProblem& problem : p.problems) {
    if (problem.message.empty() || problem.line < 0) Fail("malformed problem", problem.ToString());
  }
  if (p.submission) {
    std::set<std::string> ids;
    for (const sc::Scenario& s : suite.scenarios) ids.insert(s.id);
    for (const Answer& a : p.submission->answers) {
      if (!ids.count(a.scenario_id)) Fail("an answer outside the suite", a.scenario_id);
      if (!(a.confidence >= 0 && a.confidence <= 1)) Fail("confidence", std::to_string(a.confidence));
    }
    Report r = Score(*p.submission, suite.scenarios);
    if (r.answered + r.missing != r.scenarios || r.correct > r.answered ||
        !(r.depth >= 0 && r.depth <= 1)) {
      Fail("the score does not add up", RenderReport(*p.submission, r));
    }
    ReportJson(*p.submission, r).dump();
  }

  slurm_rca::base::Result<std::optional<HarnessTime>> t = ReadTranscript(text, "fuzz.jsonl");
  if (!t.ok() && t.status().message().empty()) {
    Fail("a transcript refused without a problem", text);
  }
  return 0;
}
