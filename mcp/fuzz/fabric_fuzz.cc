// libFuzzer target for the fabric topic's readers of node files (mcp/telemetry/fabric.h): a
// synthetic node is built once in a temporary directory (HCA mlx5_0 port 1 behind uverbs0, a
// cgroup-v2 job and a cgroup-v2 SLUID allocation whose slurmstepd title names its job), and each
// input rewrites the files below, in this order, from its parts separated by byte 0x01:
//   state, rate, link_layer, counters/port_xmit_data, counters/symbol_error,
//   hw_counters/packet_seq_err, uverbs0/ibdev, the SLUID step's slurm/cgroup.procs, the title
//   (/proc/<pid>/cmdline) of the stepd, the numeric job's cgroup.procs.
// Then ReadFabric. Aborts on: no evidence from a node whose class directory is there; a report
// that does not serialise strictly (LiveBackend::ReadFabric sends report.dump()); a counter that
// is not an unsigned number; an attributed port with a suppression, or neither while it has one
// job user; a port of a device other than mlx5_0.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/telemetry/fabric.h"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr char kSluid[] = "sFUZZ918002X000";

struct Node {
  fs::path root;
  slurm_rca::mcp::FabricOptions options;
  std::vector<fs::path> slots;

  Node() {
    root = fs::temp_directory_path() / ("fabric_fuzz." + std::to_string(getpid()));
    fs::remove_all(root);
    options.sys_root = (root / "sys").string();
    options.proc_root = (root / "proc").string();
    options.cgroup_root = (root / "sys/fs/cgroup").string();
    const fs::path port = root / "sys/class/infiniband/mlx5_0/ports/1";
    const fs::path scope = root / "sys/fs/cgroup/system.slice/slurmstepd.scope";
    const fs::path sluid = scope / kSluid;
    slots = {port / "state",
             port / "rate",
             port / "link_layer",
             port / "counters/port_xmit_data",
             port / "counters/symbol_error",
             port / "hw_counters/packet_seq_err",
             root / "sys/class/infiniband_verbs/uverbs0/ibdev",
             sluid / "step_0/slurm/cgroup.procs",
             root / "proc/51000/cmdline",
             scope / "job_918001/cgroup.procs"};
    for (const fs::path& p : slots) fs::create_directories(p.parent_path());
    Write(sluid / "step_0/user/task_0/cgroup.procs", "52000\n");
    Process(51000, "/dev/null");
    Process(52000, "/dev/infiniband/uverbs0");
    Process(41000, "/dev/infiniband/uverbs0");
  }
  ~Node() { fs::remove_all(root); }

  static void Write(const fs::path& p, std::string_view text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc).write(text.data(), text.size());
  }
  void Process(long pid, const std::string& fd_target) {
    const fs::path fd = root / "proc" / std::to_string(pid) / "fd";
    fs::create_directories(fd);
    fs::create_symlink(fd_target, fd / "3");
  }
};

[[noreturn]] void Fail(const char* what, const std::string& report) {
  std::fprintf(stderr, "FABRIC INVARIANT: %s\n%s\n", what, report.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Node* node = new Node();
  std::string_view input(reinterpret_cast<const char*>(data), size);
  for (const fs::path& slot : node->slots) {
    const std::size_t cut = input.find('\x01');
    Node::Write(slot, input.substr(0, cut));
    input = cut == std::string_view::npos ? std::string_view() : input.substr(cut + 1);
  }
  slurm_rca::mcp::FabricReport r = slurm_rca::mcp::ReadFabric(node->options);
  const std::string text = r.report.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (!r.evidence) Fail("no evidence", text);
  try {
    r.report.dump();
  } catch (const Json::exception& e) {
    Fail("the report does not serialise", e.what());
  }
  for (const Json& port : r.report["ports"]) {
    if (port.at("device") != "mlx5_0") Fail("a port of another device", text);
    for (const auto& [name, counter] : port.at("counters").items()) {
      if (!counter.at("value").is_number_unsigned()) Fail("a counter that is no number", text);
    }
    const bool attributed = !port.at("attributed_job").is_null();
    const bool suppressed = !port.at("suppression").is_null();
    if (attributed && suppressed) Fail("attributed and suppressed", text);
    if (!attributed && !suppressed && port.at("job_users").size() == 1) {
      Fail("one job user, neither attributed nor suppressed", text);
    }
  }
  return 0;
}
