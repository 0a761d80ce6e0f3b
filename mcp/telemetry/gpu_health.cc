#include "mcp/telemetry/gpu_health.h"

#include <re2/re2.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "mcp/telemetry/text.h"

namespace slurm_rca::mcp {
namespace {

using Json = nlohmann::json;

enum class Severity { kNone = 0, kUnknown, kTransient, kDegraded, kFatal };

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kNone:
      return "none";
    case Severity::kUnknown:
      return "unknown";
    case Severity::kTransient:
      return "transient";
    case Severity::kDegraded:
      return "degraded";
    case Severity::kFatal:
      return "fatal";
  }
  return "unknown";
}

struct Finding {
  std::string check;
  Severity severity;
  std::string label;  // gpuN or node
  std::string detail;
  int order = 0;  // the GPU index for sorting labels; node sorts last
};

Json FindingJson(const Finding& f) {
  return {{"check", f.check},
          {"severity", SeverityName(f.severity)},
          {"label", f.label},
          {"detail", f.detail}};
}

// One field as read: the raw text and, when known, its value.
struct Field {
  std::string raw;
  bool known = false;
  Json value;                          // null when unknown
  std::string reason;                  // why unknown
  std::optional<std::int64_t> number;  // for numeric fields that are known
};

// Why a raw text is not a value, or "" when it might be one.
std::string NotAValue(std::string_view raw) {
  if (raw.empty()) return "empty";
  if (raw.front() == '[') return std::string(raw) + ": nvidia-smi reports no value";
  std::string lower;
  for (char c : raw) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower == "n/a" || lower == "na") return std::string(raw) + ": not available";
  return "";
}

Field Unknown(std::string raw, std::string reason) {
  Field f;
  f.raw = std::move(raw);
  f.reason = std::move(reason);
  return f;
}

Field Integer(std::string_view raw, std::int64_t lo, std::int64_t hi) {
  if (std::string why = NotAValue(raw); !why.empty()) return Unknown(std::string(raw), why);
  static const RE2 kDigits("[0-9]{1,18}");
  if (!RE2::FullMatch(raw, kDigits)) {
    return Unknown(std::string(raw), "not a non-negative decimal integer");
  }
  std::int64_t v = std::strtoll(std::string(raw).c_str(), nullptr, 10);
  if (v < lo || v > hi) {
    return Unknown(std::string(raw),
                   "out of range " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  Field f;
  f.raw = std::string(raw);
  f.known = true;
  f.value = v;
  f.number = v;
  return f;
}

Field Text(std::string_view raw) {
  if (std::string why = NotAValue(raw); !why.empty()) return Unknown(std::string(raw), why);
  Field f;
  f.raw = std::string(raw);
  f.known = true;
  f.value = std::string(raw);
  return f;
}

// Yes/No or a count (remapped_rows.pending, remapped_rows.failure): Yes = 1, No = 0.
Field YesNoOrCount(std::string_view raw) {
  if (raw == "Yes" || raw == "No") {
    Field f;
    f.raw = std::string(raw);
    f.known = true;
    f.value = std::string(raw);
    f.number = raw == "Yes" ? 1 : 0;
    return f;
  }
  Field f = Integer(raw, 0, 1000000);
  if (!f.known && NotAValue(raw).empty()) f.reason = "not Yes, No or a count";
  return f;
}

Field EnabledDisabled(std::string_view raw) {
  if (raw == "Enabled" || raw == "Disabled") return Text(raw);
  if (std::string why = NotAValue(raw); !why.empty()) return Unknown(std::string(raw), why);
  return Unknown(std::string(raw), "not Enabled or Disabled");
}

Field ClockReasons(std::string_view raw) {
  if (raw == "Not Active") {
    Field f;
    f.raw = std::string(raw);
    f.known = true;
    f.value = "0x0000000000000000";
    f.number = 0;
    return f;
  }
  if (std::string why = NotAValue(raw); !why.empty()) return Unknown(std::string(raw), why);
  static const RE2 kHex("0[xX]([0-9A-Fa-f]{1,16})");
  std::string hex;
  if (!RE2::FullMatch(raw, kHex, &hex)) return Unknown(std::string(raw), "not 0x hex");
  Field f;
  f.raw = std::string(raw);
  f.known = true;
  f.value = std::string(raw);
  f.number = static_cast<std::int64_t>(std::strtoull(hex.c_str(), nullptr, 16));
  return f;
}

// "00000000:3B:00.0", "0000:3b:00.0", "3b:00.0" forms -> "00000000:3B:00.0"; "" when not a bus
// id.
std::string CanonicalBusId(std::string_view raw) {
  static const RE2 kBus("(?:([0-9A-Fa-f]{1,8}):)?([0-9A-Fa-f]{1,2}):([0-9A-Fa-f]{1,2})[.:]([0-7])");
  std::string domain, bus, device, function;
  if (!RE2::FullMatch(raw, kBus, &domain, &bus, &device, &function)) return "";
  auto pad = [](std::string s, size_t n) {
    for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'f' ? c - 'a' + 'A' : c);
    return std::string(n > s.size() ? n - s.size() : 0, '0') + s;
  };
  return pad(domain.empty() ? "0" : domain, 8) + ":" + pad(bus, 2) + ":" + pad(device, 2) + "." +
         function;
}

struct Gpu {
  int index = -1;
  std::string bus_id;
  bool mig = false;
  std::map<std::string, Field> fields;  // by query field name
  std::vector<Finding> findings;
};

constexpr std::int64_t kMaxCount = (std::int64_t{1} << 53);
constexpr std::int64_t kMaxMiB = (std::int64_t{1} << 32) - 1;

// Reads the fields of one well-formed row.
Gpu ReadRow(const std::vector<std::string_view>& cells, int index, std::string bus_id) {
  const std::vector<std::string>& names = GpuHealthFields();
  Gpu g;
  g.index = index;
  g.bus_id = std::move(bus_id);
  auto cell = [&](const std::string& name) {
    size_t i = std::find(names.begin(), names.end(), name) - names.begin();
    return cells[i];
  };
  g.fields["index"] = Integer(cell("index"), 0, 1023);
  g.fields["uuid"] = Text(cell("uuid"));
  g.fields["name"] = Text(cell("name"));
  g.fields["pci.bus_id"] = Text(cell("pci.bus_id"));
  g.fields["pci.bus_id"].value = g.bus_id;
  for (const char* n : {"pcie.link.width.current", "pcie.link.width.max"}) {
    g.fields[n] = Integer(cell(n), 0, 64);
  }
  for (const char* n : {"pcie.link.gen.current", "pcie.link.gen.max"}) {
    g.fields[n] = Integer(cell(n), 0, 16);
  }
  for (const char* n :
       {"ecc.errors.uncorrected.volatile.total", "ecc.errors.uncorrected.aggregate.total",
        "ecc.errors.corrected.volatile.total", "remapped_rows.uncorrectable"}) {
    g.fields[n] = Integer(cell(n), 0, kMaxCount);
  }
  g.fields["remapped_rows.pending"] = YesNoOrCount(cell("remapped_rows.pending"));
  g.fields["remapped_rows.failure"] = YesNoOrCount(cell("remapped_rows.failure"));
  g.fields["clocks_throttle_reasons.active"] = ClockReasons(cell("clocks_throttle_reasons.active"));
  g.fields["temperature.gpu"] = Integer(cell("temperature.gpu"), 0, 150);
  g.fields["memory.used"] = Integer(cell("memory.used"), 0, kMaxMiB);
  g.fields["memory.total"] = Integer(cell("memory.total"), 1, kMaxMiB);
  g.fields["persistence_mode"] = EnabledDisabled(cell("persistence_mode"));

  // MIG: Disabled, or not reported (a GPU without MIG), is not MIG; Enabled or anything else is.
  std::string_view mig = cell("mig.mode.current");
  Field m;
  m.raw = std::string(mig);
  m.known = true;
  if (mig == "Disabled" || mig == "[N/A]" || mig == "N/A" || mig == "[Not Supported]") {
    m.value = "Disabled";
  } else {
    m.value = "Enabled";
    g.mig = true;
  }
  if (mig != "Disabled" && mig != "Enabled" && !g.mig) m.reason = "not reported: no MIG support";
  if (g.mig && mig != "Enabled") m.reason = "not Enabled or Disabled: treated as MIG";
  g.fields["mig.mode.current"] = m;

  Field& used = g.fields["memory.used"];
  Field& total = g.fields["memory.total"];
  if (used.known && total.known && *used.number > *total.number) {
    used = Unknown(used.raw, "used " + used.raw + " MiB > total " + total.raw + " MiB");
    total = Unknown(total.raw, "used exceeds it");
  }
  if (g.mig) {
    for (Field* f : {&used, &total}) {
      if (f->known)
        *f = Unknown(f->raw,
                     "MIG enabled: whole-GPU memory does not describe its "
                     "instances");
    }
  }
  return g;
}

std::optional<std::int64_t> Num(const Gpu& g, const char* name) {
  const Field& f = g.fields.at(name);
  if (!f.known) return std::nullopt;
  return f.number;
}

std::optional<std::string> Str(const Gpu& g, const char* name) {
  const Field& f = g.fields.at(name);
  if (!f.known) return std::nullopt;
  return f.value.get<std::string>();
}

std::string Hex(std::uint64_t v) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), kDigits[v & 0xf]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

// The checks of reference §2.3 on one GPU (defaults: no drain on pending remap or PCIe width).
void Check(Gpu& g, const GpuHealthOptions& o) {
  const std::string label = "gpu" + std::to_string(g.index);
  auto add = [&](std::string check, Severity s, std::string detail) {
    g.findings.push_back({std::move(check), s, label, std::move(detail), g.index});
  };

  std::vector<std::string> unreadable;
  for (const std::string& name : GpuHealthFields()) {
    const Field& f = g.fields.at(name);
    if (!f.known) unreadable.push_back(name + " (" + f.reason + ")");
  }
  if (!unreadable.empty()) {
    std::string d;
    for (const std::string& u : unreadable) d += (d.empty() ? "" : "; ") + u;
    add("unreadable", Severity::kUnknown, "never used as evidence: " + d);
  }
  if (g.mig) {
    add("mig", Severity::kUnknown,
        "MIG enabled: instances are not checked and leaked memory is not judged");
  }

  auto vol = Num(g, "ecc.errors.uncorrected.volatile.total");
  auto agg = Num(g, "ecc.errors.uncorrected.aggregate.total");
  auto corr = Num(g, "ecc.errors.corrected.volatile.total");
  auto pers = Str(g, "persistence_mode");
  if (vol && *vol > 0) {
    add("ecc-uncorrectable", Severity::kFatal,
        std::to_string(*vol) + " uncorrectable ECC errors since the driver loaded");
  }
  if (agg && *agg > 0 && !(vol && *vol > 0)) {
    if (vol && pers && *pers == "Enabled") {
      add("ecc-uncorrectable-history", Severity::kTransient,
          std::to_string(*agg) +
              " uncorrectable ECC errors over the GPU's life, none since the "
              "driver loaded");
    } else {
      add("ecc-uncorrectable-history", Severity::kUnknown,
          std::to_string(*agg) +
              " uncorrectable ECC errors over the GPU's life; the volatile "
              "count cannot be trusted (unreadable, or persistence off)");
    }
  }
  if (vol && pers && *pers == "Disabled") {
    add("ecc-volatile-unreliable", Severity::kUnknown,
        "persistence mode Disabled: volatile ECC counters may have reset with the driver");
  }
  if (corr && o.max_correctable_ecc > 0 && *corr > o.max_correctable_ecc) {
    add("ecc-correctable", Severity::kDegraded,
        std::to_string(*corr) + " correctable ECC errors > " +
            std::to_string(o.max_correctable_ecc));
  }

  auto failure = Num(g, "remapped_rows.failure");
  auto remapped = Num(g, "remapped_rows.uncorrectable");
  auto pending = Num(g, "remapped_rows.pending");
  if (failure && *failure > 0) {
    add("row-remap-failure", Severity::kFatal, "row remapping failed (an RMA criterion)");
  }
  if (remapped && *remapped > 0 && !(failure && *failure > 0)) {
    add("row-remap-uncorrectable", Severity::kTransient,
        std::to_string(*remapped) +
            " rows remapped after uncorrectable errors (lifetime; the "
            "repair worked)");
  }
  if (pending && *pending > 0) {
    add("row-remap-pending", Severity::kTransient, "a row remap is pending: needs a GPU reset");
  }

  for (const char* what : {"width", "gen"}) {
    std::string cur = std::string("pcie.link.") + what + ".current";
    std::string max = std::string("pcie.link.") + what + ".max";
    auto c = Num(g, cur.c_str());
    auto m = Num(g, max.c_str());
    if (c && m && *c > 0 && *m > 0 && *c < *m) {
      add(std::string("pcie-") + what, Severity::kUnknown,
          std::string("PCIe ") + what + " " + std::to_string(*c) + " of " + std::to_string(*m) +
              (std::string(what) == "gen" ? " (idle GPUs power-manage the link; never drains)"
                                          : " (may be a degraded link or slot; not judged)"));
    }
  }

  if (auto clocks = Num(g, "clocks_throttle_reasons.active")) {
    const auto mask = static_cast<std::uint64_t>(*clocks);
    constexpr std::uint64_t kIgnored = 0x01 | 0x02 | 0x10;
    std::string names;
    for (const std::string& n : DecodeClockReasons(mask)) names += (names.empty() ? "" : ",") + n;
    if (mask & (0x40 | 0x80)) {
      add("throttle", Severity::kDegraded,
          "hardware thermal slowdown or power brake on the GPU: " + Hex(mask) + " " + names);
    } else if (mask & ~kIgnored) {
      add("throttle", Severity::kTransient, "clock event reasons " + Hex(mask) + " " + names);
    }
  }

  auto temp = Num(g, "temperature.gpu");
  if (temp && o.max_temperature > 0 && *temp >= o.max_temperature) {
    add("temperature", Severity::kTransient,
        std::to_string(*temp) + " C >= " + std::to_string(o.max_temperature) + " C");
  }

  auto used = Num(g, "memory.used");
  auto total = Num(g, "memory.total");
  if (used && total &&
      static_cast<double>(*used) / static_cast<double>(*total) > o.leaked_memory_fraction) {
    add("leaked-memory", Severity::kDegraded,
        std::to_string(*used) + " of " + std::to_string(*total) +
            " MiB in use (judged as after a job's teardown; a running job's memory reads the "
            "same)");
  }
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<std::string_view> SplitCells(std::string_view line) {
  std::vector<std::string_view> cells;
  size_t start = 0;
  while (true) {
    size_t end = line.find(',', start);
    if (end == std::string_view::npos) {
      cells.push_back(TrimBlanks(line.substr(start)));
      return cells;
    }
    cells.push_back(TrimBlanks(line.substr(start, end - start)));
    start = end + 1;
  }
}

std::string Clip(std::string_view s, size_t n) {
  std::string out;
  for (char c : s.substr(0, n)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return s.size() > n ? out + "..." : out;
}

// `<prefix> <worst>: <check>:<labels> ...`, worst-severity findings only.
std::string DrainReason(const std::vector<const Finding*>& all, Severity worst) {
  std::map<std::string, std::set<std::pair<int, std::string>>> by_check;
  for (const Finding* f : all) {
    if (f->severity == worst) by_check[f->check].insert({f->order, f->label});
  }
  std::string reason = std::string("slurm-rca gpu_health ") + SeverityName(worst) + ":";
  for (const auto& [check, labels] : by_check) {
    reason += " " + check + ":";
    bool first = true;
    for (const auto& [order, label] : labels) {
      reason += (first ? "" : ",") + label;
      first = false;
    }
  }
  std::string kept;
  for (char c : reason) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == ' ' || c == ':' || c == '.' || c == ',' || c == '-' || c == '/' ||
              c == '=';
    if (ok) kept += c;
  }
  if (kept.size() > 200) kept = kept.substr(0, 197) + "...";
  return kept;
}

Json FieldJson(const Field& f) {
  Json j = {{"value", f.value}, {"known", f.known}, {"raw", f.raw}};
  if (!f.reason.empty()) j["reason"] = f.reason;
  return j;
}

}  // namespace

const std::vector<std::string>& GpuHealthFields() {
  static const std::vector<std::string> fields = {
      "index",
      "uuid",
      "name",
      "pci.bus_id",
      "pcie.link.width.current",
      "pcie.link.width.max",
      "pcie.link.gen.current",
      "pcie.link.gen.max",
      "ecc.errors.uncorrected.volatile.total",
      "ecc.errors.uncorrected.aggregate.total",
      "ecc.errors.corrected.volatile.total",
      "remapped_rows.pending",
      "remapped_rows.uncorrectable",
      "remapped_rows.failure",
      "clocks_throttle_reasons.active",
      "temperature.gpu",
      "memory.used",
      "memory.total",
      "persistence_mode",
      "mig.mode.current",
  };
  return fields;
}

std::vector<std::string> GpuHealthArgv() {
  std::string query = "--query-gpu=";
  for (const std::string& f : GpuHealthFields()) {
    query += (query.back() == '=' ? "" : ",") + f;
  }
  return {"nvidia-smi", query, "--format=csv,noheader,nounits"};
}

std::string NvidiaSmiExitMeaning(int exit_code) {
  switch (exit_code) {
    case 0:
      return "success";
    case 2:
      return "invalid argument or field";
    case 3:
      return "the requested operation is not available on the target device";
    case 4:
      return "no permission";
    case 6:
      return "the query did not find the object";
    case 8:
      return "external power cables not attached";
    case 9:
      return "NVIDIA driver not loaded";
    case 10:
      return "NVIDIA kernel detected an interrupt issue with a GPU";
    case 12:
      return "NVML shared library not found or loaded";
    case 13:
      return "NVML function not implemented by the local version";
    case 14:
      return "infoROM corrupted";
    case 15:
      return "the GPU fell off the bus or is otherwise inaccessible";
    case 255:
      return "other error or internal driver error";
    default:
      return "undocumented";
  }
}

bool IsHardwareFaultExit(int exit_code) {
  return exit_code == 8 || exit_code == 10 || exit_code == 14 || exit_code == 15;
}

std::vector<std::string> DecodeClockReasons(std::uint64_t mask) {
  static const std::vector<std::pair<std::uint64_t, const char*>> kBits = {
      {0x01, "gpu_idle"},
      {0x02, "applications_clocks_setting"},
      {0x04, "sw_power_cap"},
      {0x08, "hw_slowdown"},
      {0x10, "sync_boost"},
      {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"},
      {0x80, "hw_power_brake_slowdown"},
      {0x100, "display_clock_setting"},
      {0x200, "board_limit"},
      {0x400, "reliability"},
  };
  std::vector<std::string> names;
  std::uint64_t rest = mask;
  for (const auto& [bit, name] : kBits) {
    if (mask & bit) names.push_back(name);
    rest &= ~bit;
  }
  if (rest) names.push_back("unknown_bits_" + Hex(rest));
  return names;
}

// The report as the rules build it; AssessGpuHealth makes its strings valid UTF-8.
static GpuHealthReport Assess(const Evidence& e, const GpuHealthOptions& options) {
  GpuHealthReport r;
  const bool timed_out = e.outcome == Evidence::Outcome::kTimedOut;
  Json query = {
      {"argv", e.argv},
      {"exit_code", e.exit_code},
      {"exit_meaning", e.ok()                                    ? "success"
                       : e.outcome == Evidence::Outcome::kFailed ? NvidiaSmiExitMeaning(e.exit_code)
                                                                 : std::string("did not exit")},
      {"timed_out", timed_out},
      {"read_outcome", OutcomeName(e.outcome)}};
  if (!e.err.empty()) query["stderr"] = Clip(e.err, 512);

  auto failed = [&](std::string why) {
    r.evidence = false;
    r.failure =
        "query failed: " + why + " (no evidence: this is neither a GPU fault nor a healthy GPU)";
    query["outcome"] = "query_failed";
    query["failure"] = r.failure;
    r.rows = Json::array();
    r.report = {{"query", query},
                {"gpus", r.rows},
                {"node_findings", Json::array()},
                {"malformed_rows", Json::array()},
                {"summary",
                 {{"worst_severity", "none"},
                  {"would_drain", false},
                  {"classification_only", true},
                  {"reason", ""},
                  {"incomplete", true},
                  {"gpus", 0}}}};
    return r;
  };

  std::vector<Finding> node_findings;
  bool fault_exit = false;
  switch (e.outcome) {
    case Evidence::Outcome::kOk:
      break;
    case Evidence::Outcome::kFailed:
      if (IsHardwareFaultExit(e.exit_code)) {
        fault_exit = true;
        node_findings.push_back({"nvidia-smi-exit-" + std::to_string(e.exit_code), Severity::kFatal,
                                 "node",
                                 "nvidia-smi exited " + std::to_string(e.exit_code) + ": " +
                                     NvidiaSmiExitMeaning(e.exit_code) +
                                     " (no GPU named: it may be any GPU of the node)",
                                 1 << 20});
        break;
      }
      return failed("nvidia-smi exited " + std::to_string(e.exit_code) + " (" +
                    NvidiaSmiExitMeaning(e.exit_code) + "): " + Clip(e.cause, 300));
    case Evidence::Outcome::kTimedOut:
      return failed("timed out (a hang is a symptom; even a later exit 15 is not evidence): " +
                    Clip(e.cause, 300));
    case Evidence::Outcome::kRefused:
      return failed("refused: " + Clip(e.cause, 300));
    case Evidence::Outcome::kUnavailable:
      return failed("nvidia-smi unavailable: " + Clip(e.cause, 300));
  }

  std::vector<std::string_view> lines;
  for (std::string_view l : SplitLines(e.out)) {
    if (!TrimBlanks(l).empty()) lines.push_back(l);
  }
  const bool any_csv = std::any_of(lines.begin(), lines.end(), [](std::string_view l) {
    return l.find(',') != std::string_view::npos;
  });
  if (!fault_exit) {
    if (lines.empty()) return failed("nvidia-smi exited 0 and listed no GPU");
    if (!any_csv) return failed("output is not CSV: " + Clip(lines.front(), 160));
  }

  const size_t n = GpuHealthFields().size();
  std::vector<Gpu> gpus;
  Json malformed = Json::array();
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (fault_exit && line.find(',') == std::string_view::npos) continue;  // the error message
    std::vector<std::string_view> cells = SplitCells(line);
    std::string why;
    int index = -1;
    std::string bus;
    if (cells.size() != n) {
      why = "has " + std::to_string(cells.size()) + " columns, expected " + std::to_string(n);
    } else {
      Field idx = Integer(cells[0], 0, 1023);
      bus = CanonicalBusId(cells[3]);
      if (!idx.known) {
        why = "index " + Clip(cells[0], 40) + " unparseable";
      } else if (bus.empty()) {
        why = "PCI bus id " + Clip(cells[3], 40) + " unparseable";
      } else {
        index = static_cast<int>(*idx.number);
      }
    }
    if (!why.empty()) {
      malformed.push_back({{"line", Clip(line, 300)}, {"why", why}});
      node_findings.push_back({"malformed-row", Severity::kUnknown, "node",
                               "a row of nvidia-smi's output " + why + ": that GPU is not checked",
                               1 << 20});
      continue;
    }
    gpus.push_back(ReadRow(cells, index, bus));
    Check(gpus.back(), options);
  }

  std::vector<const Finding*> all;
  for (const Gpu& g : gpus) {
    for (const Finding& f : g.findings) all.push_back(&f);
  }
  for (const Finding& f : node_findings) all.push_back(&f);
  Severity worst = Severity::kNone;
  bool incomplete = !malformed.empty();
  for (const Finding* f : all) {
    worst = std::max(worst, f->severity);
    incomplete = incomplete || f->severity == Severity::kUnknown;
  }
  const bool would_drain = worst >= Severity::kDegraded;

  r.rows = Json::array();
  for (const Gpu& g : gpus) {
    Json fields = Json::object();
    for (const std::string& name : GpuHealthFields()) fields[name] = FieldJson(g.fields.at(name));
    Json findings = Json::array();
    Severity gpu_worst = Severity::kNone;
    for (const Finding& f : g.findings) {
      findings.push_back(FindingJson(f));
      gpu_worst = std::max(gpu_worst, f.severity);
    }
    Json clock_reasons = nullptr;
    if (auto c = Num(g, "clocks_throttle_reasons.active")) {
      clock_reasons = DecodeClockReasons(static_cast<std::uint64_t>(*c));
    }
    r.rows.push_back({{"index", g.index},
                      {"label", "gpu" + std::to_string(g.index)},
                      {"uuid", g.fields.at("uuid").value},
                      {"name", g.fields.at("name").value},
                      {"pci_bus_id", g.bus_id},
                      {"mig", g.mig},
                      {"clock_reasons", clock_reasons},
                      {"worst_severity", SeverityName(gpu_worst)},
                      {"findings", findings},
                      {"fields", fields}});
  }
  Json node = Json::array();
  for (const Finding& f : node_findings) node.push_back(FindingJson(f));
  query["outcome"] = fault_exit ? "hardware_fault_exit" : "ok";
  r.evidence = true;
  r.report = {{"query", query},
              {"gpus", r.rows},
              {"node_findings", node},
              {"malformed_rows", malformed},
              {"summary",
               {{"worst_severity", SeverityName(worst)},
                {"would_drain", would_drain},
                {"classification_only", true},
                {"reason", would_drain ? DrainReason(all, worst) : ""},
                {"incomplete", incomplete},
                {"gpus", gpus.size()}}}};
  return r;
}

GpuHealthReport AssessGpuHealth(const Evidence& e, const GpuHealthOptions& options) {
  GpuHealthReport r = Assess(e, options);
  // nvidia-smi's output is bytes, and Clip may cut a character in two: replace what is not UTF-8
  // with U+FFFD, so that the report serialises (found by topics_fuzz).
  r.report = WithValidUtf8(r.report);
  r.rows = r.report["gpus"];
  return r;
}

static Json FindingSchema() {
  return {{"type", "object"},
          {"properties",
           {{"check", {{"type", "string"}}},
            {"severity", {{"enum", {"unknown", "transient", "degraded", "fatal"}}}},
            {"label", {{"type", "string"}}},
            {"detail", {{"type", "string"}}}}},
          {"required", {"check", "severity", "label", "detail"}},
          {"additionalProperties", false}};
}

Json GpuHealthRowSchema() {
  const Json field = {{"type", "object"},
                      {"properties",
                       {{"value", {{"type", {"integer", "string", "null"}}}},
                        {"known", {{"type", "boolean"}}},
                        {"raw", {{"type", "string"}}},
                        {"reason", {{"type", "string"}}}}},
                      {"required", {"value", "known", "raw"}},
                      {"additionalProperties", false}};
  Json fields = {{"type", "object"}, {"additionalProperties", false}};
  Json required = Json::array();
  for (const std::string& f : GpuHealthFields()) {
    fields["properties"][f] = field;
    required.push_back(f);
  }
  fields["required"] = required;
  return {{"type", "object"},
          {"properties",
           {{"index", {{"type", "integer"}, {"minimum", 0}}},
            {"label", {{"type", "string"}}},
            {"uuid", {{"type", Json::array({"string", "null"})}}},
            {"name", {{"type", Json::array({"string", "null"})}}},
            {"pci_bus_id", {{"type", "string"}}},
            {"mig", {{"type", "boolean"}}},
            {"clock_reasons",
             {{"type", Json::array({"array", "null"})}, {"items", {{"type", "string"}}}}},
            {"worst_severity", {{"enum", {"none", "unknown", "transient", "degraded", "fatal"}}}},
            {"findings", {{"type", "array"}, {"items", FindingSchema()}}},
            {"fields", fields}}},
          {"required",
           {"index", "label", "uuid", "name", "pci_bus_id", "mig", "clock_reasons",
            "worst_severity", "findings", "fields"}},
          {"additionalProperties", false}};
}

Json GpuHealthReportSchema() {
  auto object = [](Json properties, Json required) {
    return Json{{"type", "object"},
                {"properties", std::move(properties)},
                {"required", std::move(required)},
                {"additionalProperties", false}};
  };
  const Json str = {{"type", "string"}};
  const Json severity = {{"enum", {"none", "unknown", "transient", "degraded", "fatal"}}};
  Json query = object({{"outcome", {{"enum", {"ok", "hardware_fault_exit", "query_failed"}}}},
                       {"argv", {{"type", "array"}, {"items", str}}},
                       {"exit_code", {{"type", "integer"}}},
                       {"exit_meaning", str},
                       {"timed_out", {{"type", "boolean"}}},
                       {"read_outcome", str},
                       {"stderr", str},
                       {"failure", str}},
                      Json::array({"outcome", "argv", "exit_code", "exit_meaning", "timed_out"}));
  Json malformed = object({{"line", str}, {"why", str}}, Json::array({"line", "why"}));
  Json summary = object({{"worst_severity", severity},
                         {"would_drain", {{"type", "boolean"}}},
                         {"classification_only", {{"const", true}}},
                         {"reason", str},
                         {"incomplete", {{"type", "boolean"}}},
                         {"gpus", {{"type", "integer"}, {"minimum", 0}}}},
                        Json::array({"worst_severity", "would_drain", "classification_only",
                                     "reason", "incomplete", "gpus"}));
  Json properties = Json::object();
  properties["query"] = query;
  properties["gpus"] = {{"type", "array"}, {"items", GpuHealthRowSchema()}};
  properties["node_findings"] = {{"type", "array"}, {"items", FindingSchema()}};
  properties["malformed_rows"] = {{"type", "array"}, {"items", malformed}};
  properties["summary"] = summary;
  return object(properties,
                Json::array({"query", "gpus", "node_findings", "malformed_rows", "summary"}));
}

}  // namespace slurm_rca::mcp
