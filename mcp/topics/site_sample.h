// Generated outputs of a site, for tests and benchmarks (header only): what sinfo -N and squeue
// print on a cluster of `nodes` nodes and `jobs` queued jobs, in the format of the 22.05
// captures (fixtures/slurm-22.05), seeded, with the true counts beside them. Generated, not
// recorded: a lab's real outputs are read by bench/scale_bench --slurm-conf.
//
//   Site s = MakeSite(1024, 50000, /*seed=*/1);  // s.squeue, s.sinfo, s.rich_sinfo, s.jobs ...
#ifndef SLURM_RCA_MCP_TOPICS_SITE_SAMPLE_H_
#define SLURM_RCA_MCP_TOPICS_SITE_SAMPLE_H_

#include <cstdint>
#include <iomanip>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace slurm_rca::mcp::site_sample {

inline std::string Name(const std::string& prefix, int i) {
  std::ostringstream n;
  n << prefix << std::setw(4) << std::setfill('0') << i;
  return n.str();
}

// A site: 1,024 nodes (gpu0001-0128 in gpu and all, node0129-1024 in cpu and all, the default
// partition all*), some drained for several reasons, some down, the rest idle, mixed or
// allocated; and its queue of single jobs and pending arrays.
struct Site {
  std::string sinfo;       // the nodes topic's argv (%N|%P|%T|%C|%G|%E)
  std::string rich_sinfo;  // the overview's (%N|%P|%T|%C|%G|%a|%H|%E)
  std::string squeue;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> unavailable;
  std::map<std::string, std::uint64_t> cpus_by_state;  // distinct nodes
  std::map<std::pair<std::string, std::string>, std::uint64_t> rows_by_state_reason;
  std::uint64_t jobs = 0;  // array tasks counted
};

inline Site MakeSite(int nodes, int jobs, unsigned seed, int reasons = 4) {
  Site s;
  std::mt19937 rng(seed);
  for (int i = 1; i <= nodes; ++i) {
    const bool gpu = i <= nodes / 8;
    const std::string node = Name(gpu ? "gpu" : "node", i);
    std::string state = "idle", reason = "none", since = "Unknown";
    const unsigned r = rng() % 100;
    if (r < 3 || i == nodes) {
      state = "drained";
      reason = "reason " + std::to_string(rng() % reasons) + ": hardware check failed";
      since = "2026-12-0" + std::to_string(1 + rng() % 4) + "T0" + std::to_string(rng() % 10) +
              ":00:00";
    } else if (r < 4) {
      state = "down*";
      reason = "Not responding";
      since = "2026-12-04T12:00:00";
    } else if (r < 40) {
      state = "allocated";
    } else if (r < 55) {
      state = "mixed";
    }
    if (state != "idle" && state != "allocated" && state != "mixed") {
      s.unavailable[{state, reason}].push_back(node);
    }
    const int cpus = gpu ? 64 : 32;
    s.cpus_by_state[state] += cpus;
    for (const std::string& partition : {std::string(gpu ? "gpu" : "cpu"), std::string("all*")}) {
      const std::string gres = gpu ? "gpu:a100:8(S:0-1)" : "(null)";
      const std::string c = "0/" + std::to_string(cpus) + "/0/" + std::to_string(cpus);
      s.sinfo += node + "|" + partition + "|" + state + "|" + c + "|" + gres + "|" + reason + "\n";
      s.rich_sinfo += node + "|" + partition + "|" + state + "|" + c + "|" + gres + "|up|" + since +
                      "|" + reason + "\n";
      ++s.rows_by_state_reason[{state, reason}];
    }
  }
  static const char* kReasons[] = {"(Priority)", "(Resources)", "(QOSMaxJobsPerUserLimit)",
                                   "(Dependency)", "(AssocGrpCpuLimit)"};
  for (int j = 0; j < jobs; ++j) {
    const int id = 100000 + j;
    const std::string partition = j % 3 ? "cpu" : "gpu";
    const std::string user = "user" + std::to_string(j % 11);
    if (j % 25 == 0) {
      // A running job on a node.
      s.squeue += std::to_string(id) + "|" + partition + "|" + user + "|RUNNING|1:02:03|1|" +
                  Name("node", 129 + j % 800) + "\n";
      s.jobs += 1;
    } else if (j % 97 == 0) {
      // A pending array of 50 tasks, at most 5 at once.
      s.squeue += std::to_string(id) + "_[1-50%5]|" + partition + "|" + user +
                  "|PENDING|0:00|2|(JobArrayTaskLimit)\n";
      s.jobs += 50;
    } else {
      s.squeue += std::to_string(id) + "|" + partition + "|" + user + "|PENDING|0:00|1|" +
                  kReasons[rng() % 5] + "\n";
      s.jobs += 1;
    }
  }
  return s;
}

// state,reason of the queue topic's squeue text counted independently of the parser (split on
// '|'): the oracle of group_by in scale_test, and of scale_bench on a lab's real output.
inline std::map<std::pair<std::string, std::string>, std::size_t> RawQueueCount(const std::string& out) {
  std::map<std::pair<std::string, std::string>, std::size_t> counts;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string field; std::getline(ls, field, '|');) f.push_back(field);
    if (f.size() < 7) continue;
    std::string reason =
        f[6].size() >= 2 && f[6].front() == '(' ? f[6].substr(1, f[6].size() - 2) : "None";
    ++counts[{f[3], reason}];
  }
  return counts;
}

}  // namespace slurm_rca::mcp::site_sample

#endif  // SLURM_RCA_MCP_TOPICS_SITE_SAMPLE_H_
