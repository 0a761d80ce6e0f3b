// What a binary was built from: the project's version and the git revision of its source tree.
// The definitions are generated at every build (cmake/build_info.cmake) into library
// base_build_info, which only the four binaries link, so a new commit relinks nothing else.
//
//   app.set_version_flag("--version", base::VersionLine("slurm-mcp"));
//   // slurm-mcp 0.1.0 (git 64b0d0ad8bfe)
#ifndef SLURM_RCA_BASE_BUILD_INFO_H_
#define SLURM_RCA_BASE_BUILD_INFO_H_

#include <string>

namespace slurm_rca::base {

const char* Version();   // the project's version (CMake's PROJECT_VERSION), e.g. "0.1.0"
const char* Revision();  // 12 hex digits, "-dirty" when built from a changed tree, or "unknown"

// "PROGRAM VERSION (git REVISION)": what every binary's --version prints.
inline std::string VersionLine(const std::string& program) {
  return program + " " + Version() + " (git " + Revision() + ")";
}

}  // namespace slurm_rca::base

#endif  // SLURM_RCA_BASE_BUILD_INFO_H_
