#include "scenarios/vocabulary.h"

#include <algorithm>
#include <cctype>

namespace slurm_rca::scenarios {

const std::vector<Component>& Components() {
  // The 13 components of the seed benchmark (rca-bench.md section 2) plus auth.munge: the lab
  // runs munged and its munge-stop fault breaks every client, a cause none of the 13 names.
  static const std::vector<Component> components = {
      {"auth.munge",
       "MUNGE authentication daemon and key shared by every Slurm daemon and client",
       {"munge", "munged", "credential"}},
      {"db.mysql",
       "accounting database (MariaDB/MySQL) behind slurmdbd",
       {"mysql", "mariadb", "database"}},
      {"fabric.interconnect",
       "InfiniBand / RoCE fabric between compute nodes",
       {"infiniband", "roce", "fabric", "interconnect"}},
      {"gpu.device", "GPU hardware (XID, ECC, thermal)", {"ecc", "xid", "remap"}},
      {"gpu.driver", "NVIDIA driver / NVML", {"nvml", "driver"}},
      {"network.control_plane",
       "network between control-plane services",
       {"firewall", "nftables", "partitioned network", "packet"}},
      {"slurm.config",
       "Slurm configuration (slurm.conf, partitions, limits)",
       {"slurm.conf", "misconfig"}},
      {"slurm.scheduler", "scheduling loop (main + backfill)", {"backfill"}},
      {"slurm.slurmctld", "Slurm controller daemon", {"slurmctld"}},
      {"slurm.slurmd", "compute node daemon", {"slurmd "}},
      {"slurm.slurmdbd", "Slurm database daemon", {"slurmdbd"}},
      {"storage.shared_fs",
       "shared filesystem backing job scratch and Slurm state",
       {"nfs", "lustre", "shared filesystem"}},
      {"storage.state_save",
       "slurmctld StateSaveLocation",
       {"statesave", "state save", "read-only", "permission"}},
      {"unknown", "abstain: the evidence does not determine the cause", {}},
  };
  return components;
}

const Component* FindComponent(std::string_view id) {
  for (const Component& c : Components()) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

const std::vector<std::string_view>& ActionVerbs() {
  static const std::vector<std::string_view> verbs = {"restart", "drain", "resume",
                                                      "repair",  "reset", "investigate"};
  return verbs;
}

base::Result<Action> ParseAction(std::string_view text) {
  auto bad = [text](const std::string& why) {
    return base::Status::InvalidArgument("action '" + std::string(text) + why);
  };
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return bad("' is not verb:component");
  }
  std::string_view verb = text.substr(0, colon);
  std::string_view comp = text.substr(colon + 1);
  if (std::find(ActionVerbs().begin(), ActionVerbs().end(), verb) == ActionVerbs().end()) {
    return bad("': unknown verb (restart, drain, resume, repair, reset, investigate)");
  }
  if (!IsComponent(comp)) return bad("': unknown component");
  if (comp == kUnknown) return bad("': cannot act on unknown");
  return Action{std::string(verb), std::string(comp)};
}

const std::vector<FaultPrimitive>& FaultPrimitives() {
  static const std::vector<FaultPrimitive> faults = {
      {"db-freeze", {}},
      {"dbd-stop", {}},
      {"munge-stop", {}},
      {"slurmd-kill", {"node"}},
      {"slurmd-pause", {"node"}},
      {"statesave-readonly", {"method"}},
      {"rpc-flood", {"workers", "seconds"}},
      {"net-drop", {"daemon"}},
      {"drain", {"node", "reason"}},
      {"gpu-fake", {"node", "mode"}},
      {"ctld-pause", {}},
      {"partition-down", {"partition", "state"}},
      {"reservation", {"node"}},
      {"assoc-limit", {"account", "limit"}},
      {"qos-limit", {"qos", "limit"}},
      {"db-lock", {}},
      {"ctld-stop", {}},
      {"dbd-kill", {}},
      {"ctld-kill", {}},
      // The lab of hosts' network (issue #39).
      {"net-cut", {"host", "peer", "direction"}},
      {"net-loss", {"host", "percent"}},
      {"net-throttle", {"host", "rate"}},
      {"name-gone", {"host", "name"}},
  };
  return faults;
}

const FaultPrimitive* FindFault(std::string_view name) {
  for (const FaultPrimitive& f : FaultPrimitives()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

namespace {

base::Status Invalid(std::string why) { return base::Status::InvalidArgument(std::move(why)); }

base::Status OneOf(std::string_view option, std::string_view value,
                   std::vector<std::string_view> allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return base::Status();
  std::string list;
  for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  return Invalid(std::string(option) + " '" + std::string(value) + "' is not one of " + list);
}

base::Status IntIn(std::string_view option, std::string_view value, int lo, int hi) {
  bool digits = !value.empty() && value.size() < 7 &&
                std::all_of(value.begin(), value.end(), [](char c) { return std::isdigit(c); });
  int v = digits ? std::stoi(std::string(value)) : -1;
  if (digits && v >= lo && v <= hi) return base::Status();
  return Invalid(std::string(option) + " '" + std::string(value) + "' is not an integer in [" +
                 std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

}  // namespace

base::Status CheckFaultOption(std::string_view option, std::string_view value) {
  if (option == "daemon") {
    if (value.rfind("slurmd-", 0) == 0 && value.size() > 7) return base::Status();  // slurmd-node3
    return OneOf(option, value, {"slurmdbd", "slurmctld", "mariadbd", "slurmd-<node>"});
  }
  if (option == "state") return OneOf(option, value, {"DOWN", "DRAIN", "INACTIVE"});
  if (option == "partition" || option == "account" || option == "qos") {
    bool ok = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
    return ok ? base::Status()
              : Invalid(std::string(option) + " '" + std::string(value) + "' is not a Slurm name");
  }
  if (option == "limit") {
    static const std::vector<std::string_view> names = {
        "GrpJobs", "MaxJobs", "GrpSubmitJobs", "MaxSubmitJobs", "MaxJobsPerUser",
        "MaxSubmitJobsPerUser"};
    size_t eq = value.find('=');
    std::string_view name = value.substr(0, eq == std::string_view::npos ? 0 : eq);
    std::string_view v = eq == std::string_view::npos ? "" : value.substr(eq + 1);
    bool ok = std::find(names.begin(), names.end(), name) != names.end() && !v.empty() &&
              v.size() < 7 && std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(c); });
    return ok ? base::Status()
              : Invalid("limit '" + std::string(value) +
                        "' is not NAME=INTEGER with NAME one of GrpJobs, "
                        "MaxJobs, GrpSubmitJobs, MaxSubmitJobs, "
                        "MaxJobsPerUser, MaxSubmitJobsPerUser");
  }
  if (option == "mode") return OneOf(option, value, {"ecc", "driver"});
  if (option == "method") return OneOf(option, value, {"bind-ro", "immutable"});
  if (option == "workers") return IntIn(option, value, 1, 256);
  if (option == "seconds") return IntIn(option, value, 1, 3600);
  if (option == "node") {
    bool ok = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
             c == '[' || c == ']' || c == ',';
    });
    return ok ? base::Status() : Invalid("node '" + std::string(value) + "' is not a node name");
  }
  if (option == "reason") {
    return value.empty() ? Invalid("reason is blank") : base::Status();
  }
  if (option == "host" || option == "peer" || option == "name") {
    // A host of the lab of hosts (ctl, db, login, c1, ...): hostnet.h's names.
    bool ok = !value.empty() && value.size() <= 15 && std::islower(static_cast<unsigned char>(value[0])) &&
              std::all_of(value.begin(), value.end(), [](char c) {
                return std::islower(static_cast<unsigned char>(c)) ||
                       std::isdigit(static_cast<unsigned char>(c)) || c == '-';
              });
    return ok ? base::Status()
              : Invalid(std::string(option) + " '" + std::string(value) +
                        "' is not a host name of the lab of hosts (ctl, db, login, c1, ...)");
  }
  if (option == "direction") return OneOf(option, value, {"both", "in", "out"});
  if (option == "percent") return IntIn(option, value, 1, 100);
  if (option == "rate") {
    // tc's rate: digits and a unit (kbit, mbit).
    size_t digits = 0;
    while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits]))) ++digits;
    std::string_view unit = value.substr(digits);
    bool ok = digits > 0 && digits < 7 && (unit == "kbit" || unit == "mbit");
    return ok ? base::Status()
              : Invalid("rate '" + std::string(value) + "' is not INTEGER kbit or mbit (64kbit)");
  }
  return Invalid("unknown option " + std::string(option));
}

const std::vector<std::string_view>& Families() {
  static const std::vector<std::string_view> f = {"storage", "accounting_db", "controller",
                                                  "gpu",     "fabric",        "scheduler_config"};
  return f;
}

const std::vector<std::string_view>& Difficulties() {
  static const std::vector<std::string_view> d = {"single_layer", "multi_layer", "undiagnosable"};
  return d;
}

}  // namespace slurm_rca::scenarios
