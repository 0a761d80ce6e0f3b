#include "mcp/backend/replay_derive.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string_view>
#include <utility>

#include "mcp/telemetry/gpu_idle.h"

namespace slurm_rca::mcp {

namespace {

// The topics' bare argv (mcp/topics/topics.cc, `nodes` and `queue`); topics_test checks that
// BuildArgv of those topics with these filters is derivable.
const std::vector<std::string>& NodesArgv() {
  static const std::vector<std::string> v = {"sinfo", "--noheader", "-N", "-o",
                                             "%N|%P|%T|%C|%G|%E"};
  return v;
}
const std::vector<std::string>& QueueArgv() {
  static const std::vector<std::string> v = {"squeue", "--noheader", "-o",
                                             "%i|%P|%u|%T|%M|%D|%R"};
  return v;
}

std::string JoinSet(const std::set<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ",") + v;
  return out;
}

// "a,b" -> {a, b}; nullopt when an item is empty ("a,,b", ",a").
std::optional<std::vector<std::string>> CommaList(const std::string& value) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = value.find(',', start);
    std::string item = value.substr(start, comma == std::string::npos ? comma : comma - start);
    if (item.empty()) return std::nullopt;
    items.push_back(std::move(item));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

// The names of a hostlist in the one form Slurm 22.05 parses and ExpandHostlist expands alike:
// names and name[ranges], the bracket ending its name (`node[01-02]-ib` is refused by Slurm).
std::optional<std::set<std::string>> Hostnames(const std::string& value) {
  static const RE2 kSlurmHostlist(
      R"(([A-Za-z0-9][A-Za-z0-9_.-]*(\[[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*\])?)(,)"
      R"([A-Za-z0-9][A-Za-z0-9_.-]*(\[[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*\])?)*)");
  if (!RE2::FullMatch(value, kSlurmHostlist)) return std::nullopt;
  std::optional<std::vector<std::string>> names = ExpandHostlist(value);
  if (!names || names->empty()) return std::nullopt;
  return std::set<std::string>(names->begin(), names->end());
}

// The value of one flag as an equality, or nullopt when the flag or its value is not derivable.
std::optional<DerivableRead::Equality> EqualityOf(bool sinfo, const std::string& flag,
                                                  const std::string& value) {
  DerivableRead::Equality eq;
  eq.flag = flag;
  eq.given = value;
  if (sinfo && flag == "-n") {
    std::optional<std::set<std::string>> names = Hostnames(value);
    if (!names) return std::nullopt;
    eq.column = 0;
    eq.column_name = "node (%N)";
    eq.values = std::move(*names);
    return eq;
  }
  std::optional<std::vector<std::string>> items = CommaList(value);
  if (!items) return std::nullopt;
  if (sinfo && flag == "-p") {
    eq.column = 1;
    eq.column_name = "partition (%P, the default's '*' aside)";
    eq.strip_default_mark = true;
    eq.each_value_must_appear = true;
  } else if (!sinfo && flag == "-u") {
    // squeue takes a uid too, printed as its name: not derivable from the names in %u.
    for (const std::string& u : *items) {
      if (std::all_of(u.begin(), u.end(), [](unsigned char c) { return std::isdigit(c); })) {
        return std::nullopt;
      }
    }
    eq.column = 2;
    eq.column_name = "user (%u)";
  } else {
    return std::nullopt;
  }
  eq.values.insert(items->begin(), items->end());
  return eq;
}

// Field `column` of a row, or nullopt when the row has fewer fields.
std::optional<std::string_view> Field(std::string_view row, std::size_t column) {
  for (std::size_t i = 0; i < column; ++i) {
    std::size_t bar = row.find('|');
    if (bar == std::string_view::npos) return std::nullopt;
    row.remove_prefix(bar + 1);
  }
  return row.substr(0, row.find('|'));
}

Evidence NotDerived(const std::vector<std::string>& argv, const Evidence& whole,
                    const std::string& why) {
  Evidence e;
  e.outcome = Evidence::Outcome::kUnavailable;
  e.source = whole.source;
  e.evidence_time = whole.evidence_time;
  e.argv = argv;
  e.cause = "`" + JoinArgv(argv) + "` is not recorded in this bundle, and it cannot be derived " +
            "from the whole read `" + JoinArgv(whole.argv) + "` of this snapshot: " + why +
            "; no evidence, not an empty result";
  return e;
}

}  // namespace

std::string JoinArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::optional<DerivableRead> ParseDerivable(const std::vector<std::string>& argv) {
  for (const std::vector<std::string>* whole : {&NodesArgv(), &QueueArgv()}) {
    if (argv.size() <= whole->size() || !std::equal(whole->begin(), whole->end(), argv.begin())) {
      continue;
    }
    const bool sinfo = whole == &NodesArgv();
    const std::size_t rest = argv.size() - whole->size();
    if (rest % 2 != 0) return std::nullopt;
    DerivableRead d;
    d.whole = *whole;
    std::set<std::string> seen;
    for (std::size_t i = whole->size(); i < argv.size(); i += 2) {
      if (!seen.insert(argv[i]).second) return std::nullopt;  // a flag given twice
      std::optional<DerivableRead::Equality> eq = EqualityOf(sinfo, argv[i], argv[i + 1]);
      if (!eq) return std::nullopt;
      d.keep.push_back(std::move(*eq));
    }
    return d;
  }
  return std::nullopt;
}

// Keeps the whole read's rows byte for byte, in its order. A row is a line with its '\n'; a row
// too short for a column filtered on means the read is not the output this derivation knows.
Evidence DeriveRead(const DerivableRead& d, const Evidence& whole,
                    const std::vector<std::string>& argv) {
  if (!whole.ok() || whole.exit_code != 0) {
    return NotDerived(argv, whole,
                      std::string("that read gave no evidence (") + OutcomeName(whole.outcome) +
                          ", exit " + std::to_string(whole.exit_code) + ")" +
                          (whole.cause.empty() ? "" : ": " + whole.cause));
  }
  if (whole.out_truncated) {
    return NotDerived(argv, whole,
                      "that read was cut at " + std::to_string(whole.out.size()) + " bytes" +
                          (whole.out_bytes ? " of " + std::to_string(whole.out_bytes) : "") +
                          ", so the filtered rows would be a lower bound");
  }
  std::string out;
  std::vector<std::set<std::string>> matched(d.keep.size());
  std::string_view text = whole.out;
  std::size_t row_number = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl == std::string_view::npos ? nl : nl + 1);
    text.remove_prefix(line.size());
    ++row_number;
    const std::string_view row = line.substr(0, line.find('\n'));
    bool keep = true;
    for (std::size_t k = 0; k < d.keep.size(); ++k) {
      const DerivableRead::Equality& eq = d.keep[k];
      std::optional<std::string_view> field = Field(row, eq.column);
      if (!field) {
        return NotDerived(argv, whole,
                          "its row " + std::to_string(row_number) + " has no " +
                              eq.column_name + " column");
      }
      std::string value(*field);
      if (eq.strip_default_mark && !value.empty() && value.back() == '*') value.pop_back();
      if (eq.values.count(value)) {
        matched[k].insert(value);
      } else {
        keep = false;
      }
    }
    if (keep) out += line;
  }
  std::string caveats;
  for (std::size_t k = 0; k < d.keep.size(); ++k) {
    const DerivableRead::Equality& eq = d.keep[k];
    std::set<std::string> absent;
    std::set_difference(eq.values.begin(), eq.values.end(), matched[k].begin(),
                        matched[k].end(), std::inserter(absent, absent.end()));
    if (absent.empty()) continue;
    if (eq.each_value_must_appear) {
      // sinfo -p implies --all: a partition with no row may be hidden, its rows absent from a
      // read without --all.
      return NotDerived(argv, whole,
                        "partition " + JoinSet(absent) +
                            " has no row in it, and sinfo -p shows hidden partitions too");
    }
    if (eq.flag == "-u") {
      caveats += "; no job of the whole queue has user " + JoinSet(absent) +
                 ", which cannot tell a user without jobs from a name that is no Slurm user "
                 "(squeue -u prints 'Invalid user' for one)";
    } else {
      caveats += "; " + std::to_string(absent.size()) + " of the " +
                 std::to_string(eq.values.size()) + " names given (" + *absent.begin() +
                 (absent.size() > 1 ? ", ..." : "") +
                 ") have no row in it (sinfo -n gives no row for a name it does not know)";
    }
  }
  std::string kept;
  for (const DerivableRead::Equality& eq : d.keep) {
    const char* relation = eq.flag == "-n"         ? " is in "
                           : eq.values.size() > 1 ? " is one of "
                                                  : " is ";
    kept += (kept.empty() ? "" : " and ") + eq.column_name + relation + eq.given;
  }
  Evidence e;
  e.outcome = Evidence::Outcome::kOk;
  e.source = whole.source;
  e.evidence_time = whole.evidence_time;
  e.argv = argv;
  e.exit_code = 0;
  e.out = std::move(out);
  e.out_bytes = e.out.size();
  e.read_id = whole.read_id;
  e.seconds = whole.seconds;
  e.derived_from = whole.argv;
  e.derivation = "not recorded; derived from the whole read `" + JoinArgv(whole.argv) +
                 "` of the same snapshot (complete: exit 0, not cut): its rows whose " + kept +
                 ", in its order" + caveats;
  return e;
}

}  // namespace slurm_rca::mcp
