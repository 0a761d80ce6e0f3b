#include "guard/oracle.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace slurm_rca::guard::oracle {
namespace {

using Words = std::vector<std::string_view>;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Slurm matches command words case-insensitively by prefix; any prefix may reach the word.
bool MayReach(std::string_view token, const Words& words) {
  if (token.empty()) return false;
  std::string t = Lower(token);
  for (std::string_view w : words) {
    if (t.size() <= w.size() && w.substr(0, t.size()) == t) return true;
  }
  return false;
}

// getopt_long expands a unique prefix; we treat any prefix as reaching the option.
bool LongMayBe(std::string_view name, const Words& longs) {
  if (name.empty()) return false;
  for (std::string_view l : longs) {
    if (name.size() <= l.size() && l.substr(0, name.size()) == name) return true;
  }
  return false;
}

// What upstream getopt would see, per program: short letters taking a value, long options
// taking a value (required), and the dangerous short letters / long names.
struct Getopt {
  std::string_view value_shorts;  // letters followed by ':' in the optstring
  Words value_longs;
  std::string_view bad_shorts;  // letters that change state, read files, leak or loop
  Words bad_longs;
};

Getopt GetoptOf(std::string_view program) {
  if (program == "sdiag") return {"M", {"cluster", "clusters"}, "r", {"reset"}};
  if (program == "sinfo") {
    return {"MSinOopt", {"cluster", "clusters", "sort", "iterate", "nodes", "format", "Format",
                         "partition", "states"},
            "i", {"iterate"}};
  }
  if (program == "squeue") {
    return {"AMSiLnOoqpRtuw", {"account", "accounts", "cluster", "clusters", "sort", "iterate",
                               "licenses", "name", "format", "Format", "qos", "partition",
                               "partitions", "reservation", "states", "user", "users",
                               "nodelist"},
            "i", {"iterate"}};
  }
  if (program == "sacct") {
    return {"ACEFfgIijkKMNoqRrSsTuWxZ",
            {"accounts", "cluster", "clusters", "constraints", "endtime", "file", "flags",
             "format", "fields", "gid", "group", "jobs", "nnodes", "ncpus", "nodelist", "qos",
             "reason", "partition", "starttime", "state", "user", "uid", "wckeys", "delimiter",
             "name", "units", "associations", "timelimit-min", "timelimit-max"},
            "fBL", {"file", "batch-script", "env-vars", "allclusters"}};
  }
  if (program == "sprio") {
    return {"MopSu", {"cluster", "clusters", "format", "partition", "sort", "user", "users"}, "",
            {}};
  }
  if (program == "sshare") {
    return {"AMou", {"accounts", "cluster", "clusters", "format", "users"}, "", {}};
  }
  if (program == "scontrol") return {"Mu", {"cluster", "clusters", "uid"}, "u", {"uid"}};
  if (program == "sacctmgr") return {"", {}, "i", {"immediate"}};
  return {};
}

const Words kScontrolWrites = {
    "update", "create", "delete", "reconfigure", "shutdown", "takeover", "abort", "setdebug",
    "setdebugflags", "schedloglevel", "fsdampeningfactor", "fairsharedampeningfactor", "reboot",
    "reboot_nodes", "cancel_reboot", "requeue", "requeuehold", "hold", "holdu", "uhold",
    "release", "suspend", "resume", "top", "notify", "power", "token", "write", "hash_file",
    "wait_job", "exit", "quit"};
const Words kSacctmgrWrites = {"add", "create", "modify", "update", "delete", "remove",
                               "archive", "load", "clear", "rollup", "reconfigure", "shutdown",
                               "dump", "exit", "quit"};
const Words kNvidiaBad = {
    "-pm", "--persistence-mode", "-e", "--ecc-config", "-p", "--reset-ecc-errors", "-c",
    "--compute-mode", "--gom", "-r", "--gpu-reset", "-vm", "--virt-mode", "-lgc",
    "--lock-gpu-clocks", "-m", "--mode", "-rgc", "--reset-gpu-clocks", "-lmc",
    "--lock-memory-clocks", "-rmc", "--reset-memory-clocks", "-lmcd",
    "--lock-memory-clocks-deferred", "-rmcd", "--reset-memory-clocks-deferred", "-ac",
    "--applications-clocks", "-rac", "--reset-applications-clocks", "-cc", "--cuda-clocks",
    "-pl", "--power-limit", "-sc", "--scope", "-am", "--accounting-mode", "-caa",
    "--clear-accounted-apps", "--auto-boost-default", "--auto-boost-permission", "-mig",
    "--multi-instance-gpu", "-gtt", "--gpu-target-temp", "-t", "--toggle-led", "-f",
    "--filename", "--debug", "-l", "--loop", "-lms", "--loop-ms"};
const Words kNvidiaBadSubcommands = {"mig", "drain", "clocks", "compute-policy", "boost-slider",
                                     "conf-compute", "vgpu", "daemon", "dmon", "pmon", "replay",
                                     "gpm", "nvlink", "power-hint", "c2c"};

// Walks argv as getopt would; returns the positionals under every reading of ambiguous tokens
// (an abbreviated long option that may or may not take the next token). Also reports bad
// options. Branching is capped; beyond the cap every ambiguous token is read both ways at once.
void Walk(const std::vector<std::string>& argv, size_t i, const Getopt& g,
          std::vector<std::string_view>& positionals, std::vector<std::vector<std::string_view>>& out,
          std::optional<std::string>& bad, int budget) {
  for (; i < argv.size(); ++i) {
    std::string_view t = argv[i];
    if (t == "--") {
      for (size_t k = i + 1; k < argv.size(); ++k) positionals.push_back(argv[k]);
      break;
    }
    if (t.size() >= 2 && t.substr(0, 2) == "--") {
      std::string_view name = t.substr(2);
      size_t eq = name.find('=');
      bool attached = eq != std::string_view::npos;
      name = name.substr(0, eq);
      if (LongMayBe(name, g.bad_longs)) {
        bad = "option --" + std::string(name) + " may reach a refused option";
        return;
      }
      if (!attached && LongMayBe(name, g.value_longs) && i + 1 < argv.size()) {
        if (budget > 0) {
          std::vector<std::string_view> branch = positionals;  // the next token is a value
          Walk(argv, i + 2, g, branch, out, bad, budget / 2);
          if (bad) return;
          budget /= 2;
        } else {
          positionals.push_back(argv[i + 1]);  // read it both ways: also as a positional
          ++i;
        }
      }
      continue;
    }
    if (t.size() >= 2 && t[0] == '-') {
      for (size_t k = 1; k < t.size(); ++k) {
        if (g.bad_shorts.find(t[k]) != std::string_view::npos) {
          bad = std::string("short option -") + t[k] + " is refused";
          return;
        }
        if (g.value_shorts.find(t[k]) != std::string_view::npos) {
          if (k + 1 == t.size()) ++i;  // value in the next token
          break;
        }
      }
      continue;
    }
    positionals.push_back(t);
  }
  out.push_back(positionals);
}

std::optional<std::string> SlurmViolation(const std::vector<std::string>& argv) {
  std::string_view program = argv[0];
  Getopt g = GetoptOf(program);
  std::vector<std::vector<std::string_view>> readings;
  std::vector<std::string_view> positionals;
  std::optional<std::string> bad;
  Walk(argv, 1, g, positionals, readings, bad, 64);
  if (bad) return bad;
  for (const auto& pos : readings) {
    for (std::string_view p : pos) {
      if (p.find('/') != std::string_view::npos || p == "-") {
        return "positional '" + std::string(p) + "' could name a file or stdin";
      }
    }
    if (program == "scontrol" || program == "sacctmgr") {
      if (pos.empty()) return program == "scontrol" ? "bare scontrol reads stdin"
                                                    : "bare sacctmgr reads stdin";
      const Words& writes = program == "scontrol" ? kScontrolWrites : kSacctmgrWrites;
      if (MayReach(pos[0], writes)) return "command '" + std::string(pos[0]) + "' may change state";
      if (program == "scontrol" && Lower(pos[0]) == "show" && pos.size() > 1 &&
          MayReach(pos[1], {"hostlist", "hostlistsorted", "bbstat", "dwstat"})) {
        return "show " + std::string(pos[1]) + " may read a file or run a tool";
      }
      if (program == "sacctmgr") {
        for (size_t k = 1; k < pos.size(); ++k) {
          std::string l = Lower(pos[k]);
          if (l == "set") return std::string("a set clause modifies records");
          if (l.rfind("file=", 0) == 0) return "'" + std::string(pos[k]) + "' names a file";
          if (k == 1 && l.size() >= 3 &&
              MayReach(l, {"runawayjobs", "orphanjobs", "lostjobs"})) {
            return "runawayjobs offers to fix records";
          }
        }
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> NvidiaViolation(const std::vector<std::string>& argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view t = argv[i];
    std::string_view name = t.substr(0, t.find('='));
    // "-m" is --mode at the top level (clocks); only in "topo -m" is it the matrix.
    if (name == "-m") {
      if (argv[1] == "topo") continue;
      return std::string("-m sets a clock mode");
    }
    for (std::string_view b : kNvidiaBad) {
      if (name == b) return "nvidia-smi " + std::string(b) + " changes a device, writes or loops";
      if (b.size() > 2 && b.substr(0, 2) == "--" && name.size() > 2 && name.substr(0, 2) == "--" &&
          LongMayBe(name.substr(2), {b.substr(2)})) {
        return "nvidia-smi " + std::string(name) + " may abbreviate " + std::string(b);
      }
    }
    if (i == 1 && !t.empty() && t[0] != '-' && MayReach(t, kNvidiaBadSubcommands)) {
      return "nvidia-smi subcommand " + std::string(t) + " may change a device or stream";
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> Violation(const std::vector<std::string>& argv) {
  if (argv.empty()) return std::string("empty argv");
  for (const std::string& a : argv) {
    for (unsigned char c : a) {
      if (c < 0x20 || c >= 0x7f) return std::string("a byte outside printable ASCII");
    }
  }
  const Words reads = {"sinfo", "squeue", "sacct", "sdiag", "sprio", "sshare", "scontrol",
                       "sacctmgr", "nvidia-smi"};
  if (std::find(reads.begin(), reads.end(), argv[0]) == reads.end()) {
    return "program '" + argv[0] + "' is not a read-only Slurm or GPU query";
  }
  if (argv[0] == "nvidia-smi") return NvidiaViolation(argv);
  return SlurmViolation(argv);
}

}  // namespace slurm_rca::guard::oracle
