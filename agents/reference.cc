#include "agents/reference.h"

#include <re2/re2.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

namespace slurm_rca::agents {

using Json = nlohmann::json;

namespace {

struct TicketRule {
  const char* pattern;
  const char* component;
};

// First match wins; written from what users say, not from the scenarios' answers.
const std::vector<TicketRule>& TicketRules() {
  static const std::vector<TicketRule> kRules = {
      {R"re((?i)\b(sacct|sreport|accounting|job history|job-history|usage report))re", "slurm.slurmdbd"},
      {R"re((?i)\bgpu\b.*\b(drain|fail|error)|\b(drain|drained)\b.*\bgpu)re", "gpu.device"},
      {R"re((?i)\b(drain|drained|dropped out|not responding|went down|reboot))re", "slurm.slurmd"},
      {R"re((?i)\b(pend|pending|queue|waiting|stuck|not start))re", "slurm.scheduler"},
      {R"re((?i)\b(squeue|sinfo|sbatch|submission|submit|slow|timed? ?out|controller))re", "slurm.slurmctld"},
      {R"re((?i)\b(fail|failed|killed|crash))re", "slurm.slurmd"},
  };
  return kRules;
}

// Evidence that a component is at fault: a read and a pattern over its text.
struct EvidenceRule {
  const char* component;
  const char* topic;
  const char* daemon;  // logs only
  const char* pattern;
};

const std::vector<EvidenceRule>& EvidenceRules() {
  static const std::vector<EvidenceRule> kRules = {
      {"db.mysql", "logs", "slurmdbd",
       R"re((?i)(mysql_real_connect failed|lost connection to (mysql )?server|lock wait timeout|deadlock found|mysql_query failed|can't connect to (local )?mysql))re"},
      {"slurm.slurmdbd", "logs", "slurmctld",
       R"re((?i)(slurmdbd.{0,80}(refused|failed|not responding|timed out)|unable to (connect|contact).{0,20}slurmdbd|dbd_\w+.{0,20}fail))re"},
      {"slurm.slurmdbd", "accounting", "", R"re(NO EVIDENCE|"outcome":"(failed|timed_out)")re"},
      {"slurm.slurmctld", "queue", "", R"re("outcome":"(failed|timed_out)")re"},
      {"slurm.slurmctld", "diagnostics", "", R"re(server_thread_count\D{0,40}(1\d{2,}|[5-9]\d))re"},
      {"auth.munge", "logs", "slurmctld", R"re((?i)(munge.{0,40}(fail|error|invalid)|invalid authentication credential|auth/munge))re"},
      {"auth.munge", "queue", "", R"re((?i)munge)re"},
      {"network.control_plane", "logs", "slurmdbd", R"re((?i)(connection timed out|no route to host))re"},
      {"network.control_plane", "logs", "slurmctld", R"re((?i)(connection timed out|no route to host))re"},
      {"storage.state_save", "logs", "slurmctld",
       R"re((?i)(read-only file system|permission denied|operation not permitted|can't save state|state ?save))re"},
      {"gpu.device", "nodes", "", R"re((?i)(ecc|xid|row.?remap))re"},
      {"gpu.driver", "nodes", "", R"re((?i)(driver|nvml))re"},
      {"slurm.config", "queue", "",
       R"re((QOS\w*Limit|Assoc\w*Limit|PartitionDown|PartitionInactive|PartitionNodeLimit|PartitionTimeLimit|Reservation|ReqNodeNotAvail))re"},
      {"slurm.config", "partitions", "", R"re((?i)"state":"(down|inact|drain))re"},
      {"slurm.scheduler", "queue", "", R"re(PENDING)re"},
      {"slurm.slurmd", "nodes", "", R"re((?i)"state":"[a-z+]*(down|not_responding|no_respond|\*))re"},
      {"slurm.slurmd", "logs", "slurmctld", R"re((?i)(not responding|nodes? .{0,40}down))re"},
  };
  return kRules;
}

class Runner {
 public:
  Runner(std::string name, ToolSet* tools, Transcript* transcript)
      : name_(std::move(name)), tools_(tools), transcript_(transcript),
        start_(std::chrono::steady_clock::now()) {}

  double Write(const std::string& event, Json fields) {
    return transcript_ ? transcript_->Write(name_, event, std::move(fields)) : Now();
  }
  double Now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  // The text of one slurm_query (cached); tool errors are text too, and say NO EVIDENCE.
  const std::string& Query(const std::string& topic, const std::string& daemon) {
    std::string key = topic + "|" + daemon;
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    Json args = {{"topic", topic}};
    if (!daemon.empty()) args["filters"] = {{"daemon", daemon}};
    std::string id = "ref-" + std::to_string(++calls_);
    Write("tool_call", {{"id", id}, {"name", "slurm_query"}, {"arguments", args}});
    double t0 = Now();
    ToolResult r = tools_->Call("slurm_query", args);
    Write("tool_result", {{"id", id},
                          {"name", "slurm_query"},
                          {"bytes", r.text.size()},
                          {"is_error", r.is_error},
                          {"duration_s", Now() - t0},
                          {"text", r.text.substr(0, 4096)}});
    if (r.is_error && r.text.find("NO EVIDENCE") == std::string::npos) {
      r.text = "NO EVIDENCE: " + r.text;
    }
    return cache_[key] = r.text;
  }

  bool HasEvidence(const std::string& component) {
    for (const EvidenceRule& e : EvidenceRules()) {
      if (component != e.component) continue;
      const std::string& text = Query(e.topic, e.daemon);
      if (RE2::PartialMatch(text, RE2(e.pattern))) return true;
    }
    return false;
  }

  RunResult Finish(Diagnosis d) {
    RunResult r;
    r.finished = true;
    r.diagnosis = std::move(d);
    r.end_reason = "submitted";
    r.tool_calls = calls_;
    double t = Write("submit", {{"valid", true}, {"answer", DiagnosisToJson(r.diagnosis)}});
    r.time_to_hypothesis_s = t - ticket_t_;
    r.wall_s = Now();
    Write("end", {{"reason", r.end_reason}, {"turns", 0}, {"input_tokens", 0},
                  {"output_tokens", 0}, {"tool_calls", calls_}, {"wall_s", r.wall_s}});
    return r;
  }

  void Ticket(const std::string& ticket) {
    Write("start", {{"backend", "reference:" + name_}});
    ticket_t_ = Write("ticket", {{"text", ticket}});
  }

  int calls() const { return calls_; }

 private:
  std::string name_;
  ToolSet* tools_;
  Transcript* transcript_;
  std::chrono::steady_clock::time_point start_;
  std::map<std::string, std::string> cache_;
  int calls_ = 0;
  double ticket_t_ = 0;
};

}  // namespace

std::string TicketGuess(const std::string& ticket) {
  for (const TicketRule& r : TicketRules()) {
    if (RE2::PartialMatch(ticket, RE2(r.pattern))) return r.component;
  }
  return "slurm.slurmctld";
}

RunResult RunReference(const std::string& which, ToolSet* tools, const graph::Graph* graph,
                       const std::string& ticket, Transcript* transcript) {
  Runner run(which, tools, transcript);
  run.Ticket(ticket);
  std::string reported = TicketGuess(ticket);
  Diagnosis d;
  if (which == "ticketonly") {
    d.root_cause = reported;
    d.confidence = 0.5;
    d.rationale = "the ticket's words point at " + reported + " (no tool was used)";
    return run.Finish(d);
  }
  if (which == "folk") {
    static const std::vector<std::pair<std::string, std::string>> kLogs = {
        {"slurmctld", "slurm.slurmctld"}, {"slurmdbd", "slurm.slurmdbd"}, {"slurmd", "slurm.slurmd"}};
    RE2 error(R"re((?i)"message":"[^"]*error)re");
    int best = 0;
    std::string blamed;
    for (const auto& [daemon, component] : kLogs) {
      std::string text = run.Query("logs", daemon);
      re2::StringPiece in(text);
      int n = 0;
      while (RE2::FindAndConsume(&in, error)) ++n;
      if (n > best) {
        best = n;
        blamed = component;
      }
    }
    d.root_cause = best > 0 ? blamed : reported;
    d.confidence = 0.7;
    d.rationale = best > 0 ? std::to_string(best) + " error lines in the log of " + blamed
                           : "no error in the logs; the ticket names " + reported;
    d.actions_proposed = {"restart:" + d.root_cause};
    return run.Finish(d);
  }
  // graphwalk
  std::string cur = reported;
  std::set<std::string> visited = {cur};
  std::vector<std::string> ruled_out;
  bool moved = false, ambiguous = false;
  while (graph) {
    std::vector<std::string> shown, quiet;
    for (const graph::Edge& e : graph->edges) {
      if (e.target != cur || visited.count(e.source)) continue;
      if (std::find(shown.begin(), shown.end(), e.source) != shown.end() ||
          std::find(quiet.begin(), quiet.end(), e.source) != quiet.end()) {
        continue;
      }
      (run.HasEvidence(e.source) ? shown : quiet).push_back(e.source);
    }
    for (const std::string& q : quiet) {
      bool observable = false;
      for (const EvidenceRule& r : EvidenceRules()) observable = observable || q == r.component;
      if (observable) ruled_out.push_back(q);  // no rule, no ruling out: absent evidence
    }
    if (shown.size() == 1) {
      cur = shown.front();
      visited.insert(cur);
      moved = true;
      continue;
    }
    ambiguous = shown.size() > 1;
    if (ambiguous) {
      d.rationale = "the evidence does not separate ";
      for (const std::string& s : shown) d.rationale += s + " ";
    }
    break;
  }
  if (ambiguous) {
    d.root_cause = "unknown";
    d.confidence = 0.3;
  } else if (moved) {
    d.root_cause = cur;
    d.confidence = 0.8;
    d.rationale = "walked up the graph from " + reported + " to " + cur + " on evidence";
  } else if (run.HasEvidence(cur)) {
    d.root_cause = cur;
    d.confidence = 0.5;
    d.rationale = cur + " shows evidence and nothing upstream does";
  } else {
    d.root_cause = "unknown";
    d.confidence = 0.2;
    d.rationale = "no evidence at " + cur + " or upstream of it";
  }
  std::sort(ruled_out.begin(), ruled_out.end());
  ruled_out.erase(std::unique(ruled_out.begin(), ruled_out.end()), ruled_out.end());
  d.ruled_out = ruled_out;
  if (d.root_cause != "unknown") d.actions_proposed = {"investigate:" + d.root_cause};
  return run.Finish(d);
}

}  // namespace slurm_rca::agents
