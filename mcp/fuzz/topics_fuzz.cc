// libFuzzer target for every topic parser of slurm-mcp (mcp/topics/topics.h): Slurm's delimited and
// Key=Value output, sdiag, free text, daemon logs, nvidia-smi CSV (gpu, and gpu_health through
// AssessGpuHealth) and the fabric report. Input: byte 0 picks the topic, byte 1 the caps and the
// exit status given to AssessGpuHealth, then one line of filters `name=value` separated by tabs,
// then the read's stdout. Aborts on:
//   - a built argv of a command topic that the guard refuses (topics.h promises every argv built
//     here is one the guard allows), or an error that still carries an argv;
//   - rows or text over the caps, rows that are not objects, total_rows below the rows kept, a
//     truncation without its note (or a note without truncation);
//   - rows or text that do not serialise strictly (invalid UTF-8 must have been replaced);
//   - a gpu_health report without evidence and without a failure, or rows that are not its gpus;
//   - for topics of rows (Pageable): a cut read that is not a marked lower bound, a page that is
//     not the rows at its offset, groups whose counts do not add up to the rows or are out of
//     order.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "guard/check.h"
#include "guard/corpus.h"
#include "mcp/evidence/evidence.h"
#include "mcp/telemetry/gpu_health.h"
#include "mcp/topics/topics.h"

namespace {

using namespace slurm_rca::mcp;

[[noreturn]] void Fail(const char* what, const std::string& topic, const std::string& detail) {
  std::fprintf(stderr, "TOPIC INVARIANT (%s): %s: %s\n", topic.c_str(), what, detail.c_str());
  std::abort();
}

Filters ReadFilters(std::string_view line) {
  Filters filters;
  while (!line.empty()) {
    const std::size_t tab = line.find('\t');
    const std::string_view item = line.substr(0, tab);
    line = tab == std::string_view::npos ? std::string_view() : line.substr(tab + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    filters[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
  }
  return filters;
}

void CheckGpuHealth(const std::string& out, int exit_code) {
  Evidence e;
  e.outcome = exit_code == 0 ? Evidence::Outcome::kOk : Evidence::Outcome::kFailed;
  e.exit_code = exit_code;
  e.out = out;
  GpuHealthReport r = AssessGpuHealth(e);
  if (!r.evidence && r.failure.empty()) Fail("no evidence and no failure", "gpu_health", out);
  if (!r.rows.is_array() || r.rows != r.report["gpus"]) Fail("rows are not gpus", "gpu_health", out);
  r.report.dump();  // strict: throws (and so crashes the fuzzer) on invalid UTF-8
}

// The same output read as a cut read, a page and groups (ParseOptions), against the whole read.
void CheckViews(const Topic& topic, const std::string& out, uint8_t bits) {
  const Caps unbounded{.max_rows = 1u << 30, .max_bytes = std::size_t{1} << 40};
  const Parsed whole = Parse(topic, out, unbounded);

  ParseOptions cut;
  cut.output_cut = true;
  const Parsed lower = Parse(topic, out, unbounded, {}, cut);
  if (!lower.truncated || !lower.output_cut) Fail("a cut read not marked", topic.name, out);
  if (lower.total_rows > whole.total_rows) Fail("a cut read counts more rows", topic.name, out);
  if (TruncationNote(lower).find("at least") == std::string::npos) {
    Fail("a cut read's note without 'at least'", topic.name, TruncationNote(lower));
  }

  ParseOptions page;
  page.offset = bits & 0x0f;
  const Parsed paged = Parse(topic, out, Caps{.max_rows = 3}, {}, page);
  if (paged.total_rows != whole.total_rows) Fail("a page counts other rows", topic.name, out);
  for (std::size_t i = 0; i < paged.rows.size(); ++i) {
    if (page.offset + i >= whole.rows.size() || paged.rows[i] != whole.rows[page.offset + i]) {
      Fail("a page is not the rows at its offset", topic.name, out);
    }
  }
  if (paged.truncated != (page.offset + paged.rows.size() < paged.total_rows)) {
    Fail("a page's truncation does not follow its rows", topic.name, out);
  }

  ParseOptions grouped;
  grouped.group_by = {topic.columns[(bits >> 4) % topic.columns.size()].name};
  if (bits & 0x40 && topic.columns.size() > 1) {
    const std::string& second = topic.columns[(bits >> 2) % topic.columns.size()].name;
    if (second != grouped.group_by[0]) grouped.group_by.push_back(second);
  }
  const Parsed groups = Parse(topic, out, unbounded, {}, grouped);
  if (!groups.groups.is_array()) Fail("group_by without groups", topic.name, out);
  if (groups.groups.size() != groups.total_groups) Fail("groups left out", topic.name, out);
  std::size_t counted = 0, previous = SIZE_MAX;
  for (const Json& g : groups.groups) {
    const std::size_t n = g["count"].get<std::size_t>();
    if (n == 0 || n > previous) Fail("groups not ordered by count", topic.name, g.dump());
    previous = n;
    counted += n;
    if (g.contains("node_count") && g["node_count"].get<std::size_t>() > n) {
      Fail("more nodes than rows in a group", topic.name, g.dump());
    }
  }
  if (counted != groups.total_rows || groups.total_rows != whole.total_rows) {
    Fail("group counts do not add up to the rows", topic.name, out);
  }
  groups.groups.dump();  // strict
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const slurm_rca::guard::Guard guard(slurm_rca::guard::GuardOptions{.clusters = {"rca"}});
  if (size < 2) return 0;
  const Topic& topic = Topics()[data[0] % Topics().size()];
  Caps caps;
  if (data[1] & 0x80) {
    caps.max_rows = data[1] & 0x0f;
    caps.max_bytes = (data[1] & 0x70) * 16;
  }
  static constexpr int kExits[] = {0, 0, 8, 9, 10, 14, 15, 255};
  const int exit_code = kExits[data[1] & 7];

  std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const std::size_t nl = rest.find('\n');
  const Filters filters = ReadFilters(rest.substr(0, nl));
  const std::string out(nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1));

  slurm_rca::base::Result<std::vector<std::string>> built = BuildArgv(topic, filters);
  if (!built.ok()) {
    if (built.status().message().empty()) Fail("an error without a message", topic.name, "");
  } else if (topic.source == Source::kCommand) {
    slurm_rca::guard::Verdict v = guard.Check(*built);
    if (!v.ok()) {
      Fail("built argv refused by the guard", topic.name,
           slurm_rca::guard::FormatArgv(*built) + ": " + v.denial().ToString());
    }
  }

  Parsed p = Parse(topic, out, caps, built.ok() ? filters : Filters{});
  if (!p.rows.is_array() || p.rows.size() > caps.max_rows) Fail("rows over the cap", topic.name, out);
  if (p.total_rows < p.rows.size()) Fail("total_rows below rows", topic.name, out);
  if (p.text.size() > caps.max_bytes) Fail("text over the cap", topic.name, out);
  for (const Json& row : p.rows) {
    if (!row.is_object()) Fail("a row that is not an object", topic.name, row.dump());
  }
  p.rows.dump();
  Json(p.text).dump();
  Json(p.parse_error).dump();
  if (p.truncated == TruncationNote(p).empty()) Fail("truncation without note", topic.name, out);

  if (topic.format == Format::kGpuHealth) CheckGpuHealth(out, exit_code);
  if (Pageable(topic)) CheckViews(topic, out, data[1]);
  return 0;
}
