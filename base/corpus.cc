#include "base/corpus.h"

#include <algorithm>
#include <filesystem>

#include "base/file.h"

namespace slurm_rca::base {
namespace {

namespace fs = std::filesystem;

// The case files or folders of a corpus, in name order.
std::vector<fs::path> Entries(const CorpusOptions& o, std::vector<std::string>& errors) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::exists(o.path, ec)) {
    errors.push_back(o.path + ": no such corpus file or directory");
    return out;
  }
  if (o.layout == CorpusLayout::kLines && fs::is_regular_file(o.path, ec)) {
    out.emplace_back(o.path);
    return out;
  }
  fs::directory_iterator it(o.path, ec);
  if (ec) {
    errors.push_back(o.path + ": cannot be listed: " + ec.message());
    return out;
  }
  for (const fs::directory_entry& e : it) {
    if (o.layout == CorpusLayout::kDirectory
            ? e.is_directory()
            : e.is_regular_file() && e.path().extension() == o.extension) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A deny naming a rule outside options.rules (when it names any): the reason, else "".
std::string UnknownRule(const CorpusOptions& o, const Expectation& e) {
  if (o.rules.empty()) return "";
  for (const ExpectedDiagnostic& d : e.deny) {
    if (!d.rule.empty() && !o.rules.count(d.rule)) return "unknown rule id '" + d.rule + "'";
  }
  return "";
}

void AddLineCases(const CorpusOptions& o, const fs::path& file, LoadedCorpus& corpus) {
  std::optional<std::string> text = ReadFile(file.string());
  if (!text) {
    corpus.errors.push_back(file.string() + ": cannot be read");
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
    std::string where = file.string() + ":" + std::to_string(number) + ": ";
    Result<LineCase> parsed = ParseLineCase(line);
    if (!parsed.ok()) {
      corpus.errors.push_back(where + parsed.status().message());
      continue;
    }
    if (std::string unknown = UnknownRule(o, parsed->expect); !unknown.empty()) {
      corpus.errors.push_back(where + unknown);
      continue;
    }
    corpus.cases.push_back(
        CorpusCase{.name = file.filename().string() + ":" + std::to_string(number),
                   .path = file.string(),
                   .line = number,
                   .input = parsed->input,
                   .expect = std::move(parsed->expect)});
  }
}

// A case whose expectation is a header or a sidecar file.
void AddFileCase(const CorpusOptions& o, const fs::path& entry, LoadedCorpus& corpus) {
  fs::path expect_file = entry;
  if (o.layout == CorpusLayout::kSidecar) expect_file.replace_extension(".expect");
  if (o.layout == CorpusLayout::kDirectory) expect_file = entry / "expect";
  std::optional<std::string> text = ReadFile(expect_file.string());
  if (!text) {
    corpus.errors.push_back(expect_file.string() + ": cannot be read (every case needs one)");
    return;
  }
  Result<Expectation> expect =
      ParseExpectation(*text, expect_file.string(),
                       {.settings = o.settings, .sidecar = o.layout != CorpusLayout::kHeader});
  if (!expect.ok()) {
    corpus.errors.push_back(expect.status().message());
    return;
  }
  if (std::string unknown = UnknownRule(o, *expect); !unknown.empty()) {
    corpus.errors.push_back(expect_file.string() + ": " + unknown);
    return;
  }
  corpus.cases.push_back(
      CorpusCase{.name = entry.filename().string(), .path = entry.string(), .expect = *expect});
}

}  // namespace

LoadedCorpus LoadCorpus(const CorpusOptions& options) {
  LoadedCorpus corpus;
  for (const fs::path& entry : Entries(options, corpus.errors)) {
    if (options.layout == CorpusLayout::kLines) {
      AddLineCases(options, entry, corpus);
    } else {
      AddFileCase(options, entry, corpus);
    }
  }
  // A sidecar without its input is a case that would silently never run.
  if (options.layout == CorpusLayout::kSidecar) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(options.path, ec)) {
      fs::path input = e.path();
      if (input.extension() != ".expect") continue;
      if (!fs::exists(input.replace_extension(options.extension))) {
        corpus.errors.push_back(e.path().string() + ": no " + input.filename().string() +
                                " beside it");
      }
    }
  }
  return corpus;
}

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
    for (const ExpectedDiagnostic& e : r.c.expect.deny) {
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

CorpusReport RunCorpus(LoadedCorpus corpus, const CorpusAdapter& adapter) {
  CorpusReport report;
  report.errors = std::move(corpus.errors);
  for (CorpusCase& c : corpus.cases) {
    CaseResult r{.c = std::move(c)};
    r.got = adapter(r.c);
    r.mismatch = Mismatch(r.c.expect, r.got);
    report.cases.push_back(std::move(r));
  }
  return report;
}

CorpusReport RunCorpus(const CorpusOptions& options, const CorpusAdapter& adapter) {
  return RunCorpus(LoadCorpus(options), adapter);
}

}  // namespace slurm_rca::base
