#include "mcp/telemetry/gpu_idle.h"

#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <set>
#include <string_view>
#include <utility>

#include "base/time.h"
#include "mcp/telemetry/text.h"

namespace slurm_rca::mcp {

using base::Status;

namespace {

using Json = nlohmann::json;

std::vector<std::string_view> Lines(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::string_view l : SplitFields(s, '\n')) {
    if (!TrimBlanks(l).empty()) out.push_back(l);
  }
  return out;
}

std::string Clip(std::string_view s, size_t n) {
  std::string out;
  for (char c : s.substr(0, n)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return s.size() > n ? out + "..." : out;
}

// A raw nvidia-smi value as a number in [lo, hi], or why it is not one.
base::Result<double> ReadNumber(std::string_view raw, double lo, double hi) {
  raw = TrimBlanks(raw);
  if (raw.empty()) return Status::InvalidArgument("empty");
  if (raw.front() == '[') {
    return Status::InvalidArgument(Clip(raw, 40) + ": nvidia-smi reports no value");
  }
  std::string lower;
  for (char c : raw) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower == "n/a" || lower == "na") {
    return Status::InvalidArgument(std::string(raw) + ": not available");
  }
  static const RE2 kNumber("-?[0-9]{1,12}(\\.[0-9]{1,12})?");
  if (!RE2::FullMatch(raw, kNumber))
    return Status::InvalidArgument(Clip(raw, 40) + ": not a number");
  double d = std::strtod(std::string(raw).c_str(), nullptr);
  if (!std::isfinite(d) || d < lo || d > hi) {
    return Status::InvalidArgument(Clip(raw, 40) + ": out of range");
  }
  return d;
}

}  // namespace

base::Status ValidateGpuIdleOptions(const GpuIdleOptions& o) {
  if (!(o.interval > 0 && o.interval < o.max_sample_gap && o.max_sample_gap < o.window)) {
    return Status::InvalidArgument("need 0 < interval < max_sample_gap < window");
  }
  if (o.min_samples < 1 || o.min_samples * o.interval > o.window) {
    return Status::InvalidArgument("need 1 <= min_samples and min_samples * interval <= window");
  }
  if (!(o.util_pct > 0 && o.util_pct <= 100)) {
    return Status::InvalidArgument("util_pct must be in (0, 100]");
  }
  if (!(o.mem_held_fraction >= 0 && o.mem_held_fraction <= 1)) {
    return Status::InvalidArgument("mem_held_fraction must be in [0, 1]");
  }
  if (o.warmup < 0 || o.idle_power_watts < 0) {
    return Status::InvalidArgument("warmup and idle_power_watts must be >= 0");
  }
  return Status();
}

std::vector<std::string> GpuIdleDeviceArgv() {
  return {"nvidia-smi",
          "--query-gpu=index,uuid,utilization.gpu,memory.used,memory.total,power.draw,"
          "mig.mode.current",
          "--format=csv,noheader,nounits"};
}

std::vector<std::string> GpuIdleProcessArgv() {
  return {"nvidia-smi", "--query-compute-apps=gpu_uuid,pid", "--format=csv,noheader,nounits"};
}

Observation FailedObservation(const std::string& node, std::int64_t time, std::string source,
                              std::string why) {
  Observation o;
  o.node = node;
  o.time = time;
  o.source = std::move(source);
  o.ok = false;
  o.failure = std::move(why);
  return o;
}

namespace {

std::string ReadFailure(const Evidence& e) {
  std::string s = std::string(OutcomeName(e.outcome));
  if (e.outcome == Evidence::Outcome::kFailed) s += " (exit " + std::to_string(e.exit_code) + ")";
  if (!e.cause.empty()) s += ": " + Clip(e.cause, 300);
  return s;
}

}  // namespace

Observation ParseNvidiaSmiSample(const std::string& node, std::int64_t time,
                                 const Evidence& device, const Evidence& processes) {
  auto fail = [&](const std::string& why) {
    return FailedObservation(node, time, "nvidia-smi",
                             why + " (no evidence: neither an idle nor a busy GPU)");
  };
  if (!device.ok()) return fail("device query " + ReadFailure(device));
  std::vector<std::string_view> lines = Lines(device.out);
  if (lines.empty()) return fail("device query listed no GPU");
  Observation o;
  o.node = node;
  o.time = time;
  o.source = "nvidia-smi";
  o.ok = true;
  std::set<int> indexes;
  for (std::string_view line : lines) {
    std::vector<std::string_view> cells = SplitFields(line, ',');
    if (cells.size() != 7) {
      return fail("device row has " + std::to_string(cells.size()) + " columns, expected 7: " +
                  Clip(line, 120));
    }
    static const RE2 kIndex("[0-9]{1,4}");
    base::Result<double> index = ReadNumber(cells[0], 0, 1023);
    if (!RE2::FullMatch(TrimBlanks(cells[0]), kIndex) || !index.ok() ||
        !indexes.insert(static_cast<int>(*index)).second) {
      return fail("device row has a bad or repeated index: " + Clip(line, 120));
    }
    GpuSample g;
    g.index = static_cast<int>(*index);
    g.uuid = std::string(TrimBlanks(cells[1]));
    if (base::Result<double> util = ReadNumber(cells[2], 0, 100); util.ok()) {
      g.util_pct = *util;
    } else {
      g.unknown.push_back("util: " + util.status().message());
    }
    base::Result<double> used = ReadNumber(cells[3], 0, 4294967295.0);
    base::Result<double> total = ReadNumber(cells[4], 0, 4294967295.0);
    std::string mem_why;  // empty: both usable
    if (!used.ok()) {
      mem_why = used.status().message();
    } else if (!total.ok()) {
      mem_why = total.status().message();
    } else if (*total <= 0) {
      mem_why = "total is 0";
    } else if (*used > *total) {
      mem_why = "used exceeds total";
    }
    if (mem_why.empty()) {
      g.mem_used_mib = *used;
      g.mem_total_mib = *total;
    } else {
      g.unknown.push_back("memory: " + mem_why);
    }
    if (base::Result<double> power = ReadNumber(cells[5], 0, 1e5); power.ok()) {
      g.power_w = *power;
    } else {
      g.unknown.push_back("power: " + power.status().message());
    }
    std::string_view mig = TrimBlanks(cells[6]);
    std::string lower;
    for (char c : mig) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (!(mig == "Disabled" || mig == "[N/A]" || lower == "n/a" || mig == "[Not Supported]")) {
      g.mig = true;
      g.unknown.push_back("mig: " + Clip(mig, 40) + ": MIG enabled or unreadable, not judged");
    }
    o.gpus.push_back(std::move(g));
  }

  // Processes: a known empty list is zero; a failed or odd read leaves every GPU's unknown.
  std::string pid_failure;
  std::map<std::string, int> per_uuid;
  if (!processes.ok()) {
    pid_failure = "process query " + ReadFailure(processes);
  } else {
    static const RE2 kPid("[1-9][0-9]{0,9}");
    for (std::string_view line : Lines(processes.out)) {
      std::vector<std::string_view> cells = SplitFields(line, ',');
      if (cells.size() != 2 || !RE2::FullMatch(TrimBlanks(cells[1]), kPid)) {
        pid_failure = "process row is not gpu_uuid,pid: " + Clip(line, 120);
        break;
      }
      std::string uuid(TrimBlanks(cells[0]));
      bool known = std::any_of(o.gpus.begin(), o.gpus.end(),
                               [&](const GpuSample& g) { return g.uuid == uuid; });
      if (!known) {
        pid_failure = "process on a GPU the device query did not list: " + Clip(uuid, 60);
        break;
      }
      ++per_uuid[uuid];
    }
  }
  for (GpuSample& g : o.gpus) {
    if (pid_failure.empty()) {
      g.pids = per_uuid.count(g.uuid) ? per_uuid[g.uuid] : 0;
    } else {
      g.unknown.push_back("pids: unknown");
    }
  }
  if (!pid_failure.empty()) o.note = pid_failure + ": PIDs unknown";
  return o;
}

// ---- dcgm-exporter pages -------------------------------------------------------------------

namespace {

struct Series {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
  std::optional<std::int64_t> timestamp_ms;
};

// Parses one exposition line, or says why it does not parse.
base::Result<Series> ParseSeries(std::string_view line) {
  Series s;
  size_t i = 0;
  auto name_char = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
  };
  while (i < line.size() && name_char(line[i], i == 0)) ++i;
  if (i == 0) return Status::InvalidArgument("no metric name");
  s.name = std::string(line.substr(0, i));
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (true) {
      while (i < line.size() && line[i] == ' ') ++i;
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      size_t start = i;
      while (i < line.size() && name_char(line[i], i == start)) ++i;
      if (i == start) return Status::InvalidArgument("bad label name");
      std::string key(line.substr(start, i - start));
      if (i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"')
        return Status::InvalidArgument("bad label");
      i += 2;
      std::string value;
      bool closed = false;
      while (i < line.size()) {
        char c = line[i++];
        if (c == '\\') {
          if (i >= line.size()) return Status::InvalidArgument("bad escape");
          char e = line[i++];
          if (e == 'n') {
            value += '\n';
          } else if (e == '\\' || e == '"') {
            value += e;
          } else {
            return Status::InvalidArgument("bad escape");
          }
        } else if (c == '"') {
          closed = true;
          break;
        } else {
          value += c;
        }
      }
      if (!closed) return Status::InvalidArgument("unterminated label value");
      if (s.labels.count(key)) return Status::InvalidArgument("repeated label " + key);
      s.labels[key] = value;
      while (i < line.size() && line[i] == ' ') ++i;
      if (i < line.size() && line[i] == ',') {
        ++i;
        continue;
      }
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      return Status::InvalidArgument("bad label list");
    }
  }
  std::vector<std::string_view> rest;
  for (std::string_view part : SplitFields(TrimBlanks(line.substr(i)), ' ')) {
    if (!part.empty()) rest.push_back(part);
  }
  if (rest.empty() || rest.size() > 2)
    return Status::InvalidArgument("expected a value and an optional timestamp");
  std::string v(rest[0]);
  if (v == "NaN") {
    s.value = std::nan("");
  } else if (v == "+Inf" || v == "Inf") {
    s.value = INFINITY;
  } else if (v == "-Inf") {
    s.value = -INFINITY;
  } else {
    static const RE2 kFloat("[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?");
    if (!RE2::FullMatch(v, kFloat)) return Status::InvalidArgument("bad value " + Clip(v, 40));
    s.value = std::strtod(v.c_str(), nullptr);
  }
  if (rest.size() == 2) {
    static const RE2 kTs("-?[0-9]{1,18}");
    if (!RE2::FullMatch(rest[1], kTs)) return Status::InvalidArgument("bad timestamp");
    s.timestamp_ms = std::strtoll(std::string(rest[1]).c_str(), nullptr, 10);
  }
  return s;
}

struct MetricSpec {
  const char* name;
  double max;  // exclusive for FB/power, inclusive for util/ratios
  bool inclusive;
};

const std::vector<MetricSpec>& DcgmMetrics() {
  static const std::vector<MetricSpec> kMetrics = {
      {"DCGM_FI_DEV_GPU_UTIL", 100, true},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1, true},
      {"DCGM_FI_PROF_SM_ACTIVE", 1, true},
      {"DCGM_FI_DEV_FB_USED", 16777216.0, false},
      {"DCGM_FI_DEV_FB_FREE", 16777216.0, false},
      {"DCGM_FI_DEV_FB_RESERVED", 16777216.0, false},
      {"DCGM_FI_DEV_POWER_USAGE", 1e5, false},
  };
  return kMetrics;
}

struct Clone {
  double value;
  std::string invalid;  // why the value is not usable
};

struct DcgmGpu {
  std::string uuid;
  bool mig = false;
  std::set<std::string> hpc_jobs;
  std::map<std::string, std::vector<Clone>> metrics;
};

// The metric's value when every clone is valid and all agree; else why not.
base::Result<double> Usable(const DcgmGpu& g, const std::string& metric) {
  auto it = g.metrics.find(metric);
  if (it == g.metrics.end()) return Status::InvalidArgument(metric + " absent");
  for (const Clone& c : it->second) {
    if (!c.invalid.empty()) return Status::InvalidArgument(metric + ": " + c.invalid);
  }
  for (const Clone& c : it->second) {
    if (c.value != it->second.front().value) {
      return Status::InvalidArgument(metric + ": series disagree");
    }
  }
  return it->second.front().value;
}

}  // namespace

Observation ParseDcgmPage(const std::string& node, std::int64_t scrape_time,
                          const std::string& page, std::int64_t max_age) {
  auto fail = [&](const std::string& why) {
    return FailedObservation(node, scrape_time, "dcgm",
                             "page " + why + " (no evidence: neither an idle nor a busy GPU)");
  };
  std::map<int, DcgmGpu> gpus;
  std::optional<std::int64_t> newest_ms;
  int line_no = 0;
  for (std::string_view line : SplitFields(page, '\n')) {
    ++line_no;
    std::string_view t = TrimBlanks(line);
    if (t.empty() || t.front() == '#') continue;
    base::Result<Series> parsed = ParseSeries(t);
    if (!parsed.ok()) {
      return fail("does not parse at line " + std::to_string(line_no) + ": " +
                  parsed.status().message());
    }
    Series& s = *parsed;
    const MetricSpec* spec = nullptr;
    for (const MetricSpec& m : DcgmMetrics()) {
      if (s.name == m.name) spec = &m;
    }
    if (spec == nullptr) continue;
    auto gl = s.labels.find("gpu");
    static const RE2 kGpu("[0-9]{1,4}");
    if (gl == s.labels.end() || !RE2::FullMatch(gl->second, kGpu)) {
      return fail("has a " + s.name + " series without an integer gpu label (line " +
                  std::to_string(line_no) + ")");
    }
    DcgmGpu& g = gpus[std::atoi(gl->second.c_str())];
    if (s.labels.count("UUID")) g.uuid = s.labels["UUID"];
    if (s.labels.count("GPU_I_ID") || s.labels.count("GPU_I_PROFILE")) g.mig = true;
    if (s.labels.count("hpc_job") && !s.labels["hpc_job"].empty()) {
      g.hpc_jobs.insert(s.labels["hpc_job"]);
    }
    Clone c{s.value, ""};
    if (!std::isfinite(s.value)) {
      c.invalid = "not finite";
    } else if (s.value < 0) {
      c.invalid = "negative";
    } else if (spec->inclusive ? s.value > spec->max : s.value >= spec->max) {
      c.invalid = "implausible value";
    }
    if (s.timestamp_ms) {
      std::int64_t ts = *s.timestamp_ms / 1000;
      if (max_age > 0 && std::llabs(ts - scrape_time) > max_age) {
        c.invalid = "stale: timestamp " + std::to_string(ts - scrape_time) + " s from the scrape";
      } else {
        newest_ms = std::max(newest_ms.value_or(*s.timestamp_ms), *s.timestamp_ms);
      }
    }
    g.metrics[s.name].push_back(c);
  }
  if (gpus.empty()) return fail("has no DCGM GPU series");

  Observation o;
  o.node = node;
  o.time = newest_ms ? *newest_ms / 1000 : scrape_time;
  o.source = "dcgm";
  o.ok = true;
  o.note = "dcgm-exporter has no process data: PIDs unknown, never idle or hung";
  for (const auto& [index, d] : gpus) {
    GpuSample g;
    g.index = index;
    g.uuid = d.uuid;
    g.mig = d.mig;
    g.hpc_jobs.assign(d.hpc_jobs.begin(), d.hpc_jobs.end());
    if (d.mig) g.unknown.push_back("mig: GPU instance labels present, not judged");
    // Utilisation: the maximum of the activity metrics present; one unusable one -> unknown.
    std::optional<double> util;
    std::string why;
    bool any = false, bad = false;
    for (const char* m :
         {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE"}) {
      if (!d.metrics.count(m)) continue;
      any = true;
      base::Result<double> v = Usable(d, m);
      if (!v.ok()) {
        why = v.status().message();
        bad = true;
        break;
      }
      double pct = std::string(m) == "DCGM_FI_DEV_GPU_UTIL" ? *v : *v * 100;
      util = std::max(util.value_or(pct), pct);
    }
    if (any && !bad) {
      g.util_pct = util;
    } else {
      g.unknown.push_back("util: " + (any ? why : std::string("no activity metric")));
    }
    std::string mem_why;  // the last unusable memory metric's
    const auto& device = d;  // clang 14 refuses a lambda that captures a structured binding
    auto mem = [&](const char* metric) -> std::optional<double> {
      base::Result<double> v = Usable(device, metric);
      if (v.ok()) return *v;
      mem_why = v.status().message();
      return std::nullopt;
    };
    std::optional<double> used = mem("DCGM_FI_DEV_FB_USED");
    std::optional<double> free = used ? mem("DCGM_FI_DEV_FB_FREE") : std::nullopt;
    std::optional<double> reserved = 0.0;
    if (d.metrics.count("DCGM_FI_DEV_FB_RESERVED")) reserved = mem("DCGM_FI_DEV_FB_RESERVED");
    if (used && free && reserved && *used + *free + *reserved > 0) {
      g.mem_used_mib = *used;
      g.mem_total_mib = *used + *free + *reserved;
    } else {
      g.unknown.push_back("memory: " + (mem_why.empty() ? std::string("total is 0") : mem_why));
    }
    if (base::Result<double> p = Usable(d, "DCGM_FI_DEV_POWER_USAGE"); p.ok()) {
      g.power_w = *p;
    } else {
      g.unknown.push_back("power: " + p.status().message());
    }
    g.unknown.push_back("pids: dcgm has no process data");
    o.gpus.push_back(std::move(g));
  }
  return o;
}

// ---- the store -----------------------------------------------------------------------------

void GpuSampleStore::Add(Observation o) {
  std::lock_guard<std::mutex> lock(mu_);
  std::deque<Observation>& ring = nodes_[o.node];
  ring.push_back(std::move(o));
  while (ring.size() > per_node_) ring.pop_front();
}

std::map<std::string, std::vector<Observation>> GpuSampleStore::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, std::vector<Observation>> out;
  for (const auto& [node, ring] : nodes_) out[node].assign(ring.begin(), ring.end());
  return out;
}

// ---- jobs ----------------------------------------------------------------------------------

std::vector<std::string> RunningJobsArgv() {
  return {"squeue", "--noheader", "--states=RUNNING", "--array",
          "--Format=JobID:|,StartTime:|,NodeList:|,tres-alloc:|,Name:"};
}

std::optional<std::vector<std::string>> ExpandHostlist(const std::string& list) {
  const size_t kMax = 100000;
  std::string l(TrimBlanks(list));
  if (l.empty() || l == "(null)" || l == "None assigned") return std::vector<std::string>{};
  // Split on commas outside brackets.
  std::vector<std::string> exprs;
  int depth = 0;
  std::string cur;
  for (char c : l) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0 || depth > 1) return std::nullopt;
    if (c == ',' && depth == 0) {
      exprs.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (depth != 0) return std::nullopt;
  exprs.push_back(cur);
  static const RE2 kPlain("[A-Za-z0-9][A-Za-z0-9._-]*");
  static const RE2 kRange("([0-9]+)(?:-([0-9]+))?");
  std::vector<std::string> out;
  for (const std::string& e : exprs) {
    std::vector<std::string> names = {""};
    size_t i = 0;
    while (i < e.size()) {
      if (e[i] == '[') {
        size_t close = e.find(']', i);
        std::vector<std::string> alternatives;
        for (std::string_view r : SplitFields(std::string_view(e).substr(i + 1, close - i - 1), ',')) {
          std::string lo, hi;
          if (!RE2::FullMatch(r, kRange, &lo, &hi)) return std::nullopt;
          if (lo.size() > 9 || hi.size() > 9) return std::nullopt;
          long a = std::atol(lo.c_str()), b = hi.empty() ? a : std::atol(hi.c_str());
          if (b < a || b - a > static_cast<long>(kMax)) return std::nullopt;
          for (long n = a; n <= b; ++n) {
            std::string s = std::to_string(n);
            if (s.size() < lo.size()) s = std::string(lo.size() - s.size(), '0') + s;
            alternatives.push_back(s);
          }
        }
        std::vector<std::string> next;
        for (const std::string& p : names) {
          for (const std::string& a : alternatives) {
            next.push_back(p + a);
            if (next.size() > kMax) return std::nullopt;
          }
        }
        names = std::move(next);
        i = close + 1;
      } else {
        size_t j = e.find('[', i);
        std::string part = e.substr(i, j == std::string::npos ? std::string::npos : j - i);
        for (std::string& p : names) p += part;
        i = j == std::string::npos ? e.size() : j;
      }
    }
    for (std::string& n : names) {
      if (!RE2::FullMatch(n, kPlain)) return std::nullopt;
      out.push_back(std::move(n));
      if (out.size() > kMax) return std::nullopt;
    }
  }
  return out;
}

int GpuCountFromTres(const std::string& tres) {
  static const RE2 kUntyped("gres/gpu=([0-9]{1,6})");
  static const RE2 kTyped("gres/gpu:[^=,]+=([0-9]{1,6})");
  int typed = 0;
  bool untyped_seen = false;
  int untyped = 0;
  for (std::string_view item : SplitFields(tres, ',')) {
    std::string n;
    if (RE2::FullMatch(TrimBlanks(item), kUntyped, &n)) {
      untyped_seen = true;
      untyped = std::atoi(n.c_str());
    } else if (RE2::FullMatch(TrimBlanks(item), kTyped, &n)) {
      typed += std::atoi(n.c_str());
    }
  }
  return untyped_seen ? untyped : typed;
}

std::vector<RunningJob> ParseRunningJobs(const std::string& out,
                                         std::vector<std::string>* rejected) {
  static const RE2 kJobId("[0-9]{1,12}(_[0-9]{1,12})?(\\+[0-9]{1,6})?");
  static const RE2 kTime("([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})");
  std::vector<RunningJob> jobs;
  std::map<std::string, int> seen;
  for (std::string_view line : Lines(out)) {
    std::vector<std::string_view> f = SplitFields(line, '|');
    if (f.size() < 5) {
      if (rejected) rejected->push_back("not 5 |-fields: " + Clip(line, 120));
      continue;
    }
    RunningJob j;
    j.job_id = std::string(TrimBlanks(f[0]));
    if (!RE2::FullMatch(j.job_id, kJobId)) {
      if (rejected) rejected->push_back("bad job id: " + Clip(line, 120));
      continue;
    }
    int y, mo, d, h, mi, s;
    if (RE2::FullMatch(TrimBlanks(f[1]), kTime, &y, &mo, &d, &h, &mi, &s)) {
      std::tm tm{};
      tm.tm_year = y - 1900;
      tm.tm_mon = mo - 1;
      tm.tm_mday = d;
      tm.tm_hour = h;
      tm.tm_min = mi;
      tm.tm_sec = s;
      j.start = static_cast<std::int64_t>(timegm(&tm));
    }
    auto nodes = ExpandHostlist(std::string(TrimBlanks(f[2])));
    if (!nodes) {
      if (rejected) rejected->push_back("unparseable node list: " + Clip(line, 120));
      continue;
    }
    j.nodes = std::move(*nodes);
    j.gpus = GpuCountFromTres(std::string(TrimBlanks(f[3])));
    // The name is last, so a '|' in it cannot shift the other fields.
    std::string name;
    for (size_t i = 4; i < f.size(); ++i) name += (i > 4 ? "|" : "") + std::string(f[i]);
    j.name = std::string(TrimBlanks(name));
    ++seen[j.job_id];
    jobs.push_back(std::move(j));
  }
  std::vector<RunningJob> kept;
  for (RunningJob& j : jobs) {
    if (seen[j.job_id] > 1) {
      if (rejected) rejected->push_back("job id listed more than once: " + j.job_id);
      continue;
    }
    kept.push_back(std::move(j));
  }
  return kept;
}

std::string UnixToIso(std::int64_t t) { return base::IsoUtcFromUnix(t); }

// ---- the judgement -------------------------------------------------------------------------

namespace {

Json IsoOrNull(std::optional<std::int64_t> t) {
  return t ? Json(UnixToIso(*t)) : Json(nullptr);
}

// What one node offers a job: its usable observations after warmup, cut at the last outage.
struct NodeEvidence {
  std::string node;
  std::vector<const Observation*> used;  // the window's observations after the last outage
  std::vector<const Observation*> run;   // since the last outage (for the breach's dwell)
  int failed_reads = 0;                  // failed reads since warmup
  std::int64_t largest_gap = 0;          // between consecutive ok observations, and to now
  std::optional<std::int64_t> outage_at; // time of the observation after the last outage
  std::int64_t outage_gap = 0;
  Json ToJson(std::int64_t now) const {
    Json j = {{"node", node},
              {"observations", used.size()},
              {"failed_reads", failed_reads},
              {"first", used.empty() ? Json(nullptr) : Json(UnixToIso(used.front()->time))},
              {"last", used.empty() ? Json(nullptr) : Json(UnixToIso(used.back()->time))},
              {"largest_gap_seconds", largest_gap},
              {"gpus", used.empty() ? 0 : used.back()->gpus.size()}};
    if (!used.empty()) j["newest_age_seconds"] = now - used.back()->time;
    return j;
  }
};

NodeEvidence Gather(const std::string& node, const std::vector<Observation>* all,
                    std::int64_t from, std::int64_t now, const GpuIdleOptions& o) {
  NodeEvidence n;
  n.node = node;
  if (all == nullptr) return n;
  std::vector<const Observation*> ok;
  for (const Observation& obs : *all) {
    if (obs.time < from || obs.time > now) continue;
    if (!obs.ok) {
      ++n.failed_reads;
      continue;
    }
    ok.push_back(&obs);
  }
  std::sort(ok.begin(), ok.end(),
            [](const Observation* a, const Observation* b) { return a->time < b->time; });
  size_t start = 0;
  for (size_t i = 1; i < ok.size(); ++i) {
    std::int64_t gap = ok[i]->time - ok[i - 1]->time;
    n.largest_gap = std::max(n.largest_gap, gap);
    if (gap > o.max_sample_gap) {
      start = i;  // an outage: history before it is not evidence
      n.outage_at = ok[i]->time;
      n.outage_gap = gap;
    }
  }
  if (!ok.empty()) n.largest_gap = std::max(n.largest_gap, now - ok.back()->time);
  n.run.assign(ok.begin() + static_cast<std::ptrdiff_t>(start), ok.end());
  for (const Observation* obs : n.run) {
    if (obs->time >= now - o.window) n.used.push_back(obs);
  }
  // An outage long enough before now that the window after it is covered is history.
  if (n.outage_at && *n.outage_at <= now - (o.window - o.max_sample_gap)) n.outage_at.reset();
  return n;
}

double Peak(const Observation& obs) {
  double p = 0;
  for (const GpuSample& g : obs.gpus) p = std::max(p, g.util_pct.value_or(100));
  return p;
}

// Why a job is not judged ("" status: nothing stops it here), with the detail the report shows.
struct Verdict {
  std::string status, detail;
};

// The checks that need no samples: a job without GPUs, without a start time, still warming up,
// on a node another GPU job shares (no PID-to-job mapping attributes its GPUs), or on no node.
Verdict BeforeSampling(const RunningJob& job,
                       const std::map<std::string, std::vector<std::string>>& gpu_jobs_on,
                       std::int64_t now, const GpuIdleOptions& o) {
  if (job.gpus <= 0) return {"no_gpus", "no GPU in the job's tres-alloc: not judged"};
  if (!job.start) {
    return {"start_unknown", "the start time did not parse: not judged (never age 0)"};
  }
  const std::int64_t from = *job.start + o.warmup;
  if (now < from) {
    return {"in_warmup",
            "in warm-up until " + UnixToIso(from) + "; samples before then are never evidence"};
  }
  std::string shared;
  for (const std::string& n : job.nodes) {
    if (gpu_jobs_on.at(n).size() > 1) shared = n;
  }
  if (!shared.empty()) {
    std::string others;
    for (const std::string& id : gpu_jobs_on.at(shared)) {
      if (id != job.job_id) others += (others.empty() ? "" : ",") + id;
    }
    return {"shared_node", "node " + shared + " also hosts GPU job(s) " + others +
                               ": GPUs cannot be attributed to a job (no PID to job mapping)"};
  }
  if (job.nodes.empty()) return {"no_samples", "the job lists no node"};
  return {};
}

// Whether every node's samples can carry a judgement: some at all, fresh, with no outage in the
// window, covering it, enough of them, a steady GPU count, every GPU judgeable and none labelled
// with another job; and as many GPUs sampled as the job holds. The first failure wins.
Verdict EvidenceProblem(const RunningJob& job, const std::vector<NodeEvidence>& ev,
                        std::int64_t now, const GpuIdleOptions& o) {
  size_t without = 0;
  std::string missing;
  for (const NodeEvidence& n : ev) {
    if (!n.run.empty()) continue;
    ++without;
    missing += (missing.empty() ? "" : ",") + n.node;
  }
  if (without == ev.size()) {
    return {"no_samples",
            "no successful sample of the job's node(s) since warm-up ended "
            "(sampling off, the node not sampled, or every read failed)"};
  }
  if (without > 0) return {"partial_nodes", "no sample of node(s) " + missing + ": not judged"};

  const std::int64_t cover_by = now - (o.window - o.max_sample_gap);
  for (const NodeEvidence& n : ev) {
    const std::int64_t newest = n.run.back()->time;
    if (now - newest > o.max_sample_gap) {
      return {"stale_newest", "newest sample of " + n.node + " is " + std::to_string(now - newest) +
                                  " s old (> max_sample_gap " + std::to_string(o.max_sample_gap) +
                                  " s): a monitoring outage, not idleness"};
    }
    if (n.outage_at) {
      return {"gap_exceeded", "a " + std::to_string(n.outage_gap) + " s hole in the samples of " +
                                  n.node + " before " + UnixToIso(*n.outage_at) +
                                  " (> max_sample_gap " + std::to_string(o.max_sample_gap) +
                                  " s): history before it is not used"};
    }
    if (n.used.front()->time > cover_by) {
      return {"window_not_covered", "samples of " + n.node + " span only " +
                                        std::to_string(newest - n.used.front()->time) + " s; the " +
                                        std::to_string(o.window) + " s window is not covered yet"};
    }
    if (static_cast<int>(n.used.size()) < o.min_samples) {
      return {"insufficient_observations", n.node + ": " + std::to_string(n.used.size()) +
                                               " observations, need " +
                                               std::to_string(o.min_samples)};
    }
    for (const Observation* obs : n.used) {
      if (obs->gpus.size() != n.used.front()->gpus.size()) {
        return {"varying_gpu_count", n.node + " reported " +
                                         std::to_string(n.used.front()->gpus.size()) + " then " +
                                         std::to_string(obs->gpus.size()) + " GPUs"};
      }
      for (const GpuSample& g : obs->gpus) {
        if (!g.Judgeable()) {
          // The fields that make it unjudgeable (a missing PID count or power only weakens the
          // signature later; it does not stop the judgement).
          std::string why;
          for (const std::string& u : g.unknown) {
            if (u.rfind("pids", 0) != 0 && u.rfind("power", 0) != 0) {
              why += (why.empty() ? "" : "; ") + u;
            }
          }
          return {"unjudgeable_gpu", n.node + " gpu" + std::to_string(g.index) + " at " +
                                         UnixToIso(obs->time) + ": " + why};
        }
        if (!g.hpc_jobs.empty() &&
            std::find(g.hpc_jobs.begin(), g.hpc_jobs.end(), job.job_id) == g.hpc_jobs.end()) {
          return {"attribution_conflict", n.node + " gpu" + std::to_string(g.index) +
                                              " is labelled hpc_job " + g.hpc_jobs.front() +
                                              ", not this job"};
        }
      }
    }
  }
  size_t covered = 0;
  for (const NodeEvidence& n : ev) covered += n.used.back()->gpus.size();
  if (static_cast<int>(covered) < job.gpus) {
    return {"fewer_gpus_than_allocated",
            std::to_string(covered) + " GPUs sampled, " + std::to_string(job.gpus) + " allocated"};
  }
  return {};
}

// The window's figures over every GPU of every node of a judgeable job.
struct Figures {
  double peak = 0, util_sum = 0, mem_sum = 0, power_sum = 0;
  int samples = 0, max_pids = 0;
  bool pids_known = true, power_known = true;
  size_t covered = 0, obs_count = 0;
  std::set<std::string> sources;
  double MeanUtil() const { return util_sum / samples; }
  double MemFraction() const { return mem_sum / samples; }
  double MeanPower() const { return power_sum / samples; }
};

Figures Measure(const std::vector<NodeEvidence>& ev) {
  Figures f;
  for (const NodeEvidence& n : ev) {
    f.covered += n.used.back()->gpus.size();
    f.obs_count += n.used.size();
    for (const Observation* obs : n.used) {
      f.sources.insert(obs->source);
      for (const GpuSample& g : obs->gpus) {
        f.peak = std::max(f.peak, *g.util_pct);
        f.util_sum += *g.util_pct;
        f.mem_sum += *g.mem_used_mib / *g.mem_total_mib;
        ++f.samples;
        if (g.pids) {
          f.max_pids = std::max(f.max_pids, *g.pids);
        } else {
          f.pids_known = false;
        }
        if (g.power_w) {
          f.power_sum += *g.power_w;
        } else {
          f.power_known = false;
        }
      }
    }
  }
  return f;
}

// The verdict of a judgeable job, written into j (figures, and for a job below util_pct its
// signature, breach and stage); returns the detail line.
std::string Judge(const RunningJob& job, const std::vector<NodeEvidence>& ev, std::int64_t now,
                  const GpuIdleOptions& o, Json* j) {
  const Figures f = Measure(ev);
  const bool held = f.MemFraction() >= o.mem_held_fraction;
  (*j)["figures"] = {{"peak_util_pct", f.peak},
                     {"mean_util_pct", f.MeanUtil()},
                     {"mean_memory_fraction", f.MemFraction()},
                     {"memory_held", held},
                     {"mean_power_w", f.power_known ? Json(f.MeanPower()) : Json(nullptr)},
                     {"pids_known", f.pids_known},
                     {"max_pids", f.pids_known ? Json(f.max_pids) : Json(nullptr)},
                     {"gpus_covered", f.covered},
                     {"observations", f.obs_count},
                     {"sources", f.sources}};
  // Busy is decided by the peak, never the mean: one busy sample in the window is enough.
  if (f.peak >= o.util_pct) {
    (*j)["signature"] = nullptr;
    return "busy: peak utilisation " + std::to_string(static_cast<int>(f.peak)) +
           "% reached util_pct " + std::to_string(static_cast<int>(o.util_pct)) +
           "% in the window (peak, not mean)";
  }
  // idle: memory free, no process, low power, each known; hung: memory held by processes that
  // do not compute; starved: memory held and some computing. Anything else is unknown.
  std::string sig = "unknown";
  if (!held && f.pids_known && f.max_pids == 0 && f.power_known &&
      f.MeanPower() < o.idle_power_watts) {
    sig = "idle";
  } else if (held && f.pids_known && f.max_pids > 0 && f.peak < o.hung_util_pct) {
    sig = "hung";
  } else if (held && f.peak >= o.hung_util_pct) {
    sig = "starved";
  }
  // Dwell: since the first observation of the trailing below-threshold run (latest over nodes).
  std::int64_t since = 0;
  for (const NodeEvidence& n : ev) {
    std::int64_t first = n.run.back()->time;
    for (auto it = n.run.rbegin(); it != n.run.rend() && Peak(**it) < o.util_pct; ++it) {
      first = (*it)->time;
    }
    since = std::max(since, first);
  }
  const std::int64_t dwell = now - since;
  const double hours = static_cast<double>(std::min<size_t>(f.covered, job.gpus)) * dwell / 3600.0;
  const bool may_drain = sig == "idle" || sig == "hung";
  (*j)["signature"] = sig;
  (*j)["breach_since"] = UnixToIso(since);
  (*j)["dwell_seconds"] = dwell;
  (*j)["gpu_hours_in_breach"] = hours;
  (*j)["stage_if_enforced"] = may_drain && dwell >= o.drain_after ? "drain" : "alert";
  char reason[512];
  std::snprintf(
      reason, sizeof reason,
      "%s: peak util %.1f%% (mean %.1f%%) below %.0f%% for %llds across %zu "
      "observations of %zu GPU(s); mem held %.0f%%, mean power %s; ~%.2f GPU-hours "
      "in this breach",
      sig.c_str(), f.peak, f.MeanUtil(), o.util_pct, static_cast<long long>(dwell), f.obs_count,
      f.covered, f.MemFraction() * 100,
      f.power_known ? (std::to_string(static_cast<int>(f.MeanPower())) + " W").c_str() : "unknown",
      hours);
  return reason;
}

// What the sampler holds per node: counts, first and last good read, the last failure.
Json NodesHeld(const std::map<std::string, std::vector<Observation>>& observations) {
  Json nodes = Json::array();
  for (const auto& [node, obs] : observations) {
    int ok = 0, failed = 0;
    const Observation* last = nullptr;
    const Observation* last_ok = nullptr;
    for (const Observation& x : obs) {
      (x.ok ? ok : failed)++;
      if (!last || x.time >= last->time) last = &x;
      if (x.ok && (!last_ok || x.time >= last_ok->time)) last_ok = &x;
    }
    Json n = {{"node", node},
              {"source", last ? last->source : ""},
              {"observations_held", ok},
              {"failed_reads_held", failed},
              {"first", obs.empty() ? Json(nullptr) : Json(UnixToIso(obs.front().time))},
              {"last_ok", last_ok ? Json(UnixToIso(last_ok->time)) : Json(nullptr)},
              {"gpus", last_ok ? last_ok->gpus.size() : 0},
              {"last_read_ok", last ? last->ok : false}};
    if (last && !last->ok) n["last_failure"] = last->failure;
    if (last_ok && !last_ok->note.empty()) n["note"] = last_ok->note;
    nodes.push_back(std::move(n));
  }
  return nodes;
}

}  // namespace

Json JudgeGpuIdle(const std::vector<RunningJob>& jobs,
                  const std::map<std::string, std::vector<Observation>>& observations,
                  std::int64_t now, const GpuIdleOptions& o) {
  // GPU jobs per node over every running job, before any filtering (the shared-node rule); every
  // node of every job has an entry, empty when no GPU job runs there.
  std::map<std::string, std::vector<std::string>> gpu_jobs_on;
  for (const RunningJob& j : jobs) {
    for (const std::string& n : j.nodes) {
      std::vector<std::string>& on = gpu_jobs_on[n];
      if (j.gpus > 0) on.push_back(j.job_id);
    }
  }
  Json out_jobs = Json::array();
  for (const RunningJob& job : jobs) {
    Json j = {
        {"job_id", job.job_id}, {"name", job.name},           {"start_time", IsoOrNull(job.start)},
        {"nodes", job.nodes},   {"allocated_gpus", job.gpus}, {"classification_only", true}};
    auto done = [&](const std::string& status, const std::string& detail) {
      j["status"] = status;
      j["detail"] = detail;
      out_jobs.push_back(j);
    };
    if (Verdict v = BeforeSampling(job, gpu_jobs_on, now, o); !v.status.empty()) {
      done(v.status, v.detail);
      continue;
    }
    // The evidence, node by node, from the end of the warm-up on; shown whatever the verdict.
    const std::int64_t from = *job.start + o.warmup;
    std::vector<NodeEvidence> ev;
    Json ev_nodes = Json::array();
    for (const std::string& n : job.nodes) {
      auto it = observations.find(n);
      ev.push_back(Gather(n, it == observations.end() ? nullptr : &it->second, from, now, o));
      ev_nodes.push_back(ev.back().ToJson(now));
    }
    j["evidence"] = {{"window_start", UnixToIso(std::max(from, now - o.window))},
                     {"window_end", UnixToIso(now)},
                     {"nodes", ev_nodes}};
    if (Verdict v = EvidenceProblem(job, ev, now, o); !v.status.empty()) {
      // The sample-count verdicts carry their own wording; the others end "not judged".
      const bool own = v.status == "no_samples" || v.status == "partial_nodes";
      done(v.status, own ? v.detail : v.detail + ": not judged");
      continue;
    }
    done("judged", Judge(job, ev, now, o, &j));
  }

  Json thresholds = {{"util_pct", o.util_pct},
                     {"mem_held_fraction", o.mem_held_fraction},
                     {"idle_power_watts", o.idle_power_watts},
                     {"hung_util_pct", o.hung_util_pct},
                     {"window_seconds", o.window},
                     {"warmup_seconds", o.warmup},
                     {"min_samples", o.min_samples},
                     {"max_sample_gap_seconds", o.max_sample_gap},
                     {"drain_after_seconds", o.drain_after}};
  Json report = {{"now", UnixToIso(now)},
                 {"jobs", out_jobs},
                 {"nodes", NodesHeld(observations)},
                 {"thresholds", thresholds}};
  // Job names and hpc_job labels are bytes from squeue and exporters.
  return WithValidUtf8(report);
}

Json GpuIdleJobSchema() {
  const Json str = {{"type", "string"}};
  const Json str_or_null = {{"type", Json::array({"string", "null"})}};
  const Json node_ev = {
      {"type", "object"},
      {"properties",
       {{"node", str},
        {"observations", {{"type", "integer"}}},
        {"failed_reads", {{"type", "integer"}}},
        {"first", str_or_null},
        {"last", str_or_null},
        {"largest_gap_seconds", {{"type", "integer"}}},
        {"newest_age_seconds", {{"type", "integer"}}},
        {"gpus", {{"type", "integer"}}}}},
      {"required", {"node", "observations", "failed_reads", "first", "last",
                    "largest_gap_seconds", "gpus"}},
      {"additionalProperties", false}};
  const Json evidence = {{"type", "object"},
                         {"properties",
                          {{"window_start", str},
                           {"window_end", str},
                           {"nodes", {{"type", "array"}, {"items", node_ev}}}}},
                         {"required", {"window_start", "window_end", "nodes"}},
                         {"additionalProperties", false}};
  const Json num = {{"type", "number"}};
  const Json figures = {
      {"type", "object"},
      {"properties",
       {{"peak_util_pct", num},
        {"mean_util_pct", num},
        {"mean_memory_fraction", num},
        {"memory_held", {{"type", "boolean"}}},
        {"mean_power_w", {{"type", Json::array({"number", "null"})}}},
        {"pids_known", {{"type", "boolean"}}},
        {"max_pids", {{"type", Json::array({"integer", "null"})}}},
        {"gpus_covered", {{"type", "integer"}}},
        {"observations", {{"type", "integer"}}},
        {"sources", {{"type", "array"}, {"items", str}}}}},
      {"required", {"peak_util_pct", "mean_util_pct", "mean_memory_fraction", "memory_held",
                    "mean_power_w", "pids_known", "max_pids", "gpus_covered", "observations",
                    "sources"}},
      {"additionalProperties", false}};
  return {{"type", "object"},
          {"properties",
           {{"job_id", str},
            {"name", str},
            {"start_time", str_or_null},
            {"nodes", {{"type", "array"}, {"items", str}}},
            {"allocated_gpus", {{"type", "integer"}}},
            {"classification_only", {{"const", true}}},
            {"status",
             {{"enum",
               {"judged", "no_gpus", "start_unknown", "in_warmup", "shared_node", "no_samples",
                "partial_nodes", "stale_newest", "gap_exceeded", "window_not_covered",
                "insufficient_observations", "varying_gpu_count", "unjudgeable_gpu",
                "attribution_conflict", "fewer_gpus_than_allocated"}}}},
            {"detail", str},
            {"evidence", evidence},
            {"figures", figures},
            {"signature", {{"enum", {"idle", "hung", "starved", "unknown", nullptr}}}},
            {"breach_since", str},
            {"dwell_seconds", {{"type", "integer"}}},
            {"gpu_hours_in_breach", num},
            {"stage_if_enforced", {{"enum", {"alert", "drain"}}}}}},
          {"required", {"job_id", "name", "start_time", "nodes", "allocated_gpus",
                        "classification_only", "status", "detail"}},
          {"additionalProperties", false}};
}

Json GpuIdleReportSchema() {
  const Json str = {{"type", "string"}};
  const Json str_or_null = {{"type", Json::array({"string", "null"})}};
  const Json node = {{"type", "object"},
                     {"properties",
                      {{"node", str},
                       {"source", str},
                       {"observations_held", {{"type", "integer"}}},
                       {"failed_reads_held", {{"type", "integer"}}},
                       {"first", str_or_null},
                       {"last_ok", str_or_null},
                       {"gpus", {{"type", "integer"}}},
                       {"last_read_ok", {{"type", "boolean"}}},
                       {"last_failure", str},
                       {"note", str}}},
                     {"required", {"node", "source", "observations_held", "failed_reads_held",
                                   "first", "last_ok", "gpus", "last_read_ok"}},
                     {"additionalProperties", false}};
  return {{"type", "object"},
          {"properties",
           {{"now", str},
            {"sampling", {{"type", "object"}}},
            {"jobs", {{"type", "array"}, {"items", GpuIdleJobSchema()}}},
            {"nodes", {{"type", "array"}, {"items", node}}},
            {"thresholds", {{"type", "object"}}},
            {"rejected_jobs", {{"type", "array"}, {"items", str}}}}},
          {"required", {"now", "jobs", "nodes", "thresholds"}},
          {"additionalProperties", false}};
}

}  // namespace slurm_rca::mcp
