// Topics: the closed vocabulary of slurm_query and slurm_describe, and for each topic how its
// read is built from validated filters and how the output is turned into rows.
//
// A topic names one read (a fixed base argv, or for `logs` the tail of a daemon's log), the
// filters a caller may add (each with a value grammar), the columns of its rows and a parser.
// Filter values become separate argv elements after the base argv, never text spliced into
// another argument, and must match their grammar, so every argv built here is one the guard
// allows (topics_test checks each topic with Guard(GuardOptions{.clusters = {"rca"}})). Nothing
// here starts a process or reads a file: the back-end runs the argv, this file reads the text.
//
//   const Topic* topic = FindTopic("queue");
//   base::Result<std::vector<std::string>> argv =
//       BuildArgv(*topic, {{"user", "alice"}, {"state", "PENDING"}});
//   if (!argv.ok()) return ToolError(argv.status().message());  // names the filters / grammar
//   Evidence e = topic->source == Source::kDaemonLog
//                    ? backend.ReadLog((*argv)[1], kLogTailLines)
//                    : backend.Read(*argv);
//   if (e.ok()) {
//     Parsed p = Parse(*topic, e.out, Caps{}, filters);  // filters: the logs pattern
//     // p.rows: array of objects keyed by column names; p.text: free text; p.truncated ...
//   }
//
// Parsers are tested on real Slurm 22.05.8 output (fixtures/slurm-22.05/). The gpu topic's csv
// parser is tested only on a test double's output: the lab has no real nvidia-smi.
#ifndef SLURM_RCA_MCP_TOPICS_TOPICS_H_
#define SLURM_RCA_MCP_TOPICS_TOPICS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace slurm_rca::mcp {

using Json = nlohmann::json;
using Filters = std::map<std::string, std::string>;

// How a topic's output becomes rows.
enum class Format {
  kDelimited,    // one row per line, fields split on '|'
  kKeyValue,     // scontrol: one record per line (-o) of Key=Value pairs
  kCsv,          // nvidia-smi --format=csv,noheader,nounits
  kDiagnostics,  // sdiag: the text, plus its numeric figures as rows
  kText,         // free text only
  kLog,          // log lines matching the `pattern` filter
  kGpuHealth,    // nvidia-smi health query: rows are GPUs judged by mcp/telemetry/gpu_health.h
  kFabric,       // the fabric report of mcp/telemetry/fabric.h as JSON: rows are ports
  kGpuIdle,      // the gpu_idle report of mcp/telemetry/gpu_idle.h as JSON: rows are running jobs
};

enum class Source {
  kCommand,    // argv is run by Backend::Read
  kDaemonLog,  // argv is {"log", daemon}: Backend::ReadLog(daemon, kLogTailLines)
  kNodeFiles,  // argv is {"files", "fabric"}: Backend::ReadFabric(), no process
  kSamples,    // argv is {"samples", "gpu_idle"}: the server's own GPU samples (mcp/telemetry/gpu_sampler.h)
               // judged with a squeue read of the running jobs (mcp/topics/tools.cc)
};

struct Filter {
  enum class Kind {
    kOption,   // `flag value` appended as two argv elements
    kOperand,  // `value` appended as one positional argv element
    kLocal,    // applied by Parse (the logs pattern); never part of an argv
  };
  std::string name;  // "user"
  Kind kind = Kind::kOption;
  std::string flag;     // "-u" for kOption
  std::string pattern;  // RE2, full match
  std::string grammar;  // the pattern in words, quoted in errors
  std::string example;  // a value that passes, shown by slurm_describe
  std::string description;
  std::string default_value;  // used when the filter is absent; empty: none
};

struct Column {
  std::string name;
  std::string description;
};

struct Topic {
  std::string name;
  std::string summary;  // one line, for tool descriptions
  std::string detail;   // interpretation notes, returned only by slurm_describe
  Source source = Source::kCommand;
  std::vector<std::string> argv;  // base argv ({"log"} for logs)
  std::vector<Filter> filters;
  std::vector<Column> columns;  // empty: text only
  Format format = Format::kText;
};

// Lines of a daemon log read before the pattern is applied.
inline constexpr int kLogTailLines = 5000;
// Longest `pattern` accepted for logs.
inline constexpr std::size_t kMaxLogPatternBytes = 256;

// All topics, in a fixed order: queue, nodes, accounting, priority, fairshare, diagnostics,
// config, jobs, partitions, reservations, gpu, gpu_health, gpu_idle, fabric, logs.
const std::vector<Topic>& Topics();
// nullptr when there is no topic of that exact name.
const Topic* FindTopic(std::string_view name);

// The topic's base argv with each filter appended in the topic's filter order. An unknown
// filter, an empty value or one outside its grammar is an invalid argument, its message one
// sentence naming what is accepted; so is a logs pattern that does not compile or is longer than
// kMaxLogPatternBytes.
base::Result<std::vector<std::string>> BuildArgv(const Topic& topic, const Filters& filters);
// BuildArgv with no filters given (the defaults only): what the overview and the recorder read.
// Empty only if a default were outside its grammar, which topics_test rules out.
std::vector<std::string> DefaultArgv(const Topic& topic);

struct Caps {
  std::size_t max_rows = 200;     // rows kept (logs keep the newest)
  std::size_t max_bytes = 50000;  // bytes of the rows as JSON, and of the text
};

// What Parse needs beyond the text: whether the read was cut, and which part of its rows the
// caller wants (a page, or groups).
struct ParseOptions {
  // The executor kept only the first bytes of the output (Evidence::out_truncated): the last line
  // may be cut and is dropped, and every count is a lower bound.
  bool output_cut = false;
  std::uint64_t output_bytes = 0;  // bytes the read wrote, kept or not; 0: unknown
  // Rows skipped before the rows kept (paging); only for Pageable topics.
  std::size_t offset = 0;
  // One or two of the topic's columns: the answer is a count per group (Parsed::groups) instead
  // of rows; only for Pageable topics, names checked by CheckGroupBy.
  std::vector<std::string> group_by;
};

struct Parsed {
  // Objects keyed by column names; every value is a string but the diagnostics figure values
  // (numbers).
  Json rows = Json::array();
  std::string text;             // free-text topics (diagnostics, config); capped at max_bytes
  std::size_t total_rows = 0;   // rows before the caps (a lower bound when output_cut)
  std::size_t total_bytes = 0;  // bytes of the text before the cap
  bool truncated = false;
  std::string hint;         // when truncated: "narrow with filters: user, partition, state"
  std::string parse_error;  // lines that did not parse (those lines are skipped), or a bad
                            // pattern; rows that did parse are kept
  // The read's output was cut by the executor's cap: total_rows and every group's figures are
  // lower bounds ("at least"), never totals.
  bool output_cut = false;
  std::size_t output_kept_bytes = 0;  // when cut: the bytes read (the cap)
  std::uint64_t output_bytes = 0;     // when cut: the bytes the read wrote, 0 when unknown
  std::size_t offset = 0;             // rows skipped before `rows`
  // With group_by: one object per group, ordered by count (then key): the group's column values,
  // `count` (rows), and the sums that mean something for the topic (GroupSchema). Null without.
  Json groups;
  std::size_t total_groups = 0;  // groups before the cap (max_rows applies to groups)
};

// Topics whose rows can be paged (ParseOptions::offset) and grouped (group_by): one row per line
// or record (queue, nodes, accounting, priority, fairshare, jobs, partitions, reservations, gpu).
bool Pageable(const Topic& topic);

// One or two distinct column names of a Pageable topic; else an invalid argument naming the
// columns.
base::Status CheckGroupBy(const Topic& topic, const std::vector<std::string>& group_by);

// Parses the stdout of the topic's read (for logs: the tail of the log). `filters` is consulted
// only for kLocal filters (the logs pattern). Invalid UTF-8 is replaced with U+FFFD, so the
// result always serialises. Rows of a Pageable topic are read one at a time: only the rows kept
// and the groups are held, never a row object per line of the output.
Parsed Parse(const Topic& topic, const std::string& stdout_text, const Caps& caps,
             const Filters& filters = {}, const ParseOptions& options = {});

// "[truncated: 200 of 1500 rows shown; narrow with filters: user, partition, state]", or the
// same for bytes or groups; a cut read says so first ("output cut at 1048576 of 3912001 bytes:
// at least 1046 rows; ..."). Empty when not truncated.
std::string TruncationNote(const Parsed& parsed);

// JSON Schema of one row of the topic; null for text-only topics.
Json RowSchema(const Topic& topic);

// JSON Schema of one group of a Pageable topic (Parsed::groups).
Json GroupSchema(const Topic& topic);

// The topic for slurm_describe: name, summary, detail, argv, filters, columns.
Json DescribeTopic(const Topic& topic);

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TOPICS_TOPICS_H_
