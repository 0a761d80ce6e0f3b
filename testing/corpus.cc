#include "testing/corpus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "base/file.h"

namespace slurm_rca::testing {
namespace {

namespace fs = std::filesystem;

// The case files or folders of a corpus, in name order.
std::vector<fs::path> Entries(const CorpusOptions& o, std::vector<std::string>& errors) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::directory_iterator it(o.dir, ec);
  if (ec) {
    errors.push_back(o.dir + ": cannot be listed: " + ec.message());
    return out;
  }
  for (const fs::directory_entry& e : it) {
    if (o.layout == Layout::kDirectory
            ? e.is_directory()
            : e.is_regular_file() && e.path().extension() == o.extension) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void AddLineCases(const fs::path& file, std::vector<CorpusCase>& cases,
                  std::vector<std::string>& errors) {
  std::optional<std::string> text = base::ReadFile(file.string());
  if (!text) {
    errors.push_back(file.string() + ": cannot be read");
    return;
  }
  std::string_view rest = *text;
  int number = 0;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    ++number;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    base::Result<base::LineCase> parsed = base::ParseLineCase(line);
    std::string name = file.filename().string() + ":" + std::to_string(number);
    if (!parsed.ok()) {
      errors.push_back(file.string() + ":" + std::to_string(number) + ": " +
                       parsed.status().message());
      continue;
    }
    cases.push_back(CorpusCase{.name = name,
                               .path = file.string(),
                               .line = number,
                               .input = parsed->input,
                               .expect = std::move(parsed->expect)});
  }
}

}  // namespace

size_t CorpusReport::failed() const {
  return std::count_if(cases.begin(), cases.end(),
                       [](const CaseResult& r) { return r.mismatch.has_value(); });
}

std::vector<std::string> CorpusReport::Failures() const {
  std::vector<std::string> out;
  for (const CaseResult& r : cases) {
    if (!r.mismatch) continue;
    std::string expected;
    if (r.c.expect.allow) expected = "allow";
    for (const base::ExpectedDiagnostic& e : r.c.expect.deny) {
      expected += (expected.empty() ? "" : "; ") + e.ToString();
    }
    std::string mismatch = *r.mismatch;
    for (size_t at = mismatch.find('\n'); at != std::string::npos;
         at = mismatch.find('\n', at + 3)) {
      mismatch.replace(at, 1, "\n  ");
    }
    out.push_back(r.c.name + " (" + r.c.path + "): expected " + expected + "\n  " + mismatch);
  }
  out.insert(out.end(), errors.begin(), errors.end());
  if (cases.empty()) out.push_back("the corpus has no case");
  return out;
}

std::set<std::string> CorpusReport::Rules() const {
  std::set<std::string> rules;
  for (const CaseResult& r : cases) rules.merge(r.c.expect.Rules());
  return rules;
}

bool CorpusReport::HasAllow() const {
  return std::any_of(cases.begin(), cases.end(),
                     [](const CaseResult& r) { return r.c.expect.allow; });
}

CorpusReport RunCorpus(const CorpusOptions& options, const Adapter& adapter) {
  CorpusReport report;
  std::vector<CorpusCase> cases;
  const base::ExpectationOptions header{.settings = options.settings, .sidecar = false};
  const base::ExpectationOptions sidecar{.settings = options.settings, .sidecar = true};
  for (const fs::path& entry : Entries(options, report.errors)) {
    if (options.layout == Layout::kLines) {
      AddLineCases(entry, cases, report.errors);
      continue;
    }
    // The file that holds the expectation: the input itself, or its sidecar.
    fs::path expect_file = entry;
    if (options.layout == Layout::kSidecar) expect_file.replace_extension(".expect");
    if (options.layout == Layout::kDirectory) expect_file = entry / "expect";
    std::optional<std::string> text = base::ReadFile(expect_file.string());
    if (!text) {
      report.errors.push_back(expect_file.string() + ": cannot be read (every case needs one)");
      continue;
    }
    base::Result<base::Expectation> expect = base::ParseExpectation(
        *text, expect_file.string(), options.layout == Layout::kHeader ? header : sidecar);
    if (!expect.ok()) {
      report.errors.push_back(expect.status().message());
      continue;
    }
    cases.push_back(
        CorpusCase{.name = entry.filename().string(), .path = entry.string(), .expect = *expect});
  }
  // A sidecar without its input is a case that would silently never run.
  if (options.layout == Layout::kSidecar) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(options.dir, ec)) {
      fs::path input = e.path();
      if (input.extension() != ".expect") continue;
      if (!fs::exists(input.replace_extension(options.extension))) {
        report.errors.push_back(e.path().string() + ": no " + input.filename().string() +
                                " beside it");
      }
    }
  }
  for (CorpusCase& c : cases) {
    CaseResult r{.c = std::move(c)};
    r.got = adapter(r.c);
    r.mismatch = base::Mismatch(r.c.expect, r.got);
    report.cases.push_back(std::move(r));
  }
  return report;
}

void ExpectCorpusPasses(const CorpusReport& report) {
  for (const std::string& f : report.Failures()) ADD_FAILURE() << f;
}

}  // namespace slurm_rca::testing
