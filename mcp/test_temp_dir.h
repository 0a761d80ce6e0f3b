// A fresh directory for one test of mcp/ (header only, tests only):
//
//   const std::string dir = testing_tools::MakeTempDir("metrics");   // /tmp/slurm-rca-metrics-XXXXXX
//
// Mode 0755 and the canonical path: the executor resolves programs only in trusted directories,
// which must not be writable by others and are compared as canonical paths. "" (and a test
// failure) when it cannot be made.
#ifndef SLURM_RCA_MCP_TEST_TEMP_DIR_H_
#define SLURM_RCA_MCP_TEST_TEMP_DIR_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

namespace slurm_rca::mcp::testing_tools {

inline std::string MakeTempDir(const std::string& what) {
  std::string tmpl =
      (std::filesystem::temp_directory_path() / ("slurm-rca-" + what + "-XXXXXX")).string();
  char* dir = ::mkdtemp(tmpl.data());
  if (dir == nullptr) {
    ADD_FAILURE() << "mkdtemp: " << std::strerror(errno);
    return "";
  }
  ::chmod(dir, 0755);
  return std::filesystem::canonical(dir).string();
}

}  // namespace slurm_rca::mcp::testing_tools

#endif  // SLURM_RCA_MCP_TEST_TEMP_DIR_H_
