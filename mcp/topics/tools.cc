#include "mcp/topics/tools.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "guard/rule.h"
#include "mcp/backend/audit_log.h"
#include "mcp/telemetry/fabric.h"
#include "mcp/telemetry/gpu_health.h"
#include "mcp/topics/answer_cache.h"

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
                    const Filters& filters, const Caps& caps) {
  TopicRead r;
  r.evidence = topic.source == Source::kDaemonLog   ? backend.ReadLog(argv.at(1), kLogTailLines)
               : topic.source == Source::kNodeFiles ? backend.ReadFabric()
                                                    : backend.Read(argv);
  if (r.evidence.ok()) r.parsed = Parse(topic, r.evidence.out, caps, filters);
  return r;
}

// Where a topic answer's evidence came from: the fields every structured answer starts with.
Json Provenance(const Topic& topic, const Evidence& e) {
  Json j = {{"topic", topic.name},
            {"source", e.source},
            {"outcome", OutcomeName(e.outcome)},
            {"evidence_time", e.evidence_time},
            {"argv", e.argv},
            {"seconds", e.seconds},
            {"cached", e.cached}};
  if (e.cached) j["cache_age_seconds"] = e.cache_age_seconds;
  return j;
}

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
            {"rows", {{"type", "array"}, {"items", {{"type", "object"}}}}},
            {"total_rows", {{"type", "integer"}}},
            {"truncated", {{"type", "boolean"}}},
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

Json OverviewOutputSchema() {
  return {{"type", "object"},
          {"properties",
           {{"source", {{"type", "string"}}},
            {"sections",
             {{"type", "array"},
              {"items",
               {{"type", "object"},
                {"properties",
                 {{"topic", {{"type", "string"}}},
                  {"outcome", {{"type", "string"}}},
                  {"evidence_time", {{"type", "string"}}},
                  {"rows", {{"type", "array"}, {"items", {{"type", "object"}}}}}}},
                {"required", {"topic", "outcome", "evidence_time"}}}}}}}},
          {"required", {"source", "sections"}}};
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
                         const Caps& caps) {
  TopicRead read = ReadTopic(*o.backend, topic, argv, filters, caps);
  CachedAnswer answer;
  ToolResult& r = answer.result;
  if (!read.evidence.ok()) {
    r.is_error = true;
    r.content.push_back(TextBlock(NoEvidence(read.evidence)));
    answer.reads.push_back({topic.name, std::move(read.evidence)});
    return answer;
  }
  const std::string note = TruncationNote(read.parsed);  // before EvidenceJson takes the rows
  Json structured = EvidenceJson(topic, read);
  std::string header = "[" + read.evidence.source + ", " + read.evidence.evidence_time +
                       (read.evidence.cached ? ", cached" : "") + "] " + topic.name + ": " +
                       std::to_string(read.parsed.total_rows) + " rows";
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
  if (std::string e = CheckKeys(args, kQueryTool, {"topic", "filters", "max_rows"}); !e.empty()) {
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
  if (topic->format == Format::kGpuHealth) return GpuHealthQuery(o, *topic, *argv, call);
  if (topic->format == Format::kFabric) return FabricQuery(o, *topic, call);
  if (topic->format == Format::kGpuIdle) return GpuIdleQuery(o, *topic, call);

  // A replayed answer is built once per snapshot (answer_cache.h); a live one on every call.
  AnswerKey key{topic->name, std::move(filters), caps.max_rows};
  const std::optional<std::int64_t> version = o.backend->EvidenceVersion();
  std::shared_ptr<const CachedAnswer> answer = answers.Find(version, key);
  if (answer == nullptr) {
    CachedAnswer built_answer = TopicAnswer(o, *topic, *argv, key.filters, caps);
    if (!version || o.backend->EvidenceVersion() != version) {
      Account(o, kQueryTool, built_answer.reads.front(), call);
      return std::move(built_answer.result);
    }
    answer = Keep(answers, *version, std::move(key), std::move(built_answer));
  }
  Account(o, kQueryTool, answer->reads.front(), call);
  return Shared(answer);
}

constexpr const char* kOverviewSections[] = {"nodes", "queue", "diagnostics"};

// slurm_overview's answer: its sections read one after the other, never at once (the overview
// must not burst the controller); `on_read` runs as each is read. A cancelled call stops
// reading: its answer then holds fewer reads than there are sections.
CachedAnswer OverviewAnswer(const SurfaceOptions& o, ToolContext& context,
                            const std::function<void(const AnswerRead&)>& on_read) {
  CachedAnswer answer;
  Json sections = Json::array();
  std::string text;
  for (const char* name : kOverviewSections) {
    if (context.Cancelled()) break;
    const Topic* topic = FindTopic(name);
    TopicRead read = ReadTopic(*o.backend, *topic, DefaultArgv(*topic), {}, o.caps);
    sections.push_back(EvidenceJson(*topic, read));
    text += "### " + std::string(name) + " - " + topic->summary + "\n";
    text += read.evidence.ok() ? std::to_string(read.parsed.total_rows) + " rows" +
                                     (read.parsed.truncated ? " (truncated)" : "") + "\n"
                               : NoEvidence(read.evidence) + "\n";
    answer.reads.push_back({name, std::move(read.evidence)});
    on_read(answer.reads.back());
  }
  ToolResult& r = answer.result;
  Json structured = {{"source", o.backend->Label()}, {"sections", std::move(sections)}};
  r.content.push_back(TextBlock(text + structured.dump(-1, ' ', false,
                                                       Json::error_handler_t::replace)));
  r.structured = std::move(structured);
  return answer;
}

ToolResult Overview(const SurfaceOptions& o, AnswerCache& answers, const Json& args,
                    ToolContext& context, CallRecord& call) {
  if (std::string e = CheckKeys(args, kOverviewTool, {}); !e.empty()) return InputError(e);
  // Each section, read now or reused, is audited, counted and reported as progress.
  int step = 0;
  auto on_read = [&](const AnswerRead& read) {
    Account(o, kOverviewTool, read, call);
    context.Progress(++step, std::size(kOverviewSections), "read " + read.topic);
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
  const bool whole = built.reads.size() == std::size(kOverviewSections);
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
       "Start here. Reads node states, the job queue and scheduler diagnostics of the Slurm "
       "cluster in one call (read-only). Each section says whether it is evidence: a failed or "
       "timed-out read is reported as no evidence, never as an empty table.",
       {{"type", "object"}, {"properties", Json::object()}, {"additionalProperties", false}},
       OverviewOutputSchema(), ReadOnlyAnnotations("Cluster overview"),
       [options, answers = std::make_shared<AnswerCache>()](const Json& args,
                                                            ToolContext& context) {
         CallRecord call;
         return Counted(options, kOverviewTool, call,
                        [&] { return Overview(options, *answers, args, context, call); });
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
            {"description", "Rows to return at most (default 200)."}}}}},
        {"required", {"topic"}},
        {"additionalProperties", false}},
       QueryOutputSchema(), ReadOnlyAnnotations("Query one topic"),
       [options, answers = std::make_shared<AnswerCache>()](const Json& args, ToolContext&) {
         CallRecord call;
         return Counted(options, kQueryTool, call,
                        [&] { return Query(options, *answers, args, call); });
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
