#include "guard/corpus.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace slurm_rca::guard {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads the escape starting after a backslash at line[i]; advances i past it.
bool ReadEscape(std::string_view line, size_t& i, std::string& out, std::string* error) {
  if (i >= line.size()) {
    *error = "a backslash ends the line";
    return false;
  }
  char c = line[i++];
  switch (c) {
    case '\\': out += '\\'; return true;
    case '"': out += '"'; return true;
    case '\'': out += '\''; return true;
    case 'n': out += '\n'; return true;
    case 'r': out += '\r'; return true;
    case 't': out += '\t'; return true;
    case 'e': out += '\x1b'; return true;
    case '0': out += '\0'; return true;
    case ' ': out += ' '; return true;
    case 'x':
      if (i + 1 < line.size() + 0 && HexDigit(line[i]) >= 0 && HexDigit(line[i + 1]) >= 0) {
        out += static_cast<char>(HexDigit(line[i]) * 16 + HexDigit(line[i + 1]));
        i += 2;
        return true;
      }
      *error = "\\x needs two hex digits";
      return false;
    default:
      *error = std::string("unknown escape \\") + c;
      return false;
  }
}

bool IsPlain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_.,:%=+@/-[]").find(c) != std::string_view::npos;
}

}  // namespace

std::optional<std::vector<std::string>> ParseArgvLine(std::string_view line, std::string* error) {
  std::vector<std::string> argv;
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) break;
    std::string word;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') {
      char c = line[i];
      if (c == '\'') {
        size_t end = line.find('\'', i + 1);
        if (end == std::string_view::npos) {
          *error = "unterminated '";
          return std::nullopt;
        }
        word.append(line.substr(i + 1, end - i - 1));
        i = end + 1;
      } else if (c == '"') {
        ++i;
        while (true) {
          if (i >= line.size()) {
            *error = "unterminated \"";
            return std::nullopt;
          }
          if (line[i] == '"') {
            ++i;
            break;
          }
          if (line[i] == '\\') {
            ++i;
            if (!ReadEscape(line, i, word, error)) return std::nullopt;
          } else {
            word += line[i++];
          }
        }
      } else if (c == '\\') {
        ++i;
        if (!ReadEscape(line, i, word, error)) return std::nullopt;
      } else {
        word += c;
        ++i;
      }
    }
    argv.push_back(std::move(word));
  }
  return argv;
}

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
      std::string rest = line.substr(first);
      auto next_word = [&rest]() {
        size_t end = rest.find_first_of(" \t");
        std::string w = rest.substr(0, end);
        size_t after = rest.find_first_not_of(" \t", end == std::string::npos ? rest.size() : end);
        rest = after == std::string::npos ? "" : rest.substr(after);
        return w;
      };
      CorpusCase c;
      c.file = file.filename().string();
      c.line = number;
      std::string verdict = next_word();
      if (verdict == "deny") {
        std::string id = next_word();
        c.expected = RuleFromId(id);
        if (!c.expected) {
          load.error = where + "unknown rule id '" + id + "'";
          return load;
        }
      } else if (verdict != "allow") {
        load.error = where + "a case starts with 'allow' or 'deny <rule-id>', not '" + verdict + "'";
        return load;
      }
      std::string error;
      auto argv = ParseArgvLine(rest, &error);
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

std::string FormatArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (size_t k = 0; k < argv.size(); ++k) {
    const std::string& a = argv[k];
    if (k) out += ' ';
    bool plain = !a.empty() && std::all_of(a.begin(), a.end(), IsPlain);
    if (plain) {
      out += a;
      continue;
    }
    out += '"';
    for (unsigned char c : a) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20 || c >= 0x7f) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02x", c);
        out += hex;
      } else {
        out += static_cast<char>(c);
      }
    }
    out += '"';
  }
  return out;
}

}  // namespace slurm_rca::guard
