#include "guard/corpus.h"

#include <filesystem>

namespace slurm_rca::guard {
namespace {

// The cases of one path: the first error of its load, a path without a case, or a case whose
// input is no argv is the error ("file:line: reason").
base::Result<std::vector<base::CorpusCase>> LoadPath(const std::string& path) {
  base::LoadedCorpus corpus = base::LoadCorpus(ArgvCorpus(path));
  if (!corpus.errors.empty()) return base::Status::InvalidArgument(corpus.errors.front());
  if (corpus.cases.empty()) {
    return base::Status::InvalidArgument(path + ": no case (no corpus line in any *.txt file)");
  }
  for (const base::CorpusCase& c : corpus.cases) {
    base::Result<std::vector<std::string>> argv = ParseArgvLine(c.input);
    if (!argv.ok()) {
      return base::Status::InvalidArgument(c.path + ":" + std::to_string(c.line) + ": " +
                                           argv.status().message());
    }
  }
  return std::move(corpus.cases);
}

}  // namespace

base::CorpusOptions ArgvCorpus(const std::string& path) {
  base::CorpusOptions o{.path = path, .layout = base::CorpusLayout::kLines, .extension = ".txt"};
  for (Rule r : AllRules()) o.rules.insert(std::string(RuleId(r)));
  return o;
}

std::vector<base::Diagnostic> CheckCase(const Guard& guard, const base::CorpusCase& c) {
  base::Result<std::vector<std::string>> argv = ParseArgvLine(c.input);
  if (!argv.ok()) {
    return {{.file = c.path, .line = c.line, .rule = "argv", .message = argv.status().message()}};
  }
  Verdict v = guard.Check(*argv);
  if (v.ok()) return {};
  return {{.file = c.path,
           .line = c.line,
           .rule = std::string(RuleId(v.denial().rule)),
           .message = v.denial().reason}};
}

base::Result<std::vector<ArgvCase>> LoadArgvCases(const std::string& path) {
  base::Result<std::vector<base::CorpusCase>> corpus = LoadPath(path);
  if (!corpus.ok()) return corpus.status();
  std::vector<ArgvCase> cases;
  for (const base::CorpusCase& c : *corpus) {
    ArgvCase a{.file = std::filesystem::path(c.path).filename().string(),
               .line = c.line,
               .argv = *ParseArgvLine(c.input)};  // LoadPath read every argv
    // The load admits only the guard's rule ids, so RuleFromId finds every one.
    if (!c.expect.allow) a.expected = RuleFromId(c.expect.deny.front().rule);
    cases.push_back(std::move(a));
  }
  return cases;
}

base::Result<base::CorpusReport> CheckCorpus(const Guard& guard,
                                             const std::vector<std::string>& paths) {
  base::LoadedCorpus all;
  for (const std::string& path : paths) {
    base::Result<std::vector<base::CorpusCase>> corpus = LoadPath(path);
    if (!corpus.ok()) return corpus.status();
    for (base::CorpusCase& c : *corpus) all.cases.push_back(std::move(c));
  }
  return base::RunCorpus(std::move(all),
                         [&guard](const base::CorpusCase& c) { return CheckCase(guard, c); });
}

std::string CorpusSummary(const base::CorpusReport& report) {
  std::string out;
  size_t denied = 0, allowed = 0;
  for (const base::CaseResult& r : report.cases) {
    const base::Expectation& e = r.c.expect;
    if (!r.mismatch) {
      ++(e.allow ? allowed : denied);
      continue;
    }
    base::Result<std::vector<std::string>> argv = ParseArgvLine(r.c.input);
    std::string got =
        r.got.empty() ? "ALLOWED" : "DENIED " + r.got.front().rule + ": " + r.got.front().message;
    out += "MISMATCH " + r.c.name + ": " + (argv.ok() ? FormatArgv(*argv) : r.c.input) +
           ": expected " + (e.allow ? "ALLOWED" : "DENIED " + e.deny.front().rule) + ", got " +
           got + "\n";
  }
  out += "guard corpus: " + std::to_string(report.cases.size()) + " argv, " +
         std::to_string(denied) + " denied with the expected rule, " + std::to_string(allowed) +
         " allowed as expected, " + std::to_string(report.failed()) + " mismatches\n";
  return out;
}

}  // namespace slurm_rca::guard
