// Whole-file reads and writes. A file that cannot be read is nullopt, never "": the caller
// decides what absence means (the project's rule: a failed read is no evidence, not no rows).
//
//   std::optional<std::string> text = base::ReadFile(path);
//   if (!text) return Status::Error("cannot read " + path);
//   std::string maybe = base::ReadFile(pidfile).value_or("");   // absence made explicit
#ifndef SLURM_RCA_BASE_FILE_H_
#define SLURM_RCA_BASE_FILE_H_

#include <optional>
#include <string>
#include <string_view>

namespace slurm_rca::base {

// The bytes of path; nullopt when it cannot be opened or read.
std::optional<std::string> ReadFile(const std::string& path);
// Replaces path with text; false when it cannot be written completely.
bool WriteFile(const std::string& path, std::string_view text);

}  // namespace slurm_rca::base

#endif  // SLURM_RCA_BASE_FILE_H_
