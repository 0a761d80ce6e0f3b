#include "base/argv_line.h"

#include <algorithm>
#include <cstdio>

namespace slurm_rca::base {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads the escape starting after a backslash at line[i] into out; advances i past it.
Status ReadEscape(std::string_view line, size_t& i, std::string& out) {
  if (i >= line.size()) return Status::InvalidArgument("a backslash ends the line");
  char c = line[i++];
  switch (c) {
    case '\\':
      out += '\\';
      return Status();
    case '"':
      out += '"';
      return Status();
    case '\'':
      out += '\'';
      return Status();
    case 'n':
      out += '\n';
      return Status();
    case 'r':
      out += '\r';
      return Status();
    case 't':
      out += '\t';
      return Status();
    case 'e':
      out += '\x1b';
      return Status();
    case '0':
      out += '\0';
      return Status();
    case ' ':
      out += ' ';
      return Status();
    case 'x':
      if (i + 1 < line.size() + 0 && HexDigit(line[i]) >= 0 && HexDigit(line[i + 1]) >= 0) {
        out += static_cast<char>(HexDigit(line[i]) * 16 + HexDigit(line[i + 1]));
        i += 2;
        return Status();
      }
      return Status::InvalidArgument("\\x needs two hex digits");
    default:
      return Status::InvalidArgument(std::string("unknown escape \\") + c);
  }
}

bool IsPlain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_.,:%=+@/-[]").find(c) != std::string_view::npos;
}

}  // namespace

Result<std::vector<std::string>> ParseArgvLine(std::string_view line) {
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
        if (end == std::string_view::npos) return Status::InvalidArgument("unterminated '");
        word.append(line.substr(i + 1, end - i - 1));
        i = end + 1;
      } else if (c == '"') {
        ++i;
        while (true) {
          if (i >= line.size()) return Status::InvalidArgument("unterminated \"");
          if (line[i] == '"') {
            ++i;
            break;
          }
          if (line[i] == '\\') {
            ++i;
            if (Status s = ReadEscape(line, i, word); !s.ok()) return s;
          } else {
            word += line[i++];
          }
        }
      } else if (c == '\\') {
        ++i;
        if (Status s = ReadEscape(line, i, word); !s.ok()) return s;
      } else {
        word += c;
        ++i;
      }
    }
    argv.push_back(std::move(word));
  }
  return argv;
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

}  // namespace slurm_rca::base
