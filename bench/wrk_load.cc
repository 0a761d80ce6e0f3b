#include "bench/wrk_load.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#include "scenarios/live/process.h"

namespace slurm_rca::bench {

namespace {

// "key=value key=value" after the CHECK word.
std::map<std::string, double> Fields(const std::string& line) {
  std::map<std::string, double> out;
  std::istringstream in(line);
  std::string word;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = std::atof(word.c_str() + eq + 1);
  }
  return out;
}


}  // namespace

base::Result<WrkRun> RunWrk(const WrkOptions& o) {
  char duration[32], timeout[32];
  // wrk reads whole seconds only.
  std::snprintf(duration, sizeof duration, "%lds", std::max(1L, std::lround(o.seconds)));
  std::snprintf(timeout, sizeof timeout, "%lds", std::max(1L, std::lround(o.timeout_seconds)));
  const std::string n = std::to_string(o.connections);
  const std::vector<std::string> argv = {o.wrk,
                                         "-t" + n,
                                         "-c" + n,
                                         std::string("-d") + duration,
                                         "--timeout",
                                         timeout,
                                         "-s",
                                         o.script,
                                         (o.tls ? "https" : "http") + std::string("://127.0.0.1:") +
                                             std::to_string(o.port) + "/mcp",
                                         "--",
                                         o.arguments,
                                         std::to_string(o.rows),
                                         o.row_key,
                                         o.expected_file.empty() ? "-" : o.expected_file,
                                         o.bearer_file.empty() ? "-" : o.bearer_file};
  WrkRun run;
  for (const std::string& a : argv) run.command += (run.command.empty() ? "" : " ") + a;
  // wrk gets 30 s past its own duration before it is killed.
  const live::ToolResult wrk = live::RunTool(
      argv, {}, std::chrono::milliseconds(static_cast<long>(1000 * o.seconds) + 30000));
  if (!wrk.error.empty()) return base::Status::Error("wrk: " + wrk.error);
  run.cpu_seconds = wrk.cpu_seconds;
  const std::string text = wrk.out + wrk.err;
  const size_t check = wrk.out.find("CHECK ");
  if (!wrk.ok() || check == std::string::npos) {
    std::string tail = text.size() > 300 ? "..." + text.substr(text.size() - 300) : text;
    for (char& c : tail) c = c == '\n' ? ' ' : c;
    return base::Status::Error(
        "wrk " +
        (wrk.timed_out ? std::string("timed out")
                       : wrk.exit_code >= 0 ? "exited " + std::to_string(wrk.exit_code)
                                            : std::string("was killed by a signal")) +
        (check == std::string::npos ? " without a CHECK line" : "") + ": " + tail);
  }
  std::map<std::string, double> f =
      Fields(wrk.out.substr(check, wrk.out.find('\n', check) - check));
  run.ok = static_cast<long>(f["ok"]);
  run.identical = static_cast<long>(f["identical"]);
  run.bad = static_cast<long>(f["bad"]);
  run.init_bad = static_cast<long>(f["init_bad"]);
  run.sessions = static_cast<long>(f["sessions"]);
  run.requests = static_cast<long>(f["requests"]);
  run.timeouts = static_cast<long>(f["timeout"]);
  run.socket_errors = static_cast<long>(f["connect"] + f["read"] + f["write"] + f["timeout"]);
  run.seconds = f["duration_us"] * 1e-6;
  run.p50_us = f["p50_us"];
  run.p99_us = f["p99_us"];
  run.max_us = f["max_us"];
  const size_t ids = wrk.out.find("SESSIONS ");
  if (ids != std::string::npos) {
    std::istringstream in(wrk.out.substr(ids + 9, wrk.out.find('\n', ids) - ids - 9));
    for (std::string id; in >> id;) run.session_ids.push_back(id);
  }
  const size_t first = wrk.out.find("FIRST_BAD ");
  if (first != std::string::npos) {
    run.first_bad = wrk.out.substr(first + 10, wrk.out.find('\n', first) - first - 10);
  }
  return run;
}

}  // namespace slurm_rca::bench
