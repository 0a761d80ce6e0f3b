// Which Slurm a live test runs: Debian's 22.05 (the default), or a release built by
// scripts/build-slurm.sh whose prefix the environment variable SLURM_RCA_SLURM names. ctest sets
// it for the entries labelled live-25.11 and live-26.05 (tests/CMakeLists.txt); a test reads it
// here, never a library.
//
//   if (base::Status s = testing_live::ReleaseReady(); !s.ok()) GTEST_SKIP() << s.message();
//   live::Lab lab(live::LabOptions{.dir = dir, .slurm_prefix = testing_live::SlurmPrefix()});
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/status.h"

namespace slurm_rca::testing_live {

inline std::string SlurmPrefix() {
  const char* p = std::getenv("SLURM_RCA_SLURM");
  return p == nullptr ? "" : p;
}

// OK when the release under test can run; else unavailable, the message saying why not and how
// to build it.
inline base::Status ReleaseReady() {
  std::string prefix = SlurmPrefix();
  if (prefix.empty()) return base::Status();
  if (std::filesystem::exists(prefix + "/.slurm-rca-complete")) return base::Status();
  std::string name = std::filesystem::path(prefix).filename().string();  // slurm-25.11.4
  std::string tag = name;
  for (char& c : tag) c = c == '.' ? '-' : c;
  return base::Status::Unavailable("no Slurm built in " + prefix +
                                   " (build it with scripts/build-slurm.sh ../shared/slurm/" + tag +
                                   "-1.tar.gz, about 20 minutes on two cores)");
}

}  // namespace slurm_rca::testing_live
