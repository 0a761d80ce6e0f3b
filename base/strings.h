// String helpers every module needs; none allocates unless it returns a std::string.
//
//   base::Trim("  gpu  ") == "gpu";  base::Trim(value, base::kBlanks) trims spaces and tabs only
//   base::Lower("NODE") == "node"
//   base::SplitFields("a,,b", ',') == {"a", "", "b"}
#ifndef SLURM_RCA_BASE_STRINGS_H_
#define SLURM_RCA_BASE_STRINGS_H_

#include <string>
#include <string_view>
#include <vector>

namespace slurm_rca::base {

inline constexpr std::string_view kWhitespace = " \t\r\n\v\f";
inline constexpr std::string_view kBlanks = " \t";  // HTTP's optional whitespace, a table's padding

// s without any of `chars` at either end.
std::string_view Trim(std::string_view s, std::string_view chars = kWhitespace);
// ASCII lowercase.
std::string Lower(std::string_view s);
// Every field between separators, empty ones included: "a,,b" gives 3, "" gives 1.
std::vector<std::string_view> SplitFields(std::string_view s, char sep);

}  // namespace slurm_rca::base

#endif  // SLURM_RCA_BASE_STRINGS_H_
