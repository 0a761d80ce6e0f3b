#include "mcp/backend/live_flags.h"

#include <chrono>
#include <sstream>

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
  if (flags.timeout != defaults.timeout) {
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

}  // namespace slurm_rca::mcp
