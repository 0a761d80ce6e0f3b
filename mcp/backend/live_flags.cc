#include "mcp/backend/live_flags.h"

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string_view>

namespace slurm_rca::mcp {
namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// "20 s", "2.5 s".
std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

std::string Trim(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// Raised to MessageTimeout plus this: a client of a controller that is down gives up at
// MessageTimeout, and its "connect failure" must reach us before the kill.
constexpr int kMessageTimeoutMargin = 10;

}  // namespace

base::Result<LiveOptions> LiveOptionsFromFlags(const LiveFlags& flags) {
  LiveOptions o;
  o.executor.trusted_dirs = Split(flags.trusted_dirs, ':');
  for (const std::string& d : o.executor.trusted_dirs) {
    if (d.front() != '/') {
      return base::Status::InvalidArgument("--trusted-dirs entry '" + d + "' is not absolute");
    }
  }
  o.executor.timeout = std::chrono::milliseconds(static_cast<long>(flags.timeout * 1000));
  if (!flags.slurm_conf.empty()) o.executor.slurm_conf = flags.slurm_conf;
  o.clusters = Split(flags.clusters, ',');
  o.cache_ttl_seconds = flags.cache_ttl;
  o.max_concurrent = flags.max_concurrent;
  o.max_per_minute = flags.max_per_minute;
  o.executor.max_output_bytes = static_cast<std::size_t>(flags.max_output_mib * (1 << 20));
  for (const std::string& lf : flags.log_files) {
    size_t eq = lf.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == lf.size()) {
      return base::Status::InvalidArgument("--log-file takes DAEMON=PATH, got '" + lf + "'");
    }
    o.log_files[lf.substr(0, eq)] = lf.substr(eq + 1);
  }
  if (!flags.fabric_root.empty()) {
    if (flags.fabric_root.front() != '/') {
      return base::Status::InvalidArgument("--fabric-root '" + flags.fabric_root +
                                           "' is not absolute");
    }
    o.fabric = FabricOptions{.sys_root = flags.fabric_root + "/sys",
                             .proc_root = flags.fabric_root + "/proc",
                             .cgroup_root = flags.fabric_root + "/sys/fs/cgroup"};
  }
  return o;
}

std::vector<std::string> ServeArgs(const LiveFlags& flags) {
  const LiveFlags defaults{};
  std::vector<std::string> args;
  if (!flags.slurm_conf.empty()) args.insert(args.end(), {"--slurm-conf", flags.slurm_conf});
  if (!flags.clusters.empty()) args.insert(args.end(), {"--clusters", flags.clusters});
  for (const std::string& f : flags.log_files) args.insert(args.end(), {"--log-file", f});
  if (flags.trusted_dirs != defaults.trusted_dirs) {
    args.insert(args.end(), {"--trusted-dirs", flags.trusted_dirs});
  }
  if (flags.timeout_given || flags.timeout != defaults.timeout) {
    args.insert(args.end(), {"--timeout", std::to_string(flags.timeout)});
  }
  if (flags.cache_ttl != defaults.cache_ttl) {
    args.insert(args.end(), {"--cache-ttl", std::to_string(flags.cache_ttl)});
  }
  if (flags.max_concurrent != defaults.max_concurrent) {
    args.insert(args.end(), {"--max-concurrent", std::to_string(flags.max_concurrent)});
  }
  if (flags.max_per_minute != defaults.max_per_minute) {
    args.insert(args.end(), {"--max-per-minute", std::to_string(flags.max_per_minute)});
  }
  if (flags.max_output_mib != defaults.max_output_mib) {
    args.insert(args.end(), {"--max-output-mib", std::to_string(flags.max_output_mib)});
  }
  if (!flags.fabric_root.empty()) args.insert(args.end(), {"--fabric-root", flags.fabric_root});
  return args;
}

base::Result<int> ParseMessageTimeout(const std::string& config) {
  std::stringstream in(config);
  for (std::string line; std::getline(in, line);) {
    line = Trim(line);
    constexpr std::string_view kKey = "MessageTimeout";
    if (line.rfind(kKey, 0) != 0) continue;
    const std::string rest = Trim(line.substr(kKey.size()));
    if (rest.empty() || rest.front() != '=') continue;  // another key with this prefix
    const std::string value = Trim(rest.substr(1));
    // Slurm prints whole seconds, "30 sec"; anything else is not guessed at.
    std::size_t digits = 0;
    while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9') ++digits;
    if (digits == 0 || digits > 6 || value.substr(digits) != " sec") {
      return base::Status::MalformedReply("`scontrol show config` printed MessageTimeout = '" +
                                          value.substr(0, 40) + "', not 'N sec'");
    }
    return std::stoi(value.substr(0, digits));
  }
  return base::Status::MalformedReply("`scontrol show config` printed no MessageTimeout line");
}

base::Result<int> MessageTimeoutOf(const Evidence& config) {
  if (config.outcome == Evidence::Outcome::kTimedOut) {
    return base::Status::Unavailable("`scontrol show config` timed out at start");
  }
  if (!config.ok()) {
    // A failed read's cause ends by saying that it is not an empty result: true, but no reason.
    std::string cause = config.cause;
    if (std::size_t cut = cause.find(". The read failed;"); cut != std::string::npos) {
      cause.resize(cut);
    }
    return base::Status::Unavailable("`scontrol show config` at start: " + cause);
  }
  return ParseMessageTimeout(config.out);
}

ReadTimeoutChoice ChooseReadTimeout(double timeout, bool timeout_given,
                                    const base::Result<int>& message_timeout) {
  ReadTimeoutChoice c{.timeout = timeout};
  if (!message_timeout.ok()) {
    // No evidence of MessageTimeout is no reason to change anything: say so, and say it again
    // with every read that times out.
    const std::string& why = message_timeout.status().message();
    c.message = "MessageTimeout unknown: " + why + "; the read timeout stays " + Seconds(timeout) +
                ", at which a controller that is down may read as timed out like a hung one";
    c.timed_out_note = "The controller's MessageTimeout is unknown (" + why +
                       "), so at this read timeout (" + Seconds(timeout) +
                       ") a controller that is down and one that is hung may look the same.";
    return c;
  }
  const int mt = *message_timeout;
  if (mt < timeout) return c;
  const double raised = mt + kMessageTimeoutMargin;
  if (!timeout_given) {
    c.timeout = raised;
    c.message = "the controller's MessageTimeout is " + Seconds(mt) +
                ", at or above the read timeout " + Seconds(timeout) + ": reads now time out at " +
                Seconds(raised) +
                ", so a controller that is down fails (connect failure) before a read is "
                "killed; --timeout overrides";
    return c;
  }
  c.message = "the controller's MessageTimeout is " + Seconds(mt) + ", at or above --timeout " +
              Seconds(timeout) +
              ": a controller that is down and one that is hung will both read as timed out "
              "(without --timeout, reads would time out at " +
              Seconds(raised) + ")";
  c.timed_out_note = "The read timeout (" + Seconds(timeout) +
                     ") is not above the controller's MessageTimeout (" + Seconds(mt) +
                     "), so at this timeout a controller that is down (connection refused) and "
                     "one that is hung look the same.";
  return c;
}

}  // namespace slurm_rca::mcp
