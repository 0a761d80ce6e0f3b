#include "guard/corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/expectation.h"

namespace slurm_rca::guard {

base::Result<std::vector<CorpusCase>> LoadCorpus(const std::string& path) {
  namespace fs = std::filesystem;
  using base::Status;
  std::vector<CorpusCase> cases;
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".txt") {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) return Status::IoError(path + ": no *.txt corpus files");
  } else if (fs::is_regular_file(path, ec)) {
    files.emplace_back(path);
  } else {
    return Status::IoError(path + ": no such corpus file or directory");
  }
  for (const fs::path& file : files) {
    std::ifstream in(file);
    if (!in) return Status::IoError(file.string() + ": cannot be read");
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      std::string where = file.string() + ":" + std::to_string(number) + ": ";
      size_t first = line.find_first_not_of(" \t");
      if (first == std::string::npos || line[first] == '#') continue;
      base::Result<base::LineCase> parsed = base::ParseLineCase(line);
      if (!parsed.ok()) return Status::InvalidArgument(where + parsed.status().message());
      CorpusCase c;
      c.file = file.filename().string();
      c.line = number;
      if (!parsed->expect.allow) {
        const std::string& id = parsed->expect.deny.front().rule;
        c.expected = RuleFromId(id);
        if (!c.expected) return Status::InvalidArgument(where + "unknown rule id '" + id + "'");
      }
      auto argv = ParseArgvLine(parsed->input);
      if (!argv.ok()) return Status::InvalidArgument(where + argv.status().message());
      c.argv = std::move(*argv);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

CorpusReport RunCorpus(const Guard& guard, const std::vector<CorpusCase>& cases) {
  CorpusReport report;
  for (const CorpusCase& c : cases) {
    ++report.cases;
    Verdict v = guard.Check(c.argv);
    std::string where = c.file + ":" + std::to_string(c.line) + ": " + FormatArgv(c.argv) + ": ";
    if (!c.expected) {
      if (v.ok()) {
        ++report.allowed;
      } else {
        report.mismatches.push_back(where + "expected ALLOWED, got " + v.denial().ToString());
      }
    } else if (v.ok()) {
      report.mismatches.push_back(where + "expected DENIED " + std::string(RuleId(*c.expected)) +
                                  ", got ALLOWED");
    } else if (v.denial().rule != *c.expected) {
      report.mismatches.push_back(where + "expected DENIED " + std::string(RuleId(*c.expected)) +
                                  ", got " + v.denial().ToString());
    } else {
      ++report.denied;
    }
  }
  return report;
}

}  // namespace slurm_rca::guard
