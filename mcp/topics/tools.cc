#include "mcp/topics/tools.h"

#include <re2/re2.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "base/strings.h"
#include "guard/rule.h"
#include "mcp/backend/audit_log.h"
#include "mcp/telemetry/fabric.h"
#include "mcp/telemetry/gpu_health.h"
#include "mcp/topics/answer_cache.h"
#include "mcp/topics/overview.h"
#include "mcp/topics/provenance.h"

namespace slurm_rca::mcp {
namespace {

Json ReadOnlyAnnotations(const std::string& title) {
  return {{"title", title},
          {"readOnlyHint", true},
          {"destructiveHint", false},
          {"idempotentHint", true},
          {"openWorldHint", false}};
}

Json TextBlock(std::string text) { return {{"type", "text"}, {"text", std::move(text)}}; }

ToolResult InputError(const std::string& message) {
  ToolResult r;
  r.is_error = true;
  r.content.push_back(TextBlock(message));
  return r;
}

std::string JoinArgv(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

std::string TopicNames() {
  std::string s;
  for (const Topic& t : Topics()) s += (s.empty() ? "" : ", ") + t.name;
  return s;
}

// Checks that arguments is an object with only the allowed keys.
std::string CheckKeys(const Json& arguments, const std::string& tool,
                      const std::vector<std::string>& allowed) {
  if (!arguments.is_object()) return tool + " takes an object of arguments";
  for (const auto& [key, value] : arguments.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return "unknown argument '" + key + "'; " + tool + " takes " +
             (list.empty() ? std::string("none") : list);
    }
  }
  return "";
}

// What one tool call was about and how it ended, for the metrics: the topic once it is known,
// and the outcome of its evidence. Unset outcome: ok, or error when the result is an error (bad
// arguments, unknown topic).
struct CallRecord {
  std::string topic;
  std::optional<CallOutcome> outcome;
};

// One read of one topic: the evidence and, when there is evidence, the parsed rows.
struct TopicRead {
  Evidence evidence;
  Parsed parsed;
};

TopicRead ReadTopic(Backend& backend, const Topic& topic, const std::vector<std::string>& argv,
                    const Filters& filters, const Caps& caps, ParseOptions view = {}) {
  TopicRead r;
  r.evidence = topic.source == Source::kDaemonLog   ? backend.ReadLog(argv.at(1), kLogTailLines)
               : topic.source == Source::kNodeFiles ? backend.ReadFabric()
                                                    : backend.Read(argv);
  // A command's output cut by the executor's cap lost its end; a log is read as its tail by
  // design (kLogTailLines), which is not a cut total.
  if (topic.source == Source::kCommand) {
    view.output_cut = r.evidence.out_truncated;
    view.output_bytes = r.evidence.out_bytes;
  }
  if (r.evidence.ok()) r.parsed = Parse(topic, r.evidence.out, caps, filters, view);
  return r;
}

// Names the read an answer's rows come from, for paging (Evidence::read_id); "" when the
// back-end does not number its reads.
std::string SnapshotOf(const Evidence& e) {
  return e.read_id ? "r" + std::to_string(e.read_id) : "";
}

// What a cursor pages: the topic and its filters (FNV-1a, so a cursor names its query).
std::string QueryHash(const std::string& topic, const Filters& filters) {
  std::uint32_t h = 2166136261u;
  auto add = [&h](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 16777619u;
    h = (h ^ 0u) * 16777619u;
  };
  add(topic);
  for (const auto& [k, v] : filters) {
    add(k);
    add(v);
  }
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", h);
  return hex;
}

// A cursor: "<snapshot>.<offset>.<query hash>", made by an answer with more rows to page.
struct Cursor {
  std::string snapshot;
  std::size_t offset = 0;
  std::string query;
};

std::string CursorText(const Cursor& c) {
  return c.snapshot + "." + std::to_string(c.offset) + "." + c.query;
}

std::optional<Cursor> ParseCursor(const std::string& text) {
  static const RE2 kCursor(R"((r[0-9]{1,19})\.([0-9]{1,12})\.([0-9a-f]{8}))");
  Cursor c;
  std::string offset;
  if (!RE2::FullMatch(text, kCursor, &c.snapshot, &offset, &c.query)) return std::nullopt;
  c.offset = static_cast<std::size_t>(std::stoull(offset));
  return c;
}

// Where a topic answer's evidence came from: the fields every structured answer starts with.
Json Provenance(const Topic& topic, const Evidence& e) { return ProvenanceJson(topic.name, e); }

// The structured answer of one topic read with evidence. The rows are moved into it: `read`
// keeps its counts and evidence, not its rows.
Json EvidenceJson(const Topic& topic, TopicRead& read) {
  const Evidence& e = read.evidence;
  Json j = Provenance(topic, e);
  if (!e.ok()) {
    j["cause"] = e.cause;
    return j;
  }
  j["rows"] = std::move(read.parsed.rows);
  j["total_rows"] = read.parsed.total_rows;
  j["truncated"] = read.parsed.truncated;
  if (read.parsed.groups.is_array()) {
    j["groups"] = std::move(read.parsed.groups);
    j["total_groups"] = read.parsed.total_groups;
  }
  if (read.parsed.offset) j["offset"] = read.parsed.offset;
  if (!read.parsed.hint.empty()) j["hint"] = read.parsed.hint;
  if (!read.parsed.text.empty()) j["text"] = read.parsed.text;
  if (!read.parsed.parse_error.empty()) j["parse_error"] = read.parsed.parse_error;
  return j;
}

std::string NoEvidence(const Evidence& e) {
  return "NO EVIDENCE (" + std::string(OutcomeName(e.outcome)) + ", " + e.source + ", " +
         e.evidence_time + "): " + e.cause + "\nargv: " + JoinArgv(e.argv) +
         "\nThis is not an empty result: the read did not produce evidence.";
}

void Audit(const SurfaceOptions& o, const std::string& tool, const std::string& topic,
           const Evidence& e) {
  if (o.audit) o.audit(AuditRecord(tool, topic, e));
}

Json TopicEnum() {
  Json names = Json::array();
  for (const Topic& t : Topics()) names.push_back(t.name);
  return names;
}

Json QueryOutputSchema() {
  Json schema = {{"type", "object"},
          {"properties",
           {{"topic", {{"type", "string"}}},
            {"source", {{"type", "string"}, {"enum", {"live", "replay"}}}},
            {"outcome",
             {{"type", "string"},
              {"enum", Json::array({"ok", "failed"})},
              {"description",
               "ok; failed only for gpu_health when nvidia-smi exited with a documented "
               "hardware-fault status (8, 10, 14, 15), which is evidence (see report)"}}},
            {"evidence_time", {{"type", "string"}}},
            {"argv", {{"type", "array"}, {"items", {{"type", "string"}}}}},
            {"seconds", {{"type", "number"}}},
            {"cached", {{"type", "boolean"}}},
            {"cache_age_seconds", {{"type", "number"}}},
            {"derived_from",
             {{"type", "array"},
              {"items", {{"type", "string"}}},
              {"description",
               "replay only: this filtered read was not recorded; its rows were derived from "
               "the whole read of this argv in the same snapshot (see derivation)"}}},
            {"derivation", {{"type", "string"}}},
            {"rows", {{"type", "array"}, {"items", {{"type", "object"}}}}},
            {"total_rows", {{"type", "integer"}}},
            {"truncated", {{"type", "boolean"}}},
            {"total_is_lower_bound",
             {{"type", "boolean"},
              {"description", "the output was cut by the server's cap: counts are lower bounds"}}},
            {"output_cut_at_bytes", {{"type", "integer"}}},
            {"output_bytes", {{"type", "integer"}}},
            {"group_by", {{"type", "array"}, {"items", {{"type", "string"}}}}},
            {"groups", {{"type", "array"}, {"items", {{"type", "object"}}}}},
            {"total_groups", {{"type", "integer"}}},
            {"offset", {{"type", "integer"}}},
            {"snapshot", {{"type", "string"}}},
            {"next_cursor", {{"type", "string"}}},
            {"hint", {{"type", "string"}}},
            {"text", {{"type", "string"}}},
            {"parse_error", {{"type", "string"}}},
            {"report",
             {{"type", "object"},
              {"description",
               "gpu_health, gpu_idle and fabric only: the judgement over the rows; its schema is "
               "slurm_describe's "
               "report_schema"}}}}},
          {"required", {"topic", "source", "outcome", "evidence_time", "argv", "rows", "total_rows",
                        "truncated"}},
          {"additionalProperties", false}};
  // Per topic: a telemetry topic's report has its own schema (slurm_describe gives it as
  // report_schema); every other topic's answer is evidence only when it read ok.
  Json if_telemetry = {{"properties", {{"topic", {{"enum", Json::array({"gpu_health", "gpu_idle", "fabric"})}}}}},
                        {"required", Json::array({"topic"})}};
  // The report's full schema stays out of tools/list (it would triple its size); it is
  // slurm_describe's report_schema.
  Json then_report = {{"required", Json::array({"report"})}};
  Json else_ok = {{"properties", {{"outcome", {{"const", "ok"}}}}}};
  schema["allOf"] = Json::array({{{"if", if_telemetry}, {"then", then_report}, {"else", else_ok}}});
  return schema;
}

Json DescribeOutputSchema() {
  return {{"type", "object"},
          {"properties",
           {{"name", {{"type", "string"}}},
            {"summary", {{"type", "string"}}},
            {"detail", {{"type", "string"}}},
            {"filters", {{"type", "array"}, {"items", {{"type", "object"}}}}},
            {"columns", {{"type", "array"}}}}},
          {"required", {"name", "summary", "detail", "filters", "columns"}}};
}

// gpu_health: the evidence includes the exit status (a hardware-fault exit is evidence), so the
// whole read is judged, not only its stdout.
ToolResult GpuHealthQuery(const SurfaceOptions& o, const Topic& topic,
                          const std::vector<std::string>& argv, CallRecord& call) {
  Evidence e = o.backend->Read(argv);
  Audit(o, kQueryTool, topic.name, e);
  GpuHealthReport health = AssessGpuHealth(e);
  // A documented hardware-fault exit is evidence (ok); a read that exited 0 with output that is
  // no GPU list is not.
  call.outcome = health.evidence ? CallOutcome{"ok", "", ""}
                 : e.ok()        ? CallOutcome{"no_evidence", "unparsable", ""}
                                 : OutcomeOf(e);
  ToolResult r;
  if (!health.evidence) {
    r.is_error = true;
    Evidence shown = e;
    shown.cause = health.failure + (e.cause.empty() ? "" : "; read: " + e.cause);
    r.content.push_back(TextBlock(NoEvidence(shown)));
    return r;
  }
  Json structured = Provenance(topic, e);
  structured["rows"] = health.rows;
  structured["total_rows"] = health.rows.size();
  structured["truncated"] = false;
  structured["report"] = health.report;
  const Json& summary = health.report["summary"];
  std::string header =
      "[" + e.source + ", " + e.evidence_time + (e.cached ? ", cached" : "") + "] " + topic.name +
      ": " + health.report["query"]["outcome"].get<std::string>() + ", " +
      std::to_string(health.rows.size()) + " GPUs, worst severity " +
      summary["worst_severity"].get<std::string>() +
      (summary["incomplete"].get<bool>() ? " (incomplete: some values unknown)" : "") +
      (summary["would_drain"].get<bool>()
           ? "; would drain (classification only, nothing was done): " +
                 summary["reason"].get<std::string>()
           : "; would not drain (classification only)");
  r.content.push_back(TextBlock(header + "\n" +
                                structured.dump(-1, ' ', false, Json::error_handler_t::replace)));
  r.structured = std::move(structured);
  return r;
}

// fabric: node files read by the back-end (no process); rows are the ports, report the whole
// judgement.
ToolResult FabricQuery(const SurfaceOptions& o, const Topic& topic, CallRecord& call) {
  Evidence e = o.backend->ReadFabric();
  Audit(o, kQueryTool, topic.name, e);
  Json report = e.ok() ? Json::parse(e.out, nullptr, /*allow_exceptions=*/false) : Json();
  call.outcome = OutcomeOf(e);
  ToolResult r;
  if (!e.ok() || !report.is_object() || !report.contains("ports")) {
    if (e.ok()) call.outcome = CallOutcome{"no_evidence", "unparsable", ""};
    r.is_error = true;
    Evidence shown = e;
    if (e.ok()) {
      shown.outcome = Evidence::Outcome::kFailed;
      shown.cause = "the fabric report did not parse";
    }
    r.content.push_back(TextBlock(NoEvidence(shown)));
    return r;
  }
  Json structured = Provenance(topic, e);
  structured["rows"] = report["ports"];
  structured["total_rows"] = report["ports"].size();
  structured["truncated"] = false;
  structured["report"] = report;
  size_t attributed = 0, gaps = report["node"]["gaps"].size();
  for (const Json& p : report["ports"]) attributed += p["attributed_job"].is_string() ? 1 : 0;
  std::string header = "[" + e.source + ", " + e.evidence_time + "] " + topic.name + ": " +
                       std::to_string(report["ports"].size()) + " ports, " +
                       std::to_string(attributed) + " attributed to a sole job user, layout " +
                       report["node"]["layout"].get<std::string>() +
                       (gaps ? ", " + std::to_string(gaps) +
                                   " evidence gaps (every attribution suppressed)"
                             : "") +
                       " (classification only)";
  r.content.push_back(TextBlock(header + "\n" +
                                structured.dump(-1, ' ', false, Json::error_handler_t::replace)));
  r.structured = std::move(structured);
  return r;
}

// gpu_idle: the server's own GPU samples judged against squeue's running jobs. No samples (sampling
// off, or replay) and a failed job read are both no evidence: never an idle or a busy GPU.
ToolResult GpuIdleQuery(const SurfaceOptions& o, const Topic& topic, CallRecord& call) {
  ToolResult r;
  if (o.gpu_samples == nullptr) {
    Evidence e;
    e.outcome = Evidence::Outcome::kUnavailable;
    e.source = o.backend->Label();
    e.argv = topic.argv;
    e.evidence_time = UnixToIso(o.clock ? o.clock() : std::time(nullptr));
    e.cause = e.source == "replay"
                  ? "`samples gpu_idle` is not recorded in this bundle (GPU samples are taken "
                    "live, by slurm-mcp serve --gpu-sample-interval); no evidence, not an idle GPU"
                  : "GPU sampling is off on this server (start slurm-mcp serve with "
                    "--gpu-sample-interval SECONDS and --gpu-node-name NODE and/or --dcgm-host "
                    "HOST); no evidence, not an idle GPU";
    Audit(o, kQueryTool, topic.name, e);
    call.outcome = OutcomeOf(e);
    r.is_error = true;
    r.content.push_back(TextBlock(NoEvidence(e)));
    return r;
  }
  Evidence jobs_read = o.backend->Read(RunningJobsArgv());
  Audit(o, kQueryTool, topic.name, jobs_read);
  call.outcome = OutcomeOf(jobs_read);
  if (!jobs_read.ok()) {
    Evidence shown = jobs_read;
    shown.cause = "the running jobs could not be read, so no GPU can be judged: " + jobs_read.cause;
    r.is_error = true;
    r.content.push_back(TextBlock(NoEvidence(shown)));
    return r;
  }
  std::vector<std::string> rejected;
  std::vector<RunningJob> jobs = ParseRunningJobs(jobs_read.out, &rejected);
  const std::int64_t now = o.clock ? o.clock() : static_cast<std::int64_t>(std::time(nullptr));
  Json report = JudgeGpuIdle(jobs, o.gpu_samples->Snapshot(), now, o.gpu_idle);
  report["sampling"] = o.gpu_sampling ? o.gpu_sampling() : Json::object();
  report["rejected_jobs"] = rejected;
  Json structured = Provenance(topic, jobs_read);
  structured["rows"] = report["jobs"];
  structured["total_rows"] = report["jobs"].size();
  structured["truncated"] = false;
  structured["report"] = report;
  std::map<std::string, int> counts;
  for (const Json& j : report["jobs"]) {
    std::string key = j["status"].get<std::string>();
    if (key == "judged") {
      key = j["signature"].is_null() ? "busy" : j["signature"].get<std::string>();
    }
    ++counts[key];
  }
  std::string tally;
  for (const auto& [k, n] : counts) tally += (tally.empty() ? "" : ", ") + k + " " + std::to_string(n);
  std::string header = "[" + jobs_read.source + ", " + UnixToIso(now) + "] " + topic.name + ": " +
                       std::to_string(jobs.size()) + " running jobs" +
                       (tally.empty() ? "" : " (" + tally + ")") + ", " +
                       std::to_string(report["nodes"].size()) +
                       " sampled nodes (classification only, nothing was done)";
  r.content.push_back(TextBlock(header + "\n" +
                                structured.dump(-1, ' ', false, Json::error_handler_t::replace)));
  r.structured = std::move(structured);
  return r;
}

// slurm_query's answer to one read of a topic with its rows (not the telemetry topics), and the
// evidence it is built from.
CachedAnswer TopicAnswer(const SurfaceOptions& o, const Topic& topic,
                         const std::vector<std::string>& argv, const Filters& filters,
                         const Caps& caps, const ParseOptions& view) {
  TopicRead read = ReadTopic(*o.backend, topic, argv, filters, caps, view);
  CachedAnswer answer;
  ToolResult& r = answer.result;
  if (!read.evidence.ok()) {
    r.is_error = true;
    r.content.push_back(TextBlock(NoEvidence(read.evidence)));
    answer.reads.push_back({topic.name, std::move(read.evidence)});
    return answer;
  }
  const std::string note = TruncationNote(read.parsed);  // before EvidenceJson takes the rows
  const std::size_t shown = read.parsed.rows.size();
  Json structured = EvidenceJson(topic, read);
  const std::string snapshot = SnapshotOf(read.evidence);
  if (!snapshot.empty() && Pageable(topic)) structured["snapshot"] = snapshot;
  if (!view.group_by.empty()) {
    structured["group_by"] = view.group_by;
  } else if (!snapshot.empty() && Pageable(topic) &&
             view.offset + shown < read.parsed.total_rows) {
    structured["next_cursor"] =
        CursorText({snapshot, view.offset + shown, QueryHash(topic.name, filters)});
  }
  std::string header = "[" + read.evidence.source + ", " + read.evidence.evidence_time +
                       (read.evidence.cached ? ", cached" : "") +
                       (read.evidence.derived_from.empty() ? "" : ", derived") + "] " +
                       topic.name + ": " +
                       (read.parsed.output_cut ? "at least " : "") +
                       std::to_string(read.parsed.total_rows) + " rows";
  if (!view.group_by.empty()) {
    header += " in " + std::to_string(read.parsed.total_groups) +
              (read.parsed.total_groups == 1 ? " group by " : " groups by ") +
              view.group_by.front() + (view.group_by.size() > 1 ? "," + view.group_by[1] : "");
  }
  r.content.push_back(TextBlock(header + (note.empty() ? "" : " " + note) + "\n" +
                                structured.dump(-1, ' ', false, Json::error_handler_t::replace)));
  r.structured = std::move(structured);
  answer.reads.push_back({topic.name, std::move(read.evidence)});
  return answer;
}

// What one read of an answer costs a call, whether read now or reused: its audit line, and the
// call's outcome (ok while every read is evidence; else the first read without evidence says
// how the call ended).
void Account(const SurfaceOptions& o, const char* tool, const AnswerRead& read, CallRecord& call) {
  Audit(o, tool, read.topic, read.evidence);
  if (!call.outcome || call.outcome->outcome == "ok") call.outcome = OutcomeOf(read.evidence);
}

// Keeps `built` for the calls at `version` that ask `key`, serialized once here rather than on
// every call that reuses it (Server::HandleSerialized writes those bytes).
std::shared_ptr<const CachedAnswer> Keep(AnswerCache& answers, std::int64_t version,
                                         AnswerKey key, CachedAnswer built) {
  if (!built.result.is_error) {
    built.result.serialized =
        std::make_shared<const std::string>(SerializeToolResult(built.result));
  }
  auto answer = std::make_shared<const CachedAnswer>(std::move(built));
  answers.Add(version, std::move(key), answer);
  return answer;
}

// A call's result sharing a kept answer, not copying it: the answer lives as long as the cache
// or a result holds it.
ToolResult Shared(const std::shared_ptr<const CachedAnswer>& answer) {
  return SharedResult(std::shared_ptr<const ToolResult>(answer, &answer->result));
}

ToolResult Query(const SurfaceOptions& o, AnswerCache& answers, const Json& args,
                 CallRecord& call) {
  if (std::string e =
          CheckKeys(args, kQueryTool, {"topic", "filters", "max_rows", "group_by", "cursor"});
      !e.empty()) {
    return InputError(e);
  }
  if (!args.contains("topic") || !args["topic"].is_string()) {
    return InputError("slurm_query needs a topic, one of: " + TopicNames());
  }
  const Topic* topic = FindTopic(args["topic"].get<std::string>());
  if (topic == nullptr) {
    return InputError("unknown topic '" + args["topic"].get<std::string>() +
                      "'; topics: " + TopicNames());
  }
  call.topic = topic->name;
  Filters filters;
  if (args.contains("filters")) {
    if (!args["filters"].is_object()) return InputError("filters must be an object of strings");
    for (const auto& [k, v] : args["filters"].items()) {
      if (!v.is_string()) return InputError("filter '" + k + "' must be a string");
      filters[k] = v.get<std::string>();
    }
  }
  Caps caps = o.caps;
  if (args.contains("max_rows")) {
    if (!args["max_rows"].is_number_integer() || args["max_rows"].get<long>() < 1 ||
        args["max_rows"].get<long>() > 1000) {
      return InputError("max_rows must be an integer from 1 to 1000");
    }
    caps.max_rows = std::min<size_t>(caps.max_rows, args["max_rows"].get<size_t>());
  }
  base::Result<std::vector<std::string>> argv = BuildArgv(*topic, filters);
  if (!argv.ok()) return InputError(argv.status().message());
  ParseOptions view;
  if (args.contains("group_by")) {
    const Json& g = args["group_by"];
    if (g.is_string()) {
      const std::string list = g.get<std::string>();  // the views below point into it
      for (std::string_view part : base::SplitFields(list, ',')) {
        view.group_by.emplace_back(base::Trim(part));
      }
    } else if (g.is_array()) {
      for (const Json& v : g) {
        if (!v.is_string()) return InputError("group_by must be an array of column names");
        view.group_by.push_back(v.get<std::string>());
      }
    } else {
      return InputError("group_by must be an array of one or two column names");
    }
    if (base::Status st = CheckGroupBy(*topic, view.group_by); !st.ok()) {
      return InputError(st.message());
    }
  }
  std::optional<Cursor> cursor;
  if (args.contains("cursor")) {
    if (!args["cursor"].is_string() || !(cursor = ParseCursor(args["cursor"].get<std::string>()))) {
      return InputError("cursor must be a next_cursor given by an earlier slurm_query answer");
    }
    if (!Pageable(*topic)) return InputError("topic " + topic->name + " is not paged");
    if (!view.group_by.empty()) {
      return InputError("a cursor pages rows; a group_by answer is not paged (narrow it with "
                        "filters)");
    }
    if (cursor->query != QueryHash(topic->name, filters)) {
      return InputError("this cursor pages another query: give the topic and filters of the "
                        "answer that gave it");
    }
    view.offset = cursor->offset;
  }
  if (topic->format == Format::kGpuHealth) return GpuHealthQuery(o, *topic, *argv, call);
  if (topic->format == Format::kFabric) return FabricQuery(o, *topic, call);
  if (topic->format == Format::kGpuIdle) return GpuIdleQuery(o, *topic, call);

  // A replayed answer is built once per snapshot (answer_cache.h); a live one on every call.
  AnswerKey key{topic->name, std::move(filters), caps.max_rows, view.offset, view.group_by};
  // A log's answer is never kept: whether a caller may read logs is a scope of its own, and the
  // cache is keyed by what was asked, not by who asked (scoped_backend.h).
  const std::optional<std::int64_t> version = topic->source == Source::kDaemonLog
                                                  ? std::nullopt
                                                  : o.backend->EvidenceVersion();
  std::shared_ptr<const CachedAnswer> answer = answers.Find(version, key);
  std::optional<CachedAnswer> fresh;
  if (answer == nullptr) {
    CachedAnswer built = TopicAnswer(o, *topic, *argv, key.filters, caps, view);
    Account(o, kQueryTool, built.reads.front(), call);
    if (version && o.backend->EvidenceVersion() == version) {
      answer = Keep(answers, *version, std::move(key), std::move(built));
    } else {
      fresh = std::move(built);
    }
  } else {
    Account(o, kQueryTool, answer->reads.front(), call);
  }
  const Evidence& now = (answer ? answer->reads : fresh->reads).front().evidence;
  if (cursor && now.ok() && SnapshotOf(now) != cursor->snapshot) {
    // Rows of two snapshots are never mixed: the read must be the one the cursor paged.
    const std::string snapshot = SnapshotOf(now);
    call.outcome = CallOutcome{"error", "", ""};
    return InputError("the snapshot this cursor pages (" + cursor->snapshot +
                      ") is no longer held: the read now is " +
                      (snapshot.empty() ? std::string("not numbered") : snapshot) + ", taken " +
                      now.evidence_time +
                      ". Rows of two snapshots are never mixed: page again from the start (no "
                      "cursor).");
  }
  return answer ? Shared(answer) : std::move(fresh->result);
}

// slurm_overview's answer (overview.h): its reads made one after the other, never at once (the
// overview must not burst the controller); `on_read` runs as each is read. A cancelled call stops
// reading: its answer then holds fewer reads than OverviewReads().
CachedAnswer OverviewAnswer(const SurfaceOptions& o, ToolContext& context,
                            const std::function<void(const AnswerRead&)>& on_read) {
  CachedAnswer answer;
  std::vector<Evidence> evidence;
  for (const OverviewRead& read : OverviewReads()) {
    if (context.Cancelled()) break;
    Evidence e = o.backend->Read(read.argv);
    // A bundle recorded before the overview's own read answers the topic's argv instead.
    if (e.outcome == Evidence::Outcome::kUnavailable && !read.fallback.empty()) {
      e = o.backend->Read(read.fallback);
    }
    evidence.push_back(e);
    answer.reads.push_back({read.topic, std::move(e)});
    on_read(answer.reads.back());
  }
  OverviewSummary summary = SummarizeOverview(evidence, o.backend->Label());
  ToolResult& r = answer.result;
  r.content.push_back(TextBlock(std::move(summary.text)));
  r.structured = std::move(summary.structured);
  return answer;
}

ToolResult Overview(const SurfaceOptions& o, AnswerCache& answers, const Json& args,
                    ToolContext& context, CallRecord& call) {
  if (std::string e = CheckKeys(args, kOverviewTool, {}); !e.empty()) return InputError(e);
  // Each section, read now or reused, is audited, counted and reported as progress.
  int step = 0;
  auto on_read = [&](const AnswerRead& read) {
    Account(o, kOverviewTool, read, call);
    context.Progress(++step, OverviewReads().size(), "read " + read.topic);
  };
  // A replayed overview is built once per snapshot, as slurm_query's answers are.
  AnswerKey key{kOverviewTool, {}, o.caps.max_rows};
  const std::optional<std::int64_t> version = o.backend->EvidenceVersion();
  if (std::shared_ptr<const CachedAnswer> answer = answers.Find(version, key)) {
    for (const AnswerRead& read : answer->reads) {
      if (context.Cancelled()) break;  // the server answers a cancelled call with nothing
      on_read(read);
    }
    return Shared(answer);
  }
  CachedAnswer built = OverviewAnswer(o, context, on_read);
  const bool whole = built.reads.size() == OverviewReads().size();
  if (!whole || !version || o.backend->EvidenceVersion() != version) {
    return std::move(built.result);
  }
  return Shared(Keep(answers, *version, std::move(key), std::move(built)));
}

ToolResult Describe(const Json& args, CallRecord& call) {
  if (std::string e = CheckKeys(args, kDescribeTool, {"topic"}); !e.empty()) return InputError(e);
  if (!args.contains("topic") || !args["topic"].is_string()) {
    return InputError("slurm_describe needs a topic, one of: " + TopicNames());
  }
  const Topic* topic = FindTopic(args["topic"].get<std::string>());
  if (topic == nullptr) {
    return InputError("unknown topic '" + args["topic"].get<std::string>() +
                      "'; topics: " + TopicNames());
  }
  call.topic = topic->name;
  Json d = DescribeTopic(*topic);
  ToolResult r;
  r.content.push_back(TextBlock(d.dump(2)));
  r.structured = std::move(d);
  return r;
}

// Runs one tool call and counts it (SurfaceOptions::metrics): by tool, by the topic the call
// recorded, and by how its evidence ended; a result that is an error with no evidence recorded
// (bad arguments) is `error`, and so is a call that threw.
ToolResult Counted(const SurfaceOptions& o, const char* tool, CallRecord& call,
                   const std::function<ToolResult()>& run) {
  if (o.metrics == nullptr) return run();
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  ToolResult r;
  try {
    r = run();
  } catch (...) {
    o.metrics->ToolCall(tool, call.topic, CallOutcome{"error", "", ""}, seconds());
    throw;
  }
  CallOutcome outcome = call.outcome.value_or(r.Fields().is_error ? CallOutcome{"error", "", ""}
                                                                   : CallOutcome{"ok", "", ""});
  o.metrics->ToolCall(tool, call.topic, outcome, seconds());
  return r;
}

// Runs a call as its caller (SurfaceOptions::scopes): through the caller's view of the back-end,
// with the principal in its audit records; refused when the token allows no view. Without
// scopes, as the server.
ToolResult AsCaller(const SurfaceOptions& o, const ToolContext& context,
                    const std::function<ToolResult(const SurfaceOptions&)>& run) {
  if (!o.scopes) return run(o);
  const Caller caller = context.caller();
  const CallerView view = ViewOf(*o.scopes, caller);
  if (!view.allowed) {
    if (o.caller_counts) o.caller_counts->Record(caller.principal, true, true);
    ToolResult r;
    r.is_error = true;
    r.content.push_back(TextBlock("REFUSED (scope): " + view.refusal + "; a token with the scope " +
                                  view.needed_scope + " may call it"));
    return r;
  }
  ScopedBackend scoped(*o.backend, view, caller.principal);
  SurfaceOptions as = o;
  as.backend = &scoped;
  if (o.audit) {
    as.audit = [&o, &caller, &view](const Json& record) {
      Json r = record;
      r["principal"] = caller.principal;
      if (view.own_user) r["user"] = *view.own_user;
      o.audit(r);
    };
  }
  ToolResult r = run(as);
  if (o.caller_counts) o.caller_counts->Record(caller.principal, r.Fields().is_error, false);
  if (view.own_user && !r.shared && !r.serialized) {
    r.content.push_back(TextBlock("VIEW: the own jobs of Slurm user " + *view.own_user + " (scope " +
                                  o.scopes->own + "): jobs, counts and rows are this user's only; "
                                  "node and partition state is the cluster's"));
  }
  return r;
}

// The conformance suite's fixture tools (only with --conformance-fixtures).
std::vector<Tool> ConformanceTools() {
  Json no_args = {{"type", "object"}, {"properties", Json::object()}};
  std::vector<Tool> tools;
  tools.push_back({"test_simple_text", "Simple text", "Returns a fixed text (conformance fixture).",
                   no_args, nullptr, Json::object(), [](const Json&, ToolContext&) {
                     ToolResult r;
                     r.content.push_back(
                         TextBlock("This is a simple text response for testing."));
                     return r;
                   }});
  tools.push_back({"test_error_handling", "Error handling",
                   "Always returns a tool error (conformance fixture).", no_args, nullptr,
                   Json::object(), [](const Json&, ToolContext&) {
                     ToolResult r;
                     r.is_error = true;
                     r.content.push_back(
                         TextBlock("This tool intentionally returns an error for testing"));
                     return r;
                   }});
  tools.push_back({"test_tool_with_progress", "Progress",
                   "Reports progress 0, 50, 100 (conformance fixture).", no_args, nullptr,
                   Json::object(), [](const Json&, ToolContext& context) {
                     for (int p : {0, 50, 100}) {
                       context.Progress(p, 100, "step " + std::to_string(p));
                       std::this_thread::sleep_for(std::chrono::milliseconds(50));
                     }
                     ToolResult r;
                     r.content.push_back(TextBlock("Progress test completed"));
                     return r;
                   }});
  // The 2025 suite calls it test_tool_with_logging; the 2026-07-28 suite test_logging_tool (it
  // checks that a modern request without logLevel gets no log message).
  for (const char* name : {"test_tool_with_logging", "test_logging_tool"}) {
    tools.push_back({name, "Logging", "Sends three log messages (conformance fixture).", no_args,
                     nullptr, Json::object(), [](const Json&, ToolContext& context) {
                       for (const char* m : {"Tool execution started", "Tool processing data",
                                             "Tool execution completed"}) {
                         context.Log("info", m);
                         std::this_thread::sleep_for(std::chrono::milliseconds(50));
                       }
                       ToolResult r;
                       r.content.push_back(TextBlock("Logging test completed"));
                       return r;
                     }});
  }
  return tools;
}

}  // namespace

std::vector<Tool> BuildTools(const SurfaceOptions& options) {
  std::string topics;
  for (const Topic& t : Topics()) topics += "\n- " + t.name + ": " + t.summary;
  std::vector<Tool> tools;
  tools.push_back(
      {kOverviewTool, "Cluster overview",
       "Start here. The Slurm cluster summarised in one call (read-only), as small at 10,000 "
       "nodes as at 4: anomalies first (unavailable nodes by state and reason, with hostlist and "
       "since-when), then nodes, jobs and pending reasons by count, and sdiag. A failed read is "
       "no evidence, never an empty table.",
       {{"type", "object"}, {"properties", Json::object()}, {"additionalProperties", false}},
       OverviewSchema(), ReadOnlyAnnotations("Cluster overview"),
       [options, answers = std::make_shared<AnswerCache>()](const Json& args,
                                                            ToolContext& context) {
         return AsCaller(options, context, [&](const SurfaceOptions& o) {
           CallRecord call;
           return Counted(o, kOverviewTool, call,
                          [&] { return Overview(o, *answers, args, context, call); });
         });
       }});
  tools.push_back(
      {kQueryTool, "Query one topic",
       "Reads one topic of Slurm or node state (read-only), with optional filters; call "
       "slurm_describe first to learn a topic's filters and how to read it. Topics:" +
           topics,
       {{"type", "object"},
        {"properties",
         {{"topic", {{"type", "string"}, {"enum", TopicEnum()}, {"description", "The topic."}}},
          {"filters",
           {{"type", "object"},
            {"additionalProperties", {{"type", "string"}}},
            {"description", "Filter name to value, e.g. {\"user\": \"alice\"}; see slurm_describe."}}},
          {"max_rows",
           {{"type", "integer"}, {"minimum", 1}, {"maximum", 1000},
            {"description", "Rows (or groups) to return at most (default 200)."}}},
          {"group_by",
           {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}, {"maxItems", 2},
            {"description",
             "One or two of the topic's columns, e.g. [\"state\", \"reason\"]: counts per "
             "group instead of rows, with node groups as hostlists."}}},
          {"cursor",
           {{"type", "string"},
            {"description", "An answer's next_cursor: the next rows of the same read."}}}}},
        {"required", {"topic"}},
        {"additionalProperties", false}},
       QueryOutputSchema(), ReadOnlyAnnotations("Query one topic"),
       [options, answers = std::make_shared<AnswerCache>()](const Json& args,
                                                            ToolContext& context) {
         return AsCaller(options, context, [&](const SurfaceOptions& o) {
           CallRecord call;
           return Counted(o, kQueryTool, call, [&] { return Query(o, *answers, args, call); });
         });
       }});
  tools.push_back(
      {kDescribeTool, "Describe a topic",
       "Returns a topic's columns, filters (with their grammar and an example) and notes on how "
       "to interpret it. Reads nothing from the cluster.",
       {{"type", "object"},
        {"properties",
         {{"topic", {{"type", "string"}, {"enum", TopicEnum()}, {"description", "The topic."}}}}},
        {"required", {"topic"}},
        {"additionalProperties", false}},
       DescribeOutputSchema(), ReadOnlyAnnotations("Describe a topic"),
       [options](const Json& args, ToolContext&) {
         CallRecord call;
         return Counted(options, kDescribeTool, call, [&] { return Describe(args, call); });
       }});
  if (options.conformance_fixtures) {
    for (Tool& t : ConformanceTools()) tools.push_back(std::move(t));
  }
  return tools;
}

CallOutcome OutcomeOf(const Evidence& e) {
  using O = Evidence::Outcome;
  if (e.outcome == O::kOk) return {"ok", "", ""};
  if (e.outcome == O::kRefused) {
    // The guard's denial reads "DENIED <rule-id>: <reason>" (guard::Denial::ToString), live or
    // recorded in a bundle; the live back-end's own refusals are the rate budget and the
    // concurrency bound (live_backend.cc).
    if (e.cause.rfind("DENIED ", 0) == 0) {
      const std::size_t colon = e.cause.find(':', 7);
      if (colon != std::string::npos) {
        const std::string id = e.cause.substr(7, colon - 7);
        if (guard::RuleFromId(id)) return {"refused", "", id};
      }
    }
    if (e.cause.rfind("rate budget:", 0) == 0) return {"no_evidence", "rate_budget", ""};
    if (e.cause.rfind("busy:", 0) == 0) return {"no_evidence", "busy", ""};
    return {"no_evidence", "refused", ""};
  }
  return {"no_evidence", OutcomeName(e.outcome), ""};
}

std::string ResultText(const ToolResult& result) {
  std::string text;
  for (const Json& block : result.Fields().content) {
    if (block.value("type", "") == "text") text += block.value("text", "") + "\n";
  }
  return text;
}

}  // namespace slurm_rca::mcp
