#include "mcp/telemetry/fabric.h"

#include <re2/re2.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "mcp/telemetry/text.h"

namespace slurm_rca::mcp {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// One path component: no '/', not "." or "..".
constexpr char kPart[] = R"([A-Za-z0-9_@:,+=-][A-Za-z0-9_.@:,+=-]*)";

struct Pattern {
  int root;  // 0 sys, 1 proc, 2 cgroup
  FabricRead kind;
  std::string re;
};

// Longest path and deepest relative path read (a cgroup tree is walked at most this deep).
constexpr size_t kMaxPathBytes = 1024;
constexpr int kMaxDepth = 12;

const std::vector<Pattern>& Patterns() {
  static const std::vector<Pattern> p = [] {
    const std::string part = kPart;
    const std::string num = "[0-9]{1,10}";
    return std::vector<Pattern>{
        {0, FabricRead::kList, "class/infiniband"},
        {0, FabricRead::kList, "class/infiniband/" + part + "/ports"},
        {0, FabricRead::kFile,
         "class/infiniband/" + part + "/ports/" + num + "/(state|rate|link_layer)"},
        {0, FabricRead::kList, "class/infiniband/" + part + "/ports/" + num + "/(hw_)?counters"},
        {0, FabricRead::kFile,
         "class/infiniband/" + part + "/ports/" + num + "/(hw_)?counters/" + part},
        {0, FabricRead::kFile, "class/infiniband_verbs/uverbs" + num + "/ibdev"},
        {1, FabricRead::kList, ""},
        {1, FabricRead::kList, num + "/fd"},
        {1, FabricRead::kLink, num + "/fd/" + num},
        {1, FabricRead::kFile, num + "/cmdline"},
        {2, FabricRead::kList, "(" + part + "(/" + part + ")*)?"},
        {2, FabricRead::kFile, "(" + part + "/)+cgroup\\.procs"},
    };
  }();
  return p;
}

const RE2& Compiled(const std::string& re) {
  static const std::map<std::string, std::unique_ptr<RE2>> all = [] {
    std::map<std::string, std::unique_ptr<RE2>> m;
    for (const Pattern& p : Patterns()) m.emplace(p.re, std::make_unique<RE2>(p.re));
    return m;
  }();
  return *all.at(re);
}

const char* KindName(FabricRead k) {
  switch (k) {
    case FabricRead::kList:
      return "list";
    case FabricRead::kFile:
      return "read";
    case FabricRead::kLink:
      return "readlink";
  }
  return "read";
}

struct Gap {
  std::string source;  // sysfs, cgroup, procfd
  std::string path;
  std::string error;
};

// All reads go through here: the allowlist first, then the file system; errors are values.
class Reader {
 public:
  explicit Reader(const FabricOptions& o) : o_(o) {}

  // Entries of a directory, sorted; nullopt with *error on failure.
  std::optional<std::vector<std::string>> List(const std::string& path, std::error_code* ec) {
    if (!Allowed(FabricRead::kList, path, ec)) return std::nullopt;
    std::vector<std::string> names;
    fs::directory_iterator it(path, *ec), end;
    if (*ec) return std::nullopt;
    for (; it != end; it.increment(*ec)) {
      if (*ec) return std::nullopt;
      names.push_back(it->path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::optional<std::string> Read(const std::string& path, std::error_code* ec) {
    if (!Allowed(FabricRead::kFile, path, ec)) return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      *ec = std::error_code(errno ? errno : ENOENT, std::generic_category());
      return std::nullopt;
    }
    std::string text;
    char buf[4096];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      text.append(buf, static_cast<size_t>(in.gcount()));
      if (text.size() > (1 << 20)) break;
    }
    if (in.bad()) {
      *ec = std::error_code(EIO, std::generic_category());
      return std::nullopt;
    }
    *ec = {};
    return text;
  }

  std::optional<std::string> Link(const std::string& path, std::error_code* ec) {
    if (!Allowed(FabricRead::kLink, path, ec)) return std::nullopt;
    fs::path target = fs::read_symlink(path, *ec);
    if (*ec) return std::nullopt;
    return target.string();
  }

  std::vector<std::string> refused;  // reads the allowlist refused (a bug if ever non-empty)

 private:
  bool Allowed(FabricRead kind, const std::string& path, std::error_code* ec) {
    base::Status allowed = CheckFabricPath(o_, kind, path);
    if (allowed.ok()) return true;
    refused.push_back(allowed.message());
    *ec = std::error_code(EPERM, std::generic_category());
    return false;
  }
  const FabricOptions& o_;
};

// A sysfs value: its newline, padding and any NUL a driver leaves.
std::string Trim(const std::string& s) {
  return std::string(base::Trim(s, std::string_view(" \n\0", 3)));
}

struct CounterSpec {
  const char* name;
  int width;  // 0: none known (no saturation judged)
  bool wraps;
};

const std::vector<CounterSpec>& PmaCounters() {
  static const std::vector<CounterSpec> c = {
      {"port_xmit_data", 0, false},
      {"port_rcv_data", 0, false},
      {"port_xmit_packets", 0, false},
      {"port_rcv_packets", 0, false},
      {"port_xmit_wait", 32, false},
      {"symbol_error", 16, false},
      {"port_rcv_errors", 16, false},
      {"port_xmit_discards", 16, false},
      {"port_rcv_remote_physical_errors", 16, false},
      {"port_rcv_switch_relay_errors", 16, false},
      {"VL15_dropped", 16, false},
      {"link_downed", 8, false},
      {"link_error_recovery", 8, false},
      {"local_link_integrity_errors", 4, false},
      {"excessive_buffer_overrun_errors", 4, false},
  };
  return c;
}

const std::vector<CounterSpec>& Mlx5Counters() {
  static const std::vector<CounterSpec> c = {
      {"packet_seq_err", 32, true},
      {"out_of_sequence", 32, true},
      {"out_of_buffer", 32, true},
      {"rnr_nak_retry_err", 32, true},
      {"local_ack_timeout_err", 32, true},
      {"implied_nak_seq_err", 32, true},
      {"duplicate_request", 32, true},
      {"req_cqe_error", 32, true},
      {"resp_cqe_error", 32, true},
      {"req_remote_access_errors", 32, true},
      {"resp_remote_access_errors", 32, true},
      {"req_transport_retries_exceeded", 32, true},
      {"roce_adp_retrans", 32, true},
      {"np_cnp_sent", 0, false},
      {"rp_cnp_handled", 0, false},
      {"rp_cnp_ignored", 0, false},
      {"np_ecn_marked_roce_packets", 0, false},
  };
  return c;
}

struct Port {
  std::string device;
  int port = 0;
  Json json;
};

struct Job {
  std::string dir_name;  // job_918001 or the SLUID
  std::string path;
  std::optional<std::string> job_id;
  std::optional<std::string> sluid;
  std::string resolution;  // numeric_dir, stepd_title, unresolved
  std::string unresolved_why;
  std::set<long> pids;
  std::set<long> stepd_pids;
  std::set<std::string> hcas;
  std::string Key() const { return job_id ? *job_id : "sluid:" + *sluid; }
};

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsDir(const std::string& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

class Scan {
 public:
  explicit Scan(const FabricOptions& o) : o_(o), r_(o) {}

  FabricReport Run() {
    FabricReport out;
    std::vector<Port> ports;
    std::error_code ec;
    const std::string ib = o_.sys_root + "/class/infiniband";
    auto hcas = r_.List(ib, &ec);
    if (!hcas) {
      out.failure = "cannot list " + ib + ": " + ec.message() +
                    " (no InfiniBand/RoCE device visible, or the sysfs root is wrong)";
      out.report = Empty(out.failure);
      return out;
    }
    for (const std::string& hca : *hcas) ReadPorts(hca, &ports);
    ReadJobs();
    ReadProcesses();

    // Users per HCA.
    std::map<std::string, std::set<std::string>> job_users;  // hca -> job keys
    std::map<std::string, std::set<std::string>> unresolved_users;
    for (const Job& j : jobs_) {
      for (const std::string& h : j.hcas) {
        job_users[h].insert(j.Key());
        if (!j.job_id) unresolved_users[h].insert(j.Key());
      }
    }
    const bool gap = !gaps_.empty();
    Json port_list = Json::array();
    std::map<std::string, std::vector<std::string>> job_ports;
    for (Port& p : ports) {
      const std::set<std::string>& users = job_users[p.device];
      const std::set<long>& nonjob = nonjob_users_[p.device];
      Json attributed = nullptr;
      Json suppression = nullptr;
      if (gap) {
        suppression = "evidence_gap";
      } else if (!nonjob.empty()) {
        suppression = "nonjob_user";
      } else if (users.size() > 1) {
        suppression = "shared";
      } else if (users.size() == 1 && !unresolved_users[p.device].empty()) {
        suppression = "unresolved";
      } else if (users.size() == 1) {
        attributed = *users.begin();
        job_ports[*users.begin()].push_back(p.device + "/" + std::to_string(p.port));
      }
      p.json["job_users"] = Json(std::vector<std::string>(users.begin(), users.end()));
      p.json["nonjob_user_pids"] = Json(std::vector<long>(nonjob.begin(), nonjob.end()));
      p.json["attributed_job"] = attributed;
      p.json["suppression"] = suppression;
      port_list.push_back(p.json);
    }
    Json job_list = Json::array();
    int unresolved = 0;
    for (const Job& j : jobs_) {
      if (!j.job_id) ++unresolved;
      Json jj = {{"job", j.Key()},
                 {"job_id", j.job_id ? Json(*j.job_id) : Json(nullptr)},
                 {"sluid", j.sluid ? Json(*j.sluid) : Json(nullptr)},
                 {"resolution", j.resolution},
                 {"cgroup", j.path},
                 {"processes", j.pids.size()},
                 {"hcas", Json(std::vector<std::string>(j.hcas.begin(), j.hcas.end()))},
                 {"attributed_ports", job_ports[j.Key()]}};
      if (!j.unresolved_why.empty()) jj["unresolved_why"] = j.unresolved_why;
      job_list.push_back(jj);
    }
    Json gap_list = Json::array();
    for (const Gap& g : gaps_) {
      gap_list.push_back({{"source", g.source}, {"path", g.path}, {"error", g.error}});
    }
    out.evidence = true;
    out.report = {{"ports", port_list},
                  {"jobs", job_list},
                  {"node",
                   {{"layout", layout_},
                    {"scopes", scopes_},
                    {"scope_found", scope_found_},
                    {"ownership", "fd"},
                    {"gaps", gap_list},
                    {"pid_fd_unreadable", pid_fd_unreadable_},
                    {"unresolved_sluid_allocations", unresolved},
                    {"refused_reads", r_.refused}}}};
    return out;
  }

 private:
  static Json Empty(const std::string& failure) {
    return {{"ports", Json::array()},
            {"jobs", Json::array()},
            {"node",
             {{"layout", "none"},
              {"scopes", Json::array()},
              {"scope_found", false},
              {"ownership", "fd"},
              {"gaps", Json::array({{{"source", "sysfs"}, {"path", ""}, {"error", failure}}})},
              {"pid_fd_unreadable", 0},
              {"unresolved_sluid_allocations", 0},
              {"refused_reads", Json::array()}}}};
  }

  void AddGap(std::string source, std::string path, const std::error_code& ec) {
    gaps_.push_back({std::move(source), std::move(path), ec.message()});
  }

  void ReadPorts(const std::string& hca, std::vector<Port>* ports) {
    std::error_code ec;
    const std::string base = o_.sys_root + "/class/infiniband/" + hca + "/ports";
    auto names = r_.List(base, &ec);
    if (!names) {
      AddGap("sysfs", base, ec);
      return;
    }
    for (const std::string& n : *names) {
      if (!AllDigits(n)) continue;
      const std::string dir = base + "/" + n;
      Port p;
      p.device = hca;
      p.port = std::stoi(n);
      auto text = [&](const char* f) -> Json {
        std::error_code e;
        auto v = r_.Read(dir + "/" + f, &e);
        if (!v) return nullptr;
        return Trim(*v);
      };
      Json state = text("state");
      std::string state_name;
      if (state.is_string()) {
        std::string s = state.get<std::string>();
        size_t colon = s.find(':');
        state_name = Trim(colon == std::string::npos ? s : s.substr(colon + 1));
      }
      std::string upper;
      for (char c : state_name)
        upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      Json counters = Json::object();
      Json absent = Json::array();
      auto read_counters = [&](const char* sub, const std::vector<CounterSpec>& specs) {
        for (const CounterSpec& c : specs) {
          std::error_code e;
          auto v = r_.Read(dir + "/" + sub + "/" + c.name, &e);
          std::string t = v ? Trim(*v) : "";
          if (!v || !AllDigits(t) || t.size() > 20) {
            absent.push_back(c.name);
            continue;
          }
          unsigned long long value = std::strtoull(t.c_str(), nullptr, 10);
          Json cj = {{"value", value}, {"source", sub}};
          if (c.width > 0) cj["width"] = c.width;
          if (c.width > 0 && !c.wraps) {
            unsigned long long max = c.width >= 64 ? ~0ULL : ((1ULL << c.width) - 1);
            cj["saturated"] = value == max;
          } else {
            cj["saturated"] = false;
          }
          if (c.wraps) cj["wraps"] = true;
          counters[c.name] = cj;
        }
      };
      read_counters("counters", PmaCounters());
      read_counters("hw_counters", Mlx5Counters());
      p.json = {{"device", hca},
                {"port", p.port},
                {"state", state_name.empty() ? Json(nullptr) : Json(state_name)},
                {"up", upper == "ACTIVE"},
                {"rate", text("rate")},
                {"link_layer", text("link_layer")},
                {"counters", counters},
                {"absent_counters", absent},
                {"units", "port_xmit_data and port_rcv_data count 4-octet words (x4 for bytes)"}};
      ports->push_back(std::move(p));
    }
  }

  // PIDs of every cgroup.procs under dir (depth bounded).
  void CollectPids(const std::string& dir, int depth, std::set<long>* pids, bool* incomplete) {
    std::error_code ec;
    auto text = r_.Read(dir + "/cgroup.procs", &ec);
    if (text) {
      std::istringstream in(*text);
      for (long pid; in >> pid;) pids->insert(pid);
    } else if (ec.value() != ENOENT) {
      AddGap("cgroup", dir + "/cgroup.procs", ec);
      *incomplete = true;
    }
    if (depth >= 6) return;
    auto names = r_.List(dir, &ec);
    if (!names) {
      if (ec.value() != ENOENT) {
        AddGap("cgroup", dir, ec);
        *incomplete = true;
      }
      return;
    }
    for (const std::string& n : *names) {
      if (IsDir(dir + "/" + n)) CollectPids(dir + "/" + n, depth + 1, pids, incomplete);
    }
  }

  void AddJob(const std::string& dir, const std::string& name, bool v1) {
    Job j;
    j.dir_name = name;
    j.path = dir;
    std::string id = name.rfind("job_", 0) == 0 ? name.substr(4) : name;
    if (AllDigits(id)) {
      j.job_id = id;
      j.resolution = "numeric_dir";
    } else {
      j.sluid = id;
    }
    bool incomplete = false;
    CollectPids(dir, 0, &j.pids, &incomplete);
    std::error_code ec;
    if (auto steps = r_.List(dir, &ec)) {
      for (const std::string& s : *steps) {
        if (s.rfind("step_", 0) != 0) continue;
        std::error_code e;
        auto t = r_.Read(dir + "/" + s + "/slurm/cgroup.procs", &e);
        if (!t) continue;
        std::istringstream in(*t);
        for (long pid; in >> pid;) j.stepd_pids.insert(pid);
      }
    }
    if (!j.job_id) ResolveSluid(&j);
    (void)v1;
    jobs_.push_back(std::move(j));
  }

  // The job id from the slurmstepd titles of the SLUID's steps; all readable ones must agree.
  void ResolveSluid(Job* j) {
    static const RE2 kTitle(R"(slurmstepd: \[([0-9]{1,12})\.[^\]]*\])");
    std::set<std::string> ids;
    for (long pid : j->stepd_pids) {
      std::error_code ec;
      auto cmd = r_.Read(o_.proc_root + "/" + std::to_string(pid) + "/cmdline", &ec);
      if (!cmd) continue;  // unreadable titles are skipped
      std::string title = *cmd;
      std::replace(title.begin(), title.end(), '\0', ' ');
      std::string id;
      if (RE2::PartialMatch(title, kTitle, &id)) ids.insert(id);
    }
    if (ids.size() == 1) {
      j->job_id = *ids.begin();
      j->resolution = "stepd_title";
    } else {
      j->resolution = "unresolved";
      j->unresolved_why =
          ids.empty() ? "no readable slurmstepd title names a job" : "slurmstepd titles disagree";
    }
  }

  bool IsJobDir(const std::string& dir, const std::string& name) {
    if (name == "system") return false;
    if (name.rfind("job_", 0) == 0) return true;
    std::error_code ec;
    auto kids = r_.List(dir, &ec);
    if (!kids) return false;
    return std::any_of(kids->begin(), kids->end(),
                       [](const std::string& k) { return k.rfind("step_", 0) == 0; });
  }

  void ReadJobs() {
    std::error_code ec;
    const std::string& root = o_.cgroup_root;
    // cgroup v2: <root>/*.slice/*slurmstepd.scope or <root>/*.slice/*.slice/*slurmstepd.scope.
    std::vector<std::string> scopes;
    std::function<void(const std::string&, int)> find = [&](const std::string& dir, int depth) {
      std::error_code e;
      auto names = r_.List(dir, &e);
      if (!names) return;
      for (const std::string& n : *names) {
        const std::string path = dir + "/" + n;
        if (!IsDir(path)) continue;
        if (depth > 0 && n.size() >= 16 && n.compare(n.size() - 16, 16, "slurmstepd.scope") == 0) {
          scopes.push_back(path);
        } else if (depth < 2 && n.size() > 6 && n.compare(n.size() - 6, 6, ".slice") == 0) {
          find(path, depth + 1);
        }
      }
    };
    find(root, 0);
    bool sluid = false;
    for (const std::string& scope : scopes) {
      scope_found_ = true;
      scopes_.push_back(scope.substr(root.size() + 1));
      auto names = r_.List(scope, &ec);
      if (!names) {
        AddGap("cgroup", scope, ec);
        continue;
      }
      for (const std::string& n : *names) {
        const std::string path = scope + "/" + n;
        if (!IsDir(path) || !IsJobDir(path, n)) continue;
        AddJob(path, n, false);
        if (!jobs_.back().dir_name.empty() && jobs_.back().dir_name.rfind("job_", 0) != 0) {
          sluid = true;
        }
      }
    }
    if (scope_found_) {
      layout_ = sluid ? "cgroup-v2-sluid" : "cgroup-v2";
      return;
    }
    // cgroup v1: <root>/<ctrl>/slurm/uid_*/job_*; the first controller with jobs wins.
    for (const char* ctrl : {"freezer", "memory", "cpuacct", "cpu,cpuacct"}) {
      const std::string slurm = root + "/" + ctrl + "/slurm";
      auto uids = r_.List(slurm, &ec);
      if (!uids) continue;
      size_t before = jobs_.size();
      scope_found_ = true;
      scopes_.push_back(std::string(ctrl) + "/slurm");
      for (const std::string& u : *uids) {
        if (u.rfind("uid_", 0) != 0) continue;
        auto names = r_.List(slurm + "/" + u, &ec);
        if (!names) {
          if (ec.value() != ENOENT) AddGap("cgroup", slurm + "/" + u, ec);
          continue;
        }
        for (const std::string& n : *names) {
          if (n.rfind("job_", 0) == 0 && IsDir(slurm + "/" + u + "/" + n)) {
            AddJob(slurm + "/" + u + "/" + n, n, true);
          }
        }
      }
      if (jobs_.size() > before) {
        layout_ = "cgroup-v1";
        return;
      }
      scopes_.pop_back();
    }
    if (!scopes_.empty()) layout_ = "cgroup-v1";
  }

  // HCAs a PID holds uverbs links to; nullopt (and a gap) when its fds cannot be read.
  std::optional<std::set<std::string>> HcasOf(long pid) {
    static const RE2 kUverbs(R"(.*/uverbs([0-9]{1,6}))");
    std::set<std::string> hcas;
    std::error_code ec;
    const std::string fd_dir = o_.proc_root + "/" + std::to_string(pid) + "/fd";
    auto fds = r_.List(fd_dir, &ec);
    if (!fds) {
      ++pid_fd_unreadable_;
      AddGap("procfd", fd_dir, ec);
      return std::nullopt;
    }
    for (const std::string& fd : *fds) {
      if (!AllDigits(fd)) continue;
      std::error_code e;
      auto target = r_.Link(fd_dir + "/" + fd, &e);
      std::string n;
      if (!target || !RE2::FullMatch(*target, kUverbs, &n)) continue;
      const std::string ibdev = o_.sys_root + "/class/infiniband_verbs/uverbs" + n + "/ibdev";
      auto dev = r_.Read(ibdev, &e);
      if (!dev || Trim(*dev).empty()) {
        AddGap("sysfs", ibdev, e ? e : std::make_error_code(std::errc::no_such_device));
        continue;
      }
      hcas.insert(Trim(*dev));
    }
    return hcas;
  }

  void ReadProcesses() {
    std::set<long> in_jobs;
    for (Job& j : jobs_) {
      for (long pid : j.pids) {
        in_jobs.insert(pid);
        std::error_code ec;
        if (!IsDir(o_.proc_root + "/" + std::to_string(pid))) {
          // Listed in the cgroup but not in /proc: hidden (hidepid, another PID namespace)
          // unless it also left the cgroup (a benign exit).
          bool still_listed = false;
          std::set<long> again;
          bool incomplete = false;
          CollectPids(j.path, 0, &again, &incomplete);
          still_listed = again.count(pid) > 0;
          if (still_listed) {
            gaps_.push_back({"procfd", o_.proc_root + "/" + std::to_string(pid),
                             "PID in the job's cgroup but not in /proc (hidden or another PID "
                             "namespace)"});
          }
          continue;
        }
        if (auto h = HcasOf(pid)) j.hcas.insert(h->begin(), h->end());
      }
    }
    // Processes outside every job that hold a uverbs link: non-job users.
    std::error_code ec;
    auto all = r_.List(o_.proc_root, &ec);
    if (!all) {
      AddGap("procfd", o_.proc_root, ec);
      return;
    }
    for (const std::string& name : *all) {
      if (!AllDigits(name) || name.size() > 10) continue;
      long pid = std::stol(name);
      if (in_jobs.count(pid)) continue;
      if (auto h = HcasOf(pid)) {
        for (const std::string& hca : *h) nonjob_users_[hca].insert(pid);
      }
    }
  }

  const FabricOptions& o_;
  Reader r_;
  std::vector<Job> jobs_;
  std::vector<Gap> gaps_;
  std::map<std::string, std::set<long>> nonjob_users_;
  std::string layout_ = "none";
  std::vector<std::string> scopes_;
  bool scope_found_ = false;
  int pid_fd_unreadable_ = 0;
};

}  // namespace

base::Status CheckFabricPath(const FabricOptions& o, FabricRead kind, const std::string& path) {
  const std::string roots[3] = {o.sys_root, o.proc_root, o.cgroup_root};
  for (const Pattern& p : Patterns()) {
    if (p.kind != kind) continue;
    const std::string& root = roots[p.root];
    std::string rel;
    if (path == root) {
      rel = "";
    } else if (path.size() > root.size() + 1 && path.compare(0, root.size(), root) == 0 &&
               path[root.size()] == '/') {
      rel = path.substr(root.size() + 1);
    } else {
      continue;
    }
    if (path.size() > kMaxPathBytes || std::count(rel.begin(), rel.end(), '/') > kMaxDepth) {
      continue;
    }
    if (RE2::FullMatch(rel, Compiled(p.re))) return base::Status();
  }
  return base::Status::InvalidArgument(
      std::string("refused: ") + KindName(kind) + " of " + path +
      " is not on the fabric allowlist (class/infiniband ports, counters and ibdev under the "
      "sysfs root; <pid>/fd and <pid>/cmdline under the proc root; cgroup.procs under the "
      "cgroup root)");
}

FabricReport ReadFabric(const FabricOptions& options) {
  FabricReport r = Scan(options).Run();
  // File contents, directory names and refused paths are the node's bytes, not UTF-8: replace
  // what is invalid with U+FFFD once here, so that the report serialises (found by fabric_fuzz).
  r.report = WithValidUtf8(r.report);
  return r;
}

Json FabricReportSchema() {
  auto object = [](Json properties, Json required) {
    return Json{{"type", "object"},
                {"properties", std::move(properties)},
                {"required", std::move(required)},
                {"additionalProperties", false}};
  };
  const Json str = {{"type", "string"}};
  const Json str_or_null = {{"type", Json::array({"string", "null"})}};
  const Json strings = {{"type", "array"}, {"items", str}};
  Json counter = object({{"value", {{"type", "integer"}, {"minimum", 0}}},
                         {"source", {{"enum", Json::array({"counters", "hw_counters"})}}},
                         {"width", {{"type", "integer"}}},
                         {"saturated", {{"type", "boolean"}}},
                         {"wraps", {{"type", "boolean"}}}},
                        Json::array({"value", "source", "saturated"}));
  Json port = object(
      {{"device", str},
       {"port", {{"type", "integer"}}},
       {"state", str_or_null},
       {"up", {{"type", "boolean"}}},
       {"rate", str_or_null},
       {"link_layer", str_or_null},
       {"counters", {{"type", "object"}, {"additionalProperties", counter}}},
       {"absent_counters", strings},
       {"units", str},
       {"job_users", strings},
       {"nonjob_user_pids", {{"type", "array"}, {"items", {{"type", "integer"}}}}},
       {"attributed_job", str_or_null},
       {"suppression",
        {{"enum", Json::array({nullptr, "evidence_gap", "nonjob_user", "shared", "unresolved"})}}}},
      Json::array({"device", "port", "state", "up", "rate", "link_layer", "counters",
                   "absent_counters", "job_users", "nonjob_user_pids", "attributed_job",
                   "suppression"}));
  Json job =
      object({{"job", str},
              {"job_id", str_or_null},
              {"sluid", str_or_null},
              {"resolution", {{"enum", Json::array({"numeric_dir", "stepd_title", "unresolved"})}}},
              {"unresolved_why", str},
              {"cgroup", str},
              {"processes", {{"type", "integer"}}},
              {"hcas", strings},
              {"attributed_ports", strings}},
             Json::array({"job", "job_id", "sluid", "resolution", "cgroup", "processes", "hcas",
                          "attributed_ports"}));
  Json gap = object({{"source", str}, {"path", str}, {"error", str}},
                    Json::array({"source", "path", "error"}));
  Json node = object(
      {{"layout", {{"enum", Json::array({"none", "cgroup-v1", "cgroup-v2", "cgroup-v2-sluid"})}}},
       {"scopes", strings},
       {"scope_found", {{"type", "boolean"}}},
       {"ownership", {{"const", "fd"}}},
       {"gaps", {{"type", "array"}, {"items", gap}}},
       {"pid_fd_unreadable", {{"type", "integer"}}},
       {"unresolved_sluid_allocations", {{"type", "integer"}}},
       {"refused_reads", strings}},
      Json::array({"layout", "scopes", "scope_found", "ownership", "gaps", "pid_fd_unreadable",
                   "unresolved_sluid_allocations", "refused_reads"}));
  Json properties = Json::object();
  properties["ports"] = {{"type", "array"}, {"items", port}};
  properties["jobs"] = {{"type", "array"}, {"items", job}};
  properties["node"] = node;
  return object(properties, Json::array({"ports", "jobs", "node"}));
}

}  // namespace slurm_rca::mcp
