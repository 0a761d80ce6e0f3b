#include "mcp/topics/overview.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mcp/topics/provenance.h"

namespace slurm_rca::mcp {
namespace {

// Bounds of each list; what a list leaves out is counted ("and N more").
constexpr std::size_t kMaxUnavailableGroups = 12;
constexpr std::size_t kMaxListed = 8;          // states, reasons, partitions, RPC users
constexpr std::size_t kMaxReasonChars = 80;
constexpr std::size_t kMaxHostlistChars = 100;
constexpr std::size_t kMaxCauseChars = 240;

const std::vector<std::string> kRichNodesArgv = {"sinfo", "--noheader", "-N", "-o",
                                                 "%N|%P|%T|%C|%G|%a|%H|%E"};

// The nodes topic with the partition's availability and the reason's time: what the overview
// reads live. Its name is the nodes topic's, so it groups with the same sums.
const Topic& RichNodesTopic() {
  static const Topic topic = [] {
    Topic t = *FindTopic("nodes");
    t.argv = kRichNodesArgv;
    t.columns = {{"node", "node name"},
                 {"partition", "partition; the default one ends with '*'"},
                 {"state", "extended node state"},
                 {"cpus", "CPUs allocated/idle/other/total"},
                 {"gres", "configured generic resources"},
                 {"avail", "the partition's state: up, down, drain, inact"},
                 {"since", "when the reason was set (Unknown when none)"},
                 {"reason", "why the node is unavailable; none when healthy"}};
    return t;
  }();
  return topic;
}

// States in which a node serves jobs; every other one is listed as an anomaly.
bool Healthy(const std::string& state) {
  static const std::set<std::string> kHealthy = {"idle", "allocated", "mixed", "completing",
                                                 "planned"};
  return kHealthy.count(state) > 0;
}

std::string Cut(const std::string& s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

// Nodes an expression of CompressHostlist's form names: "a[1-3,7],b5" -> 5.
std::size_t CountHostlist(const std::string& expr) {
  std::size_t count = 0, i = 0;
  while (i < expr.size()) {
    std::size_t open = expr.find('[', i), comma = expr.find(',', i);
    if (open == std::string::npos || (comma != std::string::npos && comma < open)) {
      ++count;
      if (comma == std::string::npos) break;
      i = comma + 1;
      continue;
    }
    std::size_t close = expr.find(']', open);
    if (close == std::string::npos) close = expr.size();
    std::string ranges = expr.substr(open + 1, close - open - 1);
    std::size_t start = 0;
    while (start <= ranges.size()) {
      std::size_t end = ranges.find(',', start);
      if (end == std::string::npos) end = ranges.size();
      std::string range = ranges.substr(start, end - start);
      std::size_t dash = range.find('-');
      if (!range.empty()) {
        if (dash == std::string::npos) {
          ++count;
        } else {
          std::uint64_t lo = std::stoull(range.substr(0, dash));
          std::uint64_t hi = std::stoull(range.substr(dash + 1));
          count += hi >= lo ? hi - lo + 1 : 1;
        }
      }
      start = end + 1;
    }
    i = close + 2;  // past "]" and the ","
  }
  return count;
}

// The hostlist cut to about max characters at a range boundary, still a valid expression of the
// first nodes, and how many nodes it names.
std::pair<std::string, std::size_t> ShortHostlist(const std::string& expr, std::size_t max) {
  if (expr.size() <= max) return {expr, CountHostlist(expr)};
  std::size_t cut = expr.rfind(',', max);
  if (cut == std::string::npos || cut == 0) cut = expr.find(',');
  if (cut == std::string::npos) return {expr, CountHostlist(expr)};
  std::string kept = expr.substr(0, cut);
  // Inside a bracket: close it.
  if (kept.rfind('[') != std::string::npos &&
      (kept.rfind(']') == std::string::npos || kept.rfind(']') < kept.rfind('['))) {
    kept += "]";
  }
  return {kept, CountHostlist(kept)};
}

Caps Unbounded() {
  return Caps{.max_rows = std::numeric_limits<std::size_t>::max(),
              .max_bytes = std::numeric_limits<std::size_t>::max()};
}

Parsed Grouped(const Topic& topic, const Evidence& e, std::vector<std::string> group_by) {
  ParseOptions options;
  options.output_cut = e.out_truncated;
  options.output_bytes = e.out_bytes;
  options.group_by = std::move(group_by);
  return Parse(topic, e.out, Unbounded(), {}, options);
}

std::string Plural(std::uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// ProvenanceJson, and the cause of a read without evidence, bounded.
Json Provenance(const std::string& topic, const Evidence& e) {
  Json j = ProvenanceJson(topic, e);
  if (!e.ok()) j["cause"] = Cut(e.cause, kMaxCauseChars);
  return j;
}

std::string Label(const Evidence& e) {
  return "[" + e.source + ", " + e.evidence_time + (e.cached ? ", cached" : "") + "]";
}

// "a 3, b 2 (and 4 more, 9 in all)" from (name, count) pairs ordered by count.
std::string Listing(const std::vector<std::pair<std::string, std::uint64_t>>& items) {
  std::string out;
  std::uint64_t rest = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i < kMaxListed) {
      out += (i ? ", " : "") + items[i].first + " " + std::to_string(items[i].second);
    } else {
      rest += items[i].second;
    }
  }
  if (items.size() > kMaxListed) {
    out += " (and " + std::to_string(items.size() - kMaxListed) + " more, " +
           std::to_string(rest) + " in all)";
  }
  return out.empty() ? "none" : out;
}

struct Builder {
  std::vector<std::string> anomalies;
  std::vector<std::string> lines;  // the sections' text, after the anomalies
  Json sections = Json::array();
  std::string headline;
};

void SummarizeNodes(const Evidence& e, Builder& b) {
  Json section = Provenance("nodes", e);
  if (!e.ok()) {
    b.anomalies.push_back("NO EVIDENCE for nodes (" + std::string(OutcomeName(e.outcome)) +
                          "): " + Cut(e.cause, kMaxCauseChars));
    b.sections.push_back(std::move(section));
    return;
  }
  const bool rich = e.argv == kRichNodesArgv;
  const Topic& topic = rich ? RichNodesTopic() : *FindTopic("nodes");
  const std::string lower = e.out_truncated ? "at least " : "";
  if (e.out_truncated) {
    b.anomalies.push_back("nodes: sinfo's output was cut at " + std::to_string(e.out.size()) +
                          " bytes: the node counts are lower bounds");
  }
  // Nodes by state (a node listed in two partitions counts once per state).
  Parsed by_state = Grouped(topic, e, {"state"});
  std::uint64_t nodes = 0;
  std::vector<std::pair<std::string, std::uint64_t>> states;
  Json state_json = Json::array();
  for (const Json& g : by_state.groups) {
    std::uint64_t n = g["node_count"].get<std::uint64_t>();
    nodes += n;
    states.emplace_back(g["state"].get<std::string>(), n);
    state_json.push_back({{"state", g["state"]}, {"nodes", n}});
  }
  if (state_json.size() > kMaxListed * 2) state_json.erase(state_json.begin() + kMaxListed * 2, state_json.end());
  // When each reason was set: the earliest time sinfo gives for it.
  std::map<std::string, std::string> since;
  if (rich) {
    Parsed times = Grouped(topic, e, {"reason", "since"});
    for (const Json& g : times.groups) {
      const std::string t = g["since"].get<std::string>();
      if (t.empty() || t == "Unknown" || t == "None") continue;
      auto [it, added] = since.emplace(g["reason"].get<std::string>(), t);
      if (!added && t < it->second) it->second = t;
    }
  }
  // Every unavailable state and reason, in count order; all are counted, the first listed.
  Parsed by_reason = Grouped(topic, e, {"state", "reason"});
  Json unavailable = Json::array();
  std::size_t groups = 0, unlisted_nodes = 0, unavailable_nodes = 0;
  for (const Json& g : by_reason.groups) {
    const std::string state = g["state"].get<std::string>();
    if (Healthy(state)) continue;
    ++groups;
    const std::size_t n = g["node_count"].get<std::size_t>();
    unavailable_nodes += n;
    if (unavailable.size() >= kMaxUnavailableGroups) {
      unlisted_nodes += n;
      continue;
    }
    const std::string reason = g["reason"].get<std::string>();
    auto [hosts, shown] = ShortHostlist(g["hostlist"].get<std::string>(), kMaxHostlistChars);
    Json u = {{"state", state},
              {"reason", Cut(reason, kMaxReasonChars)},
              {"nodes", n},
              {"hostlist", hosts}};
    if (shown < n) u["hostlist_nodes"] = shown;
    auto t = since.find(reason);
    if (t != since.end()) u["since"] = t->second;
    std::string line = state + ": " + Plural(n, "node", "nodes") + " " + hosts +
                       (shown < n ? " (first " + std::to_string(shown) + ")" : "") +
                       ", reason \"" + Cut(reason, kMaxReasonChars) + "\"" +
                       (t != since.end() ? " since " + t->second : "");
    b.anomalies.push_back(line);
    unavailable.push_back(std::move(u));
  }
  if (groups > unavailable.size()) {
    b.anomalies.push_back("and " + std::to_string(groups - unavailable.size()) +
                          " more unavailable state/reason groups (" +
                          Plural(unlisted_nodes, "node", "nodes") +
                          "): slurm_query nodes group_by [state, reason]");
  }
  // Partitions whose state is not up (only the rich read carries it).
  Json not_up = Json::array();
  std::size_t partitions = 0;
  if (rich) {
    Parsed avail = Grouped(topic, e, {"partition", "avail"});
    std::set<std::string> seen;
    for (const Json& g : avail.groups) {
      std::string p = g["partition"].get<std::string>();
      if (!p.empty() && p.back() == '*') p.pop_back();
      seen.insert(p);
      const std::string a = g["avail"].get<std::string>();
      if (a == "up") continue;
      if (not_up.size() < kMaxListed) not_up.push_back({{"partition", p}, {"state", a}});
      b.anomalies.push_back("partition " + p + " is " + a + " (not up): its jobs do not start");
    }
    partitions = seen.size();
  }
  section["summary"] = {{"nodes", nodes},
                        {"rows", by_state.total_rows},
                        {"by_state", state_json},
                        {"unavailable", unavailable},
                        {"unavailable_groups", groups},
                        {"unavailable_nodes", unavailable_nodes},
                        {"more", "slurm_query nodes with group_by [state, reason] or filters "
                                 "{state, partition, node}"}};
  if (e.out_truncated) section["summary"]["nodes_is_lower_bound"] = true;
  if (rich) {
    section["summary"]["partitions"] = partitions;
    section["summary"]["partitions_not_up"] = not_up;
  }
  b.headline += lower + Plural(nodes, "node", "nodes") + " (" +
                std::to_string(unavailable_nodes) + " unavailable)";
  b.lines.push_back("NODES " + Label(e) + " " + lower + Plural(nodes, "node", "nodes") + " in " +
                    Plural(by_state.total_rows, "row", "rows") + ": " + Listing(states));
  if (rich) {
    b.lines.push_back("PARTITIONS " + std::to_string(partitions) + ": " +
                      (not_up.empty() ? std::string("all up") : "not up listed above") +
                      " (partitions that hold a node: what sinfo -N lists)");
  }
  b.lines.push_back("  more: slurm_query nodes with group_by [state, reason], or filters state, "
                    "partition, node");
  b.sections.push_back(std::move(section));
}

void SummarizeQueue(const Evidence& e, Builder& b) {
  Json section = Provenance("queue", e);
  if (!e.ok()) {
    b.anomalies.push_back("NO EVIDENCE for queue (" + std::string(OutcomeName(e.outcome)) +
                          "): " + Cut(e.cause, kMaxCauseChars));
    b.sections.push_back(std::move(section));
    return;
  }
  const Topic& topic = *FindTopic("queue");
  const std::string lower = e.out_truncated ? "at least " : "";
  if (e.out_truncated) {
    b.anomalies.push_back("queue: squeue's output was cut at " + std::to_string(e.out.size()) +
                          " bytes: the job counts are lower bounds");
  }
  Parsed by_state = Grouped(topic, e, {"state"});
  std::uint64_t jobs = 0;
  std::vector<std::pair<std::string, std::uint64_t>> states;
  Json state_json = Json::array();
  for (const Json& g : by_state.groups) {
    jobs += g["jobs"].get<std::uint64_t>();
    states.emplace_back(g["state"].get<std::string>(), g["jobs"].get<std::uint64_t>());
    if (state_json.size() < kMaxListed * 2) {
      state_json.push_back({{"state", g["state"]}, {"rows", g["count"]}, {"jobs", g["jobs"]}});
    }
  }
  auto pending_by = [&](const std::string& column, Json* listed) {
    Parsed p = Grouped(topic, e, {"state", column});
    std::vector<std::pair<std::string, std::uint64_t>> items;
    for (const Json& g : p.groups) {
      if (g["state"] != "PENDING") continue;
      items.emplace_back(g[column].get<std::string>(), g["jobs"].get<std::uint64_t>());
    }
    std::stable_sort(items.begin(), items.end(),
                     [](const auto& a, const auto& c) { return a.second > c.second; });
    *listed = Json::array();
    for (std::size_t i = 0; i < items.size() && i < kMaxListed; ++i) {
      listed->push_back({{column, Cut(items[i].first, kMaxReasonChars)}, {"jobs", items[i].second}});
    }
    for (auto& item : items) item.first = Cut(item.first, kMaxReasonChars);
    return std::make_pair(Listing(items), items.size());
  };
  Json reasons, partitions;
  auto [reason_text, reason_count] = pending_by("reason", &reasons);
  auto [partition_text, partition_count] = pending_by("partition", &partitions);
  section["summary"] = {{"rows", by_state.total_rows},
                        {"jobs", jobs},
                        {"by_state", state_json},
                        {"pending_by_reason", reasons},
                        {"pending_reasons", reason_count},
                        {"pending_by_partition", partitions},
                        {"pending_partitions", partition_count},
                        {"more", "slurm_query queue with group_by [state, reason] or "
                                 "[partition, user], or filters"}};
  if (e.out_truncated) section["summary"]["jobs_is_lower_bound"] = true;
  b.headline += "; " + lower + Plural(jobs, "job", "jobs");
  b.lines.push_back("JOBS " + Label(e) + " " + lower + Plural(jobs, "job", "jobs") + " (" +
                    lower + Plural(by_state.total_rows, "row", "rows") +
                    "; a pending array's row counts each task): " + Listing(states));
  b.lines.push_back("  pending by reason: " + reason_text);
  b.lines.push_back("  pending by partition: " + partition_text);
  b.lines.push_back("  more: slurm_query queue with group_by [state, reason] or [partition, "
                    "user], or filters user, partition, state, account, node");
  b.sections.push_back(std::move(section));
}

void SummarizeDiagnostics(const Evidence& e, Builder& b) {
  Json section = Provenance("diagnostics", e);
  if (!e.ok()) {
    b.anomalies.push_back("NO EVIDENCE for diagnostics (" + std::string(OutcomeName(e.outcome)) +
                          "): " + Cut(e.cause, kMaxCauseChars));
    b.sections.push_back(std::move(section));
    return;
  }
  Parsed p = Parse(*FindTopic("diagnostics"), e.out, Unbounded());
  std::map<std::string, Json> figures;
  for (const Json& row : p.rows) figures[row["figure"].get<std::string>()] = row["value"];
  // sdiag's own labels, so that what a reader knows from sdiag reads the same here.
  static const std::vector<std::pair<std::string, std::string>> kHeadline = {
      {"server_thread_count", "Server thread count"},
      {"agent_queue_size", "Agent queue size"},
      {"dbd_agent_queue_size", "DBD Agent queue size"},
      {"jobs_pending", "Jobs pending"},
      {"jobs_running", "Jobs running"},
      {"main_last_cycle", "main Last cycle"},
      {"main_mean_cycle", "main Mean cycle"},
      {"main_max_cycle", "main Max cycle"},
      {"backfill_last_cycle", "backfill Last cycle"},
      {"backfill_max_cycle", "backfill Max cycle"},
      {"backfill_last_depth_cycle", "backfill Last depth cycle"}};
  Json headline = Json::object();
  std::string text;
  for (const auto& [figure, label] : kHeadline) {
    auto it = figures.find(figure);
    if (it == figures.end()) continue;
    headline[figure] = it->second;
    text += (text.empty() ? "" : ", ") + label + ": " + it->second.dump();
  }
  auto dbd = figures.find("dbd_agent_queue_size");
  if (dbd != figures.end() && dbd->second.is_number() && dbd->second.get<double>() > 0) {
    // An observation, not a verdict: a queue that stays or grows is an accounting backlog.
    b.anomalies.push_back("sdiag: DBD Agent queue size: " + dbd->second.dump() +
                          " (messages waiting for slurmdbd; one that stays or grows is an "
                          "accounting backlog)");
  }
  // The top RPC users: sdiag's "by user" table.
  static const RE2 kUser(R"(\s+(\S+)\s+\(\s*(\d+)\)\s+count:(\d+)\s+ave_time:(\d+)\s+total_time:(\d+)\s*)");
  std::vector<std::tuple<std::uint64_t, std::string, std::uint64_t>> users;
  bool in_users = false;
  std::size_t start = 0;
  const std::string& out = e.out;
  while (start < out.size()) {
    std::size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(start, end - start);
    start = end + 1;
    if (line.rfind("Remote Procedure Call statistics by user", 0) == 0) {
      in_users = true;
      continue;
    }
    if (!in_users) continue;
    if (line.empty() || (line[0] != '\t' && line[0] != ' ')) break;
    std::string user, uid, count, ave, total;
    if (RE2::FullMatch(line, kUser, &user, &uid, &count, &ave, &total)) {
      users.emplace_back(std::stoull(count), user, std::stoull(ave));
    }
  }
  std::sort(users.rbegin(), users.rend());
  Json top = Json::array();
  std::string user_text;
  for (std::size_t i = 0; i < users.size() && i < 3; ++i) {
    auto& [count, user, ave] = users[i];
    top.push_back({{"user", Cut(user, 64)}, {"count", count}, {"ave_time_us", ave}});
    user_text += (i ? ", " : "") + Cut(user, 64) + " " + std::to_string(count) + " (ave " +
                 std::to_string(ave) + " us)";
  }
  headline["top_rpc_users"] = top;
  section["summary"] = headline;
  section["summary"]["more"] = "slurm_query diagnostics (the whole sdiag: RPCs by type and user)";
  b.lines.push_back("SCHEDULER " + Label(e) + " sdiag (cycles in microseconds): " +
                    (text.empty() ? "no figures" : text) +
                    "; top RPC users: " + (user_text.empty() ? "none listed" : user_text));
  b.lines.push_back("  more: slurm_query diagnostics");
  b.sections.push_back(std::move(section));
}

std::string Render(const Builder& b, const std::string& source) {
  std::string text = "slurm_overview (" + source + "): " + b.headline + "\n";
  text += b.anomalies.empty() ? "ANOMALIES: none seen\n" : "ANOMALIES\n";
  for (const std::string& a : b.anomalies) text += "- " + a + "\n";
  for (const std::string& l : b.lines) text += l + "\n";
  return text;
}

}  // namespace

const std::vector<OverviewRead>& OverviewReads() {
  static const std::vector<OverviewRead> reads = {
      {"nodes", kRichNodesArgv, DefaultArgv(*FindTopic("nodes"))},
      {"queue", DefaultArgv(*FindTopic("queue")), {}},
      {"diagnostics", DefaultArgv(*FindTopic("diagnostics")), {}},
  };
  return reads;
}

OverviewSummary SummarizeOverview(const std::vector<Evidence>& reads, const std::string& source) {
  Builder b;
  for (std::size_t i = 0; i < reads.size() && i < OverviewReads().size(); ++i) {
    const std::string& topic = OverviewReads()[i].topic;
    if (topic == "nodes") SummarizeNodes(reads[i], b);
    if (topic == "queue") SummarizeQueue(reads[i], b);
    if (topic == "diagnostics") SummarizeDiagnostics(reads[i], b);
  }
  if (reads.size() < OverviewReads().size()) b.anomalies.push_back("the call was cancelled");
  OverviewSummary s;
  s.structured = {{"source", source}, {"anomalies", b.anomalies}, {"sections", b.sections}};
  s.text = Render(b, source);
  // The lists are bounded so that this never binds at any cluster size; should a pathological
  // answer (reasons and names at their longest) still pass the bound, anomalies are dropped from
  // the end and counted, never cut mid-line.
  std::size_t dropped = 0;
  while ((s.text.size() > kOverviewMaxBytes ||
          s.structured.dump(-1, ' ', false, Json::error_handler_t::replace).size() >
              kOverviewMaxBytes) &&
         !b.anomalies.empty()) {
    b.anomalies.pop_back();
    ++dropped;
    Builder shorter = b;
    shorter.anomalies.push_back(std::to_string(dropped) +
                                " more anomalies left out to keep the answer small: "
                                "slurm_query nodes group_by [state, reason]");
    for (Json& section : shorter.sections) {
      if (section.contains("summary") && section["summary"].contains("unavailable") &&
          !section["summary"]["unavailable"].empty() && dropped > 0) {
        Json& u = section["summary"]["unavailable"];
        const std::size_t keep = u.size() > dropped ? u.size() - dropped : 0;
        u.erase(u.begin() + static_cast<std::ptrdiff_t>(keep), u.end());
      }
    }
    s.structured = {{"source", source},
                    {"anomalies", shorter.anomalies},
                    {"sections", shorter.sections}};
    s.text = Render(shorter, source);
  }
  return s;
}

Json OverviewSchema() {
  // Kept small: tools/list is read by every agent. The summaries are described in overview.h and
  // answer for themselves (each has `more`).
  return {{"type", "object"},
          {"properties",
           {{"source", {{"type", "string"}}},
            {"anomalies", {{"type", "array"}, {"items", {{"type", "string"}}}}},
            {"sections",
             {{"type", "array"},
              {"items",
               {{"type", "object"},
                {"properties",
                 {{"topic", {{"type", "string"}}},
                  {"outcome", {{"type", "string"}}},
                  {"evidence_time", {{"type", "string"}}},
                  {"summary", {{"type", "object"}}}}},
                {"required", {"topic", "outcome", "evidence_time"}}}}}}}},
          {"required", {"source", "anomalies", "sections"}}};
}

}  // namespace slurm_rca::mcp
