#include "bench/mcp_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>

namespace slurm_rca::bench {

namespace {

using mcp::Json;

double Median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// One row of one server over its repetitions.
struct Summary {
  int reps = 0;              // repetitions that ran
  std::string not_measured;  // why none ran
  long ok = 0, failed = 0;
  double rate = NAN, rate_min = NAN, rate_max = NAN;
  double p50_us = NAN, p99_us = NAN, server_us = NAN, loadgen_us = NAN;
  double server_cores = NAN, loadgen_cores = NAN, other_cores = NAN;
  double hwm_mib = NAN;
  bool hwm_reset = true;
  std::string note;  // the first rep's note that says something

  bool answered() const { return reps > 0 && ok > 0; }
};

Summary Summarize(const ServerFigures& f, const std::string& row) {
  Summary s;
  auto it = f.reps.find(row);
  if (it == f.reps.end()) {
    s.not_measured = f.error.empty() ? "not run" : f.error;
    return s;
  }
  std::vector<double> rate, p50, p99, server, loadgen, server_cores, loadgen_cores, other_cores;
  for (const Rep& r : it->second) {
    if (!r.error.empty()) {
      if (s.not_measured.empty()) s.not_measured = r.error;
      continue;
    }
    ++s.reps;
    if (s.note.empty()) s.note = r.note;
    s.ok += r.ok;
    s.failed += r.failed;
    rate.push_back(r.Rate());
    p50.push_back(r.p50_us);
    p99.push_back(r.p99_us);
    server.push_back(r.ServerUsPerCall());
    loadgen.push_back(r.LoadgenUsPerCall());
    server_cores.push_back(r.seconds > 0 ? r.server_cpu_seconds / r.seconds : NAN);
    loadgen_cores.push_back(r.seconds > 0 ? r.loadgen_cpu_seconds / r.seconds : NAN);
    other_cores.push_back(r.seconds > 0 ? r.other_cpu_seconds / r.seconds : NAN);
    if (!std::isnan(r.hwm_mib))
      s.hwm_mib = std::isnan(s.hwm_mib) ? r.hwm_mib : std::max(s.hwm_mib, r.hwm_mib);
    s.hwm_reset = s.hwm_reset && r.hwm_since_reset;
  }
  if (s.reps == 0) return s;
  s.rate = Median(rate);
  s.rate_min = *std::min_element(rate.begin(), rate.end());
  s.rate_max = *std::max_element(rate.begin(), rate.end());
  s.p50_us = Median(p50);
  s.p99_us = Median(p99);
  s.server_us = Median(server);
  s.loadgen_us = Median(loadgen);
  s.server_cores = Median(server_cores);
  s.loadgen_cores = Median(loadgen_cores);
  s.other_cores = Median(other_cores);
  return s;
}

std::string Fmt(const char* format, double v) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// What bounds a row's rate, read off its figures: one call in flight, the machine's cores (with
// other processes' share of them), the server's own CPU, or none of them.
std::string Bound(const RowSpec& row, const Summary& s, int cores) {
  if (!s.answered()) return "-";
  const bool full = s.server_cores + s.loadgen_cores + s.other_cores >= 0.9 * cores;
  const std::string shared = full && s.other_cores >= 0.2 ? "+oth" : "";
  if (row.kind != RowSpec::Kind::kHttp || row.connections == 1) return "1 in flight" + shared;
  if (full) return "machine" + shared;
  if (s.server_cores >= 0.9) return "server";
  return "-";
}

}  // namespace

void PrintTable(const std::vector<ServerFigures>& figures, const std::vector<RowSpec>& rows,
                int cores) {
  std::printf("\n%-10s %-9s %-24s %7s %8s %9s %9s %-15s %-15s %8s %7s\n", "server", "row",
              "calls/s [min-max]", "p50 ms", "p99 ms", "server", "load gen", "cores", "bound",
              "VmHWM", "failed");
  const std::string of_cores = "srv+gen+oth/" + std::to_string(cores);
  std::printf("%-10s %-9s %-24s %7s %8s %9s %9s %-15s %-15s %8s %7s\n", "", "", "", "", "",
              "us/call", "us/call", of_cores.c_str(), "", "MiB", "");
  for (const RowSpec& row : rows) {
    for (const ServerFigures& f : figures) {
      const Summary s = Summarize(f, row.name);
      if (s.reps == 0) {
        std::printf("%-10s %-9s not measured: %s\n", f.name.c_str(), row.name.c_str(),
                    s.not_measured.c_str());
        continue;
      }
      if (s.ok == 0) {
        std::printf("%-10s %-9s no checked answer in %d reps, %ld failed (%s)\n", f.name.c_str(),
                    row.name.c_str(), s.reps, s.failed, s.note.c_str());
        continue;
      }
      const std::string rate = Fmt("%.0f", s.rate) + " [" + Fmt("%.0f", s.rate_min) + "-" +
                               Fmt("%.0f", s.rate_max) + "]";
      const std::string used = Fmt("%.2f", s.server_cores) + "+" + Fmt("%.2f", s.loadgen_cores) +
                               "+" + Fmt("%.2f", s.other_cores);
      std::printf("%-10s %-9s %-24s %7s %8s %9s %9s %-15s %-15s %8s %7ld\n", f.name.c_str(),
                  row.name.c_str(), rate.c_str(), Fmt("%.2f", s.p50_us / 1000).c_str(),
                  Fmt("%.2f", s.p99_us / 1000).c_str(), Fmt("%.1f", s.server_us).c_str(),
                  Fmt("%.1f", s.loadgen_us).c_str(), used.c_str(), Bound(row, s, cores).c_str(),
                  (Fmt("%.1f", s.hwm_mib) + (s.hwm_reset ? "" : "*")).c_str(), s.failed);
    }
  }
  std::printf(
      "\nrows: median of the reps, [min-max] for the rate; VmHWM is the highest rep's peak (* the "
      "peak since the server started: the kernel refused the reset)\n");
  for (const RowSpec& row : rows) std::printf("  %-9s %s\n", row.name.c_str(), row.what.c_str());
  std::printf(
      "cores: CPU used over the rep by the server, the load generator and other processes "
      "(/proc/stat less the first two).\n"
      "bound: what limits the rate. '1 in flight': one call at a time, the rate is the inverse "
      "of the round trip, which holds the client's work per call as well as the server's.\n"
      "'machine': server, load generator and others together used at least 90%% of the %d cores, "
      "so the rate is a lower bound for the server alone. '+oth': the cores were full and other "
      "processes took 0.2 or more of them: the figure is disturbed.\n'server': the server used at "
      "least one whole "
      "core and the machine had room (a single-threaded server is then bound by its thread).\n"
      "'-': neither; the load generator's wake-ups and loopback latency bound it.\n",
      cores);
}

void PrintCostAgainst(const ServerFigures& plain, const ServerFigures& oauth,
                      const std::vector<RowSpec>& rows, const std::string& what) {
  std::printf("\n%s (%s) against plain HTTP without a token (%s), same binary:\n", what.c_str(),
              oauth.name.c_str(), plain.name.c_str());
  for (const RowSpec& row : rows) {
    if (row.kind != RowSpec::Kind::kHttp) continue;
    const Summary p = Summarize(plain, row.name), o = Summarize(oauth, row.name);
    if (!p.answered() || !o.answered()) {
      std::printf("  %-9s not measured on both\n", row.name.c_str());
      continue;
    }
    std::printf("  %-9s server %s -> %s us/call (%s us, %s), %s -> %s calls/s\n", row.name.c_str(),
                Fmt("%.1f", p.server_us).c_str(), Fmt("%.1f", o.server_us).c_str(),
                Fmt("%+.1f", o.server_us - p.server_us).c_str(),
                (Fmt("%+.0f", 100 * (o.server_us / p.server_us - 1)) + " %").c_str(),
                Fmt("%.0f", p.rate).c_str(), Fmt("%.0f", o.rate).c_str());
  }
}

void PrintTargets(const ServerFigures& ours, const ServerFigures* reference,
                  const std::vector<RowSpec>& rows) {
  auto has = [&](const std::string& name) {
    return std::any_of(rows.begin(), rows.end(), [&](const RowSpec& r) { return r.name == name; });
  };
  std::printf("\ntargets (issue #20), measured on %s in this run; figures, not assertions\n",
              ours.name.c_str());
  auto line = [](const std::string& what, const std::string& figure, const char* verdict) {
    std::printf("  %-66s %-26s %s\n", what.c_str(), figure.c_str(), verdict);
  };
  for (const char* row : {"c8", "c64"}) {
    const std::string what =
        std::string("calls/s at ") + (row + 1) + " connections, at least 12x the TS reference's";
    if (!has(row)) continue;
    const Summary a = Summarize(ours, row);
    const Summary b = reference ? Summarize(*reference, row) : Summary{};
    if (!reference || !a.answered() || !b.answered() || a.failed || b.failed) {
      line(what,
           !reference
               ? "reference not measured"
               : (!a.answered() || !b.answered() ? "a side not measured" : "a side had failures"),
           "not measured");
      continue;
    }
    const double ratio = a.rate / b.rate;
    line(what, Fmt("%.0f", a.rate) + " / " + Fmt("%.0f", b.rate) + " = " + Fmt("%.1fx", ratio),
         ratio >= 12 ? "met" : "NOT met");
  }
  // Targets on one figure of slurm-mcp's: the row, the figure, the bound, its unit.
  struct Target {
    std::string row, what;
    std::function<double(const Summary&)> figure;
    double bound;
    const char* unit;
    bool of_answers = true;  // false: measured even when no call was answered (memory)
  };
  const std::vector<Target> targets = {
      {"c8", "server CPU per call, nodes call at 8 connections, at most 25 us",
       [](const Summary& s) { return s.server_us; }, 25, "us"},
      {"c64", "server CPU per call, nodes call at 64 connections, at most 25 us",
       [](const Summary& s) { return s.server_us; }, 25, "us"},
      {"c64", "p99 at 64 connections, at most 5 ms",
       [](const Summary& s) { return s.p99_us / 1000; }, 5, "ms"},
      {"fleet", "p99 in the fleet row, at most 5 ms",
       [](const Summary& s) { return s.p99_us / 1000; }, 5, "ms"},
      {"slowloris", "p99 of a client beside the half-open connections, at most 10 ms",
       [](const Summary& s) { return s.p99_us / 1000; }, 10, "ms"},
      {"fleet", "VmHWM with the fleet's connections open, at most 32 MiB",
       [](const Summary& s) { return s.hwm_mib; }, 32, "MiB", false},
  };
  for (const Target& t : targets) {
    if (!has(t.row)) continue;
    const Summary s = Summarize(ours, t.row);
    if (s.reps == 0) {
      line(t.what, "not measured", "not measured");
    } else if (!s.answered() && t.of_answers) {
      line(t.what, "no answer", "NOT met");
    } else {
      const double v = t.figure(s);
      // A failed call spoils a latency; the memory is measured with the connections open anyway.
      const bool spoilt = s.failed && t.of_answers;
      const std::string failed = s.failed ? ", " + std::to_string(s.failed) + " failed" : "";
      line(t.what, Fmt("%.2f ", v) + t.unit + failed,
           std::isnan(v)             ? "not measured"
           : v <= t.bound && !spoilt ? "met"
                                     : "NOT met");
    }
  }
}

base::Status WriteJson(const std::string& path, Json header,
                       const std::vector<ServerFigures>& figures) {
  Json servers = Json::array();
  for (const ServerFigures& f : figures) {
    Json rows = Json::object();
    for (const auto& [row, reps] : f.reps) {
      Json list = Json::array();
      for (const Rep& r : reps) {
        list.push_back({{"ok", r.ok},
                        {"failed", r.failed},
                        {"seconds", r.seconds},
                        {"calls_per_second", r.Rate()},
                        {"p50_us", r.p50_us},
                        {"p99_us", r.p99_us},
                        {"server_cpu_seconds", r.server_cpu_seconds},
                        {"loadgen_cpu_seconds", r.loadgen_cpu_seconds},
                        {"other_cpu_seconds", r.other_cpu_seconds},
                        {"vmhwm_mib", r.hwm_mib},
                        {"vmhwm_since_reset", r.hwm_since_reset},
                        {"note", r.note},
                        {"error", r.error}});
      }
      rows[row] = list;
    }
    servers.push_back({{"name", f.name},
                       {"server_info", f.info},
                       {"banner", f.banner},
                       {"error", f.error},
                       {"stopped", f.stopped},
                       {"rows", rows}});
  }
  header["servers"] = servers;
  std::ofstream out(path);
  out << header.dump(2) << "\n";
  out.close();
  if (!out) return base::Status::IoError(path + ": cannot write");
  return base::Status();
}

}  // namespace slurm_rca::bench
