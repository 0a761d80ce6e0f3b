// The workload the live MCP tests (mcp_live, mcp_faults_live) put on a lab before they read it,
// so that every topic has rows: a running job (queue, jobs), a pending one (priority), a finished
// one (accounting), a maintenance reservation, and node2's nvidia-smi test double (gpu-fake; there
// is no GPU here). Waits up to 20 s until accounting shows the finished job.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "scenarios/live/faults.h"
#include "scenarios/live/lab.h"

namespace slurm_rca::testing_live {

inline ::testing::AssertionResult StartTopicWorkload(live::Lab& lab) {
  const std::string work = lab.Path("work");
  const std::vector<std::vector<std::string>> steps = {
      {"sbatch", "--chdir=" + work, "-J", "train", "--exclusive", "-w", "node4", "--wrap",
       "sleep 600"},
      {"sbatch", "--chdir=" + work, "-J", "wait", "-w", "node4", "--wrap", "true"},
      {"sbatch", "--chdir=" + work, "-J", "done", "-w", "node1", "--wrap", "true"},
      {"scontrol", "create", "reservation", "ReservationName=maint", "StartTime=now+1day",
       "Duration=60", "Nodes=node3", "Users=root", "Flags=MAINT"}};
  for (const auto& argv : steps) {
    live::ToolResult r = lab.Client(argv);
    if (!r.ok()) return ::testing::AssertionFailure() << argv[0] << " " << argv[1] << ": " << r.Summary();
  }
  auto gpu = live::InjectFault(lab, "gpu-fake", live::FaultTarget{.node = "node2"});
  if (!gpu.status.ok()) return ::testing::AssertionFailure() << "gpu-fake: " << gpu.status.message();
  // The same window the accounting topic reads (today, no state filter).
  for (int i = 0; i < 80; ++i) {
    if (lab.Client({"sacct", "-a", "-X", "-n"}).out.find("COMPLETED") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return ::testing::AssertionSuccess();
}

}  // namespace slurm_rca::testing_live
