#include "mcp/protocol/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace slurm_rca::mcp {

namespace {

const char* TypeName(MetricRegistry::Type type) {
  switch (type) {
    case MetricRegistry::Type::kCounter:
      return "counter";
    case MetricRegistry::Type::kGauge:
      return "gauge";
    case MetricRegistry::Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// `{a="x",b="y"}` with `extra` (le) last; "" when there is no label with a value.
std::string LabelText(const MetricLabels& labels, const std::string& extra_name = "",
                      const std::string& extra_value = "") {
  std::string s;
  auto add = [&](const std::string& name, const std::string& value) {
    if (value.empty()) return;
    s += (s.empty() ? "{" : ",") + name + "=\"" + EscapeLabelValue(value) + "\"";
  };
  for (const auto& [name, value] : labels) add(name, value);
  if (!extra_name.empty()) add(extra_name, extra_value);
  return s.empty() ? s : s + "}";
}

// The process's start as Unix seconds: /proc/self/stat's starttime (clock ticks after boot) plus
// /proc/stat's btime; now when either cannot be read.
double ProcessStartTime() {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces and parentheses: fields are counted after the
  // last ')', which ends field 2. starttime is field 22: 19 fields (3 to 21) come before it.
  std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return now;
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 0; i < 19 && rest >> field; ++i) {
  }
  unsigned long long ticks = 0;
  if (!(rest >> ticks)) return now;
  std::ifstream boot_file("/proc/stat");
  long long btime = -1;
  for (std::string line; std::getline(boot_file, line);) {
    if (line.rfind("btime ", 0) == 0) btime = std::atoll(line.c_str() + 6);
  }
  const long hz = ::sysconf(_SC_CLK_TCK);
  if (btime <= 0 || hz <= 0) return now;
  const double start =
      static_cast<double>(btime) + static_cast<double>(ticks) / static_cast<double>(hz);
  // A start in the future (a skewed btime) would read as nonsense: fall back to now.
  return start > now + 1 ? now : start;
}

const std::vector<double>& LatencyBuckets() {
  static const std::vector<double> buckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                              1,     2.5,  5,     10,   20,  30,   60};
  return buckets;
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", value);
    return buf;
  }
  // The shortest %g that reads back as the same double.
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

void MetricRegistry::Declare(const std::string& name, Type type, const std::string& help,
                             std::vector<double> buckets) {
  std::lock_guard<std::mutex> lock(mu_);
  if (FindLocked(name) != nullptr) return;
  std::sort(buckets.begin(), buckets.end());
  buckets.erase(
      std::remove_if(buckets.begin(), buckets.end(), [](double b) { return !std::isfinite(b); }),
      buckets.end());
  buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  families_.push_back(
      Family{name, type, help, type == Type::kHistogram ? buckets : std::vector<double>{}, {}});
}

MetricRegistry::Family* MetricRegistry::FindLocked(const std::string& name) {
  for (Family& f : families_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const MetricRegistry::Family* MetricRegistry::FindLocked(const std::string& name) const {
  for (const Family& f : families_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

void MetricRegistry::Add(const std::string& name, const MetricLabels& labels, double delta) {
  std::lock_guard<std::mutex> lock(mu_);
  Family* f = FindLocked(name);
  if (f == nullptr || f->type == Type::kHistogram) return;
  if (f->type == Type::kCounter && !(delta >= 0)) return;
  f->series[labels].value += delta;
}

void MetricRegistry::Set(const std::string& name, const MetricLabels& labels, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  Family* f = FindLocked(name);
  if (f == nullptr || f->type != Type::kGauge) return;
  f->series[labels].value = value;
}

void MetricRegistry::Observe(const std::string& name, const MetricLabels& labels, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  Family* f = FindLocked(name);
  if (f == nullptr || f->type != Type::kHistogram || std::isnan(value)) return;
  Series& s = f->series[labels];
  if (s.counts.empty()) s.counts.assign(f->buckets.size() + 1, 0);
  std::size_t i = 0;
  while (i < f->buckets.size() && value > f->buckets[i]) ++i;
  ++s.counts[i];
  s.sum += value;
  ++s.count;
}

double MetricRegistry::Value(const std::string& name, const MetricLabels& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Family* f = FindLocked(name);
  if (f == nullptr) return 0;
  auto it = f->series.find(labels);
  if (it == f->series.end()) return 0;
  return f->type == Type::kHistogram ? static_cast<double>(it->second.count) : it->second.value;
}

std::string MetricRegistry::Render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const Family& f : families_) {
    out += "# HELP " + f.name + " " + EscapeHelp(f.help) + "\n";
    out += "# TYPE " + f.name + " " + TypeName(f.type) + "\n";
    for (const auto& [labels, s] : f.series) {
      if (f.type != Type::kHistogram) {
        out += f.name + LabelText(labels) + " " + FormatSampleValue(s.value) + "\n";
        continue;
      }
      std::uint64_t cumulative = 0;
      for (std::size_t i = 0; i <= f.buckets.size(); ++i) {
        cumulative += s.counts[i];
        const std::string le = i < f.buckets.size() ? FormatSampleValue(f.buckets[i]) : "+Inf";
        out += f.name + "_bucket" + LabelText(labels, "le", le) + " " + std::to_string(cumulative) +
               "\n";
      }
      out += f.name + "_sum" + LabelText(labels) + " " + FormatSampleValue(s.sum) + "\n";
      out += f.name + "_count" + LabelText(labels) + " " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

Metrics::Metrics(std::string version, std::string revision) {
  using T = MetricRegistry::Type;
  MetricRegistry& r = registry_;
  r.Declare(kToolCallsTotal, T::kCounter,
            "MCP tool calls by tool, topic and outcome (ok, no_evidence with its cause, refused "
            "by the guard with its rule id, error).");
  r.Declare(kToolCallSeconds, T::kHistogram, "Tool call latency in seconds, by tool.",
            LatencyBuckets());
  r.Declare(kCacheHitsTotal, T::kCounter,
            "Live reads answered from the evidence cache (no process started).");
  r.Declare(kCacheMissesTotal, T::kCounter,
            "Live reads the evidence cache could not answer (the cache is on).");
  r.Declare(kReadsStartedTotal, T::kCounter,
            "Slurm (and nvidia-smi) processes started, by program.");
  r.Declare(kReadsInFlight, T::kGauge, "Slurm (and nvidia-smi) processes running now.");
  r.Declare(kReadSeconds, T::kHistogram,
            "Latency of Slurm (and nvidia-smi) processes in seconds, by program, whatever their "
            "outcome.",
            LatencyBuckets());
  r.Declare(kSingleFlightMergesTotal, T::kCounter,
            "Live reads that joined an identical read already in flight instead of starting one.");
  r.Declare(kBudgetRefusalsTotal, T::kCounter,
            "Live reads refused to spare slurmctld, by limit (per_minute: the rate budget; "
            "concurrent: no read slot came free in time).");
  r.Declare(kHttpConnectionsOpen, T::kGauge,
            "Streamable HTTP connections accepted and not yet closed (refused ones aside).");
  r.Declare(kHttpRequestsRejectedTotal, T::kCounter,
            "Streamable HTTP requests refused by the Host, Origin or bearer-token check, and "
            "connections refused past a connection cap (503), by HTTP status.");
  r.Declare(kProcessStartTime, T::kGauge, "Start time of the process since unix epoch in seconds.");
  r.Declare(kBuildInfo, T::kGauge,
            "The version and git revision slurm-mcp was built from; always 1.");
  // Series without labels exist from the start, at zero.
  for (const char* name : {kCacheHitsTotal, kCacheMissesTotal, kSingleFlightMergesTotal}) {
    r.Add(name, {}, 0);
  }
  r.Set(kReadsInFlight, {}, 0);
  r.Set(kProcessStartTime, {}, ProcessStartTime());
  r.Set(kBuildInfo, {{"version", std::move(version)}, {"revision", std::move(revision)}}, 1);
}

void Metrics::ToolCall(const std::string& tool, const std::string& topic,
                       const CallOutcome& outcome, double seconds) {
  registry_.Add(kToolCallsTotal, {{"tool", tool},
                                  {"topic", topic},
                                  {"outcome", outcome.outcome},
                                  {"cause", outcome.cause},
                                  {"rule", outcome.rule}});
  registry_.Observe(kToolCallSeconds, {{"tool", tool}}, seconds);
}

void Metrics::CacheHit() { registry_.Add(kCacheHitsTotal, {}); }
void Metrics::CacheMiss() { registry_.Add(kCacheMissesTotal, {}); }
void Metrics::SingleFlightMerge() { registry_.Add(kSingleFlightMergesTotal, {}); }
void Metrics::BudgetRefusal(const std::string& limit) {
  registry_.Add(kBudgetRefusalsTotal, {{"limit", limit}});
}

void Metrics::ReadStarted(const std::string& program) {
  registry_.Add(kReadsStartedTotal, {{"program", program}});
  registry_.Add(kReadsInFlight, {}, 1);
}

void Metrics::ReadFinished(const std::string& program, double seconds) {
  registry_.Add(kReadsInFlight, {}, -1);
  registry_.Observe(kReadSeconds, {{"program", program}}, seconds);
}

void Metrics::HttpConnectionOpened() { registry_.Add(kHttpConnectionsOpen, {}, 1); }
void Metrics::HttpConnectionClosed() { registry_.Add(kHttpConnectionsOpen, {}, -1); }
void Metrics::HttpRequestRejected(int status) {
  registry_.Add(kHttpRequestsRejectedTotal, {{"code", std::to_string(status)}});
}

std::string Metrics::Render() const { return registry_.Render(); }

}  // namespace slurm_rca::mcp
