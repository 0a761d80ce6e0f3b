#include "guard/corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/expectation.h"

namespace slurm_rca::guard {

CorpusLoad LoadCorpus(const std::string& path) {
  namespace fs = std::filesystem;
  CorpusLoad load;
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".txt") {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      load.error = path + ": no *.txt corpus files";
      return load;
    }
  } else if (fs::is_regular_file(path, ec)) {
    files.emplace_back(path);
  } else {
    load.error = path + ": no such corpus file or directory";
    return load;
  }
  for (const fs::path& file : files) {
    std::ifstream in(file);
    if (!in) {
      load.error = file.string() + ": cannot be read";
      return load;
    }
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      std::string where = file.string() + ":" + std::to_string(number) + ": ";
      size_t first = line.find_first_not_of(" \t");
      if (first == std::string::npos || line[first] == '#') continue;
      base::Result<base::LineCase> parsed = base::ParseLineCase(line);
      if (!parsed.ok()) {
        load.error = where + parsed.status().message();
        return load;
      }
      CorpusCase c;
      c.file = file.filename().string();
      c.line = number;
      if (!parsed->expect.allow) {
        const std::string& id = parsed->expect.deny.front().rule;
        c.expected = RuleFromId(id);
        if (!c.expected) {
          load.error = where + "unknown rule id '" + id + "'";
          return load;
        }
      }
      std::string error;
      auto argv = ParseArgvLine(parsed->input, &error);
      if (!argv) {
        load.error = where + error;
        return load;
      }
      c.argv = std::move(*argv);
      load.cases.push_back(std::move(c));
    }
  }
  return load;
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
